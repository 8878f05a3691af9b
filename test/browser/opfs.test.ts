import { afterAll, describe, expect, it } from "vitest";
import { createOpfsStorage } from "../../adapters/opfs.ts";
import { createWebLocks, webLockName } from "../../adapters/web-locks.ts";
import { EngineWorkerError, startEngineWorker } from "../../adapters/worker.ts";
import { registerTransferHandlers } from "../../adapters/worker-wire.ts";
import { SessionLockedError, StorageError } from "../../src/errors.ts";
import type { Storage } from "../../src/storage.ts";
import { testStorage } from "../../src/testing.ts";
import { type EngineFixture, engineConformance, type SuiteOptions } from "../conformance/engine-suite.ts";
import { globCorpus } from "../support/corpus.ts";
import { assistantMessage, userMessage } from "../support/messages.ts";
import { forwarded, storageWorker, workers } from "./opfs/forwarded.ts";

registerTransferHandlers();

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Every test's OPFS directory is under this one. */
const TESTS_DIR = "/opfs-tests";
const freshRoot = () => `${TESTS_DIR}/${crypto.randomUUID()}`;

/** Remove an OPFS directory from the page; a moment's retry while a worker that just ended still has a file open. */
async function removeOpfsDirectory(path: string): Promise<void> {
	const names = path.split("/").filter((name) => name !== "");
	const last = names.pop() as string;
	for (let attempt = 1; ; attempt++) {
		try {
			let dir = await navigator.storage.getDirectory();
			for (const name of names) dir = await dir.getDirectoryHandle(name);
			await dir.removeEntry(last, { recursive: true });
			return;
		} catch (error) {
			const name = (error as DOMException).name;
			if (name === "NotFoundError") return;
			if (name !== "NoModificationAllowedError" || attempt >= 20) throw error;
			await new Promise((resolve) => setTimeout(resolve, 25));
		}
	}
}

/** The error a promise rejects with (fails the test when it fulfils). */
async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
	try {
		await promise;
	} catch (error) {
		return error as Error & Record<string, unknown>;
	}
	throw new Error("expected a rejection");
}

afterAll(async () => {
	for (const worker of workers) worker.terminate();
	await removeOpfsDirectory(TESTS_DIR);
});

const shared = storageWorker();
const t = { describe, it, expect };

testStorage(
	"opfs (Chromium, in a module Worker)",
	async () => {
		const id = await shared.open(freshRoot());
		return { storage: forwarded(shared, id), root: "/work", cleanup: () => shared.close(id) };
	},
	t,
);

// As test/browser/conformance.test.ts: the generated files, and the corpus beside the repository if it is there.
const fixtures = import.meta.glob<string>("../fixtures/sessions/*.jsonl", { query: "?raw", import: "default" });
const corpusFiles = import.meta.glob<string>("../../../shared/corpus/*.jsonl", { query: "?raw", import: "default" });
const suiteOptions: SuiteOptions = {
	fixture: async (name) => {
		const load = fixtures[`../fixtures/sessions/${name}`];
		if (!load) throw new Error(`no generated session file ${name}`);
		return encoder.encode(await load());
	},
	corpus: globCorpus(corpusFiles, "../shared/corpus (beside the repository)"),
	describeSkip: describe.skip,
};

/** An engine worker on OPFS under `root` (the worker's name tells it the root). */
function engineWorker(root: string): Worker {
	const worker = new Worker(new URL("./opfs/engine-worker.ts", import.meta.url), { type: "module", name: root });
	workers.push(worker);
	return worker;
}

engineConformance(
	"opfs, module Worker (Chromium)",
	async (): Promise<EngineFixture> => {
		const root = freshRoot();
		const { engine, terminate } = await startEngineWorker({ storage: "opfs", worker: engineWorker(root) });
		return {
			engine,
			root: "/work",
			cleanup: async () => {
				await terminate();
				await removeOpfsDirectory(root);
			},
		};
	},
	t,
	suiteOptions,
);

