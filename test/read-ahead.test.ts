/**
 * `runTask` reads ahead: a task reading a file range after range gets each next range asked for while it
 * works on the last, and the same bytes as without; anything else it does drops the read ahead, and a read
 * ahead that failed is asked again rather than reported. And a long task over a storage that answers at
 * once still lets the event loop run (timers fire), by either of the ways it takes a turn.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { readSessionFile } from "../src/load.ts";
import { io, ReadBuffers, runTask, type Storage, type Task } from "../src/storage.ts";

const MiB = 1 << 20;

/** The storage with every readRange logged (and, when `fail` says so, failed) before it answers. */
function spied(storage: Storage, fail: (start: number) => boolean = () => false) {
	const reads: string[] = [];
	/** The buffers reads were asked to fill (`readReusing`'s). */
	const into = new Set<Uint8Array>();
	const spy: Storage = {
		...storage,
		readRange: async (path, start, end, buffer) => {
			reads.push(`${start / MiB}-${end / MiB}`);
			if (buffer) into.add(buffer);
			if (fail(start)) throw new Error(`injected failure at ${start}`);
			return storage.readRange(path, start, end, buffer);
		},
	};
	return { spy, reads, into };
}

async function fileOf(size: number): Promise<{ storage: Storage; bytes: Uint8Array }> {
	const storage = await createMemoryStorage();
	const bytes = new Uint8Array(size);
	for (let index = 0; index < size; index++) bytes[index] = (index * 7 + (index >>> 16)) & 0xff; // no period a range could hide in
	await storage.mkdir("/d");
	await storage.append("/d/f", bytes, false);
	return { storage, bytes };
}

function* readAll(
	path: string,
	chunk: number,
	between?: () => Task<unknown>,
	asked: string[] = [],
): Task<Uint8Array[]> {
	const parts: Uint8Array[] = [];
	for (let offset = 0; ; offset += chunk) {
		asked.push(`asked ${offset / MiB}-${(offset + chunk) / MiB}`);
		const part = yield* io("readRange", path, offset, offset + chunk);
		parts.push(part);
		if (between) yield* between();
		if (part.length < chunk) return parts;
	}
}

/**
 * The storage, reading as a real read may: the read of the range at `late` fills its buffer, and again 60 ms
 * later (a late write); the one at `slow` fills its buffer at once but answers 150 ms later, after that late
 * write. A buffer handed out while a late write may still land in it shows the other range's bytes.
 */
function lateWriting(storage: Storage, late: number, slow: number): Storage {
	return {
		...storage,
		readRange: async (path, start, end, buffer) => {
			const read = await storage.readRange(path, start, end);
			if (buffer) buffer.set(read);
			const answer = buffer ? buffer.subarray(0, read.length) : read;
			if (start === late) {
				await new Promise((resolve) => setTimeout(resolve, 60));
				if (buffer) buffer.set(read); // the late write
			}
			if (start === slow) await new Promise((resolve) => setTimeout(resolve, 150));
			return answer;
		},
	};
}

