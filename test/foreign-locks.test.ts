/**
 * Locks whose holder cannot be told alive or gone (another machine's), and the ways out of them: a
 * stale-after age (off by default), breaking a lock on purpose through the API, and `pi-sessions unlock`
 * on Node, Bun and Deno. Every break is announced; none is silent.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createNodeLocks, createNodeStorage, createNodeSyncLocks, processStartTime } from "../adapters/node.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { type BrokenLock, type LockOwner, Session, SessionLockedError } from "../src/index.ts";
import { lockFiles, realmLockIdentity } from "../src/lock-files.ts";
import { RUNTIMES, runCli } from "./support/cli.ts";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
	vi.restoreAllMocks();
});

const storage = createNodeStorage();
const HOUR = 3600_000;
const FOREIGN: LockOwner = { pid: 4242, host: "other-host.example", startedAt: Date.UTC(2026, 0, 1), token: "foreign" };
const header = JSON.stringify({
	type: "session",
	version: 3,
	id: "s1",
	timestamp: new Date(0).toISOString(),
	cwd: "/p",
});

/** A session file, and (unless `owner` is null) a lock file written as by `owner`, `ageMs` old. */
function lockedSession(owner: LockOwner | string | null = FOREIGN, ageMs = 0): string {
	const dir = mkdtempSync(join(tmpdir(), "pst-foreign-"));
	dirs.push(dir);
	const path = join(dir, "s.jsonl");
	writeFileSync(path, `${header}\n`);
	if (owner !== null) {
		writeFileSync(`${path}.lock`, typeof owner === "string" ? owner : `${JSON.stringify(owner)}\n`);
		const at = new Date(Date.now() - ageMs);
		utimesSync(`${path}.lock`, at, at);
	}
	return path;
}

function lockText(path: string): string | undefined {
	return existsSync(`${path}.lock`) ? readFileSync(`${path}.lock`, "utf8") : undefined;
}

/** A pid that ran and is gone now. */
function deadPid(): number {
	const child = spawnSync(process.execPath, ["-e", "0"]);
	return child.pid as number;
}

/** This machine's parent process: alive, and not this one. */
function liveLocalOwner(): LockOwner {
	const pid = process.ppid;
	return { pid, host: hostname(), startedAt: processStartTime(pid) ?? 0, token: "parent" };
}

