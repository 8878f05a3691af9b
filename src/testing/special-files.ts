/**
 * Only regular files are read or written: a named pipe (FIFO) where a file is expected is refused with
 * `not-a-file` naming it, at once (never waiting for the pipe's other end), and left as it is. Only where
 * the fixture can make named pipes (`StorageFixture.makeFifo`: the local file system); elsewhere each test
 * passes without checking anything. A fixture should unblock its pipes after a while (the node fixture opens
 * them from another process after 15 s), so that a storage that blocks on one fails here instead of hanging.
 * @module
 */
import { acquireLock, lockPathOf } from "../lock-files.ts";
import { bytes, type Context, type Suite } from "./support.ts";

/** Long enough for a few operations on a loaded machine; far less than a blocked one waits. */
const AT_ONCE_MS = 5000;

export function specialFileTests(s: Suite): void {
	const { describe, test, expect, expectStorageError } = s;
	/** A named pipe at `name` in the test's directory, or undefined where the fixture cannot make one. */
	const fifo = async (c: Context, name: string): Promise<string | undefined> => {
		const path = c.at(name);
		return c.fixture.makeFifo && (await c.fixture.makeFifo(path)) ? path : undefined;
	};
	/** The FIFO is still there, and the test took no time waiting on it (a fixture unblocks it later). */
	const expectStillThere = async (c: Context, path: string, started: number) => {
		const stat = await c.storage.stat(path);
		expect([stat?.isFile, stat?.isDirectory]).toEqual([false, false]);
		expect(Date.now() - started < AT_ONCE_MS).toBe(true);
	};
	describe("special files (a named pipe where a file is expected)", () => {
		test("readRange and append of a FIFO fail with not-a-file at once; it stays a FIFO", async (c) => {
			const path = await fifo(c, "p.jsonl");
			if (!path) return;
			const started = Date.now();
			await expectStorageError(c.storage.readRange(path, 0, 100), "not-a-file", path);
			await expectStorageError(c.storage.append(path, bytes("x\n"), false), "not-a-file", path);
			await expectStorageError(c.storage.append(path, bytes("x\n"), true), "not-a-file", path);
			await expectStillThere(c, path, started);
		});
		test("replace of a FIFO, and a rename onto one, fail with not-a-file and never replace it", async (c) => {
			const path = await fifo(c, "p.jsonl");
			if (!path) return;
			const started = Date.now();
			await c.storage.createExclusive(c.at("f"), [bytes("f")], false);
			await expectStorageError(c.storage.replace(path, [bytes("x\n")]), "not-a-file", path);
			await expectStorageError(c.storage.rename(c.at("f"), path), "not-a-file", path);
			await expectStillThere(c, path, started);
			expect((await c.storage.list(c.root)).map((entry) => entry.name).sort()).toEqual(["f", "p.jsonl"]);
		});
		test("createExclusive where a FIFO is fails with exists", async (c) => {
			const path = await fifo(c, "p.jsonl");
			if (!path) return;
			const started = Date.now();
			await expectStorageError(c.storage.createExclusive(path, [bytes("x")], false), "exists", path);
			await expectStillThere(c, path, started);
		});
		test("list shows a FIFO as neither file nor directory; stat does not open it", async (c) => {
			const path = await fifo(c, "p.jsonl");
			if (!path) return;
			const started = Date.now();
			expect(await c.storage.list(c.root)).toEqual([{ name: "p.jsonl", isFile: false, isDirectory: false }]);
			await expectStillThere(c, path, started);
		});
		test("a FIFO in place of a lock file: acquiring fails with not-a-file naming it, and leaves it", async (c) => {
			const session = c.at("s.jsonl");
			const lock = await fifo(c, "s.jsonl.lock");
			if (!lock) return;
			const started = Date.now();
			expect(lock).toBe(lockPathOf(session));
			await expectStorageError(c.run(acquireLock(session, c.identity)), "not-a-file", lock);
			await expectStillThere(c, lock, started);
		});
	});
}
