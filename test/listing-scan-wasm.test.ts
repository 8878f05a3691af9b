/**
 * The listing's line scans compiled to WebAssembly give what the JavaScript scans give: on random
 * message entries in pi's shape and on damaged copies of them, at any place in a buffer, on strings whose
 * escapes fall at every place of a sixteen-byte block, and at the limits (nesting, the number of text
 * blocks the module holds). The committed module is what its source compiles to.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileWasm, LISTING_SCAN, moduleText } from "../scripts/build-wasm.ts";
import {
	isPlainEntryJson,
	messageFields,
	scanMessageFields,
	scanPlainEntryJson,
	WASM_SCAN_MIN_LINE_BYTES,
} from "../src/listing-json-scan.ts";
import { createWasmListingScan } from "../src/listing-scan-wasm.ts";
import { runListingScanAgreement } from "./conformance/listing-scan.ts";
import { edited } from "./support/listing-sessions.ts";

const encoder = new TextEncoder();
const wasm = createWasmListingScan();
if (!wasm) throw new Error("WebAssembly runs in Node: the scan must be there");
const scan = wasm;

runListingScanAgreement({ describe, it, expect });

/** Text with what JSON escapes (quotes, backslashes, control characters), non-ASCII and lone surrogates. */
const text = fc.string({
	unit: fc.oneof(
		fc.constantFrom('"', "\\", "\n", "\t", "\u0001", "/", "é", "😀", "\ud800", "a", " "),
		fc.string({ minLength: 1, maxLength: 1 }),
	),
	maxLength: 60,
});
const block = fc.oneof(
	fc.record({ type: fc.constant("text"), text }),
	fc.record({
		type: fc.constantFrom("thinking", "toolCall", "image", "text"),
		thinking: text,
		data: fc.jsonValue({ maxDepth: 2 }),
	}),
	fc.record({ type: fc.constant("text") }),
);
const message = fc.record(
	{
		role: fc.constantFrom("user", "assistant", "toolResult", "x"),
		content: fc.oneof(text, fc.array(block, { maxLength: 5 }), fc.jsonValue({ maxDepth: 2 })),
		timestamp: fc.oneof(fc.integer(), fc.double(), fc.constant(null), fc.boolean(), text),
		usage: fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.integer(), fc.double({ noNaN: true }))),
		extra: fc.jsonValue({ maxDepth: 3 }),
	},
	{ requiredKeys: ["role"] },
);
const entry = fc
	.record(
		{
			type: fc.constantFrom("message", "custom", "x"),
			id: fc.string({ maxLength: 10 }),
			parentId: fc.oneof(fc.constant(null), fc.string({ maxLength: 10 })),
			timestamp: fc.oneof(text, fc.integer()),
			message,
			pad: fc.string({ minLength: WASM_SCAN_MIN_LINE_BYTES, maxLength: WASM_SCAN_MIN_LINE_BYTES + 40 }),
		},
		{ requiredKeys: ["type", "pad"] },
	)
	.map((value) => encoder.encode(JSON.stringify(value)));

/** A line's bytes with edits: bytes deleted or inserted (JSON's own characters mostly), a part repeated. */
const edits = fc.array(
	fc.record({
		kind: fc.constantFrom("delete", "insert", "repeat"),
		at: fc.nat(),
		length: fc.integer({ min: 1, max: 6 }),
		bytes: fc.array(
			fc.constantFrom(...encoder.encode('{}[]",:\\ \tu0123456789abcdefABCDEF.+-tnlr'), 0x00, 0x1f, 0x80, 0xff),
			{
				minLength: 1,
				maxLength: 4,
			},
		),
	}),
	{ maxLength: 3 },
);

/** The line placed at `offset` in a buffer with other bytes around it. */
function placed(line: Uint8Array, offset: number): { bytes: Uint8Array; start: number; end: number } {
	const bytes = new Uint8Array(offset + line.length + 7).fill(0x22);
	bytes.set(line, offset);
	return { bytes, start: offset, end: offset + line.length };
}

