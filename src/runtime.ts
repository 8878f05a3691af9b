/**
 * Which runtime this is, for the few places that take Node's faster native path (Bun and Deno also have
 * `process.versions.node`, but their `Buffer` is their own).
 * @module
 */

interface Runtime {
	process?: { versions?: { node?: string; bun?: string } };
	Deno?: unknown;
}

/** Node itself: not Bun, not Deno. */
function isNode(): boolean {
	const runtime = globalThis as Runtime;
	return (
		typeof runtime.process?.versions?.node === "string" &&
		runtime.process.versions.bun === undefined &&
		runtime.Deno === undefined
	);
}

/** Node's `Buffer.prototype`, where this is Node itself. */
export function nodeBufferPrototype<Methods>(): Partial<Methods> | undefined {
	return isNode() ? (globalThis as { Buffer?: { prototype: Partial<Methods> } }).Buffer?.prototype : undefined;
}
