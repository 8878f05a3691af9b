/**
 * Random operation sequences with random faults on the synchronous Node storage, the one the
 * pi-compatible `SessionManager` writes through (it takes no storage to wrap, so the faults are put into
 * `node:fs` itself): `openSync`, `writeSync` (cut short after part of its bytes, as a full disk),
 * `fdatasyncSync`, `renameSync`, `linkSync` and `rmSync` fail now and then with EIO, EMFILE or ENOSPC.
 *
 * Properties: every call returns or throws one of the package's typed errors (a `StorageError` naming the
 * file); an append that returned (acknowledged) is, after the sequence, in the file, in order, with its
 * text, as a healthy `SessionManager.open` and pi 1.6.0's own `SessionManager` both read it.
 *
 * `FAULT_RUNS` sets the cases (default 60), `FAULT_SEED` the seed.
 */
import fsModule, { mkdtempSync, rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { SessionManager } from "../adapters/pi-compat.ts";
import { messageText } from "../src/entry-text.ts";
import { assistantMessage, userMessage } from "./support/messages.ts";
import { pi16 } from "./support/pi16.ts";
import { seededRandom } from "./support/random.ts";
import { isTyped } from "./support/typed-errors.ts";

const RUNS = Number(process.env.FAULT_RUNS ?? "") || 60;
const SEED = Number(process.env.FAULT_SEED ?? "") || undefined;

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

// Faults in node:fs ---------------------------------------------------------------------------------

type FsName = "openSync" | "writeSync" | "fdatasyncSync" | "renameSync" | "linkSync" | "rmSync";
const FAULTY: FsName[] = ["openSync", "writeSync", "fdatasyncSync", "renameSync", "linkSync", "rmSync"];
const originals = Object.fromEntries(FAULTY.map((name) => [name, fsModule[name]])) as Record<FsName, unknown>;
/** Whether the next call fails, while faults are on; `undefined` when they are off. */
let failNow: (() => string | undefined) | undefined;
/** Faults injected, and typed errors seen, over all sequences (each must be some, or nothing was tried). */
let injected = 0;
let typedSeen = 0;

function errnoError(code: string, call: string): Error {
	return Object.assign(new Error(`${code}: injected in ${call}`), { code });
}

function faultsOn(random: () => number, rate: number): void {
	const codes = ["EIO", "EMFILE", "ENOSPC"];
	failNow = () => (random() < rate ? codes[Math.floor(random() * codes.length)] : undefined);
	const patched = fsModule as unknown as Record<FsName, unknown>;
	for (const name of FAULTY) {
		const original = originals[name] as (...args: unknown[]) => unknown;
		patched[name] = (...args: unknown[]) => {
			const code = failNow?.();
			if (!code) return original(...args);
			injected++;
			if (name === "writeSync") {
				// Part of it reaches the disk first, as when it fills up.
				const [fd, data, offset = 0] = args as [number, Uint8Array, number];
				const rest = data.length - offset;
				if (rest > 1) original(fd, data, offset, Math.max(1, Math.floor(random() * rest)));
			}
			throw errnoError(code, name);
		};
	}
	syncBuiltinESMExports();
}

function faultsOff(): void {
	failNow = undefined;
	Object.assign(fsModule, originals);
	syncBuiltinESMExports();
}

afterEach(faultsOff);

/** The value of `run()`, or undefined when it threw a typed error; an untyped one fails the property. */
function attempt<T>(what: string, run: () => T): T | undefined {
	try {
		return run();
	} catch (error) {
		if (!isTyped(error)) {
			throw new Error(
				`${what}: untyped error ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
			);
		}
		typedSeen++;
		return undefined;
	}
}

// The sequences --------------------------------------------------------------------------------------

type Command = { op: "append"; role: "user" | "assistant"; bytes: number } | { op: "reopen" } | { op: "label" };

const command: fc.Arbitrary<Command> = fc.oneof(
	{
		weight: 6,
		arbitrary: fc.record({
			op: fc.constant("append" as const),
			role: fc.constantFrom("user" as const, "assistant" as const),
			bytes: fc.oneof(
				{ weight: 4, arbitrary: fc.integer({ min: 1, max: 300 }) },
				fc.integer({ min: 20_000, max: 200_000 }),
			),
		}),
	},
	{ weight: 2, arbitrary: fc.constant({ op: "reopen" as const }) },
	{ weight: 1, arbitrary: fc.constant({ op: "label" as const }) },
);

describe("random operations with random faults in node:fs, through the pi-compatible SessionManager", () => {
	it(`every call returns or throws typed; every acknowledged append survives, in order (${RUNS} sequences)`, async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(command, { minLength: 1, maxLength: 20 }),
				fc.integer({ min: 0, max: 2 ** 31 - 1 }),
				fc.constantFrom(0.03, 0.1, 0.2),
				async (commands, seed, rate) => {
					const dir = mkdtempSync(join(tmpdir(), "fault-sync-"));
					dirs.push(dir);
					const acknowledged: { id: string; text: string }[] = [];
					let counter = 0;
					let path: string | undefined;
					let manager: SessionManager | undefined;
					faultsOn(seededRandom(seed), rate);
					try {
						manager = attempt("create", () => SessionManager.create("/project", dir));
						for (const c of commands) {
							if (!manager || c.op === "reopen") {
								if (manager) attempt("close", () => manager?.close());
								const file = path;
								manager = file
									? attempt("open", () => SessionManager.open(file, dir))
									: attempt("create", () => SessionManager.create("/project", dir));
								if (c.op === "reopen") continue;
								if (!manager) continue;
							}
							const current = manager;
							if (c.op === "label") {
								const target = acknowledged.at(-1)?.id;
								if (target) attempt("label", () => current.appendLabelChange(target, `l${counter++}`));
								continue;
							}
							const text = `m${counter++}:${"x".repeat(c.bytes)}`;
							const message = c.role === "user" ? userMessage(text, 1) : assistantMessage(text, { timestamp: 2 });
							const id = attempt("append", () => current.appendMessage(message));
							// A manager has its file from its first message on; reopens go back to it.
							path ??= attempt("file", () => current.getSessionFile());
							if (id !== undefined) acknowledged.push({ id, text });
						}
						if (manager) attempt("close", () => manager?.close());
					} finally {
						faultsOff();
					}
					if (acknowledged.length === 0) return;
					expect(path, "a file once something was acknowledged").toBeDefined();
					const file = path as string;
					const reopened = SessionManager.open(file, dir);
					const entries = reopened.getEntries();
					reopened.close();
					const oracle = pi16.SessionManager.open(file, dir).getEntries();
					for (const found of [entries, oracle]) {
						const positions = acknowledged.map(({ id }) => found.findIndex((entry) => entry.id === id));
						expect(
							acknowledged.filter((_, n) => (positions[n] as number) < 0),
							"acknowledged entries missing",
						).toEqual([]);
						expect(
							[...positions].sort((a, b) => a - b),
							"in the order acknowledged",
						).toEqual(positions);
						for (const { id, text } of acknowledged) {
							const entry = found.find((candidate) => candidate.id === id);
							expect(entry?.type === "message" ? messageText(entry.message) : undefined, id).toBe(text);
						}
					}
				},
			),
			{ numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
		);
		expect(injected, "faults injected").toBeGreaterThan(0);
		expect(typedSeen, "calls that failed, typed").toBeGreaterThan(0);
	}, 120_000);
});
