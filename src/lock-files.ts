/**
 * Writer locks as lock files: an exclusive file `<session>.lock` holding the owner's pid, host, start
 * time and a unique token. A lock whose owner is gone (as a `LockIdentity` tells) is taken over; a live
 * one is refused with `SessionLockedError`. Written once as tasks, so async and sync drivers share it.
 *
 * Whether another machine's holder still runs cannot be told, so its lock would stand forever. The ways
 * out, each announced, never silent: `breakLock` (and `pi-sessions unlock FILE --force`), which removes
 * a lock whose holder may be alive only when forced; and `staleAfterMs`, off by default, past which such
 * a lock is broken by the next `acquire` with a warning. A holder never rewrites its lock file, so its age
 * is how long the lock has been held, not how long since its holder was last seen.
 * @module
 */

import { SessionLockedError } from "./errors.ts";
import { randomUuid } from "./ids.ts";
import { io, isStorageError, runTask, runTaskSync, type Storage, type SyncStorage, type Task } from "./storage.ts";
import type { BrokenLock, HeldLock, LockIdentity, LockOwner, SyncWriterLocks, WriterLocks } from "./writer-lock.ts";

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

/** How lock files are judged, beyond what their `LockIdentity` tells. */
export interface LockFileOptions {
	/**
	 * Age (ms) past which a lock whose holder cannot be told alive or gone (another machine's, as the
	 * identity's `canTellIfAlive` says) is broken by the next `acquire`, with a warning (`onBreak`). Off by
	 * default: such a lock stands until it is released or broken on purpose (`breakLock`, `pi-sessions
	 * unlock --force`). The age is the lock file's, written once when the lock is taken and never refreshed:
	 * a holder that is alive and has kept its session open longer than this loses its lock, and two programs
	 * then append to one file (their entries end up on separate branches). Set it longer than any session
	 * stays open on another machine. A lock file dated in the future (clocks apart) never expires.
	 */
	staleAfterMs?: number;
	/** Told of every lock broken, before the acquire goes on (default: `console.warn` of its message). */
	onBreak?: (broken: BrokenLock) => void;
}

/** Where a lock file stands, as `inspectLock` finds it. */
export type LockState =
	/** No lock file. */
	| "free"
	/** Its holder runs (on this machine), or may: its thread cannot be told. */
	| "alive"
	/** Its holder is on another machine: whether it runs cannot be told from here. */
	| "unknown"
	/** Its holder is gone: the next acquire takes it over. */
	| "gone"
	/** The file holds no owner that can be read (left empty by a crash, or being written right now). */
	| "unreadable";

/** A lock file as found: its state, holder and age. */
export interface LockStatus {
	readonly path: string;
	readonly lockPath: string;
	readonly state: LockState;
	readonly owner?: LockOwner;
	/** The holder in words, when there is a lock file. */
	readonly holder?: string;
	/** Ms since the lock file was written, when it could be told. */
	readonly ageMs?: number;
	/** Whether it may be removed without force: its holder is gone, or the file is unreadable and not new. */
	readonly breakable: boolean;
}

export interface BreakLockOptions {
	/** Remove the lock even when its holder may be alive (announced through `onBreak`). */
	force?: boolean;
	/** Told of a lock broken by force (default: `console.warn` of its message). */
	onBreak?: (broken: BrokenLock) => void;
}

/** What `breakLock` found and did. */
export interface BreakLockResult {
	/** The lock file as found before anything was removed. */
	readonly status: LockStatus;
	/** Whether the lock file was removed (false: there was none, or it changed meanwhile and was left alone). */
	readonly removed: boolean;
	/** Set when the removed lock's holder was not known to be gone (a forced break). */
	readonly broken?: BrokenLock;
}

/** Lock files with a way out: who holds a lock, and breaking it on purpose. */
export interface LockFiles extends WriterLocks {
	inspect(path: string): Promise<LockStatus>;
	breakLock(path: string, options?: BreakLockOptions): Promise<BreakLockResult>;
}

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
export function* acquireLock(path: string, identity: LockIdentity, options: LockFileOptions = {}): Task<HeldLock> {
	const lockPath = lockPathOf(path);
	const owner = identity.lockOwner();
	const content = encoder.encode(`${JSON.stringify(owner)}\n`);
	let broke: BrokenLock | undefined;
	for (let attempt = 0; attempt < 5; attempt++) {
		// Registered before the file exists, so that a competitor in this realm that reads the new lock
		// file at once sees it as alive.
		heldHere.add(owner.token);
		try {
			yield* io("createExclusive", lockPath, [content], false);
			return broke ? { path, owner, broke } : { path, owner };
		} catch (error) {
			heldHere.delete(owner.token);
			// Any other failure (out of file descriptors, a full disk) left no file of ours: an exclusive create
			// is whole or nothing. A lock file there now is someone else's, and must be left alone.
			if (!isStorageError(error, "exists")) throw error;
		}
		const current = yield* readLock(lockPath);
		if (current === null) continue; // released meanwhile: try again
		if (current !== "unreadable" && identity.isLockOwnerAlive(current)) {
			const expired = yield* expiredLock(path, lockPath, current, identity, options.staleAfterMs);
			if (!expired) throw lockedBy(path, current, identity);
			if (yield* removeStaleLock(path, lockPath, current, owner, identity)) {
				broke = expired;
				announce(expired, options.onBreak);
			}
			continue;
		}
		// An unreadable lock file may be one that is being written right now.
		if (current === "unreadable" && (yield* isYoung(lockPath))) throw new SessionLockedError(path, undefined);
		yield* removeStaleLock(path, lockPath, current, owner, identity);
	}
	throw new SessionLockedError(path, undefined);
}

