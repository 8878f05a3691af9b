/**
 * The one small storage interface the engine needs, and the way the engine talks to it.
 *
 * `StorageOps` lists the operations with plain results. An adapter implements them either
 * asynchronously (`Storage`, the normal case) or synchronously (`SyncStorage`, only for the
 * pi-compatible `SessionManager`). The engine's I/O logic is written once, as generator "tasks" that
 * yield the operations they need; `runTask` performs them on a `Storage`, `runTaskSync` on a
 * `SyncStorage`. So every persistence rule exists once, whichever way it is driven.
 * @module
 */

import { StorageError, type StorageErrorCode } from "./errors.ts";
import { randomUuid } from "./ids.ts";

export { StorageError, type StorageErrorCode };

/** What `stat` tells. */
export interface FileStat {
	size: number;
	mtimeMs: number;
	isFile: boolean;
	isDirectory: boolean;
}

/** One entry of a directory listing. */
export interface DirEntry {
	name: string;
	isFile: boolean;
	isDirectory: boolean;
}

/**
 * The operations, with their results written as plain values. Paths are absolute, `/`-separated.
 * `durable` asks the adapter to flush to stable storage (fsync) before returning.
 *
 * Only regular files (or links to them) are read, written or replaced: where a directory, a named pipe,
 * a socket or a device is, `readRange`, `append`, `replace` and `rename` (its target) fail with
 * `not-a-file` naming the path, without waiting (a named pipe is never opened in a way that waits for its
 * other end) and without changing what is there.
 */
export interface StorageOps {
	/**
	 * Bytes `[start, end)` of a file; fewer at its end. `not-found` if there is no such file. With `into`, the
	 * storage may read into it, when it holds the bytes to read, and return a view of it, sparing a new buffer
	 * (the caller does not touch it until the read has settled); a storage may as well ignore it.
	 */
	readRange(path: string, start: number, end: number, into?: Uint8Array): Uint8Array;
	/**
	 * Append to a file, creating it if needed. With `atSize`, the file must exist and hold exactly that many
	 * bytes: a missing file is `not-found` (and is not created), one of another size `changed`; either way
	 * nothing is written. A session passes the size it wrote the file to, so that it notices a file removed,
	 * truncated or appended to by someone else, instead of writing into a new or a foreign one.
	 */
	append(path: string, data: Uint8Array, durable: boolean, atSize?: number): void;
	/**
	 * Create a file that must not exist yet (`exists` otherwise), with the given chunks as content. Chunks
	 * may be produced as they are asked for (a rewrite of a large file is encoded while it is written):
	 * iterate them once, in order. Whole or not at all: nobody sees the file before all of it is written,
	 * and a create that fails leaves nothing behind (so a lock file is never seen empty, and a failed
	 * create can be tried again).
	 */
	createExclusive(path: string, chunks: Iterable<Uint8Array>, durable: boolean): void;
	/** Replace a file atomically: write a temporary file, flush it, rename it over `path`. */
	replace(path: string, chunks: Iterable<Uint8Array>): void;
	/** Rename; `not-found` if `from` does not exist. Replaces `to`. */
	rename(from: string, to: string): void;
	/**
	 * Give an existing file a second name (a hard link: appends to either name show in both). `exists` if
	 * `to` exists, `not-found` if `from` does not, `unsupported` if this storage has no hard links.
	 */
	link(from: string, to: string): void;
	/** `null` when nothing is there. */
	stat(path: string): FileStat | null;
	/** Entries of a directory; empty when it does not exist. */
	list(dir: string): DirEntry[];
	/** Create a directory and its parents. */
	mkdir(dir: string): void;
	/** Remove a file; nothing happens when it does not exist. */
	remove(path: string): void;
}

/**
 * Operations a task may ask for that the runners perform with the storage's own: an adapter does not
 * implement them.
 */
export interface RunnerOps {
	/**
	 * `stat` of every path, in order; the first failure is thrown. `runTask` takes `STATS_AT_ONCE` at a time:
	 * one after another, each is a trip to the I/O threads (1,000 took ~140 ms here, many at once ~20).
	 */
	statAll(paths: readonly string[]): (FileStat | null)[];
	/**
	 * `readRange`, into a buffer the runner keeps for the task (up to 8 MiB; a longer range is read as
	 * `readRange` reads it): the bytes are the task's only until its next operation. For a task that reads a
	 * big file range by range and keeps nothing of a range once it asks for the next (a lazy open): a new
	 * buffer per range costs an allocation, its page faults and the collector's work (at 100 MB, ~40 ms of
	 * a ~330 ms open and 34 MB of peak RSS here).
	 */
	readReusing(path: string, start: number, end: number): Uint8Array;
}

