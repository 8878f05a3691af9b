import { promises as fs, renameSync, writeFileSync } from "node:fs";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FsPromisesLike, fsPromisesStorage } from "../adapters/fs-promises.ts";
import { createNodeStorage } from "../adapters/node.ts";
import { readSessionFile } from "../src/load.ts";
import { runTask } from "../src/storage.ts";

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
const bytes = (value: string): Uint8Array => new TextEncoder().encode(value);
const timerTurn = () => new Promise((resolve) => setTimeout(resolve, 5));

/** Node's file system, counting the files opened and closed. */
function countingFs(renameDelayMs = 0): { fs: FsPromisesLike; opens: () => number; open: () => number } {
	let opens = 0;
	let closes = 0;
	const counted: FsPromisesLike = {
		...(fs as unknown as FsPromisesLike),
		rename: async (from, to) => {
			await new Promise((resolve) => setTimeout(resolve, renameDelayMs));
			await fs.rename(from, to);
		},
		open: async (path, flags) => {
			const handle = await fs.open(path, flags);
			opens++;
			const close = handle.close.bind(handle);
			handle.close = async () => {
				closes++;
				await close();
			};
			return handle;
		},
	};
	return { fs: counted, opens: () => opens, open: () => opens - closes };
}

describe("read handles kept across reads that follow one another", () => {
	let dir: string;
	beforeEach(async () => {
		dir = await mkdtemp(join(tmpdir(), "read-handles-"));
	});
	afterEach(async () => {
		await rm(dir, { recursive: true, force: true });
	});

	it("a file read range after range is opened once, and closed once the reads pause", async () => {
		const path = join(dir, "a.txt");
		await writeFile(path, "0123456789".repeat(10));
		const counting = countingFs();
		const storage = fsPromisesStorage(counting.fs, (p) => p, { keepReadHandles: true });
		const parts: string[] = [];
		for (let start = 0; start < 100; start += 10) parts.push(text(await storage.readRange(path, start, start + 10)));
		expect(parts.join("")).toBe("0123456789".repeat(10));
		expect(counting.opens()).toBe(1);
		expect(counting.open()).toBe(1);
		await timerTurn();
		expect(counting.open()).toBe(0);
		// Without the option, every read opens the file.
		const plain = countingFs();
		const each = fsPromisesStorage(plain.fs, (p) => p);
		for (let start = 0; start < 100; start += 10) await each.readRange(path, start, start + 10);
		expect(plain.opens()).toBe(10);
	});

	it("a read of a kept handle reaches the file system in the call, not a microtask later (a read ahead is under way while the engine works)", async () => {
		const path = join(dir, "a.txt");
		await writeFile(path, "0123456789".repeat(10));
		let reads = 0;
		const counting: FsPromisesLike = {
			...(fs as unknown as FsPromisesLike),
			open: async (name, flags) => {
				const handle = await fs.open(name, flags);
				const read = handle.read.bind(handle) as (...args: unknown[]) => unknown;
				(handle as unknown as { read: (...args: unknown[]) => unknown }).read = (...args) => {
					reads++;
					return read(...args);
				};
				return handle;
			},
		};
		const storage = fsPromisesStorage(counting, (p) => p, { keepReadHandles: true });
		expect(text(await storage.readRange(path, 0, 10))).toBe("0123456789");
		expect(reads).toBe(1);
		const next = storage.readRange(path, 10, 20);
		expect(reads).toBe(2); // asked of the file system before this code goes on
		expect(text(await next)).toBe("0123456789");
	});

	it("a read after a pause sees a file another program renamed over the path", async () => {
		const path = join(dir, "a.txt");
		await writeFile(path, "old content");
		const storage = fsPromisesStorage(countingFs().fs, (p) => p, { keepReadHandles: true });
		expect(text(await storage.readRange(path, 0, 100))).toBe("old content");
		await writeFile(join(dir, "b.txt"), "new content!");
		await rename(join(dir, "b.txt"), path);
		await timerTurn();
		expect(text(await storage.readRange(path, 0, 100))).toBe("new content!");
	});

	it("a read right after a replace or a removal through the storage never sees the file as it was", async () => {
		const path = join(dir, "a.txt");
		const storage = fsPromisesStorage(countingFs().fs, (p) => p, { keepReadHandles: true });
		await storage.replace(path, [bytes("first version")]);
		// Reads keep the handle busy across the replace: no timer turn between them.
		const reading = storage.readRange(path, 0, 5);
		await storage.replace(path, [bytes("second version")]);
		expect(text(await reading)).toBe("first");
		expect(text(await storage.readRange(path, 0, 100))).toBe("second version");
		const again = storage.readRange(path, 0, 6);
		await storage.remove(path);
		expect(text(await again)).toBe("second");
		await expect(storage.readRange(path, 0, 100)).rejects.toMatchObject({ code: "not-found" });
		await storage.replace(path, [bytes("third")]);
		const renamedFrom = join(dir, "c.txt");
		await storage.replace(renamedFrom, [bytes("renamed here")]);
		const third = storage.readRange(path, 0, 100);
		await storage.rename(renamedFrom, path);
		expect(text(await third)).toBe("third");
		expect(text(await storage.readRange(path, 0, 100))).toBe("renamed here");
	});

	it("reads that never pause do not carry a handle opened during a replace past it", async () => {
		const path = join(dir, "a.txt");
		// A slow rename: reads begun while it waits open the file as it was.
		const storage = fsPromisesStorage(countingFs(30).fs, (p) => p, { keepReadHandles: true });
		await storage.replace(path, [bytes("first version")]);
		let done = false;
		const seen: string[] = [];
		// One read after another, each asked for as the one before is answered: the handle is never idle.
		const reading = (async () => {
			while (!done) seen.push(text(await storage.readRange(path, 0, 100)));
		})();
		await storage.replace(path, [bytes("second version")]);
		const after = text(await storage.readRange(path, 0, 100));
		done = true;
		await reading;
		expect(after).toBe("second version");
		expect(seen).toContain("first version");
		expect(seen.at(-1)).toBe("second version");
	});

	it("a kept handle reads what was appended since it was opened, and a file cut shorter as it is", async () => {
		const path = join(dir, "a.txt");
		await writeFile(path, "abc");
		const storage = fsPromisesStorage(countingFs().fs, (p) => p, { keepReadHandles: true });
		const first = storage.readRange(path, 0, 3);
		await storage.append(path, bytes("defgh"), false);
		expect(text(await first)).toBe("abc");
		// The next range, on the handle opened when the file held 3 bytes: its size is looked at again.
		expect(text(await storage.readRange(path, 3, 100))).toBe("defgh");
		const second = storage.readRange(path, 0, 2);
		await fs.truncate(path, 4);
		expect(text(await second)).toBe("ab");
		const cut = await storage.readRange(path, 2, 8);
		expect(text(cut)).toBe("cd");
		expect(cut.buffer.byteLength).toBeLessThanOrEqual(6);
	});

	it("a read that does not start where the last one ended opens the file as it is now (a lock read again)", async () => {
		const path = join(dir, "lock");
		await writeFile(path, "stale owner");
		const counting = countingFs();
		const storage = fsPromisesStorage(counting.fs, (p) => p, { keepReadHandles: true });
		expect(text(await storage.readRange(path, 0, 100))).toBe("stale owner");
		// Another program replaces the file, with no pause before the read that decides on it.
		writeFileSync(join(dir, "new"), "live owner");
		renameSync(join(dir, "new"), path);
		expect(text(await storage.readRange(path, 0, 100))).toBe("live owner");
		expect(counting.opens()).toBe(2);
	});

	it("a failed open is not kept: the next read tries again", async () => {
		const path = join(dir, "later.txt");
		const storage = fsPromisesStorage(countingFs().fs, (p) => p, { keepReadHandles: true });
		await expect(storage.readRange(path, 0, 10)).rejects.toMatchObject({ code: "not-found" });
		await writeFile(path, "here now");
		expect(text(await storage.readRange(path, 0, 10))).toBe("here now");
		await expect(storage.readRange(dir, 0, 10)).rejects.toMatchObject({ code: "not-a-file" });
	});

	it("the node storage keeps them: a lazy open of a file of many chunks opens it a few times, not once per chunk", async () => {
		const path = join(dir, "s.jsonl");
		const header = JSON.stringify({
			type: "session",
			version: 3,
			id: "s1",
			timestamp: "2025-01-01T00:00:00.000Z",
			cwd: "/",
		});
		const lines = [header];
		let parent: string | null = null;
		for (let i = 0; i < 400; i++) {
			const id = `e${i.toString(16).padStart(7, "0")}`;
			const message = { role: "user", content: "x".repeat(3000), timestamp: i };
			lines.push(
				JSON.stringify({ type: "message", id, parentId: parent, timestamp: "2025-01-01T00:00:00.000Z", message }),
			);
			parent = id;
		}
		await writeFile(path, `${lines.join("\n")}\n`);
		const opened: string[] = [];
		const original = fs.open;
		fs.open = ((file: string, flags: number) => {
			opened.push(file);
			return original(file, flags);
		}) as typeof fs.open;
		try {
			const read = await runTask(
				readSessionFile(path, { load: "lazy", index: true, chunkBytes: 64 << 10 }),
				createNodeStorage(),
			);
			expect(read && "tree" in read && read.tree?.getEntryCount()).toBe(400);
		} finally {
			fs.open = original;
		}
		// 1.2 MB in 64 KiB ranges: 19 reads, one open (a read ahead may begin after a pause: a few at most).
		expect(opened.length).toBeGreaterThan(0);
		expect(opened.length).toBeLessThanOrEqual(3);
	});
});
