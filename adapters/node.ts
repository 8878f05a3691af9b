/**
 * Storage on `node:fs`, for Node, Bun and Deno (all three provide `node:fs`). Also the synchronous
 * twin used only by the pi-compatible `SessionManager`, and the pi layout read from this process's
 * environment and home directory.
 * @example
 * import { createNodeStorage } from "pi-session-tree/node";
 * const storage = createNodeStorage();
 * @module
 */

import * as fs from "node:fs";
import { homedir, hostname } from "node:os";
import { resolve as resolvePath } from "node:path";
import { threadId } from "node:worker_threads";
import { randomUuid } from "../src/ids.ts";
import { isLockHeldHere, type LockFileOptions, type LockFiles, lockFiles, lockFilesSync } from "../src/lock-files.ts";
import { isDeadThread } from "../src/lock-threads.ts";
import { resolveAgentDir } from "../src/paths.ts";
import type { DirEntry, FileStat, Storage, SyncStorage } from "../src/storage.ts";
import { notAFileError, StorageError, sizeChangedError } from "../src/storage.ts";
import type { LockIdentity, LockOwner, SyncWriterLocks } from "../src/writer-lock.ts";
import {
	fileTypeOf,
	fsPromisesStorage,
	isNoDirectory,
	linkErrorOf,
	type OpenFlags,
	storageErrorOf,
	temporaryName,
} from "./fs-promises.ts";

/**
 * When a process started (epoch ms), from Linux's /proc; undefined elsewhere. Computed the same way for
 * our own pid and a lock owner's, so the two compare exactly.
 */
export function processStartTime(pid: number): number | undefined {
	try {
		const bootSeconds = Number(/^btime (\d+)$/m.exec(fs.readFileSync("/proc/stat", "utf8"))?.[1]);
		const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
		// Field 22 (start time in clock ticks since boot) counts from after the parenthesised command name.
		const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
		const clockTicksPerSecond = 100; // USER_HZ, fixed at 100 on Linux's ABI
		return Number.isFinite(bootSeconds) && Number.isFinite(ticks)
			? bootSeconds * 1000 + (ticks * 1000) / clockTicksPerSecond
			: undefined;
	} catch {
		return undefined;
	}
}

const processStartedAt = processStartTime(process.pid) ?? Math.round(Date.now() - process.uptime() * 1000);

/** Start times of one process, as two readings of it may differ (to the whole second of /proc's clock). */
function sameStart(a: number, b: number): boolean {
	return Math.abs(a - b) < 1000;
}

/**
 * This thread's id among the threads of this process, where it can be told (`worker_threads`' `threadId`;
 * Deno's web Workers all report 0, the main thread's, so there it cannot).
 */
const thisThread: number | undefined =
	threadId === 0 && typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined"
		? undefined
		: threadId;

/**
 * Lock owners on this machine: pid, host and thread; liveness by signal 0 for other processes. In this
 * process, a lock of this thread is alive while it holds it; one of another thread (a worker's engine)
 * is alive unless that thread is known to have died (`markThreadDead`, which the worker client calls
 * when its worker dies, in its thread and in the workers it starts later). A lock of this process whose
 * thread cannot be told is alive (never taken from a thread that may run).
 */
export const nodeLockIdentity: LockIdentity = {
	lockOwner: (): LockOwner => {
		const owner: LockOwner = {
			pid: process.pid,
			host: hostname(),
			startedAt: processStartedAt,
			token: randomUuid(),
		};
		if (thisThread !== undefined) owner.thread = thisThread;
		return owner;
	},
	isLockOwnerAlive(owner: LockOwner): boolean {
		if (owner.host !== hostname()) return true; // another machine: cannot tell, so never steal (but see canTellIfAlive)
		if (owner.pid === process.pid) {
			if (!sameStart(owner.startedAt, processStartedAt)) return false; // an earlier process with this pid
			if (isLockHeldHere(owner.token)) return true;
			if (owner.thread === undefined) return true;
			if (owner.thread === thisThread) return false; // this thread's, and it does not hold it: a leftover
			return !isDeadThread(owner.thread);
		}
		try {
			process.kill(owner.pid, 0);
		} catch (error) {
			return (error as { code?: string }).code !== "ESRCH";
		}
		// The pid runs, but it may have been reused by another process since the lock was taken.
		const startedAt = processStartTime(owner.pid);
		return startedAt === undefined || sameStart(startedAt, owner.startedAt);
	},
	/** Only this machine's owners: another's is presumed alive, so its lock can expire (`staleAfterMs`) or be forced. */
	canTellIfAlive: (owner: LockOwner): boolean => owner.host === hostname(),
	describeOwner(owner: LockOwner): string {
		const here = owner.host === hostname() && owner.pid === process.pid && sameStart(owner.startedAt, processStartedAt);
		if (!here) return `pid ${owner.pid} on ${owner.host}`;
		if (owner.thread === undefined) return `a thread of this process (pid ${owner.pid})`;
		return owner.thread === thisThread
			? `this thread of this process (pid ${owner.pid})`
			: `thread ${owner.thread} of this process (pid ${owner.pid}), a worker's engine`;
	},
};

