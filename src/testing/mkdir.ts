/**
 * `mkdir(dir)`: with its parents, and again without harm.
 * @module
 */
import { bytes, type Suite } from "./support.ts";

export function mkdirTests(s: Suite): void {
	const { describe, test, expect, readText, names } = s;
	describe("mkdir", () => {
		test("creates parents", async (c) => {
			await c.storage.mkdir(c.at("a", "b", "c"));
			for (const dir of [c.at("a"), c.at("a", "b"), c.at("a", "b", "c")]) {
				expect((await c.storage.stat(dir))?.isDirectory).toBe(true);
			}
		});
		test("is idempotent and keeps what is inside", async (c) => {
			await c.storage.mkdir(c.at("a"));
			await c.storage.append(c.at("a", "f"), bytes("kept"), false);
			await c.storage.mkdir(c.at("a"));
			await c.storage.mkdir(c.at("a"));
			expect(await names(c, c.at("a"))).toEqual(["f"]);
			expect(await readText(c, c.at("a", "f"))).toBe("kept");
		});
	});
}
