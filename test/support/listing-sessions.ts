/**
 * For the listing tests: random session files as pi writes them and as they get damaged (torn and joined
 * lines, bad UTF-8, other field orders, duplicate or escaped keys, old versions, CRLF, a BOM…), storages
 * that count or shorten reads, and `SessionInfo` in a form `toEqual` compares exactly (invalid dates too).
 */
import fc from "fast-check";
import type { SessionInfo, Storage } from "../../src/index.ts";
import { concat } from "../../src/testing/support.ts";

export { concat };

const encoder = new TextEncoder();

/** Text with what is hard for a byte-level reader: quotes, backslashes, controls, astral and lone surrogates. */
const text: fc.Arbitrary<string> = fc.oneof(
	{ weight: 4, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
	{
		weight: 1,
		arbitrary: fc.constantFrom("", " ", '"quoted"', "back\\slash", "tab\tnew\nline", "\ud800", "x\udc00", "😀"),
	},
	{
		weight: 1,
		arbitrary: fc.string({ unit: fc.constantFrom("a", '"', "\\", "{", "}", "\n", "é", "😀"), maxLength: 12 }),
	},
);

const hex8 = fc.integer({ min: 0, max: 0xffffffff }).map((n) => n.toString(16).padStart(8, "0"));
const isoTime = fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }).map((ms) => new Date(ms).toISOString());

const block: fc.Arbitrary<unknown> = fc.oneof(
	fc.record({ type: fc.constant("text"), text }),
	fc.record({ type: fc.constant("thinking"), thinking: text }),
	fc.record({
		type: fc.constant("toolCall"),
		id: hex8,
		name: text,
		arguments: fc.dictionary(text, text, { maxKeys: 3 }),
	}),
	fc.record({ type: fc.constant("image"), data: text, mimeType: fc.constant("image/png") }),
	fc.constant(null),
	fc.record({ type: fc.constant("text"), text: fc.integer() }),
);

const content: fc.Arbitrary<unknown> = fc.oneof(
	{ weight: 3, arbitrary: text },
	{ weight: 4, arbitrary: fc.array(block, { maxLength: 4 }) },
	{ weight: 1, arbitrary: fc.constantFrom(undefined, 7, null, { text: "x" }) },
);

const role = fc.constantFrom(
	"user",
	"assistant",
	"toolResult",
	"bashExecution",
	"custom",
	"hookMessage",
	"system",
	"branchSummary",
	"compactionSummary",
	"other",
	"user",
	"assistant",
	"toolResult",
);

const messageTimestamp = fc.oneof(
	fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
	fc.constantFrom(undefined, "2025-01-01", -5, 0, 1.5),
);

/** A message as pi writes it: `role` first, then content and the rest. */
const message: fc.Arbitrary<Record<string, unknown>> = fc
	.record({ role, content, timestamp: messageTimestamp, details: fc.option(fc.dictionary(text, text, { maxKeys: 3 })) })
	.map(({ role, content, timestamp, details }) => {
		const m: Record<string, unknown> = { role };
		if (content !== undefined) m.content = content;
		if (role === "toolResult") m.toolCallId = "call";
		if (details) m.details = details;
		if (timestamp !== undefined) m.timestamp = timestamp;
		return m;
	});

