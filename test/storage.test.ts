import { existsSync, readFileSync } from "node:fs";
import { utimes } from "node:fs/promises";
import { hostname } from "node:os";
import { threadId } from "node:worker_threads";
import { bindContext, type FileSystem, InMemory, resolveMountConfig } from "@zenfs/core";
import { describe, expect, it } from "vitest";
import { type FsPromisesLike, fsPromisesStorage } from "../adapters/fs-promises.ts";
import { nodeLockIdentity, processStartTime } from "../adapters/node.ts";
import { createMemoryStorage, createZenfsStorage } from "../adapters/zenfs.ts";
import { acquireLock, lockPathOf, realmLockIdentity, releaseLock, SessionLockedError } from "../src/lock-files.ts";
import type { Storage } from "../src/storage.ts";
import { runTask, StorageError } from "../src/storage.ts";
import { testStorage } from "../src/testing.ts";
import { nodeStorageFixture } from "./support/node-storage-fixture.ts";

const t = { describe, it, expect };
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (data: Uint8Array): string => new TextDecoder().decode(data);

const nodeFixture = nodeStorageFixture;

async function prefixedZenfs(): Promise<{ fileSystem: FileSystem; storage: Storage }> {
	const fileSystem = await resolveMountConfig({ backend: InMemory });
	return { fileSystem, storage: createZenfsStorage(fileSystem, { root: "/prefix" }) };
}

testStorage("node", nodeFixture, t, { sync: true });
testStorage("zenfs in memory", async () => ({ storage: await createMemoryStorage(), root: "/work" }), t);
testStorage("zenfs under a root prefix", async () => ({ storage: (await prefixedZenfs()).storage, root: "/work" }), t);

/** Write a lock file that cannot be parsed and date it back, as one abandoned mid-write long ago. */
async function abandonedGarbageLock(storage: Storage, path: string, backdate: (lockPath: string) => Promise<void>) {
	await storage.createExclusive(lockPathOf(path), [bytes('{"pid":')], false);
	await backdate(lockPathOf(path));
	const stat = await storage.stat(lockPathOf(path));
	expect(Date.now() - (stat?.mtimeMs ?? Date.now())).toBeGreaterThan(30_000);
}