function holderOf(owner: LockOwner, identity: LockIdentity): string {
	return identity.describeOwner?.(owner) ?? `pid ${owner.pid} on ${owner.host}`;
}

/** Whether `identity` only presumes this owner alive (another machine's): only such a lock can expire or be forced. */
function cannotTell(owner: LockOwner, identity: LockIdentity): boolean {
	return identity.canTellIfAlive?.(owner) === false;
}

/** Refused: the holder may be alive. One that cannot be told is named so, with the way out. */
function lockedBy(path: string, owner: LockOwner, identity: LockIdentity): SessionLockedError {
	const advice = cannotTell(owner, identity)
		? "open it read-only or close the other writer (it is on another machine, so whether it still runs cannot be told from here; if it is gone, remove its lock on purpose: pi-sessions unlock FILE --force, or breakLock with force)"
		: undefined;
	return new SessionLockedError(path, owner, advice, holderOf(owner, identity));
}

/** A duration in words: `42 s`, `17 min`, `5 h`, `3 d`. */
export function durationText(ms: number): string {
	const seconds = Math.floor(ms / 1000);
	if (seconds < 120) return `${seconds} s`;
	if (seconds < 7200) return `${Math.floor(seconds / 60)} min`;
	if (seconds < 172_800) return `${Math.floor(seconds / 3600)} h`;
	return `${Math.floor(seconds / 86_400)} d`;
}

/** Ms since the lock file was written; undefined when it is gone. */
function* lockAge(lockPath: string): Task<number | undefined> {
	const stat = yield* io("stat", lockPath);
	return stat ? Date.now() - stat.mtimeMs : undefined;
}

/** The lock as broken for its age, when its holder cannot be told and it is older than `staleAfterMs`. */
function* expiredLock(
	path: string,
	lockPath: string,
	owner: LockOwner,
	identity: LockIdentity,
	staleAfterMs: number | undefined,
): Task<BrokenLock | undefined> {
	if (staleAfterMs === undefined || !cannotTell(owner, identity)) return undefined;
	const ageMs = yield* lockAge(lockPath);
	if (ageMs === undefined || ageMs < staleAfterMs) return undefined;
	const holder = holderOf(owner, identity);
	const message =
		`pi-session-tree: broke the writer lock of ${path}, held by ${holder} for ${durationText(ageMs)}, ` +
		`longer than the stale-after age (${durationText(staleAfterMs)}); whether its holder still runs cannot ` +
		"be told from here: if it does, two programs now write this session";
	return { path, owner, holder, ageMs, reason: "stale-after", message };
}

function announce(broken: BrokenLock, onBreak: ((broken: BrokenLock) => void) | undefined): void {
	if (onBreak) onBreak(broken);
	else console.warn(broken.message);
}

/** Where the lock file of `path` stands: its holder, whether it runs, its age. */
export function* inspectLock(path: string, identity: LockIdentity): Task<LockStatus> {
	const lockPath = lockPathOf(path);
	const found = yield* readLock(lockPath);
	if (found === null) return { path, lockPath, state: "free", breakable: false };
	const ageMs = yield* lockAge(lockPath);
	const aged = ageMs === undefined ? {} : { ageMs };
	if (found === "unreadable") {
		const breakable = ageMs === undefined || ageMs >= UNREADABLE_LOCK_GRACE_MS;
		return { path, lockPath, state: "unreadable", holder: "an unreadable lock file", ...aged, breakable };
	}
	const holder = holderOf(found, identity);
	const state: LockState = !identity.isLockOwnerAlive(found)
		? "gone"
		: cannotTell(found, identity)
			? "unknown"
			: "alive";
	return { path, lockPath, state, owner: found, holder, ...aged, breakable: state === "gone" };
}

/**
 * Remove the lock file of `path` on purpose: at once when its holder is gone, and only with `force` when it
 * may be alive (another machine's, or one of this machine that runs), which is then announced through
 * `onBreak`. Without `force`, such a lock is refused with `SessionLockedError`. Removed under the same
 * guard as a takeover, and only if it still is the lock judged.
 * @example
 * const { status, removed } = await runTask(breakLock("/s/a.jsonl", identity, { force: true }), storage);
 */
