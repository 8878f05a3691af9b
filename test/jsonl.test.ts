import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	encodeEntry,
	type Line,
	LineSplitter,
	lineStream,
	parseSessionEntries,
	parseSessionText,
	SessionFormatError,
} from "../src/index.ts";
import { parseLine } from "../src/jsonl.ts";

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
		const parsed = splitAll([bytes]).map((line) => parseLine(line));
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

describe("lines that are not valid UTF-8 (read as pi 1.6 reads them)", () => {
	/** Byte sequences that are not UTF-8, each as Node's decoder (pi's `StringDecoder`) turns it into text. */
	const sequences: [string, number[]][] = [
		["a lone continuation byte", [0x80]],
		["two continuation bytes", [0xbf, 0x80]],
		["a lead byte then ASCII", [0xc3, 0x28]],
		["a truncated 2-byte sequence", [0xc3]],
		["a truncated 3-byte sequence", [0xe2, 0x82]],
		["a truncated 4-byte sequence", [0xf0, 0x9f, 0x98]],
		["a truncated 4-byte sequence then ASCII", [0xf0, 0x9f, 0x41]],
		["an overlong 2-byte slash", [0xc0, 0xaf]],
		["an overlong 2-byte sequence (C1)", [0xc1, 0xbf]],
		["an overlong 3-byte slash", [0xe0, 0x80, 0xaf]],
		["an overlong 3-byte sequence (E0 9F)", [0xe0, 0x9f, 0x80]],
		["an overlong 4-byte slash", [0xf0, 0x80, 0x80, 0xaf]],
		["a lone high surrogate", [0xed, 0xa0, 0x80]],
		["a lone low surrogate", [0xed, 0xbf, 0xbf]],
		["a surrogate pair encoded as two", [0xed, 0xa0, 0xbd, 0xed, 0xb2, 0xa9]],
		["a code point above U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
		["a byte F5 (never UTF-8)", [0xf5, 0x80, 0x80, 0x80]],
		["0xFF", [0xff]],
		["0xFE 0xFE", [0xfe, 0xfe]],
		["a bad sequence between good ones", [0xe2, 0x82, 0xac, 0xe2, 0x28, 0xa1, 0xe2, 0x82, 0xac]],
	];

	/** What pi reads: Node's `StringDecoder` over the whole file (its chunks cut anywhere give the same text). */
	async function nodeText(bytes: Uint8Array): Promise<string> {
		const { StringDecoder } = await import("node:string_decoder");
		const whole = new StringDecoder("utf8");
		const text = whole.write(Buffer.from(bytes)) + whole.end();
		const byteByByte = new StringDecoder("utf8");
		let pieces = "";
		for (const byte of bytes) pieces += byteByByte.write(Buffer.from([byte]));
		pieces += byteByByte.end();
		expect(pieces).toBe(text);
		expect(Buffer.from(bytes).toString("utf8")).toBe(text);
		return text;
	}

	it.each(sequences)("%s: the line's text is Node's, however the bytes are chunked", async (_case, bad) => {
		const lineBytes = [...encoder.encode('{"type":"x","t":"a'), ...bad, ...encoder.encode('b"}')];
		// In the middle of a line, and at its very end (right before the newline).
		for (const bytes of [lineBytes, [...encoder.encode('{"type":"x"}//'), ...bad]]) {
			const file = new Uint8Array([...bytes, 0x0a, 0x63, 0x0a]);
			const [expected] = (await nodeText(file)).split("\n");
			for (let at = 0; at <= file.length; at++) {
				const [first, second] = splitAll(cut(file, [at]));
				expect(first).toMatchObject({ text: expected, validUtf8: false, terminated: true });
				expect(second).toMatchObject({ text: "c", validUtf8: true });
			}
		}
	});

	it.each(sequences)("%s: a terminated line is parsed from that text and kept, with a diagnostic", (_case, bad) => {
		const bytes = new Uint8Array([...encoder.encode('{"type":"x","t":"a'), ...bad, ...encoder.encode('b"}\n')]);
		const [line] = splitAll([bytes]);
		const parsed = parseLine(line as Line);
		expect(parsed?.record).toEqual({ type: "x", t: Buffer.from([0x61, ...bad, 0x62]).toString("utf8") });
		expect(parsed?.diagnostic).toMatchObject({ reason: "invalid-utf8", line: 1, byteOffset: 0 });
		expect(parsed?.diagnostic?.message).toMatch(/U\+FFFD.*kept/);
	});

	it("a file read in chunks keeps such a record in its place, reported once", () => {
		const header = '{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}';
		const bytes = new Uint8Array([
			...encoder.encode(`${header}\n{"type":"custom","id":"a","parentId":null,"t":"`),
			0xff,
			...encoder.encode('"}\n{"type":"custom","id":"b","parentId":"a"}\n'),
		]);
		const parsed = splitAll(cut(bytes, [header.length + 20, header.length + 47])).map((line) => parseLine(line));
		expect(parsed.map((p) => p?.record?.id)).toEqual(["s", "a", "b"]);
		expect(parsed.map((p) => p?.diagnostic?.reason)).toEqual([undefined, "invalid-utf8", undefined]);
	});

	it("a line that still is no record is skipped for that reason; a torn last line stays torn", () => {
		const bad = (text: string, terminated: boolean) => {
			const [before, after] = text.split("@") as [string, string];
			const bytes = new Uint8Array([...encoder.encode(before), 0xe2, 0x82, ...encoder.encode(after)]);
			const [line] = splitAll([terminated ? new Uint8Array([...bytes, 0x0a]) : bytes]);
			return parseLine(line as Line)?.diagnostic?.reason;
		};
		expect(bad('{"type":"x","t":"@', true)).toBe("invalid-json"); // a torn line terminated by a later repair
		expect(bad('{"type":"x","t":"@', false)).toBe("torn-last-line"); // cut inside a character
		expect(bad('["@"]', true)).toBe("not-an-object");
		expect(bad('{"t":"@"}', true)).toBe("missing-type");
		// An unterminated last line that is whole is kept, bad bytes and all (pi keeps it too).
		expect(bad('{"type":"x","t":"@"}', false)).toBe("invalid-utf8");
	});
});