describe("reading ahead", () => {
	it("asks for the next range while the task works, and hands over the same bytes", async () => {
		const { storage, bytes } = await fileOf(4 * MiB + 5);
		const { spy, reads } = spied(storage);
		const parts = await runTask(readAll("/d/f", MiB, undefined, reads), spy);
		expect(Buffer.compare(Buffer.concat(parts), bytes)).toBe(0);
		// Each range is read once, in file order; from the third on each is read before the task asks for it.
		// How the asks fall between the reads depends on when the storage answers.
		const ranges = reads.filter((event) => !event.startsWith("asked"));
		expect(ranges).toEqual(["0-1", "1-2", "2-3", "3-4", "4-5"]);
		expect(reads.filter((event) => event.startsWith("asked"))).toEqual([
			"asked 0-1",
			"asked 1-2",
			"asked 2-3",
			"asked 3-4",
			"asked 4-5",
		]);
		for (const range of ["2-3", "3-4", "4-5"])
			expect(reads.indexOf(range)).toBeLessThan(reads.indexOf(`asked ${range}`));
	});

	it("is dropped by any other operation, and not started for small or scattered reads", async () => {
		const { storage } = await fileOf(4 * MiB);
		const withStat = spied(storage);
		await runTask(
			readAll("/d/f", MiB, () => io("stat", "/d/f")),
			withStat.spy,
		);
		expect(withStat.reads).toEqual(["0-1", "1-2", "2-3", "3-4", "4-5"]);
		const small = spied(storage);
		await runTask(readAll("/d/f", 64 << 10), small.spy);
		expect(small.reads.length).toBe(65); // each asked for once, none ahead of time
		const scattered = spied(storage);
		await runTask(
			(function* () {
				yield* io("readRange", "/d/f", 0, MiB);
				yield* io("readRange", "/d/f", 2 * MiB, 3 * MiB);
				yield* io("readRange", "/d/f", MiB, 2 * MiB);
			})(),
			scattered.spy,
		);
		expect(scattered.reads).toEqual(["0-1", "2-3", "1-2"]);
	});

	it("asks again for a range whose read ahead failed, and reports a failure only when asked", async () => {
		const { storage, bytes } = await fileOf(3 * MiB);
		let failures = 0;
		const { spy, reads } = spied(storage, (start) => start === 2 * MiB && failures++ === 0);
		const parts = await runTask(readAll("/d/f", MiB), spy);
		expect(Buffer.compare(Buffer.concat(parts), bytes)).toBe(0);
		// 2-3 read ahead (failing), then again when the task asked for it; the others once.
		expect(reads).toEqual(["0-1", "1-2", "2-3", "2-3", "3-4"]);
		const always = spied(storage, (start) => start === 2 * MiB);
		await expect(runTask(readAll("/d/f", MiB), always.spy)).rejects.toThrow("injected failure at 2097152");
	});

	it("serves the start of a range read ahead: a last range cut at the file's size is not read again", async () => {
		const { storage, bytes } = await fileOf(2.5 * MiB);
		const { spy, reads } = spied(storage);
		const parts = await runTask(
			(function* () {
				const read: Uint8Array[] = [];
				read.push(yield* io("readRange", "/d/f", 0, MiB));
				read.push(yield* io("readRange", "/d/f", MiB, 2 * MiB));
				read.push(yield* io("readRange", "/d/f", 2 * MiB, 2.5 * MiB)); // as a listing asks, knowing the size
				return read;
			})(),
			spy,
		);
		expect(Buffer.compare(Buffer.concat(parts), bytes)).toBe(0);
		// 2–2.5 came from 2–3, read ahead; 2.5–3 is read ahead after it for nothing (it came back full).
		expect(reads).toEqual(["0-1", "1-2", "2-3", "2.5-3"]);
	});

	it("does not fail a read that worked when the storage refuses the read ahead at once", async () => {
		const { storage, bytes } = await fileOf(3 * MiB);
		let refusals = 0;
		const refusing: Storage = {
			...storage,
			readRange: (path, start, end) => {
				if (start === 2 * MiB && refusals++ === 0) throw new Error("refused at once");
				return storage.readRange(path, start, end);
			},
		};
		const parts = await runTask(readAll("/d/f", MiB), refusing);
		expect(Buffer.compare(Buffer.concat(parts), bytes)).toBe(0);
		expect(refusals).toBe(2); // the read ahead refused, then the task's own read of that range
	});

	it("serves a lazy open of a session: each range from the third on is read before it is asked for", async () => {
		const storage = await createMemoryStorage();
		await storage.mkdir("/s");
		const header = { type: "session", version: 3, id: "h", timestamp: "t", cwd: "/p" };
		const lines = [JSON.stringify(header)];
		for (let index = 0; index < 3000; index++)
			lines.push(
				JSON.stringify({
					type: "message",
					id: `e${index}`,
					parentId: index ? `e${index - 1}` : null,
					timestamp: "t",
					message: { role: "user", content: "x".repeat(1000), timestamp: index },
				}),
			);
		await storage.append("/s/a.jsonl", new TextEncoder().encode(`${lines.join("\n")}\n`), false);
		const { spy, reads, into } = spied(storage);
		const read = await runTask(asking(readSessionFile("/s/a.jsonl", { load: "lazy", index: true }), reads), spy);
		expect(read && "tree" in read ? read.tree?.size : undefined).toBe(3000);
		// Nothing of a range is kept once the next is asked for: two buffers serve every read.
		expect(into.size).toBe(2);
		const ranges = reads.filter((event) => !event.startsWith("asked"));
		expect(ranges.length).toBe(4); // 3 MB in 1 MiB ranges, and the short one at the end
		expect(new Set(ranges).size).toBe(ranges.length);
		const asked = reads.filter((event) => event.startsWith("asked")).map((event) => event.slice("asked ".length));
		expect(asked).toEqual(ranges.slice(0, 4));
		for (const range of asked.slice(2)) expect(reads.indexOf(range)).toBeLessThan(reads.indexOf(`asked ${range}`));
	});
});

