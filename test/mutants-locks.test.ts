/**
 * Rules of the lock files that the broader lock tests leave open (found by the mutation run): the guard a
 * takeover holds and what another taker's guard means, a lock that changes or goes while it is judged,
 * how many times an acquire tries, durations in words, the options checked, the sync locks' owner, and the
 * threads of this process known dead.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createNodeSyncStorage } from "../adapters/node.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { SessionLockedError, type Storage } from "../src/index.ts";
import { durationText, lockFiles, lockFilesSync, lockPathOf } from "../src/lock-files.ts";
import { isDeadThread, knownDeadThreads, markThreadDead } from "../src/lock-threads.ts";
import type { LockIdentity, LockOwner } from "../src/writer-lock.ts";
import { failNth, faultyStorage } from "./support/faulty-storage.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const PATH = "/s/a.jsonl";
const LOCK = lockPathOf(PATH);
const GUARD = `${LOCK}.takeover`;
const HOUR = 3_600_000;

afterEach(() => vi.restoreAllMocks());

const owner = (host: string, token: string): LockOwner => ({ pid: 4242, host, startedAt: 1, token });
/** This machine's owners are alive unless their host says "gone"; another machine's cannot be told. */
const identity: LockIdentity = {
	lockOwner: () => owner("here", crypto.randomUUID()),
	isLockOwnerAlive: (o) => o.host !== "gone",
	canTellIfAlive: (o) => o.host !== "elsewhere",
};

async function storageWith(files: Record<string, string>): Promise<Storage> {
	const storage = (await createMemoryStorage()) as Storage;
	await storage.mkdir("/s");
	for (const [path, text] of Object.entries(files)) await storage.createExclusive(path, [encoder.encode(text)], false);
	return storage;
}
const json = (o: LockOwner) => `${JSON.stringify(o)}\n`;
const text = async (storage: Storage, path: string) =>
	(await storage.stat(path)) ? decoder.decode(await storage.readRange(path, 0, 4096)) : undefined;
/** Files written now look this much older to the lock code (which ages them by `Date.now()`). */
const ageFilesBy = (ms: number) => {
	const now = Date.now();
	vi.spyOn(Date, "now").mockImplementation(() => now + ms);
};
/** `storage` with some of its operations replaced (each given the real storage's). */
function overriding(storage: Storage, overrides: (real: Storage) => Partial<Storage>): Storage {
	return Object.assign(Object.create(storage) as Storage, overrides(storage));
}
/** `storage` with `createExclusive` of `path` doing `before` first. */
const onCreate = (storage: Storage, path: string, before: () => Promise<void>): Storage =>
	overriding(storage, (real) => ({
		createExclusive: async (p, chunks, durable) => {
			if (p === path) await before();
			return real.createExclusive(p, chunks, durable);
		},
	}));