/**
 * A writer storage in a worker of its own and a reader (the shared worker's, through a forwarding
 * `Storage`) on one fresh root, for `body`; both closed after.
 */
async function withWriterAndReader(
	body: (sides: { writer: ReturnType<typeof storageWorker>; writerId: number; reader: Storage }) => Promise<void>,
): Promise<void> {
	const root = freshRoot();
	const writer = storageWorker();
	const writerId = await writer.open(root);
	const readerId = await shared.open(root);
	try {
		await body({ writer, writerId, reader: forwarded(shared, readerId) });
	} finally {
		await writer.close(writerId);
		await shared.close(readerId);
	}
}

describe("opfs storage", () => {
	it("rejects on the page, saying it must run in a dedicated worker", async () => {
		const error = await rejection(createOpfsStorage({ root: freshRoot() }));
		expect(error).toBeInstanceOf(StorageError);
		expect(error.code).toBe("unsupported");
		expect(error.message).toMatch(/must run in a dedicated worker/);
	});

	it("refuses paths with empty, '.' or '..' names, or that are not absolute, naming them, and creates nothing", async () => {
		const id = await shared.open(freshRoot());
		const storage = forwarded(shared, id);
		try {
			const bad = ["", "relative/a.jsonl", "/a/../b", "/a/./b", "/a//b", "/a/", "/..", "/."];
			for (const path of bad) {
				const calls: (() => Promise<unknown>)[] = [
					() => storage.readRange(path, 0, 1),
					() => storage.append(path, encoder.encode("x"), false),
					() => storage.createExclusive(path, [encoder.encode("x")], false),
					() => storage.replace(path, [encoder.encode("x")]),
					() => storage.rename(path, "/ok"),
					() => storage.rename("/ok", path),
					() => storage.link("/ok", path),
					() => storage.stat(path),
					() => storage.list(path),
					() => storage.mkdir(path),
					() => storage.remove(path),
					() => shared.acquire(id, path),
				];
				for (const call of calls) {
					const error = await rejection(call());
					expect([error instanceof StorageError, error.code, error.path]).toEqual([true, "io", path]);
					expect(error.message).toContain(path === "" ? 'must start with "/"' : path);
				}
			}
			expect(await storage.list("/")).toEqual([]);
		} finally {
			await shared.close(id);
		}
	});

	it("an append costs the same OPFS calls on a 100 MiB file as on a 1 KiB one, and reads nothing", async () => {
		const { locked, unlocked } = await storageWorker().appendCost(freshRoot());
		const line = encoder.encode('{"type":"custom","n":1}\n').length;
		expect(locked.big).toEqual(locked.small);
		expect(unlocked.big).toEqual(unlocked.small);
		// With the lock held the handle is kept: each append is its size and a write at the end (a flush when durable).
		expect(locked.small).toEqual({
			calls: {
				"FileSystemSyncAccessHandle.getSize": 10,
				"FileSystemSyncAccessHandle.write": 10,
				"FileSystemSyncAccessHandle.flush": 5,
			},
			bytesRead: 0,
			bytesWritten: 10 * line,
		});
		// Without it each append opens the file for itself, and closes it: still nothing that depends on its size.
		expect(unlocked.small.calls["FileSystemFileHandle.createSyncAccessHandle"]).toBe(10);
		expect(unlocked.small.calls["FileSystemSyncAccessHandle.close"]).toBe(10);
		expect([unlocked.small.bytesRead, unlocked.small.bytesWritten]).toEqual([0, 10 * line]);
	});

	it("the durable modes flush OPFS before an append resolves, 'none' never does, and a migration's rewrite always does", async () => {
		const modes = await storageWorker().durabilityCalls(freshRoot(), 40);
		const flushes = (calls: string[]) => calls.filter((kind) => kind === "flush").length;
		const writes = (calls: string[]) => calls.filter((kind) => kind === "write").length;
		// "fsync": every append its own write and flush, and its flush done when it resolves.
		const fsync = modes.fsync;
		expect(fsync.all.slice(fsync.first.length)).toEqual(Array.from({ length: 40 }, () => ["write", "flush"]).flat());
		fsync.seen.forEach((sofar, n) => {
			expect(sofar.at(-1), `append ${n}`).toBe("flush");
			expect(flushes(sofar) - flushes(fsync.first), `append ${n}`).toBeGreaterThanOrEqual(n + 1);
		});
		// "group": appends issued together share writes; each resolves with every write so far flushed.
		const group = modes.group;
		expect(writes(group.all) - writes(group.first)).toBeLessThan(40);
		for (const sofar of group.seen) {
			expect(sofar.at(-1)).toBe("flush");
			expect(flushes(sofar)).toBe(writes(sofar));
		}
		// "none": written, never flushed.
		expect(writes(modes.none.all) - writes(modes.none.first)).toBeGreaterThan(0);
		expect(flushes(modes.none.all)).toBe(0);
		// A migration replaces what the user had: its temporary is flushed before it takes the name, in every mode.
		for (const [mode, calls] of Object.entries(modes)) {
			expect(calls.migratedFrom, mode).toBe(1);
			expect(writes(calls.rewrite), mode).toBeGreaterThan(0);
			expect(calls.rewrite.at(-1), mode).toBe("flush");
		}
	});

	it("a file another worker has open for writing can be read there, and changing it is refused clearly", () =>
		withWriterAndReader(async ({ writer, writerId, reader }) => {
			await writer.call(writerId, "createExclusive", ["/s.jsonl", [encoder.encode("one\n")], false]);
			await writer.acquire(writerId, "/s.jsonl");
			await writer.call(writerId, "append", ["/s.jsonl", encoder.encode("two\n"), false]);
			expect(decoder.decode(await reader.readRange("/s.jsonl", 0, 100))).toBe("one\ntwo\n");
			expect((await reader.stat("/s.jsonl"))?.size).toBe(8);
			for (const change of [
				() => reader.append("/s.jsonl", encoder.encode("no\n"), false),
				() => reader.replace("/s.jsonl", [encoder.encode("no\n")]),
				() => reader.remove("/s.jsonl"),
				() => reader.rename("/s.jsonl", "/t.jsonl"),
			]) {
				const error = await rejection(change());
				expect([error instanceof StorageError, error.code]).toEqual([true, "io"]);
				expect(error.message).toContain("another tab or worker of this origin has this file open");
			}
			await writer.release(writerId, "/s.jsonl");
			await reader.append("/s.jsonl", encoder.encode("three\n"), false);
			expect(decoder.decode(await reader.readRange("/s.jsonl", 0, 100))).toBe("one\ntwo\nthree\n");
		}));

	it("a reader keeps seeing what another worker appends to and replaces, range after range", () =>
		withWriterAndReader(async ({ writer, writerId, reader }) => {
			await writer.call(writerId, "createExclusive", ["/s.jsonl", [encoder.encode("one\n")], false]);
			await writer.acquire(writerId, "/s.jsonl");
			expect(decoder.decode(await reader.readRange("/s.jsonl", 0, 4))).toBe("one\n");
			await writer.call(writerId, "append", ["/s.jsonl", encoder.encode("two\n"), false]);
			// Within the size read before, then past it: the bytes there now.
			expect(decoder.decode(await reader.readRange("/s.jsonl", 0, 4))).toBe("one\n");
			expect(decoder.decode(await reader.readRange("/s.jsonl", 4, 100))).toBe("two\n");
			await writer.call(writerId, "replace", ["/s.jsonl", [encoder.encode("ONE\nTWO\n")]]);
			expect(decoder.decode(await reader.readRange("/s.jsonl", 0, 4))).toBe("ONE\n");
			await writer.release(writerId, "/s.jsonl");
			await reader.append("/s.jsonl", encoder.encode("three\n"), false);
			expect(decoder.decode(await reader.readRange("/s.jsonl", 0, 100))).toBe("ONE\nTWO\nthree\n");
		}));

	it("a file no one holds is read through a read-only sync access handle, one for each range, into the buffer given", async () => {
		const root = freshRoot();
		const id = await shared.open(root);
		try {
			const data = Uint8Array.from({ length: 3 << 20 }, (_, i) => (i * 7) & 0xff);
			await shared.call(id, "createExclusive", ["/f", [data], false]);
			const within = await shared.tracedRead(id, "/f", 5, (1 << 20) + 5, 2 << 20);
			expect(within.bytes).toEqual(data.subarray(5, (1 << 20) + 5));
			expect(within.inGiven).toBe(true);
			expect(within.count.calls["FileSystemFileHandle.createSyncAccessHandle(read-only)"]).toBe(1);
			expect(within.count.calls["FileSystemSyncAccessHandle.close"]).toBe(1);
			expect(within.count.calls["Blob.arrayBuffer"]).toBeUndefined();
			// The next range: a handle of its own, from the file handle kept (its directories not walked again).
			const next = await shared.tracedRead(id, "/f", (1 << 20) + 5, (2 << 20) + 5, 2 << 20);
			expect(next.bytes).toEqual(data.subarray((1 << 20) + 5, (2 << 20) + 5));
			expect(next.count.calls["FileSystemFileHandle.createSyncAccessHandle(read-only)"]).toBe(1);
			expect(next.count.calls["FileSystemSyncAccessHandle.close"]).toBe(1);
			expect(next.count.calls["FileSystemDirectoryHandle.getFileHandle"]).toBeUndefined();
			expect(next.count.calls["FileSystemDirectoryHandle.getDirectoryHandle"]).toBeUndefined();
			// Past the end: what there is; a buffer too small is not used.
			const tail = await shared.tracedRead(id, "/f", (3 << 20) - 10, 4 << 20, 4);
			expect([tail.bytes, tail.inGiven]).toEqual([data.subarray((3 << 20) - 10), false]);
			const missing = await rejection(shared.tracedRead(id, "/nothing", 0, 10));
			expect([missing instanceof StorageError, missing.code]).toEqual([true, "not-found"]);
			// Every read let go of its handle lock, the failed one too.
			const held = (await navigator.locks.query()).held ?? [];
			expect(held.filter((lock) => lock.name?.startsWith("pi-session-tree handle:"))).toEqual([]);
		} finally {
			await shared.close(id);
		}
	});

	it("a file another worker holds is read through a File (its handle is exclusive), and through a handle again once let go", async () => {
		const root = freshRoot();
		const writer = storageWorker();
		const writerId = await writer.open(root);
		const readerId = await shared.open(root);
		try {
			await writer.call(writerId, "createExclusive", ["/s.jsonl", [encoder.encode("one\n")], false]);
			await writer.acquire(writerId, "/s.jsonl");
			await writer.call(writerId, "append", ["/s.jsonl", encoder.encode("two\n"), false]);
			const held = await shared.tracedRead(readerId, "/s.jsonl", 0, 100);
			expect(decoder.decode(held.bytes)).toBe("one\ntwo\n");
			expect(held.count.calls["Blob.arrayBuffer"]).toBe(1);
			expect(held.count.calls["FileSystemFileHandle.createSyncAccessHandle(read-only)"]).toBe(1);
			// Refused once, the file is read through Files for a second, without asking for a handle each range.
			const again = await shared.tracedRead(readerId, "/s.jsonl", 4, 100);
			expect(decoder.decode(again.bytes)).toBe("two\n");
			expect(again.count.calls["FileSystemFileHandle.createSyncAccessHandle(read-only)"]).toBeUndefined();
			await writer.release(writerId, "/s.jsonl");
			await new Promise((resolve) => setTimeout(resolve, 1100));
			const free = await shared.tracedRead(readerId, "/s.jsonl", 0, 100);
			expect(decoder.decode(free.bytes)).toBe("one\ntwo\n");
			expect(free.count.calls["Blob.arrayBuffer"]).toBeUndefined();
			// The handle kept names the path: it reads the file put there since (not looked up again), and finds
			// none once it is gone.
			await writer.call(writerId, "replace", ["/s.jsonl", [encoder.encode("ONE\n")]]);
			const replaced = await shared.tracedRead(readerId, "/s.jsonl", 0, 100);
			expect([decoder.decode(replaced.bytes), replaced.count.calls["Blob.arrayBuffer"]]).toEqual(["ONE\n", undefined]);
			expect(replaced.count.calls["FileSystemDirectoryHandle.getFileHandle"]).toBeUndefined();
			await writer.call(writerId, "remove", ["/s.jsonl"]);
			const gone = await rejection(shared.tracedRead(readerId, "/s.jsonl", 0, 100));
			expect([gone instanceof StorageError, gone.code]).toEqual([true, "not-found"]);
		} finally {
			await writer.close(writerId);
			await shared.close(readerId);
		}
	});

	it("where sync access handles know no modes, files no one holds are read through Files, as before", async () => {
		const root = freshRoot();
		const id = await shared.openWithoutModes(root);
		try {
			await shared.call(id, "createExclusive", ["/f", [encoder.encode("one\ntwo\n")], false]);
			const read = await shared.tracedRead(id, "/f", 4, 100);
			expect(decoder.decode(read.bytes)).toBe("two\n");
			expect(read.count.calls["FileSystemFileHandle.createSyncAccessHandle"]).toBeUndefined();
			expect(read.count.calls["Blob.arrayBuffer"]).toBe(1);
		} finally {
			await shared.close(id);
		}
	});

	it("a reader's read-only handles never keep a writer out: it appends, takes and lets go of the file while another worker reads it", async () => {
		const root = freshRoot();
		const writer = storageWorker();
		const writerId = await writer.open(root);
		const readerId = await shared.open(root);
		try {
			await writer.call(writerId, "createExclusive", ["/f", [new Uint8Array(4 << 20).fill(0x61)], false]);
			const reading = shared.keepReading(readerId, "/f");
			const line = encoder.encode("line\n");
			// Appends without the lock open the file for a moment each (trying again only a few times while it is busy).
			for (let round = 0; round < 30; round++) {
				await writer.call(writerId, "append", ["/f", line, false]);
				await writer.acquire(writerId, "/f");
				await writer.call(writerId, "append", ["/f", line, false]);
				await writer.release(writerId, "/f");
			}
			await shared.stopWatching();
			const { reads, failures, count } = await reading;
			expect(failures).toEqual([]);
			expect(reads).toBeGreaterThan(0);
			// It read through read-only handles (not only through Files, which never keep a writer out).
			expect(count.calls["FileSystemFileHandle.createSyncAccessHandle(read-only)"]).toBeGreaterThan(0);
			expect(count.bytesRead).toBeGreaterThan(4 << 20);
			const stat = (await writer.call(writerId, "stat", ["/f"])) as { size: number };
			expect(stat.size).toBe((4 << 20) + 60 * line.length);
		} finally {
			await writer.close(writerId);
			await shared.close(readerId);
		}
	});

	it("a file created or replaced is never seen partly written by another worker", async () => {
		const root = freshRoot();
		const writer = storageWorker();
		const writerId = await writer.open(root);
		const readerId = await shared.open(root);
		try {
			const versions = [0, 1, 2, 3].map((n) => new Uint8Array((n + 1) * (512 << 10)).fill(0x61 + n));
			const watched = shared.watch(readerId, "/f", versions);
			const chunked = (bytes: Uint8Array) => [
				bytes.subarray(0, 1000),
				bytes.subarray(1000, 300_000),
				bytes.subarray(300_000),
			];
			await writer.call(writerId, "createExclusive", ["/f", chunked(versions[0] as Uint8Array), false]);
			for (let round = 0; round < 12; round++) {
				await writer.call(writerId, "replace", ["/f", chunked(versions[(round % 3) + 1] as Uint8Array)]);
			}
			await shared.stopWatching();
			const seen = await watched;
			expect([seen.torn, seen.vanished]).toEqual([[], 0]);
			expect(seen.reads + seen.missing).toBeGreaterThan(0);
		} finally {
			await writer.close(writerId);
			await shared.close(readerId);
		}
	});
});

