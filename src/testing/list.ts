/**
 * `list(dir)`: empty for missing directories and files, names and kinds one level deep.
 * @module
 */
import { byName, bytes, type Suite } from "./support.ts";

export function listTests(s: Suite): void {
	const { describe, test, expect } = s;
	describe("list", () => {
		test("is empty for a missing directory", async (c) => {
			expect(await c.storage.list(c.at("missing"))).toEqual([]);
			expect(await c.storage.list(c.at("missing", "deeper"))).toEqual([]);
		});
		test("is empty for a path that is a file (as pi's listing finds nothing there)", async (c) => {
			await c.storage.createExclusive(c.at("plain"), [bytes("x")], false);
			expect(await c.storage.list(c.at("plain"))).toEqual([]);
		});
		test("is empty for an empty directory", async (c) => {
			await c.storage.mkdir(c.at("d"));
			expect(await c.storage.list(c.at("d"))).toEqual([]);
		});
		test("gives names and kinds of files and directories, not nested entries", async (c) => {
			await c.storage.createExclusive(c.at("2025-01-01T00-00-00-000Z_a.jsonl"), [bytes("x")], false);
			await c.storage.append(c.at("b.txt"), bytes("y"), false);
			await c.storage.mkdir(c.at("--home-me-project--", "nested"));
			await c.storage.append(c.at("--home-me-project--", "inner.jsonl"), bytes("z"), false);
			expect(byName(await c.storage.list(c.root))).toEqual([
				{ name: "--home-me-project--", isFile: false, isDirectory: true },
				{ name: "2025-01-01T00-00-00-000Z_a.jsonl", isFile: true, isDirectory: false },
				{ name: "b.txt", isFile: true, isDirectory: false },
			]);
			expect(byName(await c.storage.list(c.at("--home-me-project--")))).toEqual([
				{ name: "inner.jsonl", isFile: true, isDirectory: false },
				{ name: "nested", isFile: false, isDirectory: true },
			]);
		});
	});
}
