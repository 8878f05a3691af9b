/**
 * Writer locks on the Web Locks API (`navigator.locks`): one lock per session file, shared by every tab
 * and worker of the origin. A second writer is refused at once (`ifAvailable`), and a lock is let go by
 * `release` or by the browser itself when the tab or worker holding it ends: nothing is left to go stale.
 *
 * Next to each writer lock the holder takes a second lock whose name carries its `LockOwner` (and label),
 * so that another context learns from `navigator.locks.query()` who holds a file, not only that it is held.
 * @example
 * import { createWebLocks } from "pi-session-tree/web-locks";
 * const engine = new Engine({ storage, locks: createWebLocks({ label: "the editor tab" }), agentDir: "/pi/agent" });
 * @module
 */

import { SessionLockedError } from "../src/errors.ts";
import { randomUuid } from "../src/ids.ts";
import { realmHeldLocks } from "../src/lock-files.ts";
import type { HeldLock, LockOwner, WriterLocks } from "../src/writer-lock.ts";

/** The default prefix of writer lock names: the lock of `/a/b.jsonl` is `pi-session-tree:/a/b.jsonl`. */
export const WEB_LOCK_PREFIX = "pi-session-tree:";

/** Names of the owner records held beside writer locks; the same whatever the prefix, so any context finds them. */
const OWNER_TAG = "pi-session-tree owner:";

export interface WebLocksOptions {
	/** Put before each path to name its lock (default `WEB_LOCK_PREFIX`); everyone sharing files must use the same. */
	prefix?: string;
	/** How other contexts name this one when they are refused (`"the editor tab"`); default none. */
	label?: string;
	/** The lock manager (default `navigator.locks`). */
	lockManager?: LockManager;
	/** Called once the lock is granted, before `acquire` resolves; if it throws, the lock is let go and `acquire` throws that. */
	onAcquire?(path: string): Promise<void> | void;
	/** Called before a lock taken here is let go (even when it throws, the lock is let go). */
	onRelease?(path: string): Promise<void> | void;
}

/** The Web Lock name of a session file's writer lock. */
export function webLockName(path: string, prefix: string = WEB_LOCK_PREFIX): string {
	return `${prefix}${path}`;
}

/** What the owner record's lock name holds. */
type OwnerRecord = [lockName: string, owner: LockOwner, label: string | undefined];

/**
 * Tokens of the locks this realm holds (shared with lock files, on the realm's global object), so that an
 * error can say the holder is this very tab or worker, whichever copy of this module took it.
 */
const heldHere = realmHeldLocks;

/** A lock taken here: how to let it go, and how to tell the browser has. */
interface Holding {
	lock: HeldLock;
	letGo(): void;
	/** Settles once both requests have ended here. */
	gone: Promise<unknown>;
	/** The writer lock's and the owner record's names. */
	names: [string, string];
	/** The browser's id of this context, as `query()` gives it (when it does). */
	clientId: string | undefined;
}

/** Polls of `query()` after a release, waiting for the browser to show it (see `letGo`). */
const RELEASE_POLLS = 100;

/**
 * Writer locks on Web Locks. `acquire` never waits: a lock held anywhere in the origin (this context too)
 * is `SessionLockedError`, naming the holder as far as it can be known.
 * @example
 * const locks = createWebLocks();
 * const lock = await locks.acquire("/pi/agent/sessions/--p--/a.jsonl");
 * await locks.release(lock);
 */