describe("reads that reuse a buffer (readReusing)", () => {
	/** Each range read with `readReusing`, copied at once (its buffer is the task's only until the next), and the buffers handed over. */
	function* readReusing(
		path: string,
		ranges: readonly [number, number][],
		statAfter = -1,
	): Task<{ copies: Uint8Array[]; buffers: Set<ArrayBufferLike> }> {
		const copies: Uint8Array[] = [];
		const buffers = new Set<ArrayBufferLike>();
		for (const [index, [start, end]] of ranges.entries()) {
			const part = yield* io("readReusing", path, start, end);
			copies.push(part.slice());
			buffers.add(part.buffer);
			if (index === statAfter) yield* io("stat", path);
		}
		return { copies, buffers };
	}
	const ranges = (from: number, to: number): [number, number][] =>
		Array.from({ length: to - from }, (_, n) => [(from + n) * MiB, (from + n + 1) * MiB]);

	it("take turns with two buffers, read ahead as other reads are, and hand over the bytes a fresh read gives", async () => {
		const { storage, bytes } = await fileOf(6 * MiB + 5);
		const into: boolean[] = [];
		const spy: Storage = {
			...storage,
			readRange: (path, start, end, buffer) => {
				into.push(buffer !== undefined);
				return storage.readRange(path, start, end, buffer);
			},
		};
		const { copies, buffers } = await runTask(readReusing("/d/f", ranges(0, 7)), spy);
		expect(Buffer.compare(Buffer.concat(copies), bytes)).toBe(0);
		expect(buffers.size).toBe(2);
		expect(into.length).toBe(7); // each range once: all but the first two read ahead
		expect(into.every(Boolean)).toBe(true);
		// The same task stepped by hand (perform) or run synchronously reads fresh buffers, with the same bytes.
		const plain = await runTask(readAll("/d/f", MiB), storage);
		expect(Buffer.compare(Buffer.concat(plain), bytes)).toBe(0);
	});

	it("read a range far longer than the file (a chunk size of Infinity) as the file holds it", async () => {
		const { storage, bytes } = await fileOf(3 * MiB + 5);
		const read = await runTask(
			(function* () {
				const whole = (yield* io("readReusing", "/d/f", 0, Number.POSITIVE_INFINITY)).slice();
				const rest = yield* io("readReusing", "/d/f", 1, 2 ** 40);
				return [whole, rest.slice()];
			})(),
			storage,
		);
		expect(Buffer.compare(read[0] as Uint8Array, bytes)).toBe(0);
		expect(Buffer.compare(read[1] as Uint8Array, bytes.subarray(1))).toBe(0);
	});

	it.each([
		["the jump to 4-5", [...ranges(0, 2), ...ranges(4, 8)], -1],
		["a stat after 1-2", [...ranges(0, 2), ...ranges(4, 8)], 1],
	] as const)(
		"never hand over a buffer that a read ahead dropped by %s may still write into",
		async (_, asked, statAfter) => {
			const { storage, bytes } = await fileOf(8 * MiB);
			// As a real read may: the read of 2-3 (read ahead after 1-2, then dropped) writes its buffer late, and
			// the read of 6-7 (read ahead after 5-6) writes its buffer at once but answers later, after that late
			// write. Were the dropped read's buffer used again, 6-7 would be handed 2-3's bytes.
			const spy = lateWriting(storage, 2 * MiB, 6 * MiB);
			const { copies } = await runTask(readReusing("/d/f", asked, statAfter), spy);
			for (const [index, [start, end]] of asked.entries())
				expect(Buffer.compare(copies[index] as Uint8Array, bytes.subarray(start, end)), `range ${start / MiB}`).toBe(0);
		},
	);
});

describe("read buffers shared by tasks run one after another (a listing's lane)", () => {
	function* readCopies(
		path: string,
		ranges: readonly [number, number][],
	): Task<{ copies: Uint8Array[]; buffers: ArrayBufferLike[] }> {
		const copies: Uint8Array[] = [];
		const buffers: ArrayBufferLike[] = [];
		for (const [start, end] of ranges) {
			const part = yield* io("readReusing", path, start, end);
			copies.push(part.slice());
			buffers.push(part.buffer);
		}
		return { copies, buffers };
	}

	it("serve the next task with the same buffers, and hand it the bytes a fresh read gives", async () => {
		const { storage, bytes } = await fileOf(3 * MiB);
		const buffers = new ReadBuffers();
		const first = await runTask(readCopies("/d/f", [[0, MiB]]), storage, buffers);
		const second = await runTask(readCopies("/d/f", [[MiB, 2 * MiB]]), storage, buffers);
		expect(second.buffers[0]).toBe(first.buffers[0]);
		expect(Buffer.compare(second.copies[0] as Uint8Array, bytes.subarray(MiB, 2 * MiB))).toBe(0);
	});

	it("never hand the next task a buffer that the last task's read ahead may still write into", async () => {
		const { storage, bytes } = await fileOf(6 * MiB);
		// The first task reads 0-1 and 1-2 and ends; the read ahead of 2-3 it started writes its buffer late.
		// The second reads 3-4 and 4-5, and is handed 5-6 from its own read ahead, which fills its buffer at once
		// but answers after that late write: were the first task's buffer still in the slot, 5-6 would hold 2-3.
		const spy = lateWriting(storage, 2 * MiB, 5 * MiB);
		const buffers = new ReadBuffers();
		await runTask(
			readCopies("/d/f", [
				[0, MiB],
				[MiB, 2 * MiB],
			]),
			spy,
			buffers,
		);
		const ranges: [number, number][] = [
			[3 * MiB, 4 * MiB],
			[4 * MiB, 5 * MiB],
			[5 * MiB, 6 * MiB],
		];
		const { copies } = await runTask(readCopies("/d/f", ranges), spy, buffers);
		for (const [index, [start, end]] of ranges.entries())
			expect(Buffer.compare(copies[index] as Uint8Array, bytes.subarray(start, end)), `range ${start / MiB}`).toBe(0);
	});
});

