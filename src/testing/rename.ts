/**
 * `rename(from, to)`: moving, over an existing target, between directories, and a missing source.
 * @module
 */
import { bytes, type Suite } from "./support.ts";

export function renameTests(s: Suite): void {
	const { describe, test, expect, readText, names, expectStorageError } = s;
	describe("rename", () => {
		test("moves the content to the new name", async (c) => {
			await c.storage.createExclusive(c.at("a"), [bytes("content")], false);
			await c.storage.rename(c.at("a"), c.at("b"));
			expect(await c.storage.stat(c.at("a"))).toBeNull();
			expect(await readText(c, c.at("b"))).toBe("content");
			expect(await names(c, c.root)).toEqual(["b"]);
		});
		test("replaces an existing target", async (c) => {
			await c.storage.createExclusive(c.at("a"), [bytes("new")], false);
			await c.storage.createExclusive(c.at("b"), [bytes("old and longer")], false);
			await c.storage.rename(c.at("a"), c.at("b"));
			expect(await readText(c, c.at("b"))).toBe("new");
			expect(await names(c, c.root)).toEqual(["b"]);
		});
		test("moves between directories", async (c) => {
			await c.storage.mkdir(c.at("x"));
			await c.storage.mkdir(c.at("y"));
			await c.storage.createExclusive(c.at("x", "f"), [bytes("moved")], false);
			await c.storage.rename(c.at("x", "f"), c.at("y", "g"));
			expect(await names(c, c.at("x"))).toEqual([]);
			expect(await readText(c, c.at("y", "g"))).toBe("moved");
		});
		test("a missing source fails with not-found and leaves the target alone", async (c) => {
			await c.storage.createExclusive(c.at("b"), [bytes("target")], false);
			await expectStorageError(c.storage.rename(c.at("missing"), c.at("b")), "not-found", c.at("missing"));
			expect(await readText(c, c.at("b"))).toBe("target");
		});
	});
}
