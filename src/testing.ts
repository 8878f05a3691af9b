/**
 * The storage conformance suite: every adapter must pass it, on every runtime. Like unstorage's
 * `testStorage(factory)` and the suite ZenFS ships, it is part of the package, so an adapter written
 * elsewhere can prove itself against the same contract.
 *
 * It needs no test framework of its own: pass `describe`, `it` and `expect` from vitest, `bun test`, or
 * Deno's `@std/testing/bdd` + `@std/expect`. Only `toBe`, `toEqual` and `toBeNull` are used.
 *
 * It covers every operation of `StorageOps` with its documented contract and edge cases, and the writer
 * lock protocol of `lock.ts` driven through `runTask`. When the adapter also has a synchronous twin
 * (`syncStorage` in the fixture, and `{ sync: true }`), the same operation and lock tests run again
 * through `runTaskSync`, plus checks that both drivers see the same files and the same locks.
 * @example
 * // vitest or bun test
 * import { describe, expect, it } from "vitest"; // or "bun:test"
 * import { testStorage } from "pi-session-tree/testing";
 * testStorage("memory", async () => ({ storage: await createMemoryStorage(), root: "/work" }), { describe, it, expect });
 * @example
 * // deno test
 * import { describe, it } from "jsr:@std/testing/bdd";
 * import { expect } from "jsr:@std/expect";
 * testStorage("memory", async () => ({ storage: await createMemoryStorage(), root: "/work" }), { describe, it, expect });
 * @module
 */
import { acquireLock, lockPathOf, releaseLock, SessionLockedError, type WriterLock } from "./lock.ts";
import {
	type DirEntry,
	io,
	type LockOwner,
	runTask,
	runTaskSync,
	type Storage,
	StorageError,
	type StorageErrorCode,
	type SyncStorage,
	type Task,
} from "./storage.ts";

/** The few matchers the suite uses; vitest's, bun's and `@std/expect`'s `expect(value)` all have them. */
export interface ExpectLike {
	toBe(expected: unknown): void;
	toEqual(expected: unknown): void;
	toBeNull(): void;
}

/** The test framework, structurally: vitest, `bun:test` and Deno's bdd module fit as they are. */
export interface TestApi {
	describe(name: string, fn: () => void): void;
	it(name: string, fn: () => Promise<void> | void): void;
	expect(value: unknown): ExpectLike;
}

/** What the factory gives each test: a storage and a fresh empty directory in it. */
export interface StorageFixture {
	storage: Storage;
	/** A fresh, empty directory for this test: absolute, `/`-separated. */
	root: string;
	/** The synchronous twin of `storage`, on the same files (only with `{ sync: true }`). */
	syncStorage?: SyncStorage;
	/** Called after the test, passed or failed. */
	cleanup?: () => Promise<void>;
}

/** Called once per test. */
export type StorageFactory = () => Promise<StorageFixture>;

export interface TestStorageOptions {
	/** The factory returns a `syncStorage` too: run the suite through `runTaskSync` as well. */
	sync?: boolean;
	/**
	 * Whether a lock owner of this very process whose token this thread does not hold counts as alive.
	 * `"dead"` (default): the storage is used by one thread only, so such a lock is a leftover and may be
	 * taken over. `"alive"`: other threads of the process may use the storage too (the node adapter), and
	 * their locks cannot be seen from here, so they are never taken.
	 */
	ownUnheldOwner?: "dead" | "alive";
}

/** What one test works with. `storage` is the adapter itself, or the sync twin behind `runTaskSync`. */
interface Context {
	storage: Storage;
	root: string;
	/** A path inside `root`. */
	at(...names: string[]): string;
	/** Run a task with the driver under test (`runTask` or `runTaskSync`). */
	run<T>(task: Task<T>): Promise<T>;
	fixture: StorageFixture;
}

type Body = (c: Context) => Promise<void>;

/** A pid no process has on Linux, macOS or Windows (all cap pids far lower). */
const DEAD_PID = 2147483646;
const MiB = 1024 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const bytes = (text: string): Uint8Array => encoder.encode(text);
const text = (data: Uint8Array): string => decoder.decode(data);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Deterministic bytes covering every value, 0x00 and 0xff included. */
function pattern(length: number, seed = 1): Uint8Array {
	const out = new Uint8Array(length);
	let state = seed >>> 0 || 1;
	for (let i = 0; i < length; i++) {
		state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
		out[i] = state >>> 24;
	}
	if (length > 0) out[0] = 0x00;
	if (length > 1) out[1] = 0xff;
	return out;
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
	const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
	let offset = 0;
	for (const chunk of chunks) {
		out.set(chunk, offset);
		offset += chunk.length;
	}
	return out;
}

