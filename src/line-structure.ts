/**
 * The structure of a big line without its bodies: what a lazy open keeps of an entry. The line's bytes
 * are walked once by a JSON grammar check that never decodes a string (strings are checked where they
 * lie, four bytes at a time through runs that need no look, such as base64 images), and only the values
 * of the few structural keys are read. So the line is a record exactly when `JSON.parse` of it gives
 * one, at a fraction of the cost. Anything unusual (invalid JSON, bytes that are not UTF-8, a line that
 * is no entry) returns `undefined`: the caller then parses the whole line, and reports it as a full open
 * does.
 * @module
 */
import type { FileEntry, SessionEntry } from "./entries.ts";

/** Lines shorter than this are kept whole: their structure would take about as much memory as they do. */
export const DEFER_LINE_BYTES = 256;
/** Lines from this long on are scanned rather than parsed (see `readLazyLine`). */
export const SCAN_LINE_BYTES: number = 64 << 10;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Entry kinds kept whole however long: the tree's labels, name and settings, and the compaction rules read them. */
const KEPT_WHOLE: ReadonlySet<string> = new Set([
	"compaction",
	"label",
	"session_info",
	"model_change",
	"thinking_level_change",
]);

const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/** Bytes valid after a backslash in a JSON string (besides `u`), as a table. */
const SIMPLE_ESCAPES = new Uint8Array(256);
for (const byte of [0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]) SIMPLE_ESCAPES[byte] = 1;

function isHexDigit(byte: number | undefined): boolean {
	return (
		byte !== undefined &&
		((byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66))
	);
}

/** Set by `stringEnd` when the string it scanned holds a non-ASCII byte. */
let sawNonAscii = false;

/**
 * The closing quote of the string whose contents start at `start`, checking what `JSON.parse` checks
 * inside a string (no raw control character, only valid escapes); -1 when the string is not valid JSON.
 * Runs of bytes that need no look (all of a base64 image) are skipped four at a time; each word is tested
 * for a byte below 0x20, a quote, a backslash or (until one is seen) a non-ASCII byte at once.
 */
function stringEnd(bytes: Uint8Array, words: Uint32Array, start: number): number {
	const base = bytes.byteOffset;
	const end = bytes.length;
	const lastWord = (base + end) >>> 2;
	let plain = PLAIN_ASCII;
	let high = 0x80808080;
	sawNonAscii = false;
	let at = start;
	for (;;) {
		// Byte by byte up to a word boundary (most strings are short and end here), then a word at a time.
		while (at < end && plain[bytes[at] as number] === 1 && ((base + at) & 3) !== 0) at++;
		if (at < end && plain[bytes[at] as number] === 1) {
			let word = (base + at) >>> 2;
			for (; word < lastWord; word++) {
				const v = words[word] as number;
				const quote = v ^ 0x22222222;
				const slash = v ^ 0x5c5c5c5c;
				const flagged =
					((v - 0x20202020) & ~v) | ((quote - 0x01010101) & ~quote) | ((slash - 0x01010101) & ~slash) | (v & high);
				if ((flagged & 0x80808080) !== 0) break;
			}
			at = word * 4 - base;
			while (at < end && plain[bytes[at] as number] === 1) at++;
		}
		if (at >= end) return -1;
		const byte = bytes[at] as number;
		if (byte === QUOTE) return at;
		if (byte === BACKSLASH) {
			const next = bytes[at + 1];
			if (next === 0x75) {
				for (let k = 2; k < 6; k++) if (!isHexDigit(bytes[at + k])) return -1;
				at += 6;
			} else if (next !== undefined && SIMPLE_ESCAPES[next] === 1) at += 2;
			else return -1;
		} else if (byte < 0x20) return -1;
		else {
			// The first non-ASCII byte: from here on, such bytes need no look (the string is checked as UTF-8 after).
			sawNonAscii = true;
			plain = PLAIN_ANY;
			high = 0;
			at++;
		}
	}
}

