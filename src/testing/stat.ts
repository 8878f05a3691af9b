/**
 * `stat(path)`: null when missing, files, directories, and an `mtimeMs` the writer lock can compare
 * with the clock.
 * @module
 */
import { bytes, type Suite, sleep } from "./support.ts";

export function statTests(s: Suite): void {
	const { describe, test, expect } = s;
	describe("stat", () => {
		test("is null when nothing is there", async (c) => {
			expect(await c.storage.stat(c.at("missing"))).toBeNull();
			expect(await c.storage.stat(c.at("no-dir", "missing"))).toBeNull();
		});
		test("describes a file", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("12345")], false);
			const stat = await c.storage.stat(c.at("f"));
			expect(stat?.size).toBe(5);
			expect(stat?.isFile).toBe(true);
			expect(stat?.isDirectory).toBe(false);
		});
		test("describes a directory", async (c) => {
			await c.storage.mkdir(c.at("d"));
			const stat = await c.storage.stat(c.at("d"));
			expect(stat?.isFile).toBe(false);
			expect(stat?.isDirectory).toBe(true);
			expect((await c.storage.stat(c.root))?.isDirectory).toBe(true);
		});
		test("mtimeMs is wall-clock epoch ms and does not go back after a write", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("a")], false);
			const before = await c.storage.stat(c.at("f"));
			expect(typeof before?.mtimeMs).toBe("number");
			expect(Number.isFinite(before?.mtimeMs)).toBe(true);
			// lock.ts compares mtimeMs with Date.now() to tell a lock being written from an abandoned one.
			expect(Math.abs(Date.now() - (before?.mtimeMs ?? 0)) < 10_000).toBe(true);
			await sleep(25);
			await c.storage.append(c.at("f"), bytes("b"), false);
			const after = await c.storage.stat(c.at("f"));
			expect((after?.mtimeMs ?? 0) >= (before?.mtimeMs ?? Number.POSITIVE_INFINITY)).toBe(true);
			expect(after?.size).toBe(2);
		});
	});
}