/** Index of the first differing byte, the shorter length when one is a prefix of the other, or -1. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
	const length = Math.min(a.length, b.length);
	for (let i = 0; i < length; i++) if (a[i] !== b[i]) return i;
	return a.length === b.length ? -1 : length;
}

/** The rejection of `promise`; fails when it fulfils. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
	try {
		await promise;
	} catch (error) {
		return error;
	}
	throw new Error("expected a rejection, but the promise fulfilled");
}

function byName(entries: readonly DirEntry[]): DirEntry[] {
	return [...entries]
		.map((e) => ({ name: e.name, isFile: e.isFile, isDirectory: e.isDirectory }))
		.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The same operations on a `SyncStorage`, each one performed by `runTaskSync`. */
function storageOverSync(sync: SyncStorage): Storage {
	return {
		readRange: async (path, start, end) => runTaskSync(io("readRange", path, start, end), sync),
		append: async (path, data, durable) => runTaskSync(io("append", path, data, durable), sync),
		createExclusive: async (path, chunks, durable) => runTaskSync(io("createExclusive", path, chunks, durable), sync),
		replace: async (path, chunks) => runTaskSync(io("replace", path, chunks), sync),
		rename: async (from, to) => runTaskSync(io("rename", from, to), sync),
		link: async (from, to) => runTaskSync(io("link", from, to), sync),
		stat: async (path) => runTaskSync(io("stat", path), sync),
		list: async (dir) => runTaskSync(io("list", dir), sync),
		mkdir: async (dir) => runTaskSync(io("mkdir", dir), sync),
		remove: async (path) => runTaskSync(io("remove", path), sync),
		lockOwner: async () => runTaskSync(io("lockOwner"), sync),
		isLockOwnerAlive: async (owner) => runTaskSync(io("isLockOwnerAlive", owner), sync),
	};
}

/**
 * Register the conformance suite for one storage adapter.
 * @example
 * testStorage("node", async () => {
 *   const root = await mkdtemp(`${tmpdir()}/pi-`);
 *   return { storage: createNodeStorage(), root, cleanup: () => rm(root, { recursive: true }) };
 * }, { describe, it, expect });
 */