type Operation = keyof StorageOps;
type TaskOperation = Operation | keyof RunnerOps;
type TaskOps = StorageOps & RunnerOps;
type Args<K extends TaskOperation> = Parameters<TaskOps[K]>;
type Result<K extends TaskOperation> = ReturnType<TaskOps[K]>;

/** The asynchronous storage interface every adapter implements. */
export type Storage = { [K in Operation]: (...args: Args<K>) => Promise<Result<K>> };

/** The same operations, synchronously (Node's sync `fs`), for the pi-compatible facade. */
export type SyncStorage = StorageOps;

/** One operation a task asks for. */
export type Effect = { [K in TaskOperation]: { op: K; args: Args<K> } }[TaskOperation];

/** A piece of engine logic that yields storage operations and returns `T`. */
export type Task<T> = Generator<Effect, T, unknown>;

/**
 * Ask for one storage operation inside a task: `const bytes = yield* io("readRange", path, 0, 100)`.
 * @example
 * function* exists(path: string): Task<boolean> {
 *   return (yield* io("stat", path)) !== null;
 * }
 */
export function* io<K extends TaskOperation>(op: K, ...args: Args<K>): Generator<Effect, Result<K>, unknown> {
	return (yield { op, args } as Effect) as Result<K>;
}

/**
 * Remove a file of our own making after a failure. Best effort: a failure to remove it must not hide
 * the failure being reported.
 */
export function* removeQuietly(path: string): Task<void> {
	try {
		yield* io("remove", path);
	} catch {
		// The first failure is the one to report.
	}
}

type AnyOperation = (...args: unknown[]) => unknown;

/**
 * Run a task against an asynchronous storage. A failing operation is thrown into the task, so tasks
 * handle storage errors with ordinary `try`/`catch`.
 * @example
 * const stat = await runTask(io("stat", "/a.jsonl"), storage);
 */
export async function runTask<T>(
	task: Task<T>,
	storage: Storage,
	buffers: ReadBuffers = new ReadBuffers(),
): Promise<T> {
	let step = task.next();
	let sliceStart = Date.now();
	const readAhead = new ReadAhead(storage, buffers);
	try {
		while (!step.done) {
			// A storage that answers without real I/O (in memory) never lets the event loop run: give it a turn
			// now and then, so that messages (an abort, a progress reply) and timers get through.
			if (Date.now() - sliceStart > SLICE_MS) {
				await nextMacrotask();
				sliceStart = Date.now();
			}
			const effect = step.value;
			let result: unknown;
			try {
				result = await (effect.op === "readRange" || effect.op === "readReusing"
					? readAhead.read(effect.args, effect.op === "readReusing")
					: readAhead.other(() => perform(storage, effect)));
			} catch (error) {
				step = task.throw(error);
				continue;
			}
			step = task.next(result);
		}
		return step.value;
	} finally {
		// A read ahead still filling a buffer must not fill it under the next task given the same buffers.
		readAhead.drop();
	}
}

/**
 * The two buffers `readReusing` reads into (see `RunnerOps`): one for each `runTask` by default; tasks run
 * one after another (a listing's lane of files) may share one, so that reading a thousand files takes two
 * buffers, not a thousand. Never share one between tasks that run at the same time.
 */
export class ReadBuffers {
	readonly slots: (Uint8Array | undefined)[] = [undefined, undefined];
}

/**
 * Perform one operation a task asked for on an asynchronous storage (without `runTask`'s read ahead): for
 * code that steps a task by hand.
 */
export function perform(storage: Storage, effect: Effect): Promise<unknown> {
	if (effect.op === "statAll") return pool(effect.args[0], STATS_AT_ONCE, (path) => storage.stat(path));
	if (effect.op === "readReusing") return storage.readRange(...effect.args);
	return (storage[effect.op] as AnyOperation)(...effect.args) as Promise<unknown>;
}

/** `stat`s taken at once by `statAll` and by a listing with a catalog. */
export const STATS_AT_ONCE = 32;

/**
 * Run `work` over `items` with at most `limit` at once; results in input order. The first failure rejects
 * (the items already started still run; none is started after it).
 */
export async function pool<T, R>(
	items: readonly T[],
	limit: number,
	work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
	const results = new Array<R>(items.length);
	let next = 0;
	let failed = false;
	const worker = async () => {
		for (let index = next++; index < items.length && !failed; index = next++) {
			try {
				results[index] = await work(items[index] as T, index);
			} catch (error) {
				failed = true;
				throw error;
			}
		}
	};
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
	return results;
}

/** Reads of at least this many bytes, one right after another, are read ahead. */
const READ_AHEAD_MIN_BYTES = 256 << 10;

/** The longest buffer `readReusing` keeps: a lazy open's longest range (see `fileChunkBytes` in load.ts). */
const REUSED_BUFFER_MAX_BYTES = 8 << 20;