/** Bytes a string's scan passes over: printable ASCII but the quote and the backslash (and, in `PLAIN_ANY`, non-ASCII). */
const PLAIN_ASCII = new Uint8Array(256);
const PLAIN_ANY = new Uint8Array(256);
for (let byte = 0x20; byte < 0x100; byte++) {
	if (byte === QUOTE || byte === BACKSLASH) continue;
	PLAIN_ANY[byte] = 1;
	if (byte < 0x80) PLAIN_ASCII[byte] = 1;
}

/** Index in `keys` of the key whose text is `bytes[start, end)` (a key with an escape is decoded first), or -1. */
function keyIndex(bytes: Uint8Array, start: number, end: number, keys: readonly Uint8Array[]): number {
	if (bytes.indexOf(BACKSLASH, start) < end && bytes.indexOf(BACKSLASH, start) !== -1) {
		const text = JSON.parse(strictDecoder.decode(bytes.subarray(start - 1, end + 1))) as string;
		return keys.findIndex((key) => strictDecoder.decode(key) === text);
	}
	for (let index = 0; index < keys.length; index++) {
		const key = keys[index] as Uint8Array;
		if (key.length !== end - start) continue;
		let same = true;
		for (let k = 0; same && k < key.length; k++) same = bytes[start + k] === key[k];
		if (same) return index;
	}
	return -1;
}

/** A word view of the buffer of the last line seen (lines of one chunk share it). */
let wordsOf: { buffer: ArrayBufferLike; words: Uint32Array } | undefined;

function wordView(bytes: Uint8Array): Uint32Array {
	if (wordsOf?.buffer !== bytes.buffer) {
		wordsOf = { buffer: bytes.buffer, words: new Uint32Array(bytes.buffer, 0, bytes.buffer.byteLength >>> 2) };
	}
	return wordsOf.words;
}

const encoder = new TextEncoder();
/** The entry's keys whose values are structure (`message` is entered; `summary` only says whether it is empty). */
const TOP_NAMES = [
	"type",
	"id",
	"parentId",
	"timestamp",
	"targetId",
	"fromId",
	"customType",
	"display",
	"replacement",
	"summary",
	"message",
];
const TOP_KEYS = TOP_NAMES.map((key) => encoder.encode(key));
const SUMMARY = 9;
const MESSAGE = 10;
const REPLACEMENT = 8;
/** The message's keys whose values are structure. */
const MESSAGE_NAMES = ["role", "provider", "model"];
const MESSAGE_KEYS = MESSAGE_NAMES.map((key) => encoder.encode(key));
/** Message keys are numbered from here in `pendingKey`. */
const IN_MESSAGE = 100;

function isWhitespace(byte: number | undefined): boolean {
	return byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0a;
}

function isDigit(byte: number | undefined): boolean {
	return byte !== undefined && byte >= 0x30 && byte <= 0x39;
}

/** The end of the JSON number at `at`, or -1 if there is none. */
function numberEnd(bytes: Uint8Array, at: number): number {
	if (bytes[at] === 0x2d) at++;
	if (bytes[at] === 0x30) at++;
	else if (isDigit(bytes[at])) while (isDigit(bytes[at])) at++;
	else return -1;
	if (bytes[at] === 0x2e) {
		if (!isDigit(bytes[++at])) return -1;
		while (isDigit(bytes[at])) at++;
	}
	if (bytes[at] === 0x65 || bytes[at] === 0x45) {
		at++;
		if (bytes[at] === 0x2b || bytes[at] === 0x2d) at++;
		if (!isDigit(bytes[at])) return -1;
		while (isDigit(bytes[at])) at++;
	}
	return at;
}

const LITERALS = ["true", "false", "null"].map((literal) => encoder.encode(literal));

/** The end of the literal at `at`, or -1 if there is none. */
function literalEnd(bytes: Uint8Array, at: number): number {
	for (const literal of LITERALS) {
		let same = true;
		for (let k = 0; same && k < literal.length; k++) same = bytes[at + k] === literal[k];
		if (same) return at + literal.length;
	}
	return -1;
}

/** A scalar's value, from its JSON text (short: a key's value, never a body). */
function scalarAt(bytes: Uint8Array, start: number, end: number): unknown {
	return JSON.parse(strictDecoder.decode(bytes.subarray(start, end)));
}