describe("a takeover finds another taker's guard", () => {
	const gone = json(owner("gone", "stale"));

	it("of a taker that runs: refused, the lock and the guard left alone", async () => {
		const guard = json(owner("here", "other-taker"));
		const storage = await storageWith({ [LOCK]: gone, [GUARD]: guard });
		let tries = 0;
		const counting = onCreate(storage, GUARD, async () => {
			tries++;
		});
		await expect(lockFiles(counting, identity).acquire(PATH)).rejects.toBeInstanceOf(SessionLockedError);
		expect([await text(storage, LOCK), await text(storage, GUARD)]).toEqual([gone, guard]);
		// At once: a live taker's guard is not waited out by trying again.
		expect(tries).toBe(1);
	});

	it("of a taker that is gone: the guard is cleared and the lock taken over, no guard left", async () => {
		const storage = await storageWith({ [LOCK]: gone, [GUARD]: json(owner("gone", "dead-taker")) });
		const held = await lockFiles(storage, identity).acquire(PATH);
		expect(JSON.parse((await text(storage, LOCK)) as string).token).toBe(held.owner.token);
		expect(await storage.stat(GUARD)).toBeNull();
	});

	it.each([
		["unreadable", "{"],
		["another machine's", json(owner("elsewhere", "far-taker"))],
	])("%s and new: refused (it may be being written); old: cleared, and the lock taken over", async (_kind, guard) => {
		const young = await storageWith({ [LOCK]: gone, [GUARD]: guard });
		let tries = 0;
		const counting = onCreate(young, GUARD, async () => {
			tries++;
		});
		await expect(lockFiles(counting, identity).acquire(PATH)).rejects.toBeInstanceOf(SessionLockedError);
		expect(await text(young, GUARD)).toBe(guard);
		// At once, as a live taker's guard: a young one is not waited out by trying again.
		expect(tries).toBe(1);
		const old = await storageWith({ [LOCK]: gone, [GUARD]: guard });
		ageFilesBy(HOUR);
		const held = await lockFiles(old, identity).acquire(PATH);
		expect(JSON.parse((await text(old, LOCK)) as string).token).toBe(held.owner.token);
		expect(await old.stat(GUARD)).toBeNull();
	});

	it("that cannot be read now: refused at once, the lock and the guard left alone", async () => {
		// Its taker is gone, as the file says; but a guard not read is not known to be left behind.
		const guard = json(owner("gone", "dead-taker"));
		const storage = await storageWith({ [LOCK]: gone, [GUARD]: guard });
		const { storage: failing, log } = faultyStorage(storage, (call) =>
			call.op === "readRange" && call.path === GUARD ? { kind: "fail", code: "io", errno: "EIO" } : undefined,
		);
		await expect(lockFiles(failing, identity).acquire(PATH)).rejects.toBeInstanceOf(SessionLockedError);
		expect([await text(storage, LOCK), await text(storage, GUARD)]).toEqual([gone, guard]);
		expect(log.calls.filter((call) => call.op === "createExclusive" && call.path === GUARD)).toHaveLength(1);
	});

	it("gone when read: nothing is removed, not the guard the next taker has made since", async () => {
		const next = json(owner("here", "next-taker"));
		const storage = await storageWith({ [LOCK]: gone, [GUARD]: next });
		// The first read finds no guard (its taker was done); the next taker's is there right after.
		const { storage: racing } = faultyStorage(
			storage,
			failNth((call) => call.op === "readRange" && call.path === GUARD, 0, { kind: "fail", code: "not-found" }),
		);
		await expect(lockFiles(racing, identity).acquire(PATH)).rejects.toBeInstanceOf(SessionLockedError);
		expect([await text(storage, LOCK), await text(storage, GUARD)]).toEqual([gone, next]);
	});

	it("left by a taker that died in its takeover: it names that taker, so the next one clears it at once", async () => {
		const storage = await storageWith({ [LOCK]: gone });
		// The first taker's removals fail (as if it died there): its guard stays behind, naming it.
		const dying: LockIdentity = { ...identity, lockOwner: () => owner("gone", "dying-taker") };
		const { storage: failing } = faultyStorage(storage, (call) =>
			call.op === "remove" ? { kind: "fail", code: "io", errno: "EIO" } : undefined,
		);
		await expect(lockFiles(failing, dying).acquire(PATH)).rejects.toMatchObject({ code: "io" });
		expect(JSON.parse((await text(storage, GUARD)) as string).token).toBe("dying-taker");
		// A young guard that did not say whose it is would be refused; this one's taker is known to be gone.
		const held = await lockFiles(storage, identity).acquire(PATH);
		expect(JSON.parse((await text(storage, LOCK)) as string).token).toBe(held.owner.token);
		expect(await storage.stat(GUARD)).toBeNull();
	});

	it("a guard that cannot be created for another reason: that error, nothing removed", async () => {
		const storage = await storageWith({ [LOCK]: gone });
		const { storage: failing } = faultyStorage(storage, (call) =>
			call.op === "createExclusive" && call.path === GUARD ? { kind: "fail", code: "io", errno: "ENOSPC" } : undefined,
		);
		await expect(lockFiles(failing, identity).acquire(PATH)).rejects.toMatchObject({ code: "io", path: GUARD });
		expect(await text(storage, LOCK)).toBe(gone);
	});
});

