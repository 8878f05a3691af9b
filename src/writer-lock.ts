/**
 * The writer lock seam: one writer per session file. `WriterLocks` is all the engine asks of a lock;
 * lock files (lock-files.ts) are one implementation, for file systems shared between processes; a
 * browser can use Web Locks. A storage holds files only.
 * @module
 */

/** Who holds a writer lock: enough to tell whether that holder is still running. */
export interface LockOwner {
	pid: number;
	host: string;
	/** When the owning process started (epoch ms), to tell a reused pid from the owner. */
	startedAt: number;
	/** Unique per lock taken, so one process can tell its own live locks from leftovers. */
	token: string;
	/** The thread of the owning process that took it (Node's `threadId`), where a process has several. */
	thread?: number;
}

/** A lock that is held. */
export interface HeldLock {
	/** The session file it locks. */
	readonly path: string;
	readonly owner: LockOwner;
}

/**
 * Writer locks of session files. `acquire` takes the lock or throws `SessionLockedError` (naming the
 * holder when known); `release` lets go of a lock taken here (and leaves alone one that is no longer
 * ours); `owner` says who holds a file's lock now, if anyone.
 */
export interface WriterLocks {
	acquire(path: string): Promise<HeldLock>;
	release(lock: HeldLock): Promise<void>;
	owner(path: string): Promise<LockOwner | undefined>;
}

/** The same, synchronously, for the pi-compatible `SessionManager`. */
export interface SyncWriterLocks {
	acquire(path: string): HeldLock;
	release(lock: HeldLock): void;
	owner(path: string): LockOwner | undefined;
}

/** How lock files name their owner in one environment, and tell whether an owner still runs. */
export interface LockIdentity {
	lockOwner(): LockOwner;
	/** True when that cannot be known: a lock is never taken from a holder that may be alive. */
	isLockOwnerAlive(owner: LockOwner): boolean;
	/** The owner in words, for errors (default: `pid <pid> on <host>`). */
	describeOwner?(owner: LockOwner): string;
}
