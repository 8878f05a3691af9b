/**
 * The lazy open's WebAssembly line walk: the committed module is what its source compiles to, it takes
 * random lines (and their damaged copies) exactly as the JavaScript walk does, and lines too long or too
 * deep for it are left to the JavaScript walk. The deterministic agreement every runtime runs is in
 * test/conformance/line-walk.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileWasm, LINE_WALK, moduleText } from "../scripts/build-wasm.ts";
import { SPAN_SLOT } from "../src/entry-bodies.ts";
import { DEFER_LINE_BYTES, LINE_WALK_TABLES, lineStructure } from "../src/line-structure.ts";
import { createWasmLineWalk, WASM_WALK_MAX_LINE_BYTES, type WasmLineWalk } from "../src/line-walk-wasm.ts";
import { runLineWalkAgreement } from "./conformance/line-walk.ts";

const encoder = new TextEncoder();

runLineWalkAgreement({ describe, it, expect });

describe("the WebAssembly line walk", () => {
	it("is committed as its source compiles (npm run build:wasm)", async () => {
		const { readFile } = await import("node:fs/promises");
		const committed = await readFile(new URL("../src/line-walk-wasm-module.ts", import.meta.url), "utf8");
		expect(committed).toBe(moduleText(LINE_WALK, await compileWasm(LINE_WALK)));
	}, 60_000);

	it("agrees with the JavaScript walk on random JSON objects and on random bytes put into them", () => {
		const value = fc.jsonValue({ maxDepth: 4 });
		const line = fc
			.record({
				type: fc.constantFrom("message", "custom", "custom_message", "branch_summary", "context_edit", "x"),
				id: fc.oneof(fc.string({ maxLength: 12, unit: "grapheme" }), value),
				parentId: fc.oneof(fc.constant(null), fc.string({ maxLength: 12 })),
				timestamp: fc.string(),
				message: fc.oneof(value, fc.record({ role: value, provider: value, model: value, content: value })),
				replacement: value,
				summary: fc.string({ unit: fc.constantFrom('"', "\\", "a", "\n", "é") }),
				data: value,
			})
			.map((entry) => encoder.encode(JSON.stringify(entry).padEnd(DEFER_LINE_BYTES, " ")));
		fc.assert(
			fc.property(
				line,
				fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
				(bytes, flips) => {
					const damaged = bytes.slice();
					for (const [at, byte] of flips) damaged[at % damaged.length] = byte;
					for (const candidate of [bytes, damaged])
						expect(lineStructure(candidate, "wasm")).toStrictEqual(lineStructure(candidate, "javascript"));
				},
			),
			{ numRuns: 3000 },
		);
	});

	it("leaves a line longer than it takes to the JavaScript walk, and walks one of exactly its limit", () => {
		const wasm = createWasmLineWalk(LINE_WALK_TABLES) as WasmLineWalk;
		const lineOf = (length: number) => {
			const prefix = '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"';
			const suffix = '"}}';
			return encoder.encode(prefix + "a".repeat(length - prefix.length - suffix.length) + suffix);
		};
		// A structure is made with the slot of its span in it (-1 until the open defers it).
		const expected = {
			type: "message",
			id: "a",
			parentId: null,
			timestamp: "t",
			message: { role: "user" },
			[SPAN_SLOT]: -1,
		};
		const longest = lineOf(WASM_WALK_MAX_LINE_BYTES);
		expect(wasm.walk(longest)).toBeTruthy();
		expect(lineStructure(longest, "wasm")).toStrictEqual(expected);
		const longer = lineOf(WASM_WALK_MAX_LINE_BYTES + 1);
		expect(wasm.walk(longer)).toBeUndefined();
		expect(lineStructure(longer, "wasm")).toStrictEqual(expected);
	});

	it("keeps a value's leading U+FEFF, as JSON.parse does (it is no byte-order mark there)", () => {
		const entry = {
			type: "custom",
			id: "\uFEFFa",
			parentId: "\uFEFFb",
			timestamp: "t",
			customType: "x",
			data: "y".repeat(300),
		};
		const bytes = encoder.encode(JSON.stringify(entry));
		for (const walker of ["wasm", "javascript"] as const)
			expect(lineStructure(bytes, walker)).toStrictEqual({
				type: "custom",
				id: "\uFEFFa",
				parentId: "\uFEFFb",
				timestamp: "t",
				customType: "x",
				[SPAN_SLOT]: -1,
			});
	});
});