describe("a lock that changes while it is judged", () => {
	it("removed meanwhile: the acquire takes the free lock", async () => {
		const storage = await storageWith({ [LOCK]: json(owner("gone", "stale")) });
		const racing = onCreate(storage, GUARD, () => storage.remove(LOCK));
		const held = await lockFiles(racing, identity).acquire(PATH);
		expect(JSON.parse((await text(storage, LOCK)) as string).token).toBe(held.owner.token);
	});

	it("taken by another writer meanwhile: breakLock with force removes nothing and says so", async () => {
		const storage = await storageWith({ [LOCK]: json(owner("elsewhere", "far")) });
		const next = json(owner("here", "next-writer"));
		const racing = onCreate(storage, GUARD, async () => {
			await storage.replace(LOCK, [encoder.encode(next)]);
		});
		const onBreak = vi.fn();
		const result = await lockFiles(racing, identity).breakLock(PATH, { force: true, onBreak });
		expect(result).toMatchObject({ removed: false, status: { state: "unknown" } });
		expect(result.broken).toBeUndefined();
		expect(onBreak).not.toHaveBeenCalled();
		expect(await text(storage, LOCK)).toBe(next);
	});

	it("a forced break says two programs may now write the session", async () => {
		const storage = await storageWith({ [LOCK]: json(owner("elsewhere", "far")) });
		const { broken } = await lockFiles(storage, identity).breakLock(PATH, { force: true, onBreak: () => {} });
		expect(broken?.message).toMatch(
			/by force, held by pid 4242 on elsewhere, which may still be running: if it still writes, two programs now write this session/,
		);
	});

	it("a lock file whose age cannot be read (gone by the stat): unreadable is breakable, an aged-out one is not broken", async () => {
		const storage = await storageWith({ [LOCK]: "{" });
		const noStat = overriding(storage, (real) => ({
			stat: async (p) => (p === LOCK ? null : real.stat(p)),
		}));
		const status = await lockFiles(noStat, identity).inspect(PATH);
		expect(status).toStrictEqual({
			path: PATH,
			lockPath: LOCK,
			state: "unreadable",
			holder: "an unreadable lock file",
			breakable: true,
		});
		await storage.replace(LOCK, [encoder.encode(json(owner("elsewhere", "far")))]);
		const onBreak = vi.fn();
		const locks = lockFiles(noStat, identity, { staleAfterMs: 0, onBreak });
		await expect(locks.acquire(PATH)).rejects.toBeInstanceOf(SessionLockedError);
		expect(onBreak).not.toHaveBeenCalled();
	});
});

describe("acquire", () => {
	it("tries five times while the lock comes and goes, then refuses", async () => {
		const storage = await storageWith({});
		// The lock file exists at every create and is gone at every read: released each time between the two.
		const { storage: flickering, log } = faultyStorage(storage, (call) =>
			call.path !== LOCK
				? undefined
				: call.op === "createExclusive"
					? { kind: "fail", code: "exists" }
					: call.op === "readRange"
						? { kind: "fail", code: "not-found" }
						: undefined,
		);
		await expect(lockFiles(flickering, identity).acquire(PATH)).rejects.toBeInstanceOf(SessionLockedError);
		expect(log.calls.filter((call) => call.op === "createExclusive").map((call) => call.path)).toEqual(
			Array(5).fill(LOCK),
		);
	});

	it("with an identity that cannot say whether owners can be told: a live holder is refused", async () => {
		const plain: LockIdentity = { lockOwner: identity.lockOwner, isLockOwnerAlive: () => true };
		const storage = await storageWith({ [LOCK]: json(owner("here", "live")) });
		const error = await lockFiles(storage, plain, { staleAfterMs: 0 })
			.acquire(PATH)
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(SessionLockedError);
		expect((error as Error).message).toContain("pid 4242 on here");
	});

	it("refuses a stale-after age that is not a number, naming it", () => {
		for (const age of ["5", -1, Number.NaN]) {
			expect(() => lockFiles({} as Storage, identity, { staleAfterMs: age as number })).toThrow(
				new RangeError(`staleAfterMs must be a number of milliseconds, 0 or more, not ${String(age)}`),
			);
		}
	});
});

