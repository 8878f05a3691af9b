/**
 * Only with `{ sync: true }`: the async storage and its synchronous twin are two views of the same files
 * and the same locks.
 * @module
 */
import { acquireLock, lockPathOf, realmLockIdentity, releaseLock, SessionLockedError } from "../lock-files.ts";
import { io, runTask, runTaskSync, type SyncStorage } from "../storage.ts";
import { byName, bytes, rejection, type StorageFactory, type StorageFixture, type TestApi, text } from "./support.ts";

export function syncTwinTests(factory: StorageFactory, t: TestApi): void {
	const { it, expect } = t;
	/** A test given the fixture's sync storage and its root, created. */
	const withSync = (title: string, body: (fixture: StorageFixture, sync: SyncStorage, root: string) => Promise<void>) =>
		it(title, async () => {
			const fixture = await factory();
			try {
				const sync = fixture.syncStorage;
				expect(sync === undefined).toBe(false);
				if (!sync) return;
				const root = fixture.root.replace(/\/+$/, "");
				await fixture.storage.mkdir(root);
				await body(fixture, sync, root);
			} finally {
				await fixture.cleanup?.();
			}
		});
	withSync("the async and the sync storage see the same files", async (fixture, sync, root) => {
		await fixture.storage.append(`${root}/a`, bytes("from async"), false);
		runTaskSync(io("createExclusive", `${root}/b`, [bytes("from sync")], false), sync);
		expect(text(runTaskSync(io("readRange", `${root}/a`, 0, 100), sync))).toBe("from async");
		expect(text(await fixture.storage.readRange(`${root}/b`, 0, 100))).toBe("from sync");
		expect(byName(runTaskSync(io("list", root), sync))).toEqual(byName(await fixture.storage.list(root)));
	});
	withSync("a lock taken through one driver is refused through the other", async (fixture, sync, root) => {
		const path = `${root}/s.jsonl`;
		const identity = fixture.lockIdentity ?? realmLockIdentity;
		const held = await runTask(acquireLock(path, identity), fixture.storage);
		const refusedSync = await rejection(Promise.resolve().then(() => runTaskSync(acquireLock(path, identity), sync)));
		expect(refusedSync instanceof SessionLockedError && refusedSync.owner?.token).toBe(held.owner.token);
		await runTask(releaseLock(held), fixture.storage);
		const heldSync = runTaskSync(acquireLock(path, identity), sync);
		const refused = await rejection(runTask(acquireLock(path, identity), fixture.storage));
		expect(refused instanceof SessionLockedError && refused.owner?.token).toBe(heldSync.owner.token);
		runTaskSync(releaseLock(heldSync), sync);
		expect(await fixture.storage.stat(lockPathOf(path))).toBeNull();
	});
}
