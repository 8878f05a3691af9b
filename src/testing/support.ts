/**
 * What every module of the storage conformance suite shares: the public types of `testStorage`, the byte
 * and promise helpers, and `Suite`, which registers one test with a fresh fixture and checks results.
 * Runtime-neutral: nothing here may need Node (the suite runs in browsers too).
 * @module
 */
import { realmLockIdentity, SessionLockedError } from "../lock-files.ts";
import {
	type DirEntry,
	io,
	runTask,
	runTaskSync,
	type Storage,
	StorageError,
	type StorageErrorCode,
	type SyncStorage,
	type Task,
} from "../storage.ts";
import type { LockIdentity, LockOwner } from "../writer-lock.ts";

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
	/** How lock files on this storage name and judge their owners (default `realmLockIdentity`). */
	lockIdentity?: LockIdentity;
	/** Called after the test, passed or failed. */
	cleanup?: () => Promise<void>;
	/**
	 * Make a named pipe (FIFO) at `path`; false when it cannot be made here. Only where the storage can
	 * hold one (the local file system): the special-file tests check only then.
	 */
	makeFifo?: (path: string) => Promise<boolean>;
}

/** Called once per test. */
export type StorageFactory = () => Promise<StorageFixture>;

export interface TestStorageOptions {
	/** The factory returns a `syncStorage` too: run the suite through `runTaskSync` as well. */
	sync?: boolean;
}

/** What one test works with. `storage` is the adapter itself, or the sync twin behind `runTaskSync`. */
export interface Context {
	storage: Storage;
	root: string;
	/** A path inside `root`. */
	at(...names: string[]): string;
	/** Run a task with the driver under test (`runTask` or `runTaskSync`). */
	run<T>(task: Task<T>): Promise<T>;
	fixture: StorageFixture;
	/** The fixture's lock identity. */
	identity: LockIdentity;
}

export type Body = (c: Context) => Promise<void>;

/** A pid no process has on Linux, macOS or Windows (all cap pids far lower). */
export const DEAD_PID = 2147483646;
export const MiB: number = 1024 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const bytes = (text: string): Uint8Array => encoder.encode(text);
export const text = (data: Uint8Array): string => decoder.decode(data);
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Deterministic bytes covering every value, 0x00 and 0xff included. */
export function pattern(length: number, seed = 1): Uint8Array {
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

export function concat(chunks: readonly Uint8Array[]): Uint8Array {
	const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
	let offset = 0;
	for (const chunk of chunks) {
		out.set(chunk, offset);
		offset += chunk.length;
	}
	return out;
}

/** Index of the first differing byte, the shorter length when one is a prefix of the other, or -1. */
export function firstDifference(a: Uint8Array, b: Uint8Array): number {
	const length = Math.min(a.length, b.length);
	for (let i = 0; i < length; i++) if (a[i] !== b[i]) return i;
	return a.length === b.length ? -1 : length;
}

/** The rejection of `promise`; fails when it fulfils. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
	try {
		await promise;
	} catch (error) {
		return error;
	}
	throw new Error("expected a rejection, but the promise fulfilled");
}

export function byName(entries: readonly DirEntry[]): DirEntry[] {
	return [...entries]
		.map((e) => ({ name: e.name, isFile: e.isFile, isDirectory: e.isDirectory }))
		.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The same operations on a `SyncStorage`, each one performed by `runTaskSync`. */
function storageOverSync(sync: SyncStorage): Storage {
	return {
		readRange: async (path, start, end) => runTaskSync(io("readRange", path, start, end), sync),
		append: async (path, data, durable, atSize) => runTaskSync(io("append", path, data, durable, atSize), sync),
		createExclusive: async (path, chunks, durable) => runTaskSync(io("createExclusive", path, chunks, durable), sync),
		replace: async (path, chunks) => runTaskSync(io("replace", path, chunks), sync),
		rename: async (from, to) => runTaskSync(io("rename", from, to), sync),
		link: async (from, to) => runTaskSync(io("link", from, to), sync),
		stat: async (path) => runTaskSync(io("stat", path), sync),
		list: async (dir) => runTaskSync(io("list", dir), sync),
		mkdir: async (dir) => runTaskSync(io("mkdir", dir), sync),
		remove: async (path) => runTaskSync(io("remove", path), sync),
	};
}

/** One pass of the suite (through `runTask` or through `runTaskSync`): what each operation's module gets. */
export interface Suite {
	name: string;
	mode: "async" | "sync";
	options: TestStorageOptions;
	describe: TestApi["describe"];
	expect: TestApi["expect"];
	/** Register a test: it gets a fresh fixture, its root created, and the fixture's cleanup afterwards. */
	test(title: string, body: Body): void;
	expectBytes(actual: Uint8Array, expected: Uint8Array): void;
	expectStorageError(promise: Promise<unknown>, code: StorageErrorCode, path?: string): Promise<void>;
	expectLocked(promise: Promise<unknown>): Promise<SessionLockedError>;
	/** The whole file. */
	read(c: Context, path: string): Promise<Uint8Array>;
	readText(c: Context, path: string): Promise<string>;
	/** The sorted names in `dir`. */
	names(c: Context, dir: string): Promise<string[]>;
	/** An owner on this host whose pid is not running. */
	deadOwner(c: Context, token?: string): Promise<LockOwner>;
	/** A lock file's content for `owner`. */
	ownerJson(owner: LockOwner): Uint8Array;
}

export function createSuite(
	name: string,
	factory: StorageFactory,
	t: TestApi,
	options: TestStorageOptions,
	mode: "async" | "sync",
): Suite {
	const { describe, it, expect } = t;
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
				await body({ storage, root, at, run, fixture, identity: fixture.lockIdentity ?? realmLockIdentity });
			} finally {
				await fixture.cleanup?.();
			}
		});
	const read = async (c: Context, path: string): Promise<Uint8Array> => {
		const stat = await c.storage.stat(path);
		return c.storage.readRange(path, 0, (stat?.size ?? 0) + 1024);
	};
	return {
		name,
		mode,
		options,
		describe,
		expect,
		test,
		expectBytes: (actual, expected) => {
			expect(actual instanceof Uint8Array).toBe(true);
			expect(actual.length).toBe(expected.length);
			expect(firstDifference(actual, expected)).toBe(-1);
		},
		expectStorageError: async (promise, code, path) => {
			const error = await rejection(promise);
			expect(error instanceof StorageError ? error.code : error).toBe(code);
			if (path !== undefined) expect((error as StorageError).path).toBe(path);
		},
		expectLocked: async (promise) => {
			const error = await rejection(promise);
			expect(error instanceof SessionLockedError ? "SessionLockedError" : error).toBe("SessionLockedError");
			return error as SessionLockedError;
		},
		read,
		readText: async (c, path) => text(await read(c, path)),
		names: async (c, dir) => byName(await c.storage.list(dir)).map((e) => e.name),
		deadOwner: async (c, token = `dead-${Math.random().toString(36).slice(2)}`) => {
			const own = c.identity.lockOwner();
			return { pid: DEAD_PID, host: own.host, startedAt: 1, token };
		},
		ownerJson: (owner) => bytes(`${JSON.stringify(owner)}\n`),
	};
}
