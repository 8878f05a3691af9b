/**
 * The lazy open's two line walks on every runtime (Node, Bun, Deno, Chromium): the WebAssembly one runs
 * there, and it takes every line exactly as the JavaScript one does — whole entries of each kind with
 * awkward payloads, and the same lines cut at many bytes, run into the next, with a quote, bracket or
 * backslash flipped in, keys written with escapes, duplicate keys, odd whitespace, and nesting deeper than
 * the WebAssembly walk keeps track of. Deterministic, so that each runtime checks the same lines.
 */
import { DEFER_LINE_BYTES, lineStructure, lineWalkInUse } from "../../src/line-structure.ts";
import type { TestApi } from "../../src/testing.ts";

const encoder = new TextEncoder();

const PAYLOADS = [
	"plain text ".repeat(40),
	'she said "hi" \\ and \\\\" left \n\t'.repeat(20),
	"é😀中文 \u0001\u001f ".repeat(30),
	"QUJD".repeat(300),
	'{"type":"message","id":"inside"} '.repeat(15),
	"\\".repeat(33),
];

function entries(payload: string, index: number): unknown[] {
	const base = { id: `id${index}`, parentId: index ? `id${index - 1}` : null, timestamp: "2026-01-01T00:00:00.000Z" };
	return [
		{ type: "message", ...base, message: { role: "user", content: payload, timestamp: 1 } },
		{
			type: "message",
			...base,
			message: {
				role: "assistant",
				content: [
					{ type: "text", text: payload },
					{ type: "toolCall", id: "c1", name: "bash", arguments: { command: payload, n: [1, 2.5e3, -0.1] } },
				],
				provider: "anthropic",
				model: "claude",
				usage: { input: 1, output: 2, cost: { total: 0.5 } },
				stopReason: "toolUse",
			},
		},
		{
			type: "message",
			...base,
			message: { role: "toolResult", toolCallId: "c1", content: [{ type: "text", text: payload }], isError: false },
		},
		{ type: "custom", ...base, customType: "ext", data: { payload, list: [true, false, null] } },
		{ type: "custom_message", ...base, customType: "note", content: payload, display: true },
		{ type: "branch_summary", ...base, fromId: "id0", summary: payload },
		{ type: "context_edit", ...base, targetId: "id0", replacement: { content: payload } },
		{ type: "context_edit", ...base, targetId: "id0", replacement: null },
		{ type: "compaction", ...base, summary: payload, firstKeptEntryId: "id0", tokensBefore: 3 },
	];
}

/** Lines of whole entries, padded past the size below which lines are not walked. */
export function wholeLines(): Uint8Array[] {
	const lines: Uint8Array[] = [];
	PAYLOADS.forEach((payload, index) => {
		for (const entry of entries(payload, index))
			lines.push(encoder.encode(JSON.stringify(entry).padEnd(DEFER_LINE_BYTES, " ")));
	});
	return lines;
}

/** Lines that are not quite what pi writes, but JSON all the same (or nearly). */
export function unusualLines(): Uint8Array[] {
	const pad = "x".repeat(DEFER_LINE_BYTES);
	const texts = [
		`{"type":"message","\\u0069d":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"${pad}"}}`,
		`{"type":"message","id":"a","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"${pad}"},"message":{"role":"assistant","provider":"p"}}`,
		` \t{ "type" : "custom" , "id" : "a" , "parentId" : null , "timestamp" : 5 , "customType" : "\\"q\\"" , "data" : "${pad}" }\r `,
		`{"type":"message","id":7,"parentId":true,"timestamp":null,"message":{"role":"user","content":"${pad}"}}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":"${pad}"}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":["user"],"content":"${pad}"}}`,
		`{"type":"context_edit","id":"a","parentId":null,"timestamp":"t","targetId":"b","replacement":[1],"x":"${pad}"}`,
		`{"type":"message","id":,"parentId":null,"timestamp":"t","message":{"role":"user","content":"${pad}"}}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":tru,"message":{"role":"user","content":"${pad}"}}`,
		`{"type":"custom","id":"a","parentId":null,"timestamp":"t","data":"${pad}"}}`,
		`{"type":"custom","id":"a","parentId":null,"timestamp":"t","data":"${pad}"]`,
		`["type","message","${pad}"]`,
		`{"type":"custom","id":"a","parentId":null,"timestamp":"t","data":${"[".repeat(70_000)}${"]".repeat(70_000)},"p":"${pad}"}`,
		`{"type":"custom","id":"a","parentId":null,"timestamp":"t","data":${"[{".repeat(2_000)}"${pad}"${"}]".repeat(2_000)}}`,
	];
	return texts.map((text) => encoder.encode(text));
}

