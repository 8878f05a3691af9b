/**
 * Writer locks as lock files: an exclusive file `<session>.lock` holding the owner's pid, host, start
 * time and a unique token. A lock whose owner is gone (as a `LockIdentity` tells) is taken over; a live
 * one is refused with `SessionLockedError`. Written once as tasks, so async and sync drivers share it.
 * @module
 */

import { SessionLockedError } from "./errors.ts";
import { randomUuid } from "./ids.ts";
import { io, isStorageError, runTask, runTaskSync, type Storage, type SyncStorage, type Task } from "./storage.ts";
import type { HeldLock, LockIdentity, LockOwner, SyncWriterLocks, WriterLocks } from "./writer-lock.ts";

export { SessionLockedError };

/**
 * Tokens of the writer locks this JavaScript realm holds now, of every kind (lock files here, Web Locks in
 * web-locks.ts), so it can tell its live locks from leftovers and name itself as a holder. Kept on the
 * realm's global object, so that two copies of this module in one realm (a package installed twice, a dev
 * server's hot reload) see each other's locks as live instead of taking them over.
 */
const realmGlobals = globalThis as Record<symbol, Set<string> | undefined>;
const HELD_LOCKS = Symbol.for("pi-session-tree.heldLocks");
realmGlobals[HELD_LOCKS] ??= new Set<string>();
export const realmHeldLocks: Set<string> = realmGlobals[HELD_LOCKS];
const heldHere = realmHeldLocks;

/** Whether this realm currently holds the lock with this token. */
export function isLockHeldHere(token: string): boolean {
	return heldHere.has(token);
}

/** A lock file that cannot be read may be one being written right now; only this old is it abandoned. */
const UNREADABLE_LOCK_GRACE_MS = 10_000;
const encoder = new TextEncoder();

/** The lock file of a session file. */
export function lockPathOf(path: string): string {
	return `${path}.lock`;
}

/** The owner written in a lock file; null when there is none or it cannot be read. */
export function* readOwner(lockPath: string): Task<LockOwner | null> {
	const found = yield* readLock(lockPath);
	return found === "unreadable" ? null : found;
}

/**
 * What a lock file holds: its owner, `"unreadable"` when it holds none that can be read (a file left empty
 * by a crash, or damaged), or null when there is no file. A missing file and an unreadable one must not be
 * taken for each other: a lock judged unreadable and stale may be removed, a missing one is never "still it".
 */
function* readLock(lockPath: string): Task<LockOwner | "unreadable" | null> {
	let bytes: Uint8Array;
	try {
		bytes = yield* io("readRange", lockPath, 0, 4096);
	} catch (error) {
		if (isStorageError(error, "not-found")) return null;
		throw error;
	}
	try {
		const owner = JSON.parse(new TextDecoder().decode(bytes)) as LockOwner;
		const valid =
			typeof owner.pid === "number" &&
			typeof owner.host === "string" &&
			typeof owner.startedAt === "number" &&
			typeof owner.token === "string";
		return valid ? owner : "unreadable";
	} catch {
		return "unreadable";
	}
}

/** The same lock file as judged before: the same holder, or unreadable both times. */
function sameLock(a: LockOwner | "unreadable", b: LockOwner | "unreadable"): boolean {
	return a === "unreadable" || b === "unreadable" ? a === b : a.token === b.token;
}

function* isYoung(path: string): Task<boolean> {
	const stat = yield* io("stat", path);
	return !!stat && Date.now() - stat.mtimeMs < UNREADABLE_LOCK_GRACE_MS;
}

/**
 * Take the writer lock of `path`, or throw `SessionLockedError`.
 *
 * A stale lock (its owner is gone) is replaced only under a second exclusive file, `<lock>.takeover`:
 * the one taker holding it checks that the lock is still the stale one it judged before removing it, so
 * two takers never both end up holding the lock. One narrow window is left: a guard left behind by a taker
 * that crashed is cleared by stat-then-remove, and two takers clearing it at the very same moment may both
 * enter (each still checks the lock before removing it).
 * @example
 * const lock = await runTask(acquireLock("/s/a.jsonl", identity), storage);
 */