/** One entry line as pi writes it (before any damage). */
const entry: fc.Arbitrary<string> = fc.oneof(
	{
		weight: 8,
		arbitrary: fc
			.record({ id: hex8, parentId: fc.option(hex8), timestamp: isoTime, message })
			.map((e) => JSON.stringify({ type: "message", ...e })),
	},
	{
		weight: 1,
		arbitrary: fc
			.record({ id: hex8, timestamp: isoTime, name: fc.oneof(text, fc.constantFrom(undefined, 5, "  a\r\nb  ")) })
			.map(({ id, timestamp, name }) => JSON.stringify({ type: "session_info", id, parentId: null, timestamp, name })),
	},
	{
		weight: 2,
		arbitrary: fc
			.record({
				type: fc.constantFrom("label", "model_change", "thinking_level_change", "custom", "compaction", "usage", "zzz"),
				id: hex8,
				data: fc.jsonValue({ maxDepth: 2 }),
				summary: text,
			})
			.map(({ type, id, data, summary }) => JSON.stringify({ type, id, parentId: null, data, summary })),
	},
	{
		// Not pi's field order: message first, role last.
		weight: 1,
		arbitrary: fc.record({ id: hex8, message }).map(({ id, message: m }) => {
			const { role: r, ...rest } = m;
			return JSON.stringify({ message: { ...rest, role: r }, id, type: "message" });
		}),
	},
	{
		// v1: no ids.
		weight: 1,
		arbitrary: fc.record({ timestamp: isoTime, message }).map((e) => JSON.stringify({ type: "message", ...e })),
	},
	{
		weight: 1,
		arbitrary: fc.constantFrom(
			"",
			"   ",
			"\t",
			"not json",
			"{",
			"[1,2]",
			"0",
			"null",
			'"text"',
			"{}",
			'{"type":5}',
			'{"type":"message","id":"a","message":{"role":"toolResult"},"type":"label"}',
			'{"type":"label","id":"a","type":"message","message":{"role":"user","content":"dup type"}}',
			'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","content":"x"},"message":{"role":"user","content":"second message"}}',
			'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","role":"user","content":"dup role"}}',
			'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","r\\u006fle":"user","content":"escaped role"}}',
			'{"type":"label","typ\\u0065":"session_info","name":"escaped type"}',
			'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","content":"raw\ttab"}}',
			'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","content":"x"}} trailing',
			'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","content":[1,]}}',
			'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"big","timestamp":1e400}}',
			'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"neg","timestamp":-0}}',
			'{"type":"message","id":"a","parentId":null,"timestamp":"2025-02-02T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"no ts"}]}}',
			'{"type":"message","id":"a\\"b","parentId":null,"timestamp":"t","message":{"role":"toolResult","content":"escaped id"}}',
			'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":"not an object"}',
			'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","content":"deep","d":[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}',
			' {"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"leading space"}}',
			'\ufeff{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"inner BOM"}}',
		),
	},
);

const header: fc.Arbitrary<string> = fc.oneof(
	{
		weight: 6,
		arbitrary: fc
			.record({ id: text, timestamp: isoTime, cwd: text, parentSession: fc.option(text, { nil: undefined }) })
			.map((h) => JSON.stringify({ type: "session", version: 3, ...h })),
	},
	{
		weight: 2,
		arbitrary: fc
			.record({ version: fc.constantFrom(undefined, 1, 2, "3", "x", null), id: hex8, timestamp: isoTime })
			.map(({ version, id, timestamp }) => JSON.stringify({ type: "session", version, id, timestamp, cwd: "/p" })),
	},
	{
		weight: 1,
		arbitrary: fc.constantFrom(
			'{"type":"session","version":3,"timestamp":"2025-01-01T00:00:00.000Z","cwd":"/no-id"}',
			'{"type":"session","version":3,"id":5,"timestamp":"2025-01-01T00:00:00.000Z"}',
			'{"type":"session","version":3,"id":"odd","timestamp":1e400,"cwd":7,"parentSession":-0}',
			'{"type":"session","version":3,"id":"odd2","timestamp":null,"parentSession":{"a":[1,2]}}',
			'{"type":"session","version":3,"id":"odd3","timestamp":"not a date"}',
			'{"type":"message","id":"a","message":{"role":"user","content":"no header"}}',
			"[1]",
			"0",
			"null",
			"garbage",
			"",
		),
	},
);

/** What is done to a line on its way to the file. */
type Damage = "none" | "torn" | "crlf" | "bad-utf8" | "nul";
const damage: fc.Arbitrary<Damage> = fc.oneof(
	{ weight: 20, arbitrary: fc.constant<Damage>("none") },
	{ weight: 1, arbitrary: fc.constantFrom<Damage>("torn", "crlf", "bad-utf8", "nul") },
);