/**
 * Runs of backslashes (0 to 4 long) followed by a quote, a letter or another run, at every offset of a
 * string across three of the WebAssembly walk's 64-byte windows: the run's parity decides whether the
 * quote closes the string, and a run may straddle two windows.
 */
export function escapeRunLines(): Uint8Array[] {
	const lines: Uint8Array[] = [];
	const pad = "x".repeat(DEFER_LINE_BYTES);
	for (let run = 0; run <= 4; run++) {
		for (let at = 0; at < 3 * 64 + 2; at++) {
			for (const after of ['"', "n", "\\\\", '\\"']) {
				const text = `${"a".repeat(at)}${"\\".repeat(run)}${after}tail`;
				lines.push(
					encoder.encode(
						`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"${text}"},"x":"${pad}"}`,
					),
				);
			}
		}
	}
	return lines;
}

/** The same lines damaged: cut, run into the next, and with structural bytes flipped in. */
export function damagedLines(lines: readonly Uint8Array[]): Uint8Array[] {
	const damaged: Uint8Array[] = [];
	lines.forEach((line, index) => {
		const next = lines[(index + 1) % lines.length] as Uint8Array;
		const step = Math.max(1, Math.floor(line.length / 40));
		for (let at = 1; at < line.length; at += step) {
			const cut = line.subarray(0, at);
			damaged.push(cut);
			const fused = new Uint8Array(cut.length + next.length);
			fused.set(cut);
			fused.set(next, cut.length);
			damaged.push(fused);
		}
		for (let at = index % 7; at < line.length; at += Math.max(53, Math.floor(line.length / 60))) {
			for (const byte of [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x3a, 0x2c, 0x41]) {
				const flipped = line.slice();
				flipped[at] = byte;
				damaged.push(flipped);
			}
		}
	});
	return damaged;
}

/** A structure as text, `undefined` spelt out (JSON would drop it, and some runtimes' `toEqual` compare JSON). */
export function described(value: unknown): string {
	return JSON.stringify(value, (_key, item) => (item === undefined ? "<undefined>" : item)) ?? "<undefined>";
}

export function runLineWalkAgreement(t: TestApi): void {
	t.describe("the lazy open's line walks", () => {
		t.it("run in WebAssembly here, and take every line as the JavaScript walk does", () => {
			const whole = [...wholeLines(), ...unusualLines()];
			const lines = [...whole, ...damagedLines(whole), ...escapeRunLines()];
			const mismatches: string[] = [];
			let deferred = 0;
			for (const line of lines) {
				const wasm = described(lineStructure(line, "wasm"));
				const javascript = described(lineStructure(line, "javascript"));
				if (wasm !== '"<undefined>"') deferred++;
				if (wasm !== javascript && mismatches.length < 5)
					mismatches.push(`${new TextDecoder().decode(line.subarray(0, 160))}: ${wasm} ≠ ${javascript}`);
			}
			t.expect(lineWalkInUse()).toBe("wasm");
			t.expect(mismatches).toEqual([]);
			// Not a vacuous agreement: the whole entries (but compactions, kept whole) are deferred.
			t.expect(deferred >= PAYLOADS.length * 8).toBe(true);
			t.expect(lines.length > 10_000).toBe(true);
		});
	});
}
