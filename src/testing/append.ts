/**
 * `append(path, data, durable, atSize?)`: creating, ordering, appending after the file changed under its
 * name, many files and many appends, and appends that must find the file at a given size.
 * @module
 */
import { bytes, concat, pattern, type Suite } from "./support.ts";

export function appendTests(s: Suite): void {
	const { describe, test, expect, read, readText, expectStorageError, expectBytes } = s;
	describe("append", () => {
		test("creates the file when it is missing", async (c) => {
			expect(await c.storage.stat(c.at("f"))).toBeNull();
			await c.storage.append(c.at("f"), bytes("first\n"), false);
			expect(await readText(c, c.at("f"))).toBe("first\n");
			expect((await c.storage.stat(c.at("f")))?.size).toBe(6);
		});
		test("appends in order", async (c) => {
			await c.storage.createExclusive(c.at("f"), [bytes("a")], false);
			await c.storage.append(c.at("f"), bytes("b"), false);
			await c.storage.append(c.at("f"), bytes("cd"), false);
			expect(await readText(c, c.at("f"))).toBe("abcd");
		});
		test("an append after the file was replaced, renamed, moved over or removed goes to the file there now", async (c) => {
			const f = c.at("f");
			await c.storage.append(f, bytes("a"), false);
			await c.storage.replace(f, [bytes("R")]);
			await c.storage.append(f, bytes("b"), false);
			expect(await readText(c, f)).toBe("Rb");
			await c.storage.rename(f, c.at("g"));
			await c.storage.append(f, bytes("c"), false);
			expect([await readText(c, f), await readText(c, c.at("g"))]).toEqual(["c", "Rb"]);
			await c.storage.rename(c.at("g"), f);
			await c.storage.append(f, bytes("d"), false);
			expect(await readText(c, f)).toBe("Rbd");
			await c.storage.remove(f);
			await c.storage.append(f, bytes("e"), true);
			expect(await readText(c, f)).toBe("e");
			await c.storage.remove(f);
			await c.storage.createExclusive(f, [bytes("X")], false);
			await c.storage.append(f, bytes("f"), false);
			expect(await readText(c, f)).toBe("Xf");
		});
		test("appends to many files, in turns, each land in their own file", async (c) => {
			const files = Array.from({ length: 80 }, (_, n) => c.at(`f${n}`));
			for (let round = 0; round < 3; round++) {
				await Promise.all(files.map((file, n) => c.storage.append(file, bytes(`${n}.${round};`), false)));
			}
			for (const [n, file] of files.entries()) expect(await readText(c, file)).toBe(`${n}.0;${n}.1;${n}.2;`);
		});
		test("many small appends", async (c) => {
			const lines: string[] = [];
			for (let i = 0; i < 300; i++) {
				const line = `{"i":${i}}\n`;
				lines.push(line);
				await c.storage.append(c.at("log.jsonl"), bytes(line), false);
			}
			const expected = lines.join("");
			expect((await c.storage.stat(c.at("log.jsonl")))?.size).toBe(bytes(expected).length);
			expect(await readText(c, c.at("log.jsonl"))).toBe(expected);
		});
		test("durable appends work", async (c) => {
			await c.storage.append(c.at("f"), bytes("one\n"), true);
			await c.storage.append(c.at("f"), bytes("two\n"), true);
			expect(await readText(c, c.at("f"))).toBe("one\ntwo\n");
		});
		test("binary data is appended exactly", async (c) => {
			const a = pattern(1000, 3);
			const b = pattern(70_000, 5);
			await c.storage.append(c.at("bin"), a, false);
			await c.storage.append(c.at("bin"), b, false);
			expectBytes(await read(c, c.at("bin")), concat([a, b]));
		});
		test("an empty append creates an empty file and leaves an existing one as it is", async (c) => {
			await c.storage.append(c.at("e"), new Uint8Array(0), false);
			expect((await c.storage.stat(c.at("e")))?.size).toBe(0);
			await c.storage.createExclusive(c.at("f"), [bytes("keep")], false);
			await c.storage.append(c.at("f"), new Uint8Array(0), false);
			expect(await readText(c, c.at("f"))).toBe("keep");
		});
		test("appending in a missing directory fails with not-found", async (c) => {
			await expectStorageError(c.storage.append(c.at("no-dir", "f"), bytes("x"), false), "not-found");
		});
		test("with atSize, appends only to a file of exactly that size; another size is changed, nothing written", async (c) => {
			const f = c.at("f");
			await c.storage.createExclusive(f, [bytes("ab")], false);
			await c.storage.append(f, bytes("c"), false, 2);
			await c.storage.append(f, bytes("d"), true, 3);
			expect(await readText(c, f)).toBe("abcd");
			await expectStorageError(c.storage.append(f, bytes("x"), false, 3), "changed", f);
			await expectStorageError(c.storage.append(f, bytes("x"), true, 5), "changed", f);
			await expectStorageError(c.storage.append(f, bytes("x"), false, 0), "changed", f);
			expect(await readText(c, f)).toBe("abcd");
			await c.storage.append(f, new Uint8Array(0), false, 4);
			await c.storage.append(f, bytes("e"), false, 4);
			expect(await readText(c, f)).toBe("abcde");
		});
		test("with atSize, a missing file is not-found and is not created", async (c) => {
			const f = c.at("f");
			await expectStorageError(c.storage.append(f, bytes("x"), false, 0), "not-found", f);
			await expectStorageError(c.storage.append(f, bytes("x"), true, 3), "not-found", f);
			expect(await c.storage.stat(f)).toBeNull();
			await c.storage.createExclusive(f, [bytes("ab")], false);
			await c.storage.append(f, bytes("c"), false, 2);
			await c.storage.remove(f);
			await expectStorageError(c.storage.append(f, bytes("x"), false, 3), "not-found", f);
			expect(await c.storage.stat(f)).toBeNull();
		});
		test("with atSize, a file replaced under its name is measured anew", async (c) => {
			const f = c.at("f");
			await c.storage.createExclusive(f, [bytes("abc")], false);
			await c.storage.append(f, bytes("d"), false, 3);
			await c.storage.replace(f, [bytes("R")]);
			await expectStorageError(c.storage.append(f, bytes("x"), false, 4), "changed", f);
			await c.storage.append(f, bytes("s"), false, 1);
			expect(await readText(c, f)).toBe("Rs");
		});
	});
}
