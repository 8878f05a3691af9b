/**
 * `replace(path, chunks)`: whole new content, no temporary files left, and readers never see a
 * part-written file.
 * @module
 */
import { bytes, firstDifference, MiB, pattern, rejection, type Suite } from "./support.ts";

export function replaceTests(s: Suite): void {
	const { describe, test, expect, readText, names, expectStorageError, expectBytes } = s;
	describe("replace", () => {
		test("replacing a missing file creates it", async (c) => {
			await c.storage.replace(c.at("f"), [bytes("new")]);
			expect(await readText(c, c.at("f"))).toBe("new");
		});
		test("replaces the content fully, shorter or longer", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("a long original content\n")], false);
			await c.storage.replace(c.at("f"), [bytes("short")]);
			expect(await readText(c, c.at("f"))).toBe("short");
			expect((await c.storage.stat(c.at("f")))?.size).toBe(5);
			await c.storage.replace(c.at("f"), [bytes("much longer than before\n"), bytes("second chunk\n")]);
			expect(await readText(c, c.at("f"))).toBe("much longer than before\nsecond chunk\n");
		});
		test("an empty chunk list leaves an empty file", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("content")], false);
			await c.storage.replace(c.at("f"), []);
			expect((await c.storage.stat(c.at("f")))?.size).toBe(0);
		});
		test("binary content of several MiB", async (c) => {
			const data = pattern(3 * MiB + 5, 9);
			await c.storage.append(c.at("f"), bytes("old"), false);
			await c.storage.replace(c.at("f"), [data.subarray(0, MiB), data.subarray(MiB)]);
			expectBytes(await c.storage.readRange(c.at("f"), 0, 4 * MiB), data);
		});
		test("leaves no temporary files behind and other files alone", async (c) => {
			await c.storage.createExclusive(c.at("other"), [bytes("other")], false);
			for (let i = 0; i < 5; i++) await c.storage.replace(c.at("f"), [bytes(`version ${i}`)]);
			expect(await names(c, c.root)).toEqual(["f", "other"]);
			expect(await readText(c, c.at("f"))).toBe("version 4");
			expect(await readText(c, c.at("other"))).toBe("other");
		});
		test("a failed replace (the target is a directory) leaves no temporary file", async (c) => {
			await c.storage.mkdir(c.at("d"));
			await rejection(c.storage.replace(c.at("d"), [bytes("x")]));
			expect(await names(c, c.root)).toEqual(["d"]);
			expect((await c.storage.stat(c.at("d")))?.isDirectory).toBe(true);
		});
		test("replacing in a missing directory fails with not-found", async (c) => {
			await expectStorageError(c.storage.replace(c.at("no-dir", "f"), [bytes("x")]), "not-found");
			expect(await names(c, c.root)).toEqual([]);
		});
		test("readers during replaces see the old or the new content whole, and the file ends as last written", async (c) => {
			const path = c.at("f");
			const contents = [pattern(3000, 1), pattern(1000, 2), pattern(5000, 3)];
			const seen = (data: Uint8Array) => contents.findIndex((content) => firstDifference(data, content) === -1);
			for (let round = 0; round < 6; round++) {
				await c.storage.replace(path, [contents[round % 3] as Uint8Array]);
				const last = contents[(round + 1) % 3] as Uint8Array;
				const reads: Promise<Uint8Array>[] = [];
				const reader = async () => {
					for (let i = 0; i < 5; i++) {
						const next = c.storage.readRange(path, 0, 8000);
						reads.push(next);
						await next.catch(() => undefined);
					}
				};
				await Promise.allSettled([reader(), reader(), c.storage.replace(path, [last])]);
				const outcomes = await Promise.allSettled(reads);
				const failed = outcomes.filter((o) => o.status === "rejected").map((o) => String(o.reason));
				expect(failed).toEqual([]);
				for (const o of outcomes) if (o.status === "fulfilled") expect(seen(o.value) >= 0).toBe(true);
				expectBytes(await c.storage.readRange(path, 0, 8000), last);
			}
		});
	});
}