export function* acquireLock(path: string, identity: LockIdentity): Task<HeldLock> {
	const lockPath = lockPathOf(path);
	const owner = identity.lockOwner();
	const content = encoder.encode(`${JSON.stringify(owner)}\n`);
	for (let attempt = 0; attempt < 5; attempt++) {
		// Registered before the file exists, so that a competitor in this realm that reads the new lock
		// file at once sees it as alive.
		heldHere.add(owner.token);
		try {
			yield* io("createExclusive", lockPath, [content], false);
			return { path, owner };
		} catch (error) {
			heldHere.delete(owner.token);
			// Any other failure (out of file descriptors, a full disk) left no file of ours: an exclusive create
			// is whole or nothing. A lock file there now is someone else's, and must be left alone.
			if (!isStorageError(error, "exists")) throw error;
		}
		const current = yield* readLock(lockPath);
		if (current === null) continue; // released meanwhile: try again
		if (current !== "unreadable" && identity.isLockOwnerAlive(current)) {
			throw new SessionLockedError(path, current, undefined, identity.describeOwner?.(current));
		}
		// An unreadable lock file may be one that is being written right now.
		if (current === "unreadable" && (yield* isYoung(lockPath))) throw new SessionLockedError(path, undefined);
		yield* removeStaleLock(path, lockPath, current, content);
	}
	throw new SessionLockedError(path, undefined);
}

/** Remove the lock file if it still is the stale one judged, holding `<lock>.takeover` while doing so. */
function* removeStaleLock(
	path: string,
	lockPath: string,
	stale: LockOwner | "unreadable",
	guardContent: Uint8Array,
): Task<void> {
	const guard = `${lockPath}.takeover`;
	try {
		yield* io("createExclusive", guard, [guardContent], false);
	} catch (error) {
		if (!isStorageError(error, "exists")) throw error;
		// Another taker is at work; only a guard left behind by a crashed taker is cleared (one that is gone
		// by now was another taker's, done: nothing to clear, and its successor's must not be removed).
		const stat = yield* io("stat", guard);
		if (!stat) return;
		if (Date.now() - stat.mtimeMs < UNREADABLE_LOCK_GRACE_MS) throw new SessionLockedError(path, undefined);
		yield* io("remove", guard);
		return;
	}
	try {
		const now = yield* readLock(lockPath);
		if (now !== null && sameLock(now, stale)) yield* io("remove", lockPath);
	} finally {
		yield* io("remove", guard);
	}
}

/** Release a lock taken by `acquireLock`; a lock file that is no longer ours is left alone. */
export function* releaseLock(lock: HeldLock): Task<void> {
	const lockPath = lockPathOf(lock.path);
	try {
		const current = yield* readOwner(lockPath);
		if (current?.token === lock.owner.token) yield* io("remove", lockPath);
	} finally {
		// Only now: while the file is still there, an opener in this realm must see it as held, not as
		// abandoned (taking it over would let this late removal delete the new owner's lock).
		heldHere.delete(lock.owner.token);
	}
}

/** Lock files on `storage`, their owners named and judged by `identity`. */
export function lockFiles(storage: Storage, identity: LockIdentity): WriterLocks {
	return {
		acquire: (path) => runTask(acquireLock(path, identity), storage),
		release: (lock) => runTask(releaseLock(lock), storage),
		owner: async (path) => (await runTask(readOwner(lockPathOf(path)), storage)) ?? undefined,
	};
}

/** Lock files on a synchronous storage (the pi-compatible facade). */
export function lockFilesSync(storage: SyncStorage, identity: LockIdentity): SyncWriterLocks {
	return {
		acquire: (path) => runTaskSync(acquireLock(path, identity), storage),
		release: (lock) => runTaskSync(releaseLock(lock), storage),
		owner: (path) => runTaskSync(readOwner(lockPathOf(path)), storage) ?? undefined,
	};
}

/** This realm's name in lock files of `realmLockIdentity`. */
const realmHost = `realm:${randomUuid()}`;

/**
 * Owners known only to this JavaScript realm: a lock is alive while this realm holds it, and one taken
 * anywhere else is always alive (nothing here can tell it is gone, so it is never taken over). The
 * default where no identity of a runtime is given; right for storage no other realm uses (in memory).
 */
export const realmLockIdentity: LockIdentity = {
	lockOwner: () => ({ pid: 0, host: realmHost, startedAt: Date.now(), token: randomUuid() }),
	isLockOwnerAlive: (owner) => owner.host !== realmHost || heldHere.has(owner.token),
};