describe("web locks", () => {
	it("a second acquire of a path is refused at once while the first is held, and granted after release", async () => {
		const prefix = `test-${crypto.randomUUID()}:`;
		const opened: string[] = [];
		const locks = createWebLocks({
			prefix,
			onAcquire: (path) => void opened.push(`open ${path}`),
			onRelease: (path) => void opened.push(`close ${path}`),
		});
		const first = await locks.acquire("/a.jsonl");
		const refused = await rejection(locks.acquire("/a.jsonl"));
		expect(refused).toBeInstanceOf(SessionLockedError);
		expect([refused.path, (refused.owner as { token: string }).token]).toEqual(["/a.jsonl", first.owner.token]);
		expect(refused.message).toContain("this tab or worker");
		expect(await locks.owner("/a.jsonl")).toEqual(first.owner);
		const other = await locks.acquire("/b.jsonl"); // locks of different files are independent
		await locks.release(first);
		expect(await locks.owner("/a.jsonl")).toBe(undefined);
		const second = await locks.acquire("/a.jsonl");
		expect(second.owner.token === first.owner.token).toBe(false);
		await locks.release(first); // not ours any more: nothing happens
		expect(await locks.owner("/a.jsonl")).toEqual(second.owner);
		await locks.release(second);
		await locks.release(other);
		expect(opened).toEqual([
			"open /a.jsonl",
			"open /b.jsonl",
			"close /a.jsonl",
			"open /a.jsonl",
			"close /a.jsonl",
			"close /b.jsonl",
		]);
		const { held = [] } = await navigator.locks.query();
		expect(held.filter((lock) => lock.name?.includes(prefix))).toEqual([]);
	});

	it("a failing onAcquire lets go of the lock, and acquire throws its error", async () => {
		const prefix = `test-${crypto.randomUUID()}:`;
		const failing = createWebLocks({
			prefix,
			onAcquire: () => {
				throw new Error("no handle");
			},
		});
		expect((await rejection(failing.acquire("/a.jsonl"))).message).toBe("no handle");
		const locks = createWebLocks({ prefix });
		await locks.release(await locks.acquire("/a.jsonl"));
	});

	it("a lock held by another worker is refused naming it, with its owner, until that worker lets go", async () => {
		const root = freshRoot();
		const holder = storageWorker();
		const holderId = await holder.open(root, "the editor tab");
		const otherId = await shared.open(root);
		try {
			const owner = await holder.acquire(holderId, "/s.jsonl");
			const refused = await rejection(shared.acquire(otherId, "/s.jsonl"));
			expect(refused).toBeInstanceOf(SessionLockedError);
			expect(refused.owner).toEqual(owner);
			expect(refused.message).toContain("the editor tab, another tab or worker of this origin");
			expect(await shared.owner(otherId, "/s.jsonl")).toEqual(owner);
			await holder.release(holderId, "/s.jsonl");
			expect(await shared.owner(otherId, "/s.jsonl")).toBe(undefined);
			await shared.acquire(otherId, "/s.jsonl");
			await shared.release(otherId, "/s.jsonl");
		} finally {
			await holder.close(holderId);
			await shared.close(otherId);
		}
	});

	it("a lock let go in one worker is free and taken at once in another, round after round", async () => {
		const root = freshRoot();
		const first = storageWorker();
		const firstId = await first.open(root);
		const secondId = await shared.open(root);
		try {
			const outcomes: string[] = [];
			for (let round = 0; round < 300; round++) {
				const [holder, holderId, next, nextId] =
					round % 2 === 0 ? [first, firstId, shared, secondId] : [shared, secondId, first, firstId];
				await holder.acquire(holderId, "/s.jsonl");
				await holder.release(holderId, "/s.jsonl");
				const owner = await next.owner(nextId, "/s.jsonl");
				const taken = await next.acquire(nextId, "/s.jsonl").then(
					() => "taken",
					(error: Error) => error.name,
				);
				if (taken === "taken") await next.release(nextId, "/s.jsonl");
				outcomes.push(`${owner === undefined ? "free" : "still held"}, ${taken}`);
			}
			expect(new Set(outcomes)).toEqual(new Set(["free, taken"]));
		} finally {
			await first.close(firstId);
			await shared.close(secondId);
		}
	});
});