describe("what a lock file holds", () => {
	it.each([
		["pid", { pid: "4242" }],
		["host", { host: 7 }],
		["startedAt", { startedAt: "1" }],
		["token", { token: null }],
	])("an owner whose %s is of the wrong type is unreadable, not a holder", async (_field, wrong) => {
		const storage = await storageWith({ [LOCK]: JSON.stringify({ ...owner("here", "t"), ...wrong }) });
		const status = await lockFiles(storage, identity).inspect(PATH);
		expect([status.state, status.owner]).toEqual(["unreadable", undefined]);
	});

	it("a release finds the lock file already gone: nothing to remove, no error", async () => {
		const storage = await storageWith({});
		const locks = lockFiles(storage, identity);
		const held = await locks.acquire(PATH);
		await storage.remove(LOCK);
		await expect(locks.release(held)).resolves.toBeUndefined();
		expect(await storage.stat(LOCK)).toBeNull();
	});
});

describe("durations in words", () => {
	it.each([
		[0, "0 s"],
		[119_999, "119 s"],
		[120_000, "2 min"],
		[7_199_999, "119 min"],
		[7_200_000, "2 h"],
		[172_799_999, "47 h"],
		[172_800_000, "2 d"],
		[10 * 86_400_000, "10 d"],
	])("%d ms is %s", (ms, words) => {
		expect(durationText(ms)).toBe(words);
	});
});

describe("the owner of a lock", () => {
	it("async and sync: the holder written in the file, or undefined when there is none; the sync release removes it", async () => {
		const memory = await storageWith({ [LOCK]: json(owner("here", "t")) });
		const locks = lockFiles(memory, identity);
		expect(await locks.owner(PATH)).toEqual(owner("here", "t"));
		expect(await locks.owner("/s/none.jsonl")).toBeUndefined();

		const { mkdtempSync, rmSync } = await import("node:fs");
		const { tmpdir } = await import("node:os");
		const dir = mkdtempSync(`${tmpdir()}/pst-sync-locks-`);
		try {
			const sync = lockFilesSync(createNodeSyncStorage(), identity);
			const path = `${dir}/a.jsonl`;
			expect(sync.owner(path)).toBeUndefined();
			const held = sync.acquire(path);
			expect(sync.owner(path)).toEqual(held.owner);
			sync.release(held);
			expect(sync.owner(path)).toBeUndefined();
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	it.each([
		["empty (left by a crash before its write)", ""],
		["cut short", '{"pid":4242,"host":"he'],
		["an owner without a token", JSON.stringify({ pid: 4242, host: "here", startedAt: 1 })],
	])(
		"a lock file that is %s names no owner: owner() is undefined, as for no file (not the unreadable state)",
		async (_what, content) => {
			const storage = await storageWith({ [LOCK]: content });
			const locks = lockFiles(storage, identity);
			expect((await locks.inspect(PATH)).state).toBe("unreadable");
			expect(await locks.owner(PATH)).toBeUndefined();
		},
	);
});

describe("threads known dead", () => {
	it("every thread marked dead is among those passed on to a new worker", () => {
		// Ids far above any thread this test process starts.
		markThreadDead(1_000_001);
		markThreadDead(1_000_002);
		expect(knownDeadThreads()).toEqual(expect.arrayContaining([1_000_001, 1_000_002]));
		expect([isDeadThread(1_000_001), isDeadThread(1_000_003)]).toEqual([true, false]);
	});
});