function expectSameScans(line: Uint8Array, offset: number): void {
	const { bytes, start, end } = placed(line, offset);
	expect(scan.isPlainEntryJson(bytes, start, end)).toBe(scanPlainEntryJson(bytes, start, end));
	expect(scan.messageFields(bytes, start, end)).toEqual(scanMessageFields(bytes, start, end));
}

describe("the listing's WebAssembly line scan", () => {
	it("is committed as its source compiles (npm run build:wasm)", async () => {
		const { readFile } = await import("node:fs/promises");
		const committed = await readFile(new URL("../src/listing-scan-wasm-module.ts", import.meta.url), "utf8");
		expect(committed).toBe(moduleText(LISTING_SCAN, await compileWasm(LISTING_SCAN)));
	}, 60_000);

	it("gives what the JavaScript scans give on random entries and damaged copies, anywhere in a buffer", () => {
		fc.assert(
			fc.property(entry, edits, fc.nat(40), (line, list, offset) => expectSameScans(edited(line, list), offset)),
			{ numRuns: 3000 },
		);
	});

	it("reads pi's message entries as the JavaScript scans do (most of them say yes)", () => {
		let fields = 0;
		fc.assert(
			fc.property(entry, (line) => {
				expectSameScans(line, 0);
				if (scanMessageFields(line, 0, line.length)) fields++;
			}),
			{ numRuns: 500 },
		);
		expect(fields).toBeGreaterThan(50);
	});

	it("ends strings right whatever place of a sixteen-byte block an escape or a quote falls at", () => {
		const escapes = [
			'\\"',
			"\\\\",
			"\\/",
			"\\b",
			"\\f",
			"\\n",
			"\\r",
			"\\t",
			"\\u00e9",
			"\\uD83D",
			"\\x",
			"\\u12g4",
			"\\",
			"\u0001",
			'"',
		];
		for (const sequence of escapes) {
			for (let before = 0; before < 40; before++) {
				const body = `${"a".repeat(before)}${sequence}${"b".repeat(300)}`;
				const line = encoder.encode(`{"type":"message","timestamp":"t","message":{"role":"user","content":"${body}"}}`);
				for (const cut of [line.length, line.length - 3, line.length - 300 + before])
					expectSameScans(line.subarray(0, cut), before % 5);
			}
		}
	});

	it("ends strings right where two escapes share a block (a \\u and an escaped quote at its last byte)", () => {
		for (const first of ["\\u0001", "\\\\", "\\n"]) {
			for (let before = 0; before < 16; before++) {
				for (let gap = 0; gap < 16; gap++) {
					const body = `${"a".repeat(before)}${first}${"c".repeat(gap)}\\"${"d".repeat(300)}`;
					const line = encoder.encode(
						`{"type":"message","timestamp":"t","message":{"role":"user","content":"${body}"}}`,
					);
					expectSameScans(line, 0);
					expect(scanMessageFields(line, 0, line.length)).not.toBeNull();
				}
			}
		}
	});

	it("leaves lines with more text blocks than it holds to the JavaScript scan, which reads them", () => {
		const blocks = Array.from({ length: 6000 }, (_, k) => ({ type: "text", text: `t${k}` }));
		const line = encoder.encode(
			JSON.stringify({ type: "message", timestamp: "t", message: { role: "user", content: blocks } }),
		);
		expect(scan.messageFields(line, 0, line.length)).toBeUndefined();
		const fields = messageFields(line, 0, line.length);
		expect(Array.isArray(fields?.content) && fields.content.length).toBe(6000);
	});

	it("refuses nesting past the JavaScript scans' limit as they do", () => {
		for (const depth of [510, 511, 512, 513]) {
			const nested = `${"[".repeat(depth)}${"]".repeat(depth)}`;
			const line = encoder.encode(`{"type":"x","deep":${nested}}`);
			expectSameScans(line, 0);
			expect(isPlainEntryJson(line, 0, line.length)).toBe(depth <= 511);
		}
	});
});
