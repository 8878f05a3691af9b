import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	encodeEntry,
	type Line,
	LineSplitter,
	lineStream,
	parseLine,
	parseSessionEntries,
	parseSessionText,
	SessionFormatError,
} from "../src/index.ts";

const encoder = new TextEncoder();

function splitAll(chunks: Uint8Array[]): Line[] {
	const splitter = new LineSplitter();
	return [...chunks.flatMap((chunk) => [...splitter.push(chunk)]), ...splitter.end()];
}

/** Cut bytes at the given positions. */
function cut(bytes: Uint8Array, positions: number[]): Uint8Array[] {
	const points = [...new Set(positions.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
	const chunks: Uint8Array[] = [];
	let start = 0;
	for (const point of [...points, bytes.length]) {
		chunks.push(bytes.subarray(start, point));
		start = point;
	}
	return chunks;
}

describe("LineSplitter", () => {
	it.each([
		["LF", "a\nb\n", ["a", "b"], [true, true]],
		["CRLF", "a\r\nb\r\n", ["a", "b"], [true, true]],
		["no final newline", "a\nb", ["a", "b"], [true, false]],
		["leading BOM", "\uFEFFa\nb\n", ["a", "b"], [true, true]],
		["BOM only stripped on line 1", "a\n\uFEFFb\n", ["a", "\uFEFFb"], [true, true]],
		["empty lines kept", "a\n\nb\n", ["a", "", "b"], [true, true, true]],
		["empty input", "", [], []],
	])("%s", (_name, text, lines, terminated) => {
		const result = splitAll([encoder.encode(text)]);
		expect(result.map((line) => line.text)).toEqual(lines);
		expect(result.map((line) => line.terminated)).toEqual(terminated);
	});

	it("numbers lines from 1 and gives byte offsets and lengths that cover the input", () => {
		const bytes = encoder.encode("\uFEFFé\r\nü€\n\nlast");
		const lines = splitAll([bytes]);
		expect(lines.map((line) => [line.line, line.byteOffset, line.byteLength])).toEqual([
			[1, 0, 7],
			[2, 7, 6],
			[3, 13, 1],
			[4, 14, 4],
		]);
		expect(lines.reduce((sum, line) => sum + line.byteLength, 0)).toBe(bytes.length);
	});

	it("decodes multi-byte characters split across any chunk boundaries", () => {
		const text = '日本語 ü € 🎉\n{"a":"🎉é"}\r\nend 😀';
		const bytes = encoder.encode(text);
		const expected = splitAll([bytes]);
		fc.assert(
			fc.property(fc.array(fc.nat(), { maxLength: 12 }), (positions) => {
				expect(splitAll(cut(bytes, positions))).toEqual(expected);
			}),
		);
		expect(expected.map((line) => line.text)).toEqual(["日本語 ü € 🎉", '{"a":"🎉é"}', "end 😀"]);
	});

	it("does not keep a reference to the caller's chunk buffer", () => {
		const splitter = new LineSplitter();
		const buffer = encoder.encode("abc");
		[...splitter.push(buffer)];
		buffer.fill(0x78);
		expect([...splitter.end()].map((line) => line.text)).toEqual(["abc"]);
	});

	it("flags invalid UTF-8 instead of guessing silently", () => {
		const bytes = new Uint8Array([0x61, 0xff, 0x62, 0x0a, 0x63, 0x0a]);
		const [bad, good] = splitAll([bytes]);
		expect(bad?.validUtf8).toBe(false);
		expect(good).toMatchObject({ text: "c", validUtf8: true });
	});

	it("works as a TransformStream", async () => {
		const source = new ReadableStream<Uint8Array>({
			start(controller) {
				for (const chunk of cut(encoder.encode("one\ntwo\nthr€e"), [2, 5, 11])) controller.enqueue(chunk);
				controller.close();
			},
		});
		const texts: string[] = [];
		for await (const line of source.pipeThrough(lineStream())) texts.push(line.text);
		expect(texts).toEqual(["one", "two", "thr€e"]);
	});
});

describe("parseSessionText", () => {
	const header = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}';
	const entry =
		'{"type":"custom","customType":"x","id":"aaaaaaaa","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z"}';

	it.each([
		["garbage in the middle", `${header}\nnot json\n${entry}\n`, "invalid-json", 2],
		["torn last line", `${header}\n${entry}\n{"type":"mess`, "torn-last-line", 3],
		["array line", `${header}\n[1,2]\n`, "not-an-object", 2],
		["scalar line", `${header}\n42\n`, "not-an-object", 2],
		["record without type", `${header}\n{"id":"x"}\n`, "missing-type", 2],
	])("reports %s with its line number and keeps the rest", (_name, text, reason, line) => {
		const { entries, diagnostics } = parseSessionText(text);
		expect(entries[0]).toMatchObject({ type: "session" });
		expect(diagnostics).toHaveLength(1);
		expect(diagnostics[0]).toMatchObject({ reason, line });
		expect(diagnostics[0]?.excerpt.length).toBeGreaterThan(0);
		expect(diagnostics[0]?.byteOffset).toBe(
			encoder.encode(
				text
					.split("\n")
					.slice(0, line - 1)
					.join("\n"),
			).length + 1,
		);
	});

	it("reports a line of invalid UTF-8 bytes as such", () => {
		const bytes = new Uint8Array([
			...encoder.encode(`${header}\n{"type":"x","t":"`),
			0xc3,
			0x28,
			...encoder.encode('"}\n'),
		]);
		const parsed = splitAll([bytes]).map(parseLine);
		expect(parsed[0]?.record).toMatchObject({ type: "session" });
		expect(parsed[1]?.diagnostic).toMatchObject({ reason: "invalid-utf8", line: 2, byteOffset: header.length + 1 });
	});

	it("skips blank lines without a diagnostic and accepts CRLF and a BOM", () => {
		const { entries, diagnostics } = parseSessionText(`\uFEFF${header}\r\n\r\n${entry}\r\n   \n`);
		expect(entries.map((e) => e.type)).toEqual(["session", "custom"]);
		expect(diagnostics).toEqual([]);
	});

	it("keeps unknown record types and fields untouched", () => {
		const unknown = '{"type":"future_kind","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"t","extra":{"n":[1,2]}}';
		const { entries } = parseSessionText(`${header}\n${entry}\n${unknown}\n`);
		expect(entries.map((e) => encodeEntry(e)).join("")).toBe(`${header}\n${entry}\n${unknown}\n`);
	});

	it("parseSessionEntries returns pi's array and passes diagnostics to a callback", () => {
		const seen: number[] = [];
		const entries = parseSessionEntries(`${header}\n{oops\n${entry}\n`, (d) => seen.push(d.line));
		expect(entries).toHaveLength(2);
		expect(seen).toEqual([2]);
	});
});

describe("encodeEntry", () => {
	it("is JSON.stringify plus a newline, keeping the object's field order", () => {
		const record = {
			type: "custom",
			customType: "x",
			data: { b: 1, a: 2 },
			id: "aaaaaaaa",
			parentId: null,
			timestamp: "t",
		};
		expect(encodeEntry(record as never)).toBe(`${JSON.stringify(record)}\n`);
	});

	it("round-trips any JSON object record through parse", () => {
		const recordArbitrary = fc
			.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }))
			.map((fields) => ({ ...fields, type: "custom" }));
		fc.assert(
			fc.property(fc.array(recordArbitrary, { maxLength: 8 }), (records) => {
				const text = records.map((r) => encodeEntry(r as never)).join("");
				const { entries, diagnostics } = parseSessionText(text);
				expect(diagnostics).toEqual([]);
				expect(entries).toEqual(JSON.parse(JSON.stringify(records)));
			}),
		);
	});
});

describe("SessionFormatError", () => {
	it("names file, line and excerpt", () => {
		const error = new SessionFormatError("bad header", { file: "a.jsonl", line: 1, byteOffset: 0, excerpt: "xyz" });
		expect(error.message).toBe('a.jsonl:1: bad header ("xyz")');
		expect(error).toMatchObject({ name: "SessionFormatError", file: "a.jsonl", line: 1 });
	});
});
