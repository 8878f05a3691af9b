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
import { StorageError } from "../src/storage.ts";
import type { LockIdentity, LockOwner, SyncWriterLocks } from "../src/writer-lock.ts";
import { fsPromisesStorage, isNoDirectory, linkErrorOf, storageErrorOf, temporaryName } from "./fs-promises.ts";

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
	return fsPromisesStorage(fs.promises, (path) => resolvePath(path));
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

function writeAllSync(path: string, flags: string, chunks: Iterable<Uint8Array>, durable: boolean): void {
	const fd = fs.openSync(path, flags);
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
		writeAllSync(temporary, "wx", chunks, durable);
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
		fs.rmSync(temporary, { force: true });
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
				const fd = fs.openSync(path, "r");
				try {
					const buffer = new Uint8Array(Math.max(0, Math.min(end, fs.fstatSync(fd).size) - start));
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
		append: (path, data, durable) => guarded(path, () => writeAllSync(path, "a", [data], durable)),
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
					writeAllSync(temporary, "wx", chunks, true);
					// The file keeps its permissions (a session made private stays private).
					const mode = fs.statSync(path, { throwIfNoEntry: false })?.mode;
					if (mode !== undefined) fs.chmodSync(temporary, mode & 0o7777);
					fs.renameSync(temporary, path);
				} catch (error) {
					fs.rmSync(temporary, { force: true });
					throw error;
				}
			}),
		rename: (from, to) => guarded(from, () => fs.renameSync(from, to)),
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