/** What the scan expects next. */
const VALUE = 0;
const FIRST_VALUE = 1; // after `[`: a value or `]`
const FIRST_KEY = 2; // after `{`: a key or `}`
const KEY = 3;
const AFTER_VALUE = 4;

const OBJECT = 1;
const ARRAY = 2;
/** Open containers, reused from line to line. */
let containers = new Uint8Array(64);

/**
 * Check a line as `JSON.parse` would (the same grammar, strings checked in place and never decoded) and
 * collect the values of the structural keys of the top object and of its `message` object. `undefined`
 * when the line is not valid JSON, not an object, or holds a string that is not UTF-8.
 */
function scanEntry(
	bytes: Uint8Array,
): { top: Record<string, unknown>; message: Record<string, unknown> | undefined } | undefined {
	const words = wordView(bytes);
	const top: Record<string, unknown> = {};
	let message: Record<string, unknown> | undefined;
	let messageDepth = -1;
	let depth = 0;
	let state = VALUE;
	let pendingKey = -1; // the structural key whose value comes next, at depth 1 or in the message
	let at = 0;
	const length = bytes.length;
	while (isWhitespace(bytes[at])) at++;
	if (bytes[at] !== 0x7b) return undefined;
	for (;;) {
		while (isWhitespace(bytes[at])) at++;
		if (at >= length) return undefined;
		const byte = bytes[at] as number;
		if (state === AFTER_VALUE) {
			const container = containers[depth - 1];
			if (byte === 0x2c) {
				state = container === OBJECT ? KEY : VALUE;
				at++;
				continue;
			}
			if ((byte === 0x7d && container === OBJECT) || (byte === 0x5d && container === ARRAY)) {
				if (depth === messageDepth) messageDepth = -1;
				depth--;
				at++;
				if (depth === 0) break;
				continue;
			}
			return undefined;
		}
		if (state === FIRST_KEY || state === KEY) {
			if (byte === 0x7d && state === FIRST_KEY) {
				if (depth === messageDepth) messageDepth = -1;
				depth--;
				at++;
				state = AFTER_VALUE;
				if (depth === 0) break;
				continue;
			}
			if (byte !== QUOTE) return undefined;
			const close = stringEnd(bytes, words, at + 1);
			if (close < 0 || (sawNonAscii && !isUtf8(bytes, at + 1, close))) return undefined;
			if (depth === 1) pendingKey = keyIndex(bytes, at + 1, close, TOP_KEYS);
			else if (depth === messageDepth) {
				const index = keyIndex(bytes, at + 1, close, MESSAGE_KEYS);
				pendingKey = index < 0 ? -1 : IN_MESSAGE + index;
			}
			at = close + 1;
			while (isWhitespace(bytes[at])) at++;
			if (bytes[at] !== 0x3a) return undefined;
			at++;
			state = VALUE;
			continue;
		}
		if (state === FIRST_VALUE && byte === 0x5d) {
			depth--;
			at++;
			state = AFTER_VALUE;
			continue;
		}
		// A value.
		const key = pendingKey;
		pendingKey = -1;
		const target = key >= IN_MESSAGE ? message : top;
		const name = key >= IN_MESSAGE ? MESSAGE_NAMES[key - IN_MESSAGE] : key >= 0 ? TOP_NAMES[key] : undefined;
		if (byte === 0x7b || byte === 0x5b) {
			if (depth === containers.length) {
				const grown = new Uint8Array(containers.length * 2);
				grown.set(containers);
				containers = grown;
			}
			containers[depth++] = byte === 0x7b ? OBJECT : ARRAY;
			at++;
			state = byte === 0x7b ? FIRST_KEY : FIRST_VALUE;
			if (name !== undefined && target) {
				if (key === MESSAGE && byte === 0x7b) {
					message = {};
					messageDepth = depth;
					target.message = message;
				} else if (key === REPLACEMENT && byte === 0x7b) target.replacement = {};
				else return undefined; // a structural key holding another container: left to a full parse
			}
			continue;
		}
		let end: number;
		if (byte === QUOTE) {
			const close = stringEnd(bytes, words, at + 1);
			if (close < 0 || (sawNonAscii && !isUtf8(bytes, at + 1, close))) return undefined;
			end = close + 1;
			if (name !== undefined && target) {
				target[name] = key === SUMMARY ? (close > at + 1 ? "~" : "") : scalarAt(bytes, at, end);
			}
		} else {
			end = byte === 0x2d || isDigit(byte) ? numberEnd(bytes, at) : literalEnd(bytes, at);
			if (end < 0) return undefined;
			if (name !== undefined && target) target[name] = scalarAt(bytes, at, end);
		}
		at = end;
		state = AFTER_VALUE;
	}
	while (isWhitespace(bytes[at])) at++;
	return at === length ? { top, message } : undefined;
}