describe("another machine's lock, stale-after off (the default)", () => {
	it("is never taken, however old, and the refusal names the holder and the way out", async () => {
		const path = lockedSession(FOREIGN, 365 * 24 * HOUR);
		const before = lockText(path);
		const error = await Session.open(storage, path, { locks: createNodeLocks(storage) }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(SessionLockedError);
		const locked = error as SessionLockedError;
		expect([locked.holder, locked.owner?.token]).toEqual(["pid 4242 on other-host.example", "foreign"]);
		expect(locked.message).toMatch(/another machine.*cannot be told.*pi-sessions unlock FILE --force/);
		expect(lockText(path)).toBe(before);
	});
});

describe("another machine's lock, stale-after on", () => {
	it("younger than the age: refused, the lock file untouched", async () => {
		const path = lockedSession(FOREIGN, HOUR);
		const locks = createNodeLocks(storage, { staleAfterMs: 2 * HOUR, onBreak: () => expect.fail("no break") });
		await expect(locks.acquire(path)).rejects.toBeInstanceOf(SessionLockedError);
		expect(lockText(path)).toBe(`${JSON.stringify(FOREIGN)}\n`);
	});

	it("older than the age: broken by the next open, announced once (console.warn by default), then ours", async () => {
		const path = lockedSession(FOREIGN, 3 * HOUR);
		const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
		const locks = createNodeLocks(storage, { staleAfterMs: 2 * HOUR });
		const session = await Session.open(storage, path, { locks });
		expect(warn).toHaveBeenCalledTimes(1);
		expect(String(warn.mock.calls[0]?.[0])).toMatch(
			/broke the writer lock of .*s\.jsonl, held by pid 4242 on other-host\.example for 3 h, longer than the stale-after age \(2 h\).*two programs now write this session/,
		);
		expect(JSON.parse(lockText(path) as string).pid).toBe(process.pid);
		await session.close();
		expect(lockText(path)).toBeUndefined();
	});

	it("the held lock says what it broke; onBreak replaces the warning; the sync locks do the same", async () => {
		const path = lockedSession(FOREIGN, 3 * HOUR);
		const told: BrokenLock[] = [];
		const locks = createNodeLocks(storage, { staleAfterMs: HOUR, onBreak: (broken) => told.push(broken) });
		const held = await locks.acquire(path);
		expect(held.broke).toMatchObject({
			reason: "stale-after",
			owner: FOREIGN,
			holder: "pid 4242 on other-host.example",
		});
		expect(told).toEqual([held.broke]);
		await locks.release(held);

		const again = lockedSession(FOREIGN, 3 * HOUR);
		const syncTold: BrokenLock[] = [];
		const sync = createNodeSyncLocks(undefined, { staleAfterMs: HOUR, onBreak: (broken) => syncTold.push(broken) });
		const syncHeld = sync.acquire(again);
		expect([syncHeld.broke?.reason, syncTold.length]).toEqual(["stale-after", 1]);
		sync.release(syncHeld);
	});

	it("a lock dated in the future (clocks apart) never expires", async () => {
		const path = lockedSession(FOREIGN, -HOUR);
		const locks = createNodeLocks(storage, { staleAfterMs: 0, onBreak: () => expect.fail("no break") });
		await expect(locks.acquire(path)).rejects.toBeInstanceOf(SessionLockedError);
	});

	it("never applies to a holder of this machine that runs, however old its lock", async () => {
		const path = lockedSession(liveLocalOwner(), 24 * HOUR);
		const locks = createNodeLocks(storage, { staleAfterMs: 0, onBreak: () => expect.fail("no break") });
		await expect(locks.acquire(path)).rejects.toBeInstanceOf(SessionLockedError);
	});

	it("in memory, another realm's lock (realmLockIdentity) expires the same way", async () => {
		const memory = await createMemoryStorage();
		await memory.mkdir("/s");
		const owner = { ...FOREIGN, host: "realm:another" };
		await memory.createExclusive("/s/a.jsonl.lock", [new TextEncoder().encode(JSON.stringify(owner))], false);
		const told: BrokenLock[] = [];
		await expect(lockFiles(memory, realmLockIdentity).acquire("/s/a.jsonl")).rejects.toBeInstanceOf(SessionLockedError);
		const held = await lockFiles(memory, realmLockIdentity, { staleAfterMs: 0, onBreak: (b) => told.push(b) }).acquire(
			"/s/a.jsonl",
		);
		expect([held.broke?.holder, told.length]).toEqual(["pid 4242 on realm:another", 1]);
	});

	it("an age that is no number of milliseconds is refused", () => {
		for (const staleAfterMs of [-1, Number.NaN, "1h" as unknown as number]) {
			expect(() => createNodeLocks(storage, { staleAfterMs })).toThrow(RangeError);
		}
	});
});

describe("breaking a lock on purpose (the API)", () => {
	it("no lock: nothing to break", async () => {
		const path = lockedSession(null);
		const locks = createNodeLocks(storage);
		expect(await locks.inspect(path)).toMatchObject({ state: "free", breakable: false });
		expect((await locks.breakLock(path)).removed).toBe(false);
	});

	it("another machine's: inspected as unknown; refused without force; with force removed and announced", async () => {
		const path = lockedSession(FOREIGN, 90_000);
		const locks = createNodeLocks(storage);
		const status = await locks.inspect(path);
		expect(status).toMatchObject({ state: "unknown", owner: FOREIGN, holder: "pid 4242 on other-host.example" });
		expect([status.breakable, Math.round((status.ageMs as number) / 1000)]).toEqual([false, 90]);
		const refused = await locks.breakLock(path).catch((e: unknown) => e);
		expect(refused).toBeInstanceOf(SessionLockedError);
		expect((refused as Error).message).toMatch(/cannot be told.*force/);
		expect(lockText(path)).toBeDefined();

		const told: BrokenLock[] = [];
		const result = await locks.breakLock(path, { force: true, onBreak: (broken) => told.push(broken) });
		expect([result.removed, result.broken?.reason, told.length]).toEqual([true, "forced", 1]);
		expect(told[0]?.message).toMatch(/by force, held by pid 4242 on other-host\.example, which may still be running/);
		expect(lockText(path)).toBeUndefined();
		const session = await Session.open(storage, path, { locks });
		await session.close();
	});

	it("a force with no onBreak warns on the console", async () => {
		const path = lockedSession(FOREIGN);
		const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
		await createNodeLocks(storage).breakLock(path, { force: true });
		expect(warn).toHaveBeenCalledTimes(1);
	});

	it("a holder of this machine that is gone: removed without force, nothing to warn of", async () => {
		const path = lockedSession({ ...FOREIGN, host: hostname(), pid: deadPid() });
		const locks = createNodeLocks(storage);
		expect((await locks.inspect(path)).state).toBe("gone");
		const result = await locks.breakLock(path, { onBreak: () => expect.fail("no warning") });
		expect([result.removed, result.broken]).toEqual([true, undefined]);
		expect(lockText(path)).toBeUndefined();
	});

	it("an unreadable lock file: breakable once it is not new", async () => {
		const young = lockedSession("");
		const old = lockedSession("{not json", HOUR);
		const locks = createNodeLocks(storage);
		expect(await locks.inspect(young)).toMatchObject({ state: "unreadable", breakable: false });
		await expect(locks.breakLock(young)).rejects.toBeInstanceOf(SessionLockedError);
		expect(await locks.inspect(old)).toMatchObject({ state: "unreadable", breakable: true });
		expect((await locks.breakLock(old)).removed).toBe(true);
	});

	it("a lock this process holds: alive; forced away, its holder's release then leaves the new owner's alone", async () => {
		const path = lockedSession(null);
		const locks = createNodeLocks(storage);
		const held = await locks.acquire(path);
		expect((await locks.inspect(path)).state).toBe("alive");
		await expect(locks.breakLock(path)).rejects.toThrow(/it is running/);
		const told: BrokenLock[] = [];
		const result = await locks.breakLock(path, { force: true, onBreak: (b) => told.push(b) });
		expect(told[0]?.message).toMatch(/which is running/);
		expect(result.removed).toBe(true);
		const next = await locks.acquire(path);
		await locks.release(held); // no longer its lock: left alone
		expect(JSON.parse(lockText(path) as string).token).toBe(next.owner.token);
		await locks.release(next);
	});
});

describe.each(RUNTIMES)("pi-sessions unlock on %s", (runtime) => {
	it("says who holds it; refuses a holder that may run without --force; breaks it with a warning", () => {
		const path = lockedSession(FOREIGN, 2 * HOUR);
		const refused = runCli(runtime, ["unlock", path]);
		expect(refused.status, refused.stderr).toBe(1);
		expect(refused.stdout).toMatch(
			/is locked by pid 4242 on other-host\.example, taken 2 h ago; its process started 2026-01-01T00:00:00\.000Z \(it is on another machine: whether it still runs cannot be told from here\)/,
		);
		expect(refused.stderr).toMatch(/the lock was left in place: if you are sure it no longer runs.*unlock .* --force/);
		expect(lockText(path)).toBe(`${JSON.stringify(FOREIGN)}\n`);

		const forced = runCli(runtime, ["unlock", `${path}.lock`, "--force"]);
		expect(forced.status, forced.stderr).toBe(0);
		expect(forced.stderr).toMatch(
			/^warning: broke the writer lock of .*s\.jsonl, held by pid 4242 on other-host\.example, which may still be running: if it still writes, two programs now write this session/m,
		);
		expect(forced.stdout).toMatch(/removed the lock of .*s\.jsonl by force/);
		expect(lockText(path)).toBeUndefined();

		const free = runCli(runtime, ["unlock", path]);
		expect([free.status, free.stdout.trim().endsWith("is not locked: nothing was removed")]).toEqual([0, true]);
	});

	it("removes the lock of a holder that is gone without --force, saying so", () => {
		const path = lockedSession({ ...FOREIGN, host: hostname(), pid: deadPid() });
		const run = runCli(runtime, ["unlock", path]);
		expect(run.status, run.stderr).toBe(0);
		expect(run.stdout).toMatch(/\(it is gone\)\n.*removed the stale lock of .*s\.jsonl \(its holder is gone\)/);
		expect(lockText(path)).toBeUndefined();
	});
});