export function testStorage(name: string, factory: StorageFactory, t: TestApi, options: TestStorageOptions = {}): void {
	const { describe, it, expect } = t;

	const expectBytes = (actual: Uint8Array, expected: Uint8Array): void => {
		expect(actual instanceof Uint8Array).toBe(true);
		expect(actual.length).toBe(expected.length);
		expect(firstDifference(actual, expected)).toBe(-1);
	};
	const expectStorageError = async (promise: Promise<unknown>, code: StorageErrorCode, path?: string) => {
		const error = await rejection(promise);
		expect(error instanceof StorageError ? error.code : error).toBe(code);
		if (path !== undefined) expect((error as StorageError).path).toBe(path);
	};
	const expectLocked = async (promise: Promise<unknown>): Promise<SessionLockedError> => {
		const error = await rejection(promise);
		expect(error instanceof SessionLockedError ? "SessionLockedError" : error).toBe("SessionLockedError");
		return error as SessionLockedError;
	};
	const read = async (c: Context, path: string): Promise<Uint8Array> => {
		const stat = await c.storage.stat(path);
		return c.storage.readRange(path, 0, (stat?.size ?? 0) + 1024);
	};
	const readText = async (c: Context, path: string): Promise<string> => text(await read(c, path));
	const names = async (c: Context, dir: string): Promise<string[]> =>
		byName(await c.storage.list(dir)).map((e) => e.name);
	const deadOwner = async (c: Context, token = `dead-${Math.random().toString(36).slice(2)}`): Promise<LockOwner> => {
		const own = await c.storage.lockOwner();
		return { pid: DEAD_PID, host: own.host, startedAt: 1, token };
	};
	const ownerJson = (owner: LockOwner): Uint8Array => bytes(`${JSON.stringify(owner)}\n`);

	const cases = (mode: "async" | "sync"): void => {
		const test = (title: string, body: Body): void =>
			it(title, async () => {
				const fixture = await factory();
				try {
					const sync = fixture.syncStorage;
					if (mode === "sync" && !sync) throw new Error(`${name}: { sync: true } but the factory gave no syncStorage`);
					const storage = mode === "sync" && sync ? storageOverSync(sync) : fixture.storage;
					const run = <T>(task: Task<T>): Promise<T> =>
						mode === "sync" && sync ? Promise.resolve().then(() => runTaskSync(task, sync)) : runTask(task, storage);
					const root = fixture.root.replace(/\/+$/, "") || "/";
					const at = (...parts: string[]): string => [root === "/" ? "" : root, ...parts].join("/");
					await storage.mkdir(root);
					await body({ storage, root, at, run, fixture });
				} finally {
					await fixture.cleanup?.();
				}
			});

		describe("readRange", () => {
			test("reads a whole file", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("hello world")], false);
				expect(await readText(c, c.at("f"))).toBe("hello world");
				expect(text(await c.storage.readRange(c.at("f"), 0, 11))).toBe("hello world");
			});
			test("reads a part of a file", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("hello world")], false);
				expect(text(await c.storage.readRange(c.at("f"), 0, 5))).toBe("hello");
				expect(text(await c.storage.readRange(c.at("f"), 6, 11))).toBe("world");
				expect(text(await c.storage.readRange(c.at("f"), 4, 7))).toBe("o w");
			});
			test("returns fewer bytes past the end of the file, none when starting past it", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("hello world")], false);
				expect(text(await c.storage.readRange(c.at("f"), 6, 1000))).toBe("world");
				expect(text(await c.storage.readRange(c.at("f"), 0, MiB))).toBe("hello world");
				expect((await c.storage.readRange(c.at("f"), 11, 20)).length).toBe(0);
				expect((await c.storage.readRange(c.at("f"), 100, 200)).length).toBe(0);
			});
			test("an end far past the end of the file (2^40) returns just the file's bytes", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("small")], false);
				expect(text(await c.storage.readRange(c.at("f"), 0, 2 ** 40))).toBe("small");
			});
			test("start == end gives an empty range", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("hello")], false);
				for (const at of [0, 3, 5, 9]) {
					const range = await c.storage.readRange(c.at("f"), at, at);
					expect(range instanceof Uint8Array).toBe(true);
					expect(range.length).toBe(0);
				}
			});
			test("an empty file reads as empty", async (c) => {
				await c.storage.createExclusive(c.at("f"), [], false);
				expect((await c.storage.readRange(c.at("f"), 0, 100)).length).toBe(0);
			});
			test("a missing file fails with not-found, naming the path", async (c) => {
				await expectStorageError(c.storage.readRange(c.at("missing"), 0, 10), "not-found", c.at("missing"));
				await expectStorageError(c.storage.readRange(c.at("no-dir", "f"), 0, 10), "not-found", c.at("no-dir", "f"));
			});
			test("binary bytes, 0x00 and 0xff included, come back exactly", async (c) => {
				const all = new Uint8Array(256).map((_, i) => i);
				const data = concat([all, pattern(4096, 7), all.slice().reverse()]);
				await c.storage.createExclusive(c.at("bin"), [data], false);
				expectBytes(await c.storage.readRange(c.at("bin"), 0, data.length), data);
				expectBytes(await c.storage.readRange(c.at("bin"), 250, 262), data.subarray(250, 262));
			});
			test("ranges of several MiB, whole and across chunk boundaries", async (c) => {
				const data = pattern(6 * MiB + 123, 42);
				const cut1 = Math.floor(1.5 * MiB);
				const cut2 = Math.floor(4.5 * MiB);
				await c.storage.createExclusive(
					c.at("big"),
					[data.subarray(0, cut1), data.subarray(cut1, cut2), data.subarray(cut2)],
					false,
				);
				expect((await c.storage.stat(c.at("big")))?.size).toBe(data.length);
				expectBytes(await c.storage.readRange(c.at("big"), 0, data.length), data);
				expectBytes(await c.storage.readRange(c.at("big"), MiB + 7, 5 * MiB - 3), data.subarray(MiB + 7, 5 * MiB - 3));
				expectBytes(await c.storage.readRange(c.at("big"), data.length - 10, 8 * MiB), data.subarray(data.length - 10));
			});
		});

		describe("append", () => {
			test("creates the file when it is missing", async (c) => {
				expect(await c.storage.stat(c.at("f"))).toBeNull();
				await c.storage.append(c.at("f"), bytes("first\n"), false);
				expect(await readText(c, c.at("f"))).toBe("first\n");
				expect((await c.storage.stat(c.at("f")))?.size).toBe(6);
			});
			test("appends in order", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("a")], false);
				await c.storage.append(c.at("f"), bytes("b"), false);
				await c.storage.append(c.at("f"), bytes("cd"), false);
				expect(await readText(c, c.at("f"))).toBe("abcd");
			});
			test("an append after the file was replaced, renamed, moved over or removed goes to the file there now", async (c) => {
				const f = c.at("f");
				await c.storage.append(f, bytes("a"), false);
				await c.storage.replace(f, [bytes("R")]);
				await c.storage.append(f, bytes("b"), false);
				expect(await readText(c, f)).toBe("Rb");
				await c.storage.rename(f, c.at("g"));
				await c.storage.append(f, bytes("c"), false);
				expect([await readText(c, f), await readText(c, c.at("g"))]).toEqual(["c", "Rb"]);
				await c.storage.rename(c.at("g"), f);
				await c.storage.append(f, bytes("d"), false);
				expect(await readText(c, f)).toBe("Rbd");
				await c.storage.remove(f);
				await c.storage.append(f, bytes("e"), true);
				expect(await readText(c, f)).toBe("e");
				await c.storage.remove(f);
				await c.storage.createExclusive(f, [bytes("X")], false);
				await c.storage.append(f, bytes("f"), false);
				expect(await readText(c, f)).toBe("Xf");
			});
			test("appends to many files, in turns, each land in their own file", async (c) => {
				const files = Array.from({ length: 80 }, (_, n) => c.at(`f${n}`));
				for (let round = 0; round < 3; round++) {
					await Promise.all(files.map((file, n) => c.storage.append(file, bytes(`${n}.${round};`), false)));
				}
				for (const [n, file] of files.entries()) expect(await readText(c, file)).toBe(`${n}.0;${n}.1;${n}.2;`);
			});
			test("many small appends", async (c) => {
				const lines: string[] = [];
				for (let i = 0; i < 300; i++) {
					const line = `{"i":${i}}\n`;
					lines.push(line);
					await c.storage.append(c.at("log.jsonl"), bytes(line), false);
				}
				const expected = lines.join("");
				expect((await c.storage.stat(c.at("log.jsonl")))?.size).toBe(bytes(expected).length);
				expect(await readText(c, c.at("log.jsonl"))).toBe(expected);
			});
			test("durable appends work", async (c) => {
				await c.storage.append(c.at("f"), bytes("one\n"), true);
				await c.storage.append(c.at("f"), bytes("two\n"), true);
				expect(await readText(c, c.at("f"))).toBe("one\ntwo\n");
			});
			test("binary data is appended exactly", async (c) => {
				const a = pattern(1000, 3);
				const b = pattern(70_000, 5);
				await c.storage.append(c.at("bin"), a, false);
				await c.storage.append(c.at("bin"), b, false);
				expectBytes(await read(c, c.at("bin")), concat([a, b]));
			});
			test("an empty append creates an empty file and leaves an existing one as it is", async (c) => {
				await c.storage.append(c.at("e"), new Uint8Array(0), false);
				expect((await c.storage.stat(c.at("e")))?.size).toBe(0);
				await c.storage.createExclusive(c.at("f"), [bytes("keep")], false);
				await c.storage.append(c.at("f"), new Uint8Array(0), false);
				expect(await readText(c, c.at("f"))).toBe("keep");
			});
			test("appending in a missing directory fails with not-found", async (c) => {
				await expectStorageError(c.storage.append(c.at("no-dir", "f"), bytes("x"), false), "not-found");
			});
		});

		describe("createExclusive", () => {
			test("takes chunks produced as they are asked for (a generator), for create and replace", async (c) => {
				function* parts(...texts: string[]): Generator<Uint8Array> {
					for (const text of texts) yield bytes(text);
				}
				await c.storage.createExclusive(c.at("lazy"), parts("a", "b", "c"), false);
				expect(await readText(c, c.at("lazy"))).toBe("abc");
				await c.storage.replace(c.at("lazy"), parts("d", "e"));
				expect(await readText(c, c.at("lazy"))).toBe("de");
			});
			test("creates a file from several chunks, concatenated", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("head\n"), bytes(""), bytes("a\n"), bytes("b\n")], false);
				expect(await readText(c, c.at("f"))).toBe("head\na\nb\n");
			});
			test("an empty chunk list creates an empty file", async (c) => {
				await c.storage.createExclusive(c.at("f"), [], false);
				const stat = await c.storage.stat(c.at("f"));
				expect(stat?.isFile).toBe(true);
				expect(stat?.size).toBe(0);
			});
			test("durable creation works", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("x"), bytes("y")], true);
				expect(await readText(c, c.at("f"))).toBe("xy");
			});
			test("fails with exists and leaves the existing content untouched", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("original")], false);
				await expectStorageError(c.storage.createExclusive(c.at("f"), [bytes("other")], false), "exists", c.at("f"));
				await expectStorageError(c.storage.createExclusive(c.at("f"), [], true), "exists", c.at("f"));
				expect(await readText(c, c.at("f"))).toBe("original");
			});
			test("fails with exists for an empty existing file, which stays empty", async (c) => {
				await c.storage.append(c.at("f"), new Uint8Array(0), false);
				await expectStorageError(c.storage.createExclusive(c.at("f"), [bytes("x")], false), "exists");
				expect((await c.storage.stat(c.at("f")))?.size).toBe(0);
			});
			test("of concurrent creations exactly one wins and its content is the file", async (c) => {
				const results = await Promise.allSettled(
					[0, 1, 2, 3, 4].map((i) => c.storage.createExclusive(c.at("f"), [bytes(`writer ${i}`)], false)),
				);
				const won = results.flatMap((r, i) => (r.status === "fulfilled" ? [i] : []));
				expect(won.length).toBe(1);
				for (const r of results) {
					if (r.status === "rejected") expect(r.reason instanceof StorageError && r.reason.code).toBe("exists");
				}
				expect(await readText(c, c.at("f"))).toBe(`writer ${won[0]}`);
			});
			test("creating in a missing directory fails with not-found", async (c) => {
				await expectStorageError(c.storage.createExclusive(c.at("no-dir", "f"), [bytes("x")], false), "not-found");
			});
		});

		describe("replace", () => {
			test("replacing a missing file creates it", async (c) => {
				await c.storage.replace(c.at("f"), [bytes("new")]);
				expect(await readText(c, c.at("f"))).toBe("new");
			});
			test("replaces the content fully, shorter or longer", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("a long original content\n")], false);
				await c.storage.replace(c.at("f"), [bytes("short")]);
				expect(await readText(c, c.at("f"))).toBe("short");
				expect((await c.storage.stat(c.at("f")))?.size).toBe(5);
				await c.storage.replace(c.at("f"), [bytes("much longer than before\n"), bytes("second chunk\n")]);
				expect(await readText(c, c.at("f"))).toBe("much longer than before\nsecond chunk\n");
			});
			test("an empty chunk list leaves an empty file", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("content")], false);
				await c.storage.replace(c.at("f"), []);
				expect((await c.storage.stat(c.at("f")))?.size).toBe(0);
			});
			test("binary content of several MiB", async (c) => {
				const data = pattern(3 * MiB + 5, 9);
				await c.storage.append(c.at("f"), bytes("old"), false);
				await c.storage.replace(c.at("f"), [data.subarray(0, MiB), data.subarray(MiB)]);
				expectBytes(await c.storage.readRange(c.at("f"), 0, 4 * MiB), data);
			});
			test("leaves no temporary files behind and other files alone", async (c) => {
				await c.storage.createExclusive(c.at("other"), [bytes("other")], false);
				for (let i = 0; i < 5; i++) await c.storage.replace(c.at("f"), [bytes(`version ${i}`)]);
				expect(await names(c, c.root)).toEqual(["f", "other"]);
				expect(await readText(c, c.at("f"))).toBe("version 4");
				expect(await readText(c, c.at("other"))).toBe("other");
			});
			test("a failed replace (the target is a directory) leaves no temporary file", async (c) => {
				await c.storage.mkdir(c.at("d"));
				await rejection(c.storage.replace(c.at("d"), [bytes("x")]));
				expect(await names(c, c.root)).toEqual(["d"]);
				expect((await c.storage.stat(c.at("d")))?.isDirectory).toBe(true);
			});
			test("replacing in a missing directory fails with not-found", async (c) => {
				await expectStorageError(c.storage.replace(c.at("no-dir", "f"), [bytes("x")]), "not-found");
				expect(await names(c, c.root)).toEqual([]);
			});
			test("readers during replaces see the old or the new content whole, and the file ends as last written", async (c) => {
				const path = c.at("f");
				const contents = [pattern(3000, 1), pattern(1000, 2), pattern(5000, 3)];
				const seen = (data: Uint8Array) => contents.findIndex((content) => firstDifference(data, content) === -1);
				for (let round = 0; round < 6; round++) {
					await c.storage.replace(path, [contents[round % 3] as Uint8Array]);
					const last = contents[(round + 1) % 3] as Uint8Array;
					const reads: Promise<Uint8Array>[] = [];
					const reader = async () => {
						for (let i = 0; i < 5; i++) {
							const next = c.storage.readRange(path, 0, 8000);
							reads.push(next);
							await next.catch(() => undefined);
						}
					};
					await Promise.allSettled([reader(), reader(), c.storage.replace(path, [last])]);
					const outcomes = await Promise.allSettled(reads);
					const failed = outcomes.filter((o) => o.status === "rejected").map((o) => String(o.reason));
					expect(failed).toEqual([]);
					for (const o of outcomes) if (o.status === "fulfilled") expect(seen(o.value) >= 0).toBe(true);
					expectBytes(await c.storage.readRange(path, 0, 8000), last);
				}
			});
		});

		describe("rename", () => {
			test("moves the content to the new name", async (c) => {
				await c.storage.createExclusive(c.at("a"), [bytes("content")], false);
				await c.storage.rename(c.at("a"), c.at("b"));
				expect(await c.storage.stat(c.at("a"))).toBeNull();
				expect(await readText(c, c.at("b"))).toBe("content");
				expect(await names(c, c.root)).toEqual(["b"]);
			});
			test("replaces an existing target", async (c) => {
				await c.storage.createExclusive(c.at("a"), [bytes("new")], false);
				await c.storage.createExclusive(c.at("b"), [bytes("old and longer")], false);
				await c.storage.rename(c.at("a"), c.at("b"));
				expect(await readText(c, c.at("b"))).toBe("new");
				expect(await names(c, c.root)).toEqual(["b"]);
			});
			test("moves between directories", async (c) => {
				await c.storage.mkdir(c.at("x"));
				await c.storage.mkdir(c.at("y"));
				await c.storage.createExclusive(c.at("x", "f"), [bytes("moved")], false);
				await c.storage.rename(c.at("x", "f"), c.at("y", "g"));
				expect(await names(c, c.at("x"))).toEqual([]);
				expect(await readText(c, c.at("y", "g"))).toBe("moved");
			});
			test("a missing source fails with not-found and leaves the target alone", async (c) => {
				await c.storage.createExclusive(c.at("b"), [bytes("target")], false);
				await expectStorageError(c.storage.rename(c.at("missing"), c.at("b")), "not-found", c.at("missing"));
				expect(await readText(c, c.at("b"))).toBe("target");
			});
		});

		describe("stat", () => {
			test("is null when nothing is there", async (c) => {
				expect(await c.storage.stat(c.at("missing"))).toBeNull();
				expect(await c.storage.stat(c.at("no-dir", "missing"))).toBeNull();
			});
			test("describes a file", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("12345")], false);
				const stat = await c.storage.stat(c.at("f"));
				expect(stat?.size).toBe(5);
				expect(stat?.isFile).toBe(true);
				expect(stat?.isDirectory).toBe(false);
			});
			test("describes a directory", async (c) => {
				await c.storage.mkdir(c.at("d"));
				const stat = await c.storage.stat(c.at("d"));
				expect(stat?.isFile).toBe(false);
				expect(stat?.isDirectory).toBe(true);
				expect((await c.storage.stat(c.root))?.isDirectory).toBe(true);
			});
			test("mtimeMs is wall-clock epoch ms and does not go back after a write", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("a")], false);
				const before = await c.storage.stat(c.at("f"));
				expect(typeof before?.mtimeMs).toBe("number");
				expect(Number.isFinite(before?.mtimeMs)).toBe(true);
				// lock.ts compares mtimeMs with Date.now() to tell a lock being written from an abandoned one.
				expect(Math.abs(Date.now() - (before?.mtimeMs ?? 0)) < 10_000).toBe(true);
				await sleep(25);
				await c.storage.append(c.at("f"), bytes("b"), false);
				const after = await c.storage.stat(c.at("f"));
				expect((after?.mtimeMs ?? 0) >= (before?.mtimeMs ?? Number.POSITIVE_INFINITY)).toBe(true);
				expect(after?.size).toBe(2);
			});
		});

		describe("list", () => {
			test("is empty for a missing directory", async (c) => {
				expect(await c.storage.list(c.at("missing"))).toEqual([]);
				expect(await c.storage.list(c.at("missing", "deeper"))).toEqual([]);
			});
			test("is empty for a path that is a file (as pi's listing finds nothing there)", async (c) => {
				await c.storage.createExclusive(c.at("plain"), [bytes("x")], false);
				expect(await c.storage.list(c.at("plain"))).toEqual([]);
			});
			test("is empty for an empty directory", async (c) => {
				await c.storage.mkdir(c.at("d"));
				expect(await c.storage.list(c.at("d"))).toEqual([]);
			});
			test("gives names and kinds of files and directories, not nested entries", async (c) => {
				await c.storage.createExclusive(c.at("2025-01-01T00-00-00-000Z_a.jsonl"), [bytes("x")], false);
				await c.storage.append(c.at("b.txt"), bytes("y"), false);
				await c.storage.mkdir(c.at("--home-me-project--", "nested"));
				await c.storage.append(c.at("--home-me-project--", "inner.jsonl"), bytes("z"), false);
				expect(byName(await c.storage.list(c.root))).toEqual([
					{ name: "--home-me-project--", isFile: false, isDirectory: true },
					{ name: "2025-01-01T00-00-00-000Z_a.jsonl", isFile: true, isDirectory: false },
					{ name: "b.txt", isFile: true, isDirectory: false },
				]);
				expect(byName(await c.storage.list(c.at("--home-me-project--")))).toEqual([
					{ name: "inner.jsonl", isFile: true, isDirectory: false },
					{ name: "nested", isFile: false, isDirectory: true },
				]);
			});
		});

		describe("mkdir", () => {
			test("creates parents", async (c) => {
				await c.storage.mkdir(c.at("a", "b", "c"));
				for (const dir of [c.at("a"), c.at("a", "b"), c.at("a", "b", "c")]) {
					expect((await c.storage.stat(dir))?.isDirectory).toBe(true);
				}
			});
			test("is idempotent and keeps what is inside", async (c) => {
				await c.storage.mkdir(c.at("a"));
				await c.storage.append(c.at("a", "f"), bytes("kept"), false);
				await c.storage.mkdir(c.at("a"));
				await c.storage.mkdir(c.at("a"));
				expect(await names(c, c.at("a"))).toEqual(["f"]);
				expect(await readText(c, c.at("a", "f"))).toBe("kept");
			});
		});

		describe("remove", () => {
			test("removes a file and nothing else", async (c) => {
				await c.storage.createExclusive(c.at("a"), [bytes("a")], false);
				await c.storage.createExclusive(c.at("b"), [bytes("b")], false);
				await c.storage.remove(c.at("a"));
				expect(await c.storage.stat(c.at("a"))).toBeNull();
				expect(await names(c, c.root)).toEqual(["b"]);
				await expectStorageError(c.storage.readRange(c.at("a"), 0, 1), "not-found");
			});
			test("removing a missing file is fine", async (c) => {
				expect(await c.storage.remove(c.at("missing"))).toBe(undefined);
				expect(await c.storage.remove(c.at("no-dir", "missing"))).toBe(undefined);
				expect(await names(c, c.root)).toEqual([]);
			});
			test("a removed file can be created exclusively again", async (c) => {
				await c.storage.createExclusive(c.at("f"), [bytes("1")], false);
				await c.storage.remove(c.at("f"));
				await c.storage.createExclusive(c.at("f"), [bytes("2")], false);
				expect(await readText(c, c.at("f"))).toBe("2");
			});
		});

		describe("lockOwner and isLockOwnerAlive", () => {
			test("an owner has typed fields and survives JSON", async (c) => {
				const owner = await c.storage.lockOwner();
				expect(Number.isInteger(owner.pid) && owner.pid >= 0).toBe(true);
				expect(typeof owner.host === "string" && owner.host.length > 0).toBe(true);
				expect(Number.isFinite(owner.startedAt) && owner.startedAt <= Date.now()).toBe(true);
				expect(typeof owner.token === "string" && owner.token.length > 0).toBe(true);
				expect(JSON.parse(JSON.stringify(owner))).toEqual(owner);
			});
			test("tokens differ between calls; pid and host do not", async (c) => {
				const owners = await Promise.all([0, 1, 2, 3].map(() => c.storage.lockOwner()));
				expect(new Set(owners.map((o) => o.token)).size).toBe(4);
				expect(new Set(owners.map((o) => o.host)).size).toBe(1);
				expect(new Set(owners.map((o) => o.pid)).size).toBe(1);
			});
			test("an owner on this host whose pid is not running and whose token is not held is not alive", async (c) => {
				expect(await c.storage.isLockOwnerAlive(await deadOwner(c))).toBe(false);
			});
			test(`this process's own owner, with a token this thread does not hold, is ${options.ownUnheldOwner ?? "dead"}`, async (c) => {
				const alive = await c.storage.isLockOwnerAlive(await c.storage.lockOwner());
				expect(alive).toBe(options.ownUnheldOwner === "alive");
			});
		});

		describe("writer lock (lock.ts)", () => {
			test("acquire writes the lock file; a second acquire is refused with the holder", async (c) => {
				const path = c.at("s.jsonl");
				const lock = await c.run(acquireLock(path));
				try {
					expect(lock.path).toBe(path);
					expect(lock.lockPath).toBe(lockPathOf(path));
					expect((await c.storage.stat(lock.lockPath))?.isFile).toBe(true);
					expect(JSON.parse(await readText(c, lock.lockPath))).toEqual(lock.owner);
					expect(await c.storage.isLockOwnerAlive(lock.owner)).toBe(true);
					const error = await expectLocked(c.run(acquireLock(path)));
					expect(error.path).toBe(path);
					expect(error.owner).toEqual(lock.owner);
					expect(JSON.parse(await readText(c, lock.lockPath))).toEqual(lock.owner);
				} finally {
					await c.run(releaseLock(lock));
				}
			});
			test("release removes the lock file, and the lock can be taken again", async (c) => {
				const path = c.at("s.jsonl");
				const first = await c.run(acquireLock(path));
				await c.run(releaseLock(first));
				expect(await c.storage.stat(first.lockPath)).toBeNull();
				expect(await names(c, c.root)).toEqual([]);
				const second = await c.run(acquireLock(path));
				expect(second.owner.token === first.owner.token).toBe(false);
				await c.run(releaseLock(second));
				expect(await names(c, c.root)).toEqual([]);
			});
			test("locks of different sessions are independent", async (c) => {
				const a = await c.run(acquireLock(c.at("a.jsonl")));
				const b = await c.run(acquireLock(c.at("b.jsonl")));
				expect(await names(c, c.root)).toEqual(["a.jsonl.lock", "b.jsonl.lock"]);
				await c.run(releaseLock(a));
				await c.run(releaseLock(b));
				expect(await names(c, c.root)).toEqual([]);
			});
			test("release leaves a lock file that is no longer ours alone", async (c) => {
				const lock = await c.run(acquireLock(c.at("s.jsonl")));
				const other = await deadOwner(c, "someone-else");
				await c.storage.replace(lock.lockPath, [ownerJson(other)]);
				await c.run(releaseLock(lock));
				expect(JSON.parse(await readText(c, lock.lockPath))).toEqual(other);
			});
			test("a stale lock (owner not running, token not held) is taken over, leaving no leftovers", async (c) => {
				const path = c.at("s.jsonl");
				const stale = await deadOwner(c);
				await c.storage.createExclusive(lockPathOf(path), [ownerJson(stale)], false);
				const lock = await c.run(acquireLock(path));
				try {
					expect(lock.owner.token === stale.token).toBe(false);
					expect(JSON.parse(await readText(c, lock.lockPath))).toEqual(lock.owner);
					expect(await names(c, c.root)).toEqual(["s.jsonl.lock"]);
				} finally {
					await c.run(releaseLock(lock));
				}
				expect(await names(c, c.root)).toEqual([]);
			});
			test("a fresh lock file that cannot be read (being written?) is refused and left alone", async (c) => {
				const garbage = ["", "not json {", '{"pid":1}', "null"];
				for (const [i, content] of garbage.entries()) {
					const path = c.at(`s${i}.jsonl`);
					await c.storage.createExclusive(lockPathOf(path), [bytes(content)], false);
					const error = await expectLocked(c.run(acquireLock(path)));
					expect(error.owner).toBe(undefined);
					expect(await readText(c, lockPathOf(path))).toBe(content);
				}
				expect((await names(c, c.root)).length).toBe(garbage.length);
			});
			test("acquiring in a missing directory fails with not-found, not as locked", async (c) => {
				await expectStorageError(c.run(acquireLock(c.at("no-dir", "s.jsonl"))), "not-found");
			});
			if (mode === "async") {
				/** Five acquires at once, five rounds: exactly one wins each round, the others are refused. */
				const expectOneWinner = async (c: Context, prepare: (path: string) => Promise<void>) => {
					for (let round = 0; round < 5; round++) {
						const path = c.at(`s${round}.jsonl`);
						await prepare(path);
						const results = await Promise.allSettled([0, 1, 2, 3, 4].map(() => c.run(acquireLock(path))));
						const won = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
						expect(won.length).toBe(1);
						for (const r of results) {
							if (r.status === "rejected") expect(r.reason instanceof SessionLockedError).toBe(true);
						}
						const lock = won[0] as WriterLock;
						expect(JSON.parse(await readText(c, lock.lockPath))).toEqual(lock.owner);
						await c.run(releaseLock(lock));
					}
					expect(await names(c, c.root)).toEqual([]);
				};
				test("of concurrent acquires exactly one succeeds", (c) => expectOneWinner(c, async () => undefined));
				test("of concurrent takeovers of a stale lock exactly one succeeds", (c) =>
					expectOneWinner(c, async (path) => {
						await c.storage.createExclusive(lockPathOf(path), [ownerJson(await deadOwner(c))], false);
					}));
			} else {
				test("after one acquire, later ones are refused until it is released", async (c) => {
					const path = c.at("s.jsonl");
					const lock = await c.run(acquireLock(path));
					for (let i = 0; i < 3; i++) expect((await expectLocked(c.run(acquireLock(path)))).owner).toEqual(lock.owner);
					await c.run(releaseLock(lock));
					await c.run(releaseLock(await c.run(acquireLock(path))));
					expect(await names(c, c.root)).toEqual([]);
				});
			}
		});
	};

	describe(name, () => {
		cases("async");
		if (!options.sync) return;
		describe("through runTaskSync on the sync storage", () => {
			cases("sync");
			/** A test given the fixture's sync storage and its root, created. */
			const withSync = (
				title: string,
				body: (fixture: StorageFixture, sync: SyncStorage, root: string) => Promise<void>,
			) =>
				it(title, async () => {
					const fixture = await factory();
					try {
						const sync = fixture.syncStorage;
						expect(sync === undefined).toBe(false);
						if (!sync) return;
						const root = fixture.root.replace(/\/+$/, "");
						await fixture.storage.mkdir(root);
						await body(fixture, sync, root);
					} finally {
						await fixture.cleanup?.();
					}
				});
			withSync("the async and the sync storage see the same files", async (fixture, sync, root) => {
				await fixture.storage.append(`${root}/a`, bytes("from async"), false);
				runTaskSync(io("createExclusive", `${root}/b`, [bytes("from sync")], false), sync);
				expect(text(runTaskSync(io("readRange", `${root}/a`, 0, 100), sync))).toBe("from async");
				expect(text(await fixture.storage.readRange(`${root}/b`, 0, 100))).toBe("from sync");
				expect(byName(runTaskSync(io("list", root), sync))).toEqual(byName(await fixture.storage.list(root)));
			});
			withSync("a lock taken through one driver is refused through the other", async (fixture, sync, root) => {
				const path = `${root}/s.jsonl`;
				const held = await runTask(acquireLock(path), fixture.storage);
				const refusedSync = await rejection(Promise.resolve().then(() => runTaskSync(acquireLock(path), sync)));
				expect(refusedSync instanceof SessionLockedError && refusedSync.owner?.token).toBe(held.owner.token);
				await runTask(releaseLock(held), fixture.storage);
				const heldSync = runTaskSync(acquireLock(path), sync);
				const refused = await rejection(runTask(acquireLock(path), fixture.storage));
				expect(refused instanceof SessionLockedError && refused.owner?.token).toBe(heldSync.owner.token);
				runTaskSync(releaseLock(heldSync), sync);
				expect(await fixture.storage.stat(lockPathOf(path))).toBeNull();
			});
		});
	});
}
