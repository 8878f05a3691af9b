/**
 * `link(from, to)`: a second name for the same file, refused (`exists`) when `to` exists; or
 * `unsupported` everywhere on a storage without hard links.
 * @module
 */
import { StorageError } from "../storage.ts";
import { bytes, type Suite } from "./support.ts";

export function linkTests(s: Suite): void {
	const { describe, test, expect, readText, expectStorageError } = s;
	/** Link, or learn that this storage has no hard links (then every link must say so). */
	const linked = async (c: Parameters<Parameters<Suite["test"]>[1]>[0], from: string, to: string) => {
		try {
			await c.storage.link(from, to);
			return true;
		} catch (error) {
			if (error instanceof StorageError && error.code === "unsupported") return false;
			throw error;
		}
	};
	describe("link", () => {
		test("gives a file a second name: appends through either show in both, and it outlives a replace", async (c) => {
			await c.storage.createExclusive(c.at("a"), [bytes("one\n")], false);
			if (!(await linked(c, c.at("a"), c.at("b")))) {
				expect((await c.storage.list(c.root)).map((entry) => entry.name)).toEqual(["a"]);
				return;
			}
			await c.storage.append(c.at("a"), bytes("two\n"), false);
			expect(await readText(c, c.at("b"))).toBe("one\ntwo\n");
			// A migration's backup: the name `a` gets a new file, `b` keeps the old one.
			await c.storage.replace(c.at("a"), [bytes("new\n")]);
			expect(await readText(c, c.at("a"))).toBe("new\n");
			expect(await readText(c, c.at("b"))).toBe("one\ntwo\n");
		});
		test("refuses a name that exists (exists), leaving both files as they were", async (c) => {
			await c.storage.createExclusive(c.at("a"), [bytes("a")], false);
			await c.storage.createExclusive(c.at("b"), [bytes("b")], false);
			const error = await c.storage.link(c.at("a"), c.at("b")).then(
				() => undefined,
				(reason: unknown) => reason,
			);
			expect(error instanceof StorageError && ["exists", "unsupported"].includes(error.code)).toBe(true);
			expect(await readText(c, c.at("a"))).toBe("a");
			expect(await readText(c, c.at("b"))).toBe("b");
		});
		test("of a missing file fails with not-found (or unsupported)", async (c) => {
			const error = await c.storage.link(c.at("none"), c.at("b")).then(
				() => undefined,
				(reason: unknown) => reason,
			);
			expect(error instanceof StorageError && ["not-found", "unsupported"].includes(error.code)).toBe(true);
			await expectStorageError(c.storage.readRange(c.at("b"), 0, 1), "not-found");
		});
	});
}