/** Whether `bytes[start, end)` is UTF-8 (checked only for strings with non-ASCII bytes). */
function isUtf8(bytes: Uint8Array, start: number, end: number): boolean {
	try {
		strictDecoder.decode(bytes.subarray(start, end));
		return true;
	} catch {
		return false;
	}
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * What the tree keeps of a deferred entry: its kind, id, parent and time, and the few fields that the
 * tree, the context rules and the outline read (a message's role, and an assistant's provider and model).
 */
function structureOf(
	top: Record<string, unknown>,
	message: Record<string, unknown> | undefined,
): SessionEntry | undefined {
	const { type, id, parentId, timestamp } = top;
	const base: Record<string, unknown> = { type, id, parentId, timestamp };
	switch (type) {
		case "message":
			if (!isPlainObject(top.message) || message?.role === "system") return undefined;
			base.message =
				message?.role === "assistant"
					? { role: message.role, provider: message.provider, model: message.model }
					: { role: message?.role };
			break;
		case "branch_summary":
			base.fromId = top.fromId;
			base.summary = top.summary;
			break;
		case "context_edit":
			base.targetId = top.targetId;
			// Only whether there is a replacement, and whether it removes, is structure.
			base.replacement = top.replacement;
			break;
		case "custom_message":
			base.customType = top.customType;
			base.display = top.display;
			break;
		case "custom":
			base.customType = top.customType;
			break;
		default:
			break;
	}
	return base as unknown as SessionEntry;
}

/** What reading a line for a lazy open gives: the structure of a deferred entry, or the whole record. */
export type LazyLine = { deferred: SessionEntry; whole?: undefined } | { whole: FileEntry; deferred?: undefined };

/**
 * A line as a lazy open reads it: the structure of an entry worth deferring, the whole record of a line
 * that is not (short, or of a kind the tree keeps whole), or `undefined` when the line must go the
 * ordinary way (not valid JSON, not UTF-8, not an entry: the caller parses it and reports it as a full
 * open does). Lines up to `SCAN_LINE_BYTES` are checked by `JSON.parse` itself, which V8 runs faster than
 * any scan written here on the token-dense JSON of tool calls and code; longer lines, mostly one huge
 * string (an image, a file), are scanned without decoding.
 */
export function readLazyLine(bytes: Uint8Array): LazyLine | undefined {
	if (bytes.length < DEFER_LINE_BYTES) return undefined;
	let top: Record<string, unknown>;
	let message: Record<string, unknown> | undefined;
	if (bytes.length < SCAN_LINE_BYTES) {
		let value: unknown;
		try {
			value = JSON.parse(strictDecoder.decode(bytes));
		} catch {
			return undefined;
		}
		if (!isPlainObject(value) || typeof value.type !== "string") return undefined;
		if (KEPT_WHOLE.has(value.type)) return { whole: value as unknown as FileEntry };
		top = value;
		message = isPlainObject(value.message) ? value.message : undefined;
	} else {
		const scanned = scanEntry(bytes);
		if (!scanned || typeof scanned.top.type !== "string" || KEPT_WHOLE.has(scanned.top.type)) return undefined;
		({ top, message } = scanned);
	}
	const structure = structureOf(top, message);
	if (structure) return { deferred: structure };
	return undefined;
}