describe("node adapter specifics", () => {
	it("lock owners are this thread of this process on this host", async () => {
		const owner = nodeLockIdentity.lockOwner();
		expect(owner.pid).toBe(process.pid);
		expect(owner.host).toBe(hostname());
		expect(owner.thread).toBe(threadId);
		expect(owner.startedAt).toBeLessThanOrEqual(Date.now() - process.uptime() * 1000 + 1000);
	});

	it("isLockOwnerAlive: a foreign pid that is not running is not alive; one on another host is", async () => {
		const identity = nodeLockIdentity;
		const own = identity.lockOwner();
		const foreign = { ...own, pid: 2 ** 22 + 12345, token: "foreign" };
		expect(identity.isLockOwnerAlive(foreign)).toBe(false);
		// Another machine cannot be checked, so its locks are never stolen.
		expect(identity.isLockOwnerAlive({ ...foreign, host: `not-${own.host}` })).toBe(true);
		// A running process (our parent) holds its locks, whatever its token…
		const parentStart = processStartTime(process.ppid) as number;
		expect(identity.isLockOwnerAlive({ ...foreign, pid: process.ppid, startedAt: parentStart })).toBe(true);
		// …unless it started after the lock was taken: then its pid was reused and the lock is stale.
		expect(identity.isLockOwnerAlive({ ...foreign, pid: process.ppid, startedAt: parentStart - 60_000 })).toBe(false);
		// This thread: alive only while it holds the lock; another thread of it: alive (it may be running)…
		expect(identity.isLockOwnerAlive(own)).toBe(false);
		expect(identity.isLockOwnerAlive({ ...own, thread: threadId + 1 })).toBe(true);
		// …but not a process that had our pid before us.
		expect(identity.isLockOwnerAlive({ ...own, startedAt: own.startedAt - 60_000 })).toBe(false);
	});

	it("a lock held by another running process on this host is refused", async () => {
		const fixture = await nodeFixture();
		try {
			const path = `${fixture.root}/s.jsonl`;
			const owner = {
				pid: process.ppid,
				host: hostname(),
				startedAt: processStartTime(process.ppid) as number,
				token: "parent",
			};
			await fixture.storage.createExclusive(lockPathOf(path), [bytes(JSON.stringify(owner))], false);
			const error = await runTask(acquireLock(path, nodeLockIdentity), fixture.storage).catch((e: unknown) => e);
			expect(error).toBeInstanceOf(SessionLockedError);
			expect((error as SessionLockedError).owner).toEqual(owner);
		} finally {
			await fixture.cleanup?.();
		}
	});

	it("an unreadable lock file that is old is taken over", async () => {
		const fixture = await nodeFixture();
		try {
			const path = `${fixture.root}/s.jsonl`;
			const old = new Date(Date.now() - 60_000);
			await abandonedGarbageLock(fixture.storage, path, (lockPath) => utimes(lockPath, old, old));
			const lock = await runTask(acquireLock(path, nodeLockIdentity), fixture.storage);
			expect(JSON.parse(text(await fixture.storage.readRange(lockPathOf(lock.path), 0, 4096)))).toEqual(lock.owner);
			await runTask(releaseLock(lock), fixture.storage);
			expect(await fixture.storage.list(fixture.root)).toEqual([]);
		} finally {
			await fixture.cleanup?.();
		}
	});

	it("sync errors are StorageErrors with codes, like the async ones", async () => {
		const fixture = await nodeFixture();
		try {
			const sync = fixture.syncStorage;
			if (!sync) throw new Error("no sync storage");
			expect(() => sync.readRange(`${fixture.root}/missing`, 0, 1)).toThrow(StorageError);
			sync.createExclusive(`${fixture.root}/f`, [bytes("x")], false);
			let code: unknown;
			try {
				sync.createExclusive(`${fixture.root}/f`, [bytes("y")], false);
			} catch (error) {
				code = (error as StorageError).code;
			}
			expect(code).toBe("exists");
		} finally {
			await fixture.cleanup?.();
		}
	});
});