export function createWebLocks(options: WebLocksOptions = {}): WriterLocks {
	const found = options.lockManager ?? (globalThis.navigator?.locks as LockManager | undefined);
	if (!found) throw new TypeError("createWebLocks: this context has no Web Locks API (navigator.locks)");
	const manager: LockManager = found;
	const prefix = options.prefix ?? WEB_LOCK_PREFIX;
	const holdings = new Map<string, Holding>();

	/** Request `name` without waiting and hold it until `letGo`; null when it is not available. */
	const hold = async (name: string): Promise<Pick<Holding, "letGo" | "gone"> | null> => {
		let letGo = (): void => undefined;
		const released = new Promise<void>((resolve) => {
			letGo = resolve;
		});
		let granted!: (held: boolean) => void;
		const answered = new Promise<boolean>((resolve) => {
			granted = resolve;
		});
		const gone = manager.request(name, { ifAvailable: true }, async (lock) => {
			granted(lock !== null);
			if (lock) await released;
		});
		// A refused request (an invalid name) rejects `gone` before any answer.
		const held = await Promise.race([answered, gone.then(() => false)]);
		return held ? { letGo, gone } : null;
	};

	const holderOf = async (path: string): Promise<{ owner?: LockOwner; holder: string }> => {
		const own = holdings.get(path)?.lock.owner;
		if (own) return { owner: own, holder: "this tab or worker (a session it has open)" };
		const name = webLockName(path, prefix);
		const { held = [] } = await manager.query();
		for (const entry of held) {
			const record = parseRecord(entry.name);
			if (record?.[0] !== name) continue;
			const [, owner, label] = record;
			if (heldHere.has(owner.token)) return { owner, holder: "this tab or worker (a session it has open)" };
			const since = new Date(owner.startedAt).toISOString();
			return { owner, holder: `${label ? `${label}, ` : ""}another tab or worker of this origin (since ${since})` };
		}
		const main = held.find((entry) => entry.name === name);
		// Held, but its owner record is not there (yet): all that is known is the browser's id of the holder.
		const owner = main?.clientId ? clientOwner(main.clientId) : undefined;
		return { owner, holder: "another tab or worker of this origin" };
	};

	return {
		async acquire(path) {
			const name = webLockName(path, prefix);
			const owner: LockOwner = { pid: 0, host: "web-locks", startedAt: Date.now(), token: randomUuid() };
			const main = await hold(name);
			if (!main) {
				const { owner: holder, holder: words } = await holderOf(path);
				throw new SessionLockedError(path, holder, undefined, words);
			}
			const recordName = `${OWNER_TAG}${JSON.stringify([name, owner, options.label] satisfies OwnerRecord)}`;
			let record: Awaited<ReturnType<typeof hold>>;
			let clientId: string | undefined;
			try {
				record = await hold(recordName);
				clientId = (await manager.query()).held?.find((entry) => entry.name === recordName)?.clientId;
			} catch (error) {
				main.letGo(); // the record is a nicety: without it, nothing may keep the lock
				throw error;
			}
			const holding: Holding = {
				lock: { path, owner },
				letGo: () => {
					record?.letGo();
					main.letGo();
				},
				gone: Promise.allSettled([main.gone, record?.gone]),
				names: [name, recordName],
				clientId,
			};
			holdings.set(path, holding);
			heldHere.add(owner.token);
			try {
				await options.onAcquire?.(path);
			} catch (error) {
				await letGo(holding);
				throw error;
			}
			return holding.lock;
		},
		async release(lock) {
			const holding = holdings.get(lock.path);
			if (holding?.lock.owner.token !== lock.owner.token) return; // not ours (any more)
			try {
				await options.onRelease?.(lock.path);
			} finally {
				await letGo(holding);
			}
		},
		async owner(path) {
			const { owner } = await holderOf(path);
			return owner;
		},
	};

	/**
	 * Let go of a holding, and resolve once the browser shows it released. Chromium settles the request
	 * here before its lock manager has caught up: for a moment `query()` in another tab or worker still
	 * lists the lock (so `owner` there says held). This waits until `query()` no longer lists it.
	 */
	async function letGo(holding: Holding): Promise<void> {
		if (holdings.get(holding.lock.path) === holding) holdings.delete(holding.lock.path);
		holding.letGo();
		await holding.gone;
		const [name, recordName] = holding.names;
		const ours = (entry: LockInfo) =>
			entry.name === recordName || (entry.name === name && entry.clientId === holding.clientId);
		for (let poll = 0; poll < RELEASE_POLLS; poll++) {
			const { held = [] } = await manager.query();
			if (!held.some(ours)) break;
			await new Promise((resolve) => setTimeout(resolve, 1));
		}
		heldHere.delete(holding.lock.owner.token);
	}
}

/** An owner record from a lock's name; null for any other lock. */
function parseRecord(name: string | undefined): OwnerRecord | null {
	if (!name?.startsWith(OWNER_TAG)) return null;
	try {
		const record = JSON.parse(name.slice(OWNER_TAG.length)) as OwnerRecord;
		const [lockName, owner] = record;
		return typeof lockName === "string" && typeof owner?.token === "string" ? record : null;
	} catch {
		return null;
	}
}

/** The owner of a lock known only by the browser's client id of its holder. */
function clientOwner(clientId: string): LockOwner {
	return { pid: 0, host: "web-locks", startedAt: 0, token: `client:${clientId}` };
}