/** A read started before the task asked for it; `slot`: the buffer it fills, when it reuses one. */
interface AheadRead {
	path: string;
	start: number;
	end: number;
	slot: number | undefined;
	bytes: Promise<Uint8Array>;
}

/**
 * Sequential reads overlapped with the work between them: when a task reads a file range by range (the
 * second read starting where the first ended, each at least `READ_AHEAD_MIN_BYTES` and answered in full),
 * the next range of the same size is asked for, and handed over if the task asks for it next (or for its
 * start: the last range of a file, cut at its size). One range, asked for only once the read before it has
 * come back: of a file that grows meanwhile, what the task is handed is what the file held at some moment
 * (two read at once could hand over a prefix it never had, cut mid-line; two read one after another waited
 * as long in a lazy open of 100 MB, 131–268 ms against 138–260, and held 8 MiB more in a big file's).
 * Any other operation drops it (it is only ever a read, so dropping it changes nothing).
 *
 * Reads that reuse a buffer (`readReusing`) take turns with two: the task holds one, the read ahead fills
 * the other. A read ahead that is dropped keeps its buffer (it may still be filling it); a new one is made.
 */
class ReadAhead {
	readonly #storage: Storage;
	#last: { path: string; end: number } | undefined;
	#ahead: AheadRead | undefined;
	readonly #buffers: (Uint8Array | undefined)[];
	/** The buffer of `#buffers` the task was handed last. */
	#held = 0;

	constructor(storage: Storage, buffers: ReadBuffers) {
		this.#storage = storage;
		this.#buffers = buffers.slots;
	}

	async read([path, start, end]: Args<"readRange">, reuse: boolean): Promise<Uint8Array> {
		const ahead = this.#takeAhead(
			(read) => read.path === path && read.start === start && end <= read.end && reuse === (read.slot !== undefined),
		);
		const trim = (read: Uint8Array) => (read.length > end - start ? read.subarray(0, end - start) : read);
		let bytes: Uint8Array;
		if (ahead) {
			if (ahead.slot !== undefined) this.#held = ahead.slot;
			// Its failure is not reported: asked again (its buffer is free once it has failed).
			bytes = await ahead.bytes.then(trim, () => this.#readRange(path, start, end, ahead.slot));
		} else {
			// The buffer the task held is free: it asked for another operation.
			bytes = await this.#readRange(path, start, end, reuse ? this.#held : undefined);
		}
		const sequential = this.#last?.path === path && this.#last.end === start;
		this.#last = { path, end };
		const length = end - start;
		if (sequential && length >= READ_AHEAD_MIN_BYTES && bytes.length === length) {
			const slot = reuse ? 1 - this.#held : undefined;
			// Its buffer chosen now, so that dropping it (and its slot) later never hands that buffer to another
			// read; started a tick later: a storage that throws at once must not fail the read that worked.
			const into = this.#bufferOf(slot, length);
			const next = Promise.resolve().then(() => this.#storage.readRange(path, end, end + length, into));
			next.catch(() => {}); // never reported: the read is asked again when it is wanted
			this.#ahead = { path, start: end, end: end + length, slot, bytes: next };
		}
		return bytes;
	}

	other(operation: () => Promise<unknown>): Promise<unknown> {
		this.drop();
		return operation();
	}

	/** Drop the read ahead, if any (and its buffer: it may still be filling it). */
	drop(): void {
		this.#takeAhead(() => false);
		this.#last = undefined;
	}

	/**
	 * The read ahead, when it `matches` what the task asks for now; any other is dropped, and its buffer with
	 * it (it may still be filling it).
	 */
	#takeAhead(matches: (ahead: AheadRead) => boolean): AheadRead | undefined {
		const ahead = this.#ahead;
		this.#ahead = undefined;
		if (!ahead || matches(ahead)) return ahead;
		if (ahead.slot !== undefined) this.#buffers[ahead.slot] = undefined;
		return undefined;
	}

	/** `readRange`, into the buffer of `slot` when one is given (see `#bufferOf`). */
	#readRange(path: string, start: number, end: number, slot: number | undefined): Promise<Uint8Array> {
		return this.#storage.readRange(path, start, end, this.#bufferOf(slot, end - start));
	}

	/**
	 * The buffer of `slot` (none without one), made or grown for `length` bytes, up to `REUSED_BUFFER_MAX_BYTES`
	 * (a range may be far longer than the file: the storage then sizes a buffer of its own by what the file
	 * holds, as it does without one). It grows to the power of two that holds the range: tasks that share the
	 * buffers (files of a listing, ranges up to a chunk) make few of them as the sizes rise, none past a chunk.
	 */
	#bufferOf(slot: number | undefined, length: number): Uint8Array | undefined {
		if (slot === undefined) return undefined;
		const wanted = Math.min(length, REUSED_BUFFER_MAX_BYTES);
		let buffer = this.#buffers[slot];
		if (!buffer || buffer.length < wanted) {
			buffer = new Uint8Array(Math.min(REUSED_BUFFER_MAX_BYTES, 2 ** Math.ceil(Math.log2(Math.max(1, wanted)))));
			this.#buffers[slot] = buffer;
		}
		return buffer;
	}
}