describe("two engines in two workers on one OPFS session", () => {
	it("terminate() (even twice) writes what is pending and releases the lock; later calls reject", async () => {
		const root = freshRoot();
		const first = await startEngineWorker({ storage: "opfs", worker: engineWorker(root) });
		const second = await startEngineWorker({ storage: "opfs", worker: engineWorker(root) });
		try {
			const { handle, path } = await first.engine.create({ cwd: "/p" });
			// Not awaited: terminate() must let them be written first.
			const appended = [
				first.engine.appendMessage(handle, userMessage("hi", 1)),
				first.engine.appendMessage(handle, assistantMessage("hello", { timestamp: 2 })),
			];
			await Promise.all([first.terminate(), first.terminate()]);
			const ids = await Promise.all(appended);
			// The lock is free at once: the other worker opens the session for writing, with both entries.
			const writer = await second.engine.open(path as string);
			expect((await second.engine.getBranch(writer.handle)).map((entry) => entry.id)).toEqual(ids);
			await second.engine.close(writer.handle);
			expect(await rejection(first.engine.getBranch(handle))).toBeInstanceOf(EngineWorkerError);
			expect(await rejection(first.engine.appendMessage(handle, userMessage("late", 3)))).toBeInstanceOf(
				EngineWorkerError,
			);
		} finally {
			await first.terminate(); // ended already, unless a step before failed
			await second.terminate();
			await removeOpfsDirectory(root);
		}
	});

	it("the second is refused the writer lock, reads read-only, and writes once the first worker is gone", async () => {
		const root = freshRoot();
		const firstWorker = engineWorker(root);
		const first = await startEngineWorker({ storage: "opfs", worker: firstWorker });
		const second = await startEngineWorker({ storage: "opfs", worker: engineWorker(root) });
		try {
			const created = await first.engine.create({ cwd: "/p" });
			const path = created.path as string;
			await first.engine.appendMessage(created.handle, userMessage("from the first", 1));
			const refused = await rejection(second.engine.open(path));
			expect(refused).toBeInstanceOf(SessionLockedError);
			expect([refused.path, typeof (refused.owner as { token?: unknown }).token]).toEqual([path, "string"]);
			expect(refused.message).toContain("another tab or worker of this origin");
			const reader = await second.engine.open(path, { readOnly: true });
			expect((await second.engine.getContext(reader.handle)).messages).toEqual([userMessage("from the first", 1)]);
			await second.engine.close(reader.handle);
			// Ended without closing its session: the browser lets go of its lock and its file.
			firstWorker.terminate();
			await navigator.locks.request(webLockName(`${root}${path}`), async () => undefined);
			const writer = await second.engine.open(path);
			await second.engine.appendMessage(writer.handle, userMessage("from the second", 2));
			await second.engine.close(writer.handle);
			const lines = decoder
				.decode(await second.engine.exportSessionFile(path))
				.trim()
				.split("\n");
			expect(lines.map((line) => JSON.parse(line).message?.content).slice(-2)).toEqual([
				"from the first",
				"from the second",
			]);
			// The first client hears of its worker's end (no event is sent; its life-long Web Lock went): its calls
			// reject, and terminating it ends at once.
			expect(await rejection(first.engine.openHandles())).toBeInstanceOf(EngineWorkerError);
			await first.terminate();
		} finally {
			await second.terminate();
			await removeOpfsDirectory(root);
		}
	});
});
