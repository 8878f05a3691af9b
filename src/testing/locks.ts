/**
 * The lock side of a storage: `lockOwner` and `isLockOwnerAlive`, and the writer lock protocol of
 * `lock.ts` driven through the driver under test (`runTask`, or `runTaskSync` on the sync twin).
 * @module
 */
import { acquireLock, lockPathOf, releaseLock, SessionLockedError, type WriterLock } from "../lock.ts";
import { bytes, type Context, type Suite } from "./support.ts";

export function lockTests(s: Suite): void {
	const {
		describe,
		test,
		expect,
		options,
		mode,
		readText,
		names,
		deadOwner,
		ownerJson,
		expectLocked,
		expectStorageError,
	} = s;
	describe("lockOwner and isLockOwnerAlive", () => {
		test("an owner has typed fields and survives JSON", async (c) => {
			const owner = await c.storage.lockOwner();
			expect(Number.isInteger(owner.pid) && owner.pid >= 0).toBe(true);
			expect(typeof owner.host === "string" && owner.host.length > 0).toBe(true);
			expect(Number.isFinite(owner.startedAt) && owner.startedAt <= Date.now()).toBe(true);
			expect(typeof owner.token === "string" && owner.token.length > 0).toBe(true);
			expect(JSON.parse(JSON.stringify(owner))).toEqual(owner);
		});
		test("tokens differ between calls; pid and host do not", async (c) => {
			const owners = await Promise.all([0, 1, 2, 3].map(() => c.storage.lockOwner()));
			expect(new Set(owners.map((o) => o.token)).size).toBe(4);
			expect(new Set(owners.map((o) => o.host)).size).toBe(1);
			expect(new Set(owners.map((o) => o.pid)).size).toBe(1);
		});
		test("an owner on this host whose pid is not running and whose token is not held is not alive", async (c) => {
			expect(await c.storage.isLockOwnerAlive(await deadOwner(c))).toBe(false);
		});
		test(`this process's own owner, with a token this thread does not hold, is ${options.ownUnheldOwner ?? "dead"}`, async (c) => {
			const alive = await c.storage.isLockOwnerAlive(await c.storage.lockOwner());
			expect(alive).toBe(options.ownUnheldOwner === "alive");
		});
	});

	describe("writer lock (lock.ts)", () => {
		test("acquire writes the lock file; a second acquire is refused with the holder", async (c) => {
			const path = c.at("s.jsonl");
			const lock = await c.run(acquireLock(path));
			try {
				expect(lock.path).toBe(path);
				expect(lock.lockPath).toBe(lockPathOf(path));
				expect((await c.storage.stat(lock.lockPath))?.isFile).toBe(true);
				expect(JSON.parse(await readText(c, lock.lockPath))).toEqual(lock.owner);
				expect(await c.storage.isLockOwnerAlive(lock.owner)).toBe(true);
				const error = await expectLocked(c.run(acquireLock(path)));
				expect(error.path).toBe(path);
				expect(error.owner).toEqual(lock.owner);
				expect(JSON.parse(await readText(c, lock.lockPath))).toEqual(lock.owner);
			} finally {
				await c.run(releaseLock(lock));
			}
		});
		test("release removes the lock file, and the lock can be taken again", async (c) => {
			const path = c.at("s.jsonl");
			const first = await c.run(acquireLock(path));
			await c.run(releaseLock(first));
			expect(await c.storage.stat(first.lockPath)).toBeNull();
			expect(await names(c, c.root)).toEqual([]);
			const second = await c.run(acquireLock(path));
			expect(second.owner.token === first.owner.token).toBe(false);
			await c.run(releaseLock(second));
			expect(await names(c, c.root)).toEqual([]);
		});
		test("locks of different sessions are independent", async (c) => {
			const a = await c.run(acquireLock(c.at("a.jsonl")));
			const b = await c.run(acquireLock(c.at("b.jsonl")));
			expect(await names(c, c.root)).toEqual(["a.jsonl.lock", "b.jsonl.lock"]);
			await c.run(releaseLock(a));
			await c.run(releaseLock(b));
			expect(await names(c, c.root)).toEqual([]);
		});
		test("release leaves a lock file that is no longer ours alone", async (c) => {
			const lock = await c.run(acquireLock(c.at("s.jsonl")));
			const other = await deadOwner(c, "someone-else");
			await c.storage.replace(lock.lockPath, [ownerJson(other)]);
			await c.run(releaseLock(lock));
			expect(JSON.parse(await readText(c, lock.lockPath))).toEqual(other);
		});
		test("a stale lock (owner not running, token not held) is taken over, leaving no leftovers", async (c) => {
			const path = c.at("s.jsonl");
			const stale = await deadOwner(c);
			await c.storage.createExclusive(lockPathOf(path), [ownerJson(stale)], false);
			const lock = await c.run(acquireLock(path));
			try {
				expect(lock.owner.token === stale.token).toBe(false);
				expect(JSON.parse(await readText(c, lock.lockPath))).toEqual(lock.owner);
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
				const error = await expectLocked(c.run(acquireLock(path)));
				expect(error.owner).toBe(undefined);
				expect(await readText(c, lockPathOf(path))).toBe(content);
			}
			expect((await names(c, c.root)).length).toBe(garbage.length);
		});
		test("acquiring in a missing directory fails with not-found, not as locked", async (c) => {
			await expectStorageError(c.run(acquireLock(c.at("no-dir", "s.jsonl"))), "not-found");
		});
		if (mode === "async") {
			/** Five acquires at once, five rounds: exactly one wins each round, the others are refused. */
			const expectOneWinner = async (c: Context, prepare: (path: string) => Promise<void>) => {
				for (let round = 0; round < 5; round++) {
					const path = c.at(`s${round}.jsonl`);
					await prepare(path);
					const results = await Promise.allSettled([0, 1, 2, 3, 4].map(() => c.run(acquireLock(path))));
					const won = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
					expect(won.length).toBe(1);
					for (const r of results) {
						if (r.status === "rejected") expect(r.reason instanceof SessionLockedError).toBe(true);
					}
					const lock = won[0] as WriterLock;
					expect(JSON.parse(await readText(c, lock.lockPath))).toEqual(lock.owner);
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
				const lock = await c.run(acquireLock(path));
				for (let i = 0; i < 3; i++) expect((await expectLocked(c.run(acquireLock(path)))).owner).toEqual(lock.owner);
				await c.run(releaseLock(lock));
				await c.run(releaseLock(await c.run(acquireLock(path))));
				expect(await names(c, c.root)).toEqual([]);
			});
		}
	});
}