/**
 * Asynchronous storage on the local file system. Relative paths are resolved against the current directory.
 * @example
 * const storage = createNodeStorage();
 * const stat = await storage.stat("/tmp");
 */
export function createNodeStorage(): Storage {
	return fsPromisesStorage(fs.promises, (path) => resolvePath(path), {
		openFlags: NODE_OPEN_FLAGS,
		keepReadHandles: true,
	});
}

/**
 * Existing files are opened without blocking (`O_NONBLOCK`, and `O_NOCTTY`: a terminal never becomes
 * ours), then checked to be regular files: a named pipe's open would otherwise wait for a writer forever
 * (holding one of the I/O threads), and its read or write wait for the other end. On a regular file
 * `O_NONBLOCK` changes nothing. Node, Bun and Deno all pass it through (checked: a FIFO opens at once for
 * reading, and fails with `ENXIO` for writing). Where there is no `O_NONBLOCK` (Windows, which has no
 * named pipes in its file system), the plain flags.
 */
const NODE_OPEN_FLAGS: OpenFlags = (() => {
	const { O_RDONLY, O_WRONLY, O_APPEND, O_CREAT, O_NONBLOCK, O_NOCTTY } = fs.constants;
	if (O_NONBLOCK === undefined) return { read: "r", append: "a", appendExisting: O_WRONLY | O_APPEND };
	const extra = O_NONBLOCK | (O_NOCTTY ?? 0);
	return {
		read: O_RDONLY | extra,
		append: O_WRONLY | O_APPEND | O_CREAT | extra,
		appendExisting: O_WRONLY | O_APPEND | extra,
	};
})();

/** Open a file that should be a regular file (see `NODE_OPEN_FLAGS`); anything else is closed and refused. */
function openRegularSync(path: string, flags: string | number): { fd: number; size: number } {
	const fd = fs.openSync(path, flags);
	try {
		const stat = fs.fstatSync(fd);
		if (!stat.isFile()) throw notAFileError(path, fileTypeOf(stat));
		return { fd, size: stat.size };
	} catch (error) {
		fs.closeSync(fd);
		throw error;
	}
}

/** `path` is missing or a regular file (its permissions then); anything else is refused, never replaced. */
function regularOrMissingSync(path: string): number | undefined {
	const stat = fs.statSync(path, { throwIfNoEntry: false });
	if (stat && !stat.isFile()) throw notAFileError(path, fileTypeOf(stat));
	return stat && stat.mode & 0o7777;
}

/**
 * Writer locks as lock files on the local file system, shared with other processes (and threads) of this
 * machine: a lock whose process is gone is taken over. Another machine's lock stands until it is broken
 * on purpose (`breakLock`) or, with `staleAfterMs`, grows older than that (see `LockFileOptions`).
 * @example
 * const storage = createNodeStorage();
 * const engine = new Engine({ storage, locks: createNodeLocks(storage), agentDir: agentDir() });
 */
export function createNodeLocks(storage: Storage = createNodeStorage(), options?: LockFileOptions): LockFiles {
	return lockFiles(storage, nodeLockIdentity, options);
}

/** The same, synchronously, for the pi-compatible `SessionManager`. */
export function createNodeSyncLocks(
	storage: SyncStorage = createNodeSyncStorage(),
	options?: LockFileOptions,
): SyncWriterLocks {
	return lockFilesSync(storage, nodeLockIdentity, options);
}

function guarded<T>(path: string, action: () => T): T {
	try {
		return action();
	} catch (error) {
		throw error instanceof StorageError ? error : storageErrorOf(error, path);
	}
}

function writeAllTo(fd: number, chunks: Iterable<Uint8Array>, durable: boolean): void {
	for (const chunk of chunks) {
		for (let written = 0; written < chunk.length; ) written += fs.writeSync(fd, chunk, written);
	}
	if (durable) fs.fdatasyncSync(fd);
}

/** Write a file of our own making (`wx`: it cannot be anything but a new regular file). */
function writeAllSync(path: string, chunks: Iterable<Uint8Array>, durable: boolean): void {
	const fd = fs.openSync(path, "wx");
	try {
		writeAllTo(fd, chunks, durable);
	} finally {
		fs.closeSync(fd);
	}
}

