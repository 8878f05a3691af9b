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
	/** The lock that taking this one broke, when it was older than the stale-after age (see `LockFileOptions`). */
	readonly broke?: BrokenLock;
}

/** A lock removed although its holder could not be told gone: for being older than the stale-after age, or by force. */
export interface BrokenLock {
	/** The session file whose lock it was. */
	readonly path: string;
	/** Its holder, as its lock file named it; undefined when the file could not be read. */
	readonly owner: LockOwner | undefined;
	/** The holder in words (`pid 12 on box`). */
	readonly holder: string;
	/** How old the lock file was (ms since it was written: holders never rewrite it), when it could be told. */
	readonly ageMs: number | undefined;
	readonly reason: "stale-after" | "forced";
	/** What it means, for the user: a warning naming the file, the holder and the risk. */
	readonly message: string;
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
	/**
	 * Whether `isLockOwnerAlive` really tells for this owner (one of this machine), or only presumes it alive
	 * (another machine's). Only a presumed-alive lock can expire by age (`LockFileOptions.staleAfterMs`);
	 * without this member every owner is taken as told, and no lock ever expires.
	 */
	canTellIfAlive?(owner: LockOwner): boolean;
	/** The owner in words, for errors (default: `pid <pid> on <host>`). */
	describeOwner?(owner: LockOwner): string;
}