export function* breakLock(
	path: string,
	identity: LockIdentity,
	options: BreakLockOptions = {},
): Task<BreakLockResult> {
	const status = yield* inspectLock(path, identity);
	if (status.state === "free") return { status, removed: false };
	if (!status.breakable && !options.force) {
		const advice =
			status.state === "alive"
				? "it is running: close it (break the lock only if sure it is not: force)"
				: "whether it still runs cannot be told: break the lock only if sure it is gone (force)";
		throw new SessionLockedError(path, status.owner, advice, status.holder);
	}
	const judged: LockOwner | "unreadable" = status.owner ?? "unreadable";
	if (!(yield* removeStaleLock(path, status.lockPath, judged, identity.lockOwner(), identity))) {
		return { status, removed: false };
	}
	if (status.breakable) return { status, removed: true };
	const alive = status.state === "alive" ? ", which is running" : ", which may still be running";
	const broken: BrokenLock = {
		path,
		owner: status.owner,
		holder: status.holder as string,
		ageMs: status.ageMs,
		reason: "forced",
		message:
			`pi-session-tree: broke the writer lock of ${path} by force, held by ${status.holder}${alive}: ` +
			"if it still writes, two programs now write this session (their entries end up on separate branches); close one of them",
	};
	announce(broken, options.onBreak);
	return { status, removed: true, broken };
}

/**
 * Remove the lock file if it still is the stale one judged, holding `<lock>.takeover` (naming `taker`, held
 * in this realm meanwhile) while doing so; true when this call removed it.
 */
function* removeStaleLock(
	path: string,
	lockPath: string,
	stale: LockOwner | "unreadable",
	taker: LockOwner,
	identity: LockIdentity,
): Task<boolean> {
	const guard = `${lockPath}.takeover`;
	heldHere.add(taker.token);
	try {
		try {
			yield* io("createExclusive", guard, [encoder.encode(`${JSON.stringify(taker)}\n`)], false);
		} catch (error) {
			if (!isStorageError(error, "exists")) throw error;
			// Another taker is at work; only a guard of a taker that is gone is cleared. One that is gone by
			// now was another taker's, done: nothing to clear (and its successor's must not be removed), and
			// the caller looks at the lock again.
			const guarded = yield* guardState(guard, identity);
			if (guarded === "held") throw new SessionLockedError(path, undefined);
			if (guarded === "abandoned") yield* io("remove", guard);
			return false;
		}
		try {
			const now = yield* readLock(lockPath);
			if (now === null || !sameLock(now, stale)) return false;
			yield* io("remove", lockPath);
			return true;
		} finally {
			yield* io("remove", guard);
		}
	} finally {
		heldHere.delete(taker.token);
	}
}

/**
 * Where a takeover guard stands: `gone` (removed meanwhile), `abandoned` (its taker is known to be gone: a
 * crashed process, or this realm's own guard whose removal failed; or, where that cannot be told, it is
 * older than a moment) or `held` (its taker is alive, or it is young, or it cannot be read now).
 */
function* guardState(guard: string, identity: LockIdentity): Task<"gone" | "abandoned" | "held"> {
	let taker: LockOwner | "unreadable" | null;
	try {
		taker = yield* readLock(guard);
	} catch {
		return "held"; // not readable now: it is not known to be left behind
	}
	if (taker === null) return "gone";
	if (taker !== "unreadable" && !cannotTell(taker, identity)) {
		return identity.isLockOwnerAlive(taker) ? "held" : "abandoned";
	}
	return (yield* isYoung(guard)) ? "held" : "abandoned";
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

function checkOptions(options: LockFileOptions): LockFileOptions {
	const age = options.staleAfterMs;
	if (age !== undefined && !(typeof age === "number" && age >= 0)) {
		throw new RangeError(`staleAfterMs must be a number of milliseconds, 0 or more, not ${String(age)}`);
	}
	return options;
}

/**
 * Lock files on `storage`, their owners named and judged by `identity`.
 * @example
 * const locks = lockFiles(storage, nodeLockIdentity, { staleAfterMs: 7 * 24 * 3600_000 });
 * const status = await locks.inspect("/s/a.jsonl");
 */
export function lockFiles(storage: Storage, identity: LockIdentity, options: LockFileOptions = {}): LockFiles {
	checkOptions(options);
	return {
		acquire: (path) => runTask(acquireLock(path, identity, options), storage),
		release: (lock) => runTask(releaseLock(lock), storage),
		owner: async (path) => (await runTask(readOwner(lockPathOf(path)), storage)) ?? undefined,
		inspect: (path) => runTask(inspectLock(path, identity), storage),
		breakLock: (path, breaking) => runTask(breakLock(path, identity, breaking), storage),
	};
}

/** Lock files on a synchronous storage (the pi-compatible facade). */
export function lockFilesSync(
	storage: SyncStorage,
	identity: LockIdentity,
	options: LockFileOptions = {},
): SyncWriterLocks {
	checkOptions(options);
	return {
		acquire: (path) => runTaskSync(acquireLock(path, identity, options), storage),
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
	canTellIfAlive: (owner) => owner.host === realmHost,
};