function damaged(line: Uint8Array, kind: Damage, at: number): { bytes: Uint8Array; newline: boolean } {
	const cut = line.length === 0 ? 0 : at % line.length;
	switch (kind) {
		case "torn": // a crash mid-append: the next line is written right after it
			return { bytes: line.subarray(0, cut), newline: false };
		case "crlf":
			return { bytes: concat([line, Uint8Array.of(0x0d)]), newline: true };
		case "bad-utf8":
			return { bytes: concat([line.subarray(0, cut), Uint8Array.of(0xff, 0xc3), line.subarray(cut)]), newline: true };
		case "nul":
			return { bytes: concat([line.subarray(0, cut), new Uint8Array(3), line.subarray(cut)]), newline: true };
		default:
			return { bytes: line, newline: true };
	}
}

/** A whole session file's bytes: maybe a BOM and lines before the header, the header, entries, damage. */
export const sessionFileArbitrary: fc.Arbitrary<Uint8Array> = fc
	.record({
		bom: fc.boolean(),
		before: fc.array(fc.constantFrom("", "  ", "not json", "0", "null", '"'), { maxLength: 2 }),
		header,
		entries: fc.array(fc.tuple(entry, damage, fc.nat()), { maxLength: 25 }),
		finalNewline: fc.boolean(),
	})
	.map(({ bom, before, header, entries, finalNewline }) => {
		const parts: Uint8Array[] = bom ? [Uint8Array.of(0xef, 0xbb, 0xbf)] : [];
		for (const line of [...before, header]) parts.push(encoder.encode(`${line}\n`));
		entries.forEach(([line, kind, at], index) => {
			const { bytes, newline } = damaged(encoder.encode(line), kind, at);
			parts.push(bytes);
			if (newline && (finalNewline || index < entries.length - 1)) parts.push(Uint8Array.of(0x0a));
		});
		return concat(parts);
	});

/** `SessionInfo` with dates as numbers (an invalid date is `NaN`, which `toEqual` compares as equal). */
export function comparable(info: SessionInfo | null): unknown {
	if (!info) return null;
	return { ...info, created: info.created.getTime(), modified: info.modified.getTime() };
}

/** Reads a storage was asked for: per path, the ranges read. */
export interface ReadLog {
	ranges: Map<string, [number, number][]>;
	/** Bytes read from paths that end in `.jsonl`. */
	sessionBytes(): number;
	clear(): void;
}

/**
 * `storage` recording every `readRange`; with `maxRead`, reads of session files return at most that many
 * bytes, so that lines straddle many reads.
 */
export function recordingStorage(storage: Storage, maxRead?: number): { storage: Storage; reads: ReadLog } {
	const ranges = new Map<string, [number, number][]>();
	const reads: ReadLog = {
		ranges,
		sessionBytes: () => {
			let total = 0;
			for (const [path, list] of ranges) {
				if (path.endsWith(".jsonl")) for (const [start, end] of list) total += end - start;
			}
			return total;
		},
		clear: () => ranges.clear(),
	};
	const wrapped: Storage = {
		...storage,
		readRange: async (path, start, end) => {
			const capped = maxRead !== undefined && path.endsWith(".jsonl");
			const bytes = await storage.readRange(path, start, capped ? Math.min(end, start + maxRead) : end);
			const list = ranges.get(path) ?? [];
			list.push([start, start + bytes.length]);
			ranges.set(path, list);
			return bytes;
		},
	};
	return { storage: wrapped, reads };
}

/** One edit of a line's bytes: `length` bytes deleted at `at`, `bytes` inserted there, or `length` bytes repeated. */
export type LineEdit = { kind: string; at: number; length: number; bytes: number[] };

/** A line's bytes with `list` applied in turn (`at` taken modulo the length). */
export function edited(line: Uint8Array, list: readonly LineEdit[]): Uint8Array {
	let bytes = line;
	for (const { kind, at, length, bytes: inserted } of list) {
		const i = bytes.length === 0 ? 0 : at % bytes.length;
		if (kind === "delete") bytes = concat([bytes.subarray(0, i), bytes.subarray(i + length)]);
		else if (kind === "insert") bytes = concat([bytes.subarray(0, i), Uint8Array.from(inserted), bytes.subarray(i)]);
		else bytes = concat([bytes.subarray(0, i + length), bytes.subarray(i)]);
	}
	return bytes;
}