/** Longest stretch of work `runTask` does without letting the event loop run. */
const SLICE_MS = 10;

/**
 * Resolve after the event loop has handled pending messages and timers: by `setImmediate` where there is
 * one (Node, Bun, Deno), whose turn costs nothing, where `setTimeout(0)` waits 1 ms (2 ms in Deno); else
 * by `setTimeout(0)`. Deno's `setImmediate` (there for Node's sake) can keep a message from the parent of a
 * worker (a cancellation) waiting behind many of its turns (measured: through a whole 300 ms open), and
 * behind one `setTimeout(0)` at most: there every `DENO_TIMEOUT_EVERY`-th pause is one, so a message waits
 * about 50 ms at most for a pause's 2 ms. (A message to itself through a `MessageChannel` would spare a
 * browser its 4 ms clamp, but in a Deno worker it kept a cancellation waiting as well: tried, and flaky.)
 */
function nextMacrotask(): Promise<void> {
	const immediate = (globalThis as { setImmediate?: Immediate }).setImmediate;
	if (immediate && !(IS_DENO && ++denoPauses % DENO_TIMEOUT_EVERY === 0)) {
		return new Promise((resolve) => immediate(resolve));
	}
	return new Promise((resolve) => setTimeout(resolve, 0));
}

type Immediate = (callback: () => void) => unknown;

const IS_DENO = "Deno" in globalThis;
const DENO_TIMEOUT_EVERY = 5;
let denoPauses = 0;

/** Run a task against a synchronous storage (see `runTask`). */
export function runTaskSync<T>(task: Task<T>, storage: SyncStorage): T {
	let step = task.next();
	while (!step.done) {
		const effect = step.value;
		let result: unknown;
		try {
			result =
				effect.op === "statAll"
					? effect.args[0].map((path) => storage.stat(path))
					: effect.op === "readReusing"
						? storage.readRange(...effect.args)
						: (storage[effect.op] as AnyOperation)(...effect.args);
		} catch (error) {
			step = task.throw(error);
			continue;
		}
		step = task.next(result);
	}
	return step.value;
}

/**
 * The name an adapter writes a file under before it gives it its own (an exclusive create, a replace):
 * `<path>.<8 hex digits>.tmp`. One left behind by a writer that was killed is removed by the next one to
 * open the session for writing (`temporaryOf`).
 */
export function temporaryName(path: string): string {
	return `${path}.${randomUuid().slice(0, 8)}.tmp`;
}

/** Which of a file's writes a temporary file is of (see `temporaryOf`). */
export type TemporaryPart = "file" | "lock" | "backup";

/**
 * What the name of a temporary file tells (see `temporaryName`): the name of the file it is a temporary of
 * (`of`), and whether it was being written as that file's content (`file`: a create, a replace), its lock
 * or takeover guard (`lock`), or a backup copy (`backup`). Undefined for any other name.
 * @example
 * temporaryOf("a.jsonl.lock.0123abcd.tmp"); // { of: "a.jsonl", part: "lock" }
 */
export function temporaryOf(name: string): { of: string; part: TemporaryPart } | undefined {
	const base = /^(.+)\.[0-9a-f]{8}\.tmp$/.exec(name)?.[1];
	if (base === undefined) return undefined;
	const lock = /^(.+)\.lock(\.takeover)?$/.exec(base);
	if (lock) return { of: lock[1] as string, part: "lock" };
	const backup = /^(.+)\.v\d+(\.\d+)?\.bak$/.exec(base);
	if (backup) return { of: backup[1] as string, part: "backup" };
	return { of: base, part: "file" };
}

/**
 * The error for a path where something other than a regular file is (see `StorageErrorCode`): `what` it
 * is, in words, when known ("a directory", "a named pipe (FIFO)").
 */
export function notAFileError(path: string, what = "not a regular file"): StorageError {
	return new StorageError("not-a-file", path, `not-a-file: ${path}: ${what}; only regular files are read or written`);
}

/** The error of an append whose file was not `expected` bytes long, as it said it must be (see `append`). */
export function sizeChangedError(path: string, expected: number, found: number): StorageError {
	return new StorageError("changed", path, `changed: ${path}: holds ${found} bytes, not the ${expected} expected`);
}

/** True when `error` is a `StorageError` with this code. */
export function isStorageError(error: unknown, code: StorageErrorCode): error is StorageError {
	return error instanceof StorageError && error.code === code;
}