describe("reading ahead a file that grows while it is read", () => {
	/** Whole custom entry lines, `count` of them from entry `from` on. */
	function lines(from: number, count: number): string {
		let text = "";
		for (let n = from; n < from + count; n++) {
			const id = n.toString(16).padStart(8, "0");
			const parent = n === 0 ? "null" : `"${(n - 1).toString(16).padStart(8, "0")}"`;
			text += `{"type":"custom","customType":"x","data":"${"y".repeat(60)}","id":"${id}","parentId":${parent},"timestamp":"2025-01-01T00:00:00.000Z"}\n`;
		}
		return text;
	}

	it("hands over what the file held at some moment: a range read ahead is never read before the one before it", async () => {
		const header = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n';
		let text = header;
		for (let n = 0; text.length < 2.5 * MiB; n += 100) text += lines(n, 100);
		const encoder = new TextEncoder();
		let file = encoder.encode(text);
		const before = file.length;
		const grown = encoder.encode(text + lines(1_000_000, 12_000)); // another writer's whole lines
		const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
		const storage = {
			stat: async () => ({ size: file.length, mtimeMs: 1, isFile: true, isDirectory: false }),
			readRange: async (_path: string, start: number, end: number) => {
				// The read of 2–3 MiB is slow. Were the read of 3–4 MiB made meanwhile, it would find nothing
				// there yet, and the appends right after it would make 2–3 MiB come back whole: a file cut at
				// 3 MiB, in the middle of a line, that never was.
				if (start === 2 * MiB) await sleep(30);
				const bytes = file.slice(start, end);
				if (start === 3 * MiB) file = grown;
				return bytes;
			},
		} as unknown as Storage;
		const read = await runTask(readSessionFile("/s.jsonl", { chunkBytes: MiB }), storage);
		if (!read || "empty" in read) throw new Error("no session");
		expect([before, grown.length]).toContain(read.size);
		expect([read.endsWithNewline, read.diagnostics]).toEqual([true, []]);
	});
});

/** `task`, logging each range it asks for before the storage is asked. */
function* asking<T>(task: Task<T>, log: string[]): Task<T> {
	let step = task.next();
	while (!step.done) {
		const effect = step.value;
		if (effect.op === "readRange" || effect.op === "readReusing")
			log.push(`asked ${effect.args[1] / MiB}-${effect.args[2] / MiB}`);
		let result: unknown;
		try {
			result = yield effect;
		} catch (error) {
			step = task.throw(error);
			continue;
		}
		step = task.next(result);
	}
	return step.value;
}

describe("a long task over a storage that answers at once", () => {
	/** A storage whose every stat resolves at once (no I/O, so no turn of the event loop in between). */
	const instant = { stat: async () => null } as unknown as Storage;
	function* busy(until: () => boolean): Task<number> {
		let steps = 0;
		while (!until()) {
			yield* io("stat", "/x");
			steps++;
		}
		return steps;
	}

	for (const turn of ["setImmediate", "setTimeout"] as const)
		it(`still lets timers run, by ${turn}`, async () => {
			const saved = globalThis.setImmediate;
			if (turn !== "setImmediate") (globalThis as { setImmediate?: unknown }).setImmediate = undefined;
			try {
				let fired = false;
				setTimeout(() => {
					fired = true;
				}, 5);
				const started = Date.now();
				// Ends when the timer has fired; a task that never let the loop run would end only at the 2 s bound.
				await runTask(
					busy(() => fired || Date.now() - started > 2000),
					instant,
				);
				expect(fired).toBe(true);
			} finally {
				globalThis.setImmediate = saved;
			}
		});
});
