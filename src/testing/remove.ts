/**
 * `remove(path)`: one file only, a missing one is fine, and its name is free again.
 * @module
 */
import { bytes, type Suite } from "./support.ts";

export function removeTests(s: Suite): void {
	const { describe, test, expect, readText, names, expectStorageError } = s;
	describe("remove", () => {
		test("removes a file and nothing else", async (c) => {
			await c.storage.createExclusive(c.at("a"), [bytes("a")], false);
			await c.storage.createExclusive(c.at("b"), [bytes("b")], false);
			await c.storage.remove(c.at("a"));
			expect(await c.storage.stat(c.at("a"))).toBeNull();
			expect(await names(c, c.root)).toEqual(["b"]);
			await expectStorageError(c.storage.readRange(c.at("a"), 0, 1), "not-found");
		});
		test("removing a missing file is fine", async (c) => {
			expect(await c.storage.remove(c.at("missing"))).toBe(undefined);
			expect(await c.storage.remove(c.at("no-dir", "missing"))).toBe(undefined);
			expect(await names(c, c.root)).toEqual([]);
		});
		test("a removed file can be created exclusively again", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("1")], false);
			await c.storage.remove(c.at("f"));
			await c.storage.createExclusive(c.at("f"), [bytes("2")], false);
			expect(await readText(c, c.at("f"))).toBe("2");
		});
	});
}
