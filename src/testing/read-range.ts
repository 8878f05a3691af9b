/**
 * `readRange(path, start, end, into?)`: whole and partial reads, ranges past the end, binary data, ranges
 * of several MiB, and reads into a buffer given.
 * @module
 */
import { bytes, concat, MiB, pattern, type Suite, text } from "./support.ts";

export function readRangeTests(s: Suite): void {
	const { describe, test, expect, readText, expectStorageError, expectBytes } = s;
	describe("readRange", () => {
		test("reads a whole file", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("hello world")], false);
			expect(await readText(c, c.at("f"))).toBe("hello world");
			expect(text(await c.storage.readRange(c.at("f"), 0, 11))).toBe("hello world");
		});
		test("reads a part of a file", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("hello world")], false);
			expect(text(await c.storage.readRange(c.at("f"), 0, 5))).toBe("hello");
			expect(text(await c.storage.readRange(c.at("f"), 6, 11))).toBe("world");
			expect(text(await c.storage.readRange(c.at("f"), 4, 7))).toBe("o w");
		});
		test("returns fewer bytes past the end of the file, none when starting past it", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("hello world")], false);
			expect(text(await c.storage.readRange(c.at("f"), 6, 1000))).toBe("world");
			expect(text(await c.storage.readRange(c.at("f"), 0, MiB))).toBe("hello world");
			expect((await c.storage.readRange(c.at("f"), 11, 20)).length).toBe(0);
			expect((await c.storage.readRange(c.at("f"), 100, 200)).length).toBe(0);
		});
		test("an end far past the end of the file (2^40) returns just the file's bytes", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("small")], false);
			expect(text(await c.storage.readRange(c.at("f"), 0, 2 ** 40))).toBe("small");
		});
		test("start == end gives an empty range", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("hello")], false);
			for (const at of [0, 3, 5, 9]) {
				const range = await c.storage.readRange(c.at("f"), at, at);
				expect(range instanceof Uint8Array).toBe(true);
				expect(range.length).toBe(0);
			}
		});
		test("an empty file reads as empty", async (c) => {
			await c.storage.createExclusive(c.at("f"), [], false);
			expect((await c.storage.readRange(c.at("f"), 0, 100)).length).toBe(0);
		});
		test("with a buffer to read into, the same bytes: the range's, fewer at the end, whether it is used or not", async (c) => {
			const data = pattern(3 * MiB + 17, 5);
			await c.storage.createExclusive(c.at("f"), [data], false);
			const into = new Uint8Array(2 * MiB).fill(0xee);
			expectBytes(await c.storage.readRange(c.at("f"), 0, MiB, into), data.subarray(0, MiB));
			// Read again into the same buffer: nothing of the last read shows through.
			expectBytes(
				await c.storage.readRange(c.at("f"), MiB + 3, 2 * MiB + 3, into),
				data.subarray(MiB + 3, 2 * MiB + 3),
			);
			expectBytes(await c.storage.readRange(c.at("f"), 3 * MiB, 4 * MiB, into), data.subarray(3 * MiB));
			expect((await c.storage.readRange(c.at("f"), 4 * MiB, 5 * MiB, into)).length).toBe(0);
			await expectStorageError(c.storage.readRange(c.at("missing"), 0, 10, into), "not-found", c.at("missing"));
		});
		test("a missing file fails with not-found, naming the path", async (c) => {
			await expectStorageError(c.storage.readRange(c.at("missing"), 0, 10), "not-found", c.at("missing"));
			await expectStorageError(c.storage.readRange(c.at("no-dir", "f"), 0, 10), "not-found", c.at("no-dir", "f"));
		});
		test("binary bytes, 0x00 and 0xff included, come back exactly", async (c) => {
			const all = new Uint8Array(256).map((_, i) => i);
			const data = concat([all, pattern(4096, 7), all.slice().reverse()]);
			await c.storage.createExclusive(c.at("bin"), [data], false);
			expectBytes(await c.storage.readRange(c.at("bin"), 0, data.length), data);
			expectBytes(await c.storage.readRange(c.at("bin"), 250, 262), data.subarray(250, 262));
		});
		test("ranges of several MiB, whole and across chunk boundaries", async (c) => {
			const data = pattern(6 * MiB + 123, 42);
			const cut1 = Math.floor(1.5 * MiB);
			const cut2 = Math.floor(4.5 * MiB);
			await c.storage.createExclusive(
				c.at("big"),
				[data.subarray(0, cut1), data.subarray(cut1, cut2), data.subarray(cut2)],
				false,
			);
			expect((await c.storage.stat(c.at("big")))?.size).toBe(data.length);
			expectBytes(await c.storage.readRange(c.at("big"), 0, data.length), data);
			expectBytes(await c.storage.readRange(c.at("big"), MiB + 7, 5 * MiB - 3), data.subarray(MiB + 7, 5 * MiB - 3));
			expectBytes(await c.storage.readRange(c.at("big"), data.length - 10, 8 * MiB), data.subarray(data.length - 10));
		});
	});
}
