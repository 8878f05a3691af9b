/**
 * `createExclusive(path, chunks, durable)`: chunks taken lazily, `exists` without touching the file,
 * one winner of concurrent creations, whole or nothing (never seen in part; a failure leaves nothing).
 * @module
 */
import { StorageError } from "../storage.ts";
import { bytes, type Suite } from "./support.ts";

export function createExclusiveTests(s: Suite): void {
	const { describe, test, expect, readText, expectStorageError } = s;
	describe("createExclusive", () => {
		test("takes chunks produced as they are asked for (a generator), for create and replace", async (c) => {
			function* parts(...texts: string[]): Generator<Uint8Array> {
				for (const text of texts) yield bytes(text);
			}
			await c.storage.createExclusive(c.at("lazy"), parts("a", "b", "c"), false);
			expect(await readText(c, c.at("lazy"))).toBe("abc");
			await c.storage.replace(c.at("lazy"), parts("d", "e"));
			expect(await readText(c, c.at("lazy"))).toBe("de");
		});
		test("creates a file from several chunks, concatenated", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("head\n"), bytes(""), bytes("a\n"), bytes("b\n")], false);
			expect(await readText(c, c.at("f"))).toBe("head\na\nb\n");
		});
		test("an empty chunk list creates an empty file", async (c) => {
			await c.storage.createExclusive(c.at("f"), [], false);
			const stat = await c.storage.stat(c.at("f"));
			expect(stat?.isFile).toBe(true);
			expect(stat?.size).toBe(0);
		});
		test("durable creation works", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("x"), bytes("y")], true);
			expect(await readText(c, c.at("f"))).toBe("xy");
		});
		test("fails with exists and leaves the existing content untouched", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("original")], false);
			await expectStorageError(c.storage.createExclusive(c.at("f"), [bytes("other")], false), "exists", c.at("f"));
			await expectStorageError(c.storage.createExclusive(c.at("f"), [], true), "exists", c.at("f"));
			expect(await readText(c, c.at("f"))).toBe("original");
		});
		test("fails with exists for an empty existing file, which stays empty", async (c) => {
			await c.storage.append(c.at("f"), new Uint8Array(0), false);
			await expectStorageError(c.storage.createExclusive(c.at("f"), [bytes("x")], false), "exists");
			expect((await c.storage.stat(c.at("f")))?.size).toBe(0);
		});
		test("of concurrent creations exactly one wins and its content is the file", async (c) => {
			const results = await Promise.allSettled(
				[0, 1, 2, 3, 4].map((i) => c.storage.createExclusive(c.at("f"), [bytes(`writer ${i}`)], false)),
			);
			const won = results.flatMap((r, i) => (r.status === "fulfilled" ? [i] : []));
			expect(won.length).toBe(1);
			for (const r of results) {
				if (r.status === "rejected") expect(r.reason instanceof StorageError && r.reason.code).toBe("exists");
			}
			expect(await readText(c, c.at("f"))).toBe(`writer ${won[0]}`);
		});
		test("is never seen in part while it is written, and a failed one leaves nothing behind", async (c) => {
			const half = new Uint8Array(256 << 10).fill(0x61);
			let done = false;
			const created = c.storage.createExclusive(c.at("f"), [half, half, half, half], false).finally(() => {
				done = true;
			});
			const sizes = new Set<number>();
			while (!done) {
				const stat = await c.storage.stat(c.at("f"));
				if (stat) sizes.add(stat.size);
				await new Promise((resolve) => setTimeout(resolve, 0));
			}
			await created;
			expect([...sizes].filter((size) => size !== 4 * half.length)).toEqual([]);
			function* failing(): Generator<Uint8Array> {
				yield bytes("a part");
				throw new Error("the content could not be made");
			}
			const error = await c.storage.createExclusive(c.at("g"), failing(), false).then(
				() => undefined,
				(reason: unknown) => reason,
			);
			expect(error instanceof Error).toBe(true);
			expect((await c.storage.list(c.root)).map((entry) => entry.name)).toEqual(["f"]);
		});
		test("creating in a missing directory fails with not-found", async (c) => {
			await expectStorageError(c.storage.createExclusive(c.at("no-dir", "f"), [bytes("x")], false), "not-found");
		});
	});
}