describe("zenfs adapter specifics", () => {
	it("files live under the root prefix of the underlying file system", async () => {
		const { fileSystem, storage } = await prefixedZenfs();
		const inside = bindContext({ root: "/", mounts: { "/": fileSystem } }).fs;
		await storage.mkdir("/work/sessions");
		await storage.append("/work/sessions/a.jsonl", bytes("line\n"), false);
		await storage.replace("/work/b.jsonl", [bytes("replaced")]);
		expect(inside.readdirSync("/")).toEqual(["prefix"]);
		expect(inside.readdirSync("/prefix/work").sort()).toEqual(["b.jsonl", "sessions"]);
		expect(inside.readFileSync("/prefix/work/sessions/a.jsonl", "utf8")).toBe("line\n");
		expect(inside.readFileSync("/prefix/work/b.jsonl", "utf8")).toBe("replaced");
		// And the other way: what is under the prefix is what the storage sees at its root.
		inside.writeFileSync("/prefix/outside.txt", "seen");
		expect(text(await storage.readRange("/outside.txt", 0, 100))).toBe("seen");
		expect((await storage.list("/")).map((e) => e.name).sort()).toEqual(["outside.txt", "work"]);
		// Errors name the storage's path, not the prefixed one.
		const error = await storage.readRange("/work/missing", 0, 1).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(StorageError);
		expect((error as StorageError).path).toBe("/work/missing");
	});

	it("an unreadable lock file that is old is taken over", async () => {
		const { fileSystem, storage } = await prefixedZenfs();
		const inside = bindContext({ root: "/", mounts: { "/": fileSystem } }).fs;
		await storage.mkdir("/work");
		const old = new Date(Date.now() - 60_000);
		await abandonedGarbageLock(storage, "/work/s.jsonl", async (lockPath) =>
			inside.utimesSync(`/prefix${lockPath}`, old, old),
		);
		const lock = await runTask(acquireLock("/work/s.jsonl", nodeLockIdentity), storage);
		expect(JSON.parse(text(await storage.readRange(lockPathOf(lock.path), 0, 4096)))).toEqual(lock.owner);
		await runTask(releaseLock(lock), storage);
		expect(await storage.list("/work")).toEqual([]);
	});

	it("two memory storages do not share files", async () => {
		const a = await createMemoryStorage();
		const b = await createMemoryStorage();
		await a.mkdir("/work");
		await a.append("/work/only-in-a", bytes("a"), false);
		expect(await b.stat("/work/only-in-a")).toBeNull();
		expect(await b.list("/work")).toEqual([]);
		await b.mkdir("/work");
		await b.createExclusive("/work/same", [bytes("b")], false);
		await a.createExclusive("/work/same", [bytes("a")], false);
		expect(text(await a.readRange("/work/same", 0, 10))).toBe("a");
		expect(text(await b.readRange("/work/same", 0, 10))).toBe("b");
		expect((await a.list("/work")).map((e) => e.name).sort()).toEqual(["only-in-a", "same"]);
		expect((await b.list("/work")).map((e) => e.name)).toEqual(["same"]);
	});

	it("memory storage: files that grow across many reservations keep every byte, whatever wrote them", async () => {
		const storage = await createMemoryStorage();
		await storage.mkdir("/work");
		// The file passes the 64 KiB from which it is kept growable, then each doubling of its reservation.
		const sizes = [1, 4095, 2, 5000, 9000, 1, 20_000, 33_000, 70_000, 3, 140_000, 300_000];
		const chunks = sizes.map((size, index) => new Uint8Array(size).fill(65 + index));
		const expected = (parts: readonly Uint8Array[]) => Buffer.concat(parts);
		// Buffer.compare: a deep equality of half a megabyte, element by element, takes seconds.
		const expectSame = (actual: Uint8Array, wanted: Buffer) => {
			expect(actual.length).toBe(wanted.length);
			expect(Buffer.compare(Buffer.from(actual), wanted)).toBe(0);
		};
		// Grown by appends only.
		for (const chunk of chunks) await storage.append("/work/appended", chunk, false);
		expectSame(await storage.readRange("/work/appended", 0, 1 << 30), expected(chunks));
		// Created with content, then appended to; replaced, then appended to; renamed, then appended to.
		await storage.createExclusive("/work/created", chunks.slice(0, 3), false);
		for (const chunk of chunks.slice(3)) await storage.append("/work/created", chunk, false);
		expectSame(await storage.readRange("/work/created", 0, 1 << 30), expected(chunks));
		await storage.replace("/work/created", [chunks[5] as Uint8Array]);
		await storage.append("/work/created", chunks[9] as Uint8Array, false);
		expectSame(
			await storage.readRange("/work/created", 0, 1 << 30),
			expected([chunks[5] as Uint8Array, chunks[9] as Uint8Array]),
		);
		await storage.rename("/work/appended", "/work/renamed");
		await storage.append("/work/renamed", chunks[0] as Uint8Array, false);
		const renamed = await storage.readRange("/work/renamed", 0, 1 << 30);
		expectSame(renamed, expected([...chunks, chunks[0] as Uint8Array]));
		// Ranges across chunk boundaries read what was written there.
		const start = 4095 - 10;
		expect(Buffer.from(await storage.readRange("/work/renamed", start, start + 20))).toEqual(
			Buffer.from(renamed.subarray(start, start + 20)),
		);
		expect((await storage.stat("/work/renamed"))?.size).toBe(renamed.length);
	});

	it.skipIf(!existsSync("/proc/self/maps"))(
		"memory storage: thousands of small files do not each take a memory mapping (Linux allows 65,530)",
		async () => {
			const mappings = () => readFileSync("/proc/self/maps", "utf8").split("\n").length;
			const storage = await createMemoryStorage();
			const before = mappings();
			for (let dir = 0; dir < 25; dir++) {
				await storage.mkdir(`/work/${dir}`);
				for (let file = 0; file < 200; file++) {
					await storage.createExclusive(`/work/${dir}/${file}.jsonl`, [bytes('{"type":"session"}\n')], false);
				}
			}
			// 5,000 files and as many inodes: one mapping each would add about 10,000.
			expect(mappings() - before).toBeLessThan(1000);
		},
	);

	it("memory storage keeps append handles open: an append issued during a replace waits for it", async () => {
		const storage = await createMemoryStorage();
		await storage.append("/f", bytes("a"), false);
		const text = async () => new TextDecoder().decode(await storage.readRange("/f", 0, 100));
		// Issued together: the append must not reopen the file being replaced.
		await Promise.all([storage.replace("/f", [bytes("R")]), storage.append("/f", bytes("b"), false)]);
		await Promise.all([storage.rename("/f", "/g"), storage.append("/f", bytes("c"), false)]);
		await Promise.all([storage.remove("/g"), storage.append("/g", bytes("d"), false)]);
		expect([await text(), new TextDecoder().decode(await storage.readRange("/g", 0, 100))]).toEqual(["c", "d"]);
		// Another spelling of the same path is the same file: its kept handle is closed by the replace too.
		await storage.mkdir("/d");
		await storage.append("/d//h", bytes("a"), false);
		await storage.replace("/d/h", [bytes("R")]);
		await storage.append("/d/./h", bytes("b"), false);
		expect(new TextDecoder().decode(await storage.readRange("/d/h", 0, 100))).toBe("Rb");
		// Many files, more than the handles kept: the evicted ones are closed with their data in place.
		await storage.mkdir("/many");
		for (let round = 0; round < 2; round++) {
			for (let n = 0; n < 100; n++) await storage.append(`/many/${n}`, bytes(`${n};`), false);
		}
		for (let n = 0; n < 100; n++) {
			expect(new TextDecoder().decode(await storage.readRange(`/many/${n}`, 0, 100))).toBe(`${n};${n};`);
		}
	});

	it("kept append handles: one open per file, however its path is spelled, within the limits of handles and bytes", async () => {
		const events: string[] = [];
		const sizes = new Map<string, number>();
		const fs = {
			open: async (path: string) => {
				events.push(`open ${path}`);
				return {
					stat: async () => ({ size: sizes.get(path) ?? 0, isFile: () => true, isDirectory: () => false }),
					read: async () => ({ bytesRead: 0 }),
					write: async (buffer: Uint8Array, offset = 0, length = buffer.length - offset) => {
						sizes.set(path, (sizes.get(path) ?? 0) + length);
						return { bytesWritten: length };
					},
					datasync: async () => undefined,
					close: async () => {
						events.push(`close ${path}`);
					},
				};
			},
		} as unknown as FsPromisesLike;
		const storage = fsPromisesStorage(fs, (path) => path, { keepAppendHandles: { handles: 2, bytes: 100 } });
		const data = (size: number) => new Uint8Array(size);
		await storage.append("/d/a", data(10), false);
		await storage.append("/d//a", data(10), false);
		await storage.append("/d/./a", data(10), true);
		expect(events).toEqual(["open /d/a"]);
		await storage.append("/d/b", data(10), false);
		await storage.append("/d/c", data(10), false); // a third file: the least recently used (a) closes
		await storage.append("/d/b", data(10), false);
		await storage.append("/d/big", data(101), false); // past the byte limit alone: not kept, the others stay
		await storage.append("/d/c", data(60), false); // c 70 bytes, b 20: within the limit
		await storage.append("/d/b", data(20), false); // b 40: past it, so the least recently used (c) closes
		await new Promise((resolve) => setTimeout(resolve, 0));
		expect(events).toEqual([
			"open /d/a",
			"open /d/b",
			"open /d/c",
			"close /d/a",
			"open /d/big",
			"close /d/big",
			"close /d/c",
		]);
	});

	it("the default lock owners name the realm, not a pid; another realm's are never taken over", async () => {
		const owner = realmLockIdentity.lockOwner();
		expect(owner.pid).toBe(0);
		expect(owner.host.startsWith("realm:")).toBe(true);
		expect(realmLockIdentity.isLockOwnerAlive({ ...owner, pid: process.pid })).toBe(false);
		expect(realmLockIdentity.isLockOwnerAlive({ ...owner, host: "realm:another" })).toBe(true);
		expect(realmLockIdentity.isLockOwnerAlive({ ...nodeLockIdentity.lockOwner(), pid: 2 ** 22 + 1 })).toBe(true);
	});
});