/**
 * An exclusive create that is whole or nothing (see `StorageOps.createExclusive`): written under a
 * temporary name and linked to its own; without hard links, written in place and removed on failure.
 */
function createExclusiveSync(path: string, chunks: Iterable<Uint8Array>, durable: boolean): void {
	const temporary = temporaryName(path);
	try {
		writeAllSync(temporary, chunks, durable);
		if (linkedOrUnsupported(temporary, path)) return;
		const fd = fs.openSync(path, "wx"); // from here on the file is ours: remove it if writing fails
		try {
			writeAllTo(fd, [fs.readFileSync(temporary)], durable);
		} catch (writeError) {
			fs.closeSync(fd);
			fs.rmSync(path, { force: true });
			throw writeError;
		}
		fs.closeSync(fd);
	} finally {
		// Best effort: once linked, the create is done, whatever becomes of its temporary (a writing open
		// removes one left behind).
		try {
			fs.rmSync(temporary, { force: true });
		} catch {}
	}
}

/** Link `from` to `to`: true when done, false when this file system has no hard links; throws otherwise. */
function linkedOrUnsupported(from: string, to: string): boolean {
	try {
		fs.linkSync(from, to);
		return true;
	} catch (error) {
		if (linkErrorOf(error, to).code === "unsupported") return false;
		throw error;
	}
}

/** Synchronous storage on the local file system, for the pi-compatible `SessionManager` only. */
export function createNodeSyncStorage(): SyncStorage {
	return {
		readRange: (path, start, end) =>
			guarded(path, () => {
				const { fd, size } = openRegularSync(path, NODE_OPEN_FLAGS.read);
				try {
					const buffer = new Uint8Array(Math.max(0, Math.min(end, size) - start));
					let filled = 0;
					while (filled < buffer.length) {
						const read = fs.readSync(fd, buffer, filled, buffer.length - filled, start + filled);
						if (read === 0) break;
						filled += read;
					}
					return filled === buffer.length ? buffer : buffer.subarray(0, filled);
				} finally {
					fs.closeSync(fd);
				}
			}),
		append: (path, data, durable, atSize) =>
			guarded(path, () => {
				const existing = atSize !== undefined;
				const { fd, size } = openRegularSync(path, existing ? NODE_OPEN_FLAGS.appendExisting : NODE_OPEN_FLAGS.append);
				try {
					if (existing && size !== atSize) throw sizeChangedError(path, atSize, size);
					writeAllTo(fd, [data], durable);
				} finally {
					fs.closeSync(fd);
				}
			}),
		createExclusive: (path, chunks, durable) => guarded(path, () => createExclusiveSync(path, chunks, durable)),
		link: (from, to) =>
			guarded(from, () => {
				try {
					fs.linkSync(from, to);
				} catch (error) {
					throw linkErrorOf(error, from);
				}
			}),
		replace: (path, chunks) =>
			guarded(path, () => {
				const temporary = temporaryName(path);
				try {
					writeAllSync(temporary, chunks, true);
					// The file keeps its permissions (a session made private stays private); what is not a
					// regular file is never replaced.
					const mode = regularOrMissingSync(path);
					if (mode !== undefined) fs.chmodSync(temporary, mode);
					fs.renameSync(temporary, path);
				} catch (error) {
					fs.rmSync(temporary, { force: true });
					throw error;
				}
			}),
		rename: (from, to) =>
			guarded(from, () => {
				regularOrMissingSync(to);
				fs.renameSync(from, to);
			}),
		stat: (path) =>
			guarded(path, (): FileStat | null => {
				const stat = fs.statSync(path, { throwIfNoEntry: false });
				return stat
					? { size: stat.size, mtimeMs: stat.mtimeMs, isFile: stat.isFile(), isDirectory: stat.isDirectory() }
					: null;
			}),
		list: (dir) =>
			guarded(dir, (): DirEntry[] => {
				try {
					return fs
						.readdirSync(dir, { withFileTypes: true })
						.map((e) => ({ name: e.name, isFile: e.isFile(), isDirectory: e.isDirectory() }));
				} catch (error) {
					if (isNoDirectory(error)) return [];
					throw error;
				}
			}),
		mkdir: (dir) =>
			guarded(dir, () => {
				fs.mkdirSync(dir, { recursive: true });
			}),
		remove: (path) => guarded(path, () => fs.rmSync(path, { force: true })),
	};
}

/**
 * pi's agent directory for this process: `$PI_CODING_AGENT_DIR` (with `~` expanded) or `~/.pi/agent`.
 * @example
 * const sessionsRoot = `${agentDir()}/sessions`;
 */
export function agentDir(): string {
	return resolveAgentDir(process.env.PI_CODING_AGENT_DIR, homedir());
}
