/**
 * The lock side of a storage: `lockOwner` and `isLockOwnerAlive`, and the writer lock protocol of
 * `lock.ts` driven through the driver under test (`runTask`, or `runTaskSync` on the sync twin).
 * @module
 */
import { acquireLock, lockPathOf, releaseLock, SessionLockedError } from "../lock-files.ts";
import type { HeldLock } from "../writer-lock.ts";
import { bytes, type Context, type Suite } from "./support.ts";

export function lockTests(s: Suite): void {
	const { describe, test, expect, mode, readText, names, deadOwner, ownerJson, expectLocked, expectStorageError } = s;
	describe("lock identity: lockOwner and isLockOwnerAlive", () => {
		test("an owner has typed fields and survives JSON", async (c) => {
			const owner = await c.identity.lockOwner();
			expect(Number.isInteger(owner.pid) && owner.pid >= 0).toBe(true);
			expect(typeof owner.host === "string" && owner.host.length > 0).toBe(true);
			expect(Number.isFinite(owner.startedAt) && owner.startedAt <= Date.now()).toBe(true);
			expect(typeof owner.token === "string" && owner.token.length > 0).toBe(true);
			expect(JSON.parse(JSON.stringify(owner))).toEqual(owner);
		});
		test("tokens differ between calls; pid and host do not", async (c) => {
			const owners = await Promise.all([0, 1, 2, 3].map(() => c.identity.lockOwner()));
			expect(new Set(owners.map((o) => o.token)).size).toBe(4);
			expect(new Set(owners.map((o) => o.host)).size).toBe(1);
			expect(new Set(owners.map((o) => o.pid)).size).toBe(1);
		});
		test("an owner on this host whose pid is not running and whose token is not held is not alive", async (c) => {
			expect(await c.identity.isLockOwnerAlive(await deadOwner(c))).toBe(false);
		});
		test("this thread's own owner, with a token it does not hold, is not alive (a leftover)", async (c) => {
			const alive = await c.identity.isLockOwnerAlive(await c.identity.lockOwner());
			expect(alive).toBe(false);
		});
	});

	describe("writer lock (lock-files.ts)", () => {
		test("acquire writes the lock file; a second acquire is refused with the holder", async (c) => {
			const path = c.at("s.jsonl");
			const lock = await c.run(acquireLock(path, c.identity));
			try {
				expect(lock.path).toBe(path);
				expect(lockPathOf(lock.path)).toBe(lockPathOf(path));
				expect((await c.storage.stat(lockPathOf(lock.path)))?.isFile).toBe(true);
				expect(JSON.parse(await readText(c, lockPathOf(lock.path)))).toEqual(lock.owner);
				expect(await c.identity.isLockOwnerAlive(lock.owner)).toBe(true);
				const error = await expectLocked(c.run(acquireLock(path, c.identity)));
				expect(error.path).toBe(path);
				expect(error.owner).toEqual(lock.owner);
				expect(JSON.parse(await readText(c, lockPathOf(lock.path)))).toEqual(lock.owner);
			} finally {
				await c.run(releaseLock(lock));
			}
		});
		test("release removes the lock file, and the lock can be taken again", async (c) => {
			const path = c.at("s.jsonl");
			const first = await c.run(acquireLock(path, c.identity));
			await c.run(releaseLock(first));
			expect(await c.storage.stat(lockPathOf(first.path))).toBeNull();
			expect(await names(c, c.root)).toEqual([]);
			const second = await c.run(acquireLock(path, c.identity));
			expect(second.owner.token === first.owner.token).toBe(false);
			await c.run(releaseLock(second));
			expect(await names(c, c.root)).toEqual([]);
		});
		test("locks of different sessions are independent", async (c) => {
			const a = await c.run(acquireLock(c.at("a.jsonl"), c.identity));
			const b = await c.run(acquireLock(c.at("b.jsonl"), c.identity));
			expect(await names(c, c.root)).toEqual(["a.jsonl.lock", "b.jsonl.lock"]);
			await c.run(releaseLock(a));
			await c.run(releaseLock(b));
			expect(await names(c, c.root)).toEqual([]);
		});
		test("release leaves a lock file that is no longer ours alone", async (c) => {
			const lock = await c.run(acquireLock(c.at("s.jsonl"), c.identity));
			const other = await deadOwner(c, "someone-else");
			await c.storage.replace(lockPathOf(lock.path), [ownerJson(other)]);
			await c.run(releaseLock(lock));
			expect(JSON.parse(await readText(c, lockPathOf(lock.path)))).toEqual(other);
		});
		test("a stale lock (owner not running, token not held) is taken over, leaving no leftovers", async (c) => {
			const path = c.at("s.jsonl");
			const stale = await deadOwner(c);
			await c.storage.createExclusive(lockPathOf(path), [ownerJson(stale)], false);
			const lock = await c.run(acquireLock(path, c.identity));
			try {
				expect(lock.owner.token === stale.token).toBe(false);
				expect(JSON.parse(await readText(c, lockPathOf(lock.path)))).toEqual(lock.owner);
				expect(await names(c, c.root)).toEqual(["s.jsonl.lock"]);
			} finally {
				await c.run(releaseLock(lock));
			}
			expect(await names(c, c.root)).toEqual([]);
		});
		test("a fresh lock file that cannot be read (being written?) is refused and left alone", async (c) => {
			const garbage = ["", "not json {", '{"pid":1}', "null"];
			for (const [i, content] of garbage.entries()) {
				const path = c.at(`s${i}.jsonl`);
				await c.storage.createExclusive(lockPathOf(path), [bytes(content)], false);
				const error = await expectLocked(c.run(acquireLock(path, c.identity)));
				expect(error.owner).toBe(undefined);
				expect(await readText(c, lockPathOf(path))).toBe(content);
			}
			expect((await names(c, c.root)).length).toBe(garbage.length);
		});
		test("acquiring in a missing directory fails with not-found, not as locked", async (c) => {
			await expectStorageError(c.run(acquireLock(c.at("no-dir", "s.jsonl"), c.identity)), "not-found");
		});
		if (mode === "async") {
			/** Five acquires at once, five rounds: exactly one wins each round, the others are refused. */
			const expectOneWinner = async (c: Context, prepare: (path: string) => Promise<void>) => {
				for (let round = 0; round < 5; round++) {
					const path = c.at(`s${round}.jsonl`);
					await prepare(path);
					const results = await Promise.allSettled([0, 1, 2, 3, 4].map(() => c.run(acquireLock(path, c.identity))));
					const won = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
					expect(won.length).toBe(1);
					for (const r of results) {
						if (r.status === "rejected") expect(r.reason instanceof SessionLockedError).toBe(true);
					}
					const lock = won[0] as HeldLock;
					expect(JSON.parse(await readText(c, lockPathOf(lock.path)))).toEqual(lock.owner);
					await c.run(releaseLock(lock));
				}
				expect(await names(c, c.root)).toEqual([]);
			};
			test("of concurrent acquires exactly one succeeds", (c) => expectOneWinner(c, async () => undefined));
			test("of concurrent takeovers of a stale lock exactly one succeeds", (c) =>
				expectOneWinner(c, async (path) => {
					await c.storage.createExclusive(lockPathOf(path), [ownerJson(await deadOwner(c))], false);
				}));
		} else {
			test("after one acquire, later ones are refused until it is released", async (c) => {
				const path = c.at("s.jsonl");
				const lock = await c.run(acquireLock(path, c.identity));
				for (let i = 0; i < 3; i++)
					expect((await expectLocked(c.run(acquireLock(path, c.identity)))).owner).toEqual(lock.owner);
				await c.run(releaseLock(lock));
				await c.run(releaseLock(await c.run(acquireLock(path, c.identity))));
				expect(await names(c, c.root)).toEqual([]);
			});
		}
	});
}
