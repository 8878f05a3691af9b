/**
 * Instantiating the package's WebAssembly modules, which are committed as base64 in TypeScript modules
 * (`scripts/build-wasm.ts`) so that every runtime and bundler takes them as plain code.
 * @module
 */

function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
	const binary = atob(text);
	const bytes = new Uint8Array(binary.length);
	for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
	return bytes;
}

/** An instance of the module in `base64`, or `undefined` where WebAssembly cannot run (or a policy forbids compiling it). */
export function instantiateWasm<Exports>(base64: string): Exports | undefined {
	try {
		const module = new WebAssembly.Module(decodeBase64(base64));
		return new WebAssembly.Instance(module).exports as unknown as Exports;
	} catch {
		return undefined;
	}
}
