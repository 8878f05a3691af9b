/**
 * The structure of a big line without its bodies: what a lazy open keeps of an entry. The line's bytes
 * are walked once; strings longer than a few dozen bytes (message text, tool output, base64 images) are
 * checked where they lie, as `JSON.parse` would check them, and left out of a small copy of the line,
 * which is then parsed. So the line is a record exactly when `JSON.parse` of it gives one, at a fraction
 * of the cost, and the entry's structural fields come out of that small parse. Anything unusual (a
 * control character, a bad escape, bytes that are not UTF-8, a line that is no entry) returns `undefined`:
 * the caller then parses the whole line, and reports it as a full open does.
 * @module
 */
import type { SessionEntry } from "./entries.ts";

/** Lines shorter than this are parsed whole: their structure costs about as much as they do. */
export const DEFER_LINE_BYTES = 256;

/** Strings longer than this (in bytes) are checked in place and left out of the copy that is parsed. */
const ELIDE_STRING_BYTES = 48;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
/** What a left-out string becomes in the copy: not empty, since the string it stands for was not. */
const PLACEHOLDER = [QUOTE, 0x7e, QUOTE];

/** Keys whose values are structure, never left out however long (an id or a role is read from them). */
const STRUCTURAL_KEYS = ["type", "id", "parentId", "timestamp", "role", "provider", "model", "targetId", "fromId"].map(
	(key) => new TextEncoder().encode(key),
);

/** Entry kinds kept whole however long: the tree's labels, name and settings, and the compaction rules read them. */
const KEPT_WHOLE: ReadonlySet<string> = new Set([
	"compaction",
	"label",
	"session_info",
	"model_change",
	"thinking_level_change",
]);

const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/** Bytes valid after a backslash in a JSON string (besides `u`). */
const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

function isHexDigit(byte: number | undefined): boolean {
	return (
		byte !== undefined &&
		((byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66))
	);
}

/** Whether a byte ends a run that needs a look: a quote, a backslash, a control character or (if asked) a non-ASCII byte. */
function isSpecial(byte: number, stopAtHigh: boolean): boolean {
	return byte < 0x20 || byte === QUOTE || byte === BACKSLASH || (stopAtHigh && byte >= 0x80);
}

/**
 * The first position in `[start, end)` of a byte `isSpecial` names, or -1. Four bytes at a time where the
 * buffer allows (a base64 image is megabytes of bytes that need no look).
 */
function findSpecial(bytes: Uint8Array, words: Uint32Array, start: number, end: number, stopAtHigh: boolean): number {
	const base = bytes.byteOffset;
	let at = start;
	while (at < end && ((base + at) & 3) !== 0) {
		if (isSpecial(bytes[at] as number, stopAtHigh)) return at;
		at++;
	}
	const high = stopAtHigh ? -1 : 0;
	const lastWord = (base + end) >>> 2;
	for (let word = (base + at) >>> 2; word < lastWord; word++) {
		const v = words[word] as number;
		const quote = v ^ 0x22222222;
		const slash = v ^ 0x5c5c5c5c;
		// Some byte is < 0x20, a quote, a backslash, or (when asked) >= 0x80 (exact as a test of "some byte").
		const flagged =
			((v - 0x20202020) & ~v) | ((quote - 0x01010101) & ~quote) | ((slash - 0x01010101) & ~slash) | (v & high);
		if ((flagged & 0x80808080) !== 0) {
			const from = word * 4 - base;
			for (let k = from; k < from + 4; k++) if (isSpecial(bytes[k] as number, stopAtHigh)) return k;
		}
		at = word * 4 + 4 - base;
	}
	for (; at < end; at++) if (isSpecial(bytes[at] as number, stopAtHigh)) return at;
	return -1;
}

/**
 * The closing quote of the string whose contents start at `start`, checking what `JSON.parse` checks
 * inside a string; -1 when the string is not valid JSON. `ascii.value` is cleared on a non-ASCII byte.
 */
function stringEnd(bytes: Uint8Array, words: Uint32Array, start: number, ascii: { value: boolean }): number {
	const end = bytes.length;
	let at = start;
	for (;;) {
		at = findSpecial(bytes, words, at, end, ascii.value);
		if (at < 0) return -1;
		const byte = bytes[at] as number;
		if (byte === QUOTE) return at;
		if (byte === BACKSLASH) {
			const next = bytes[at + 1];
			if (next === 0x75) {
				for (let k = 2; k < 6; k++) if (!isHexDigit(bytes[at + k])) return -1;
				at += 6;
			} else if (next !== undefined && SIMPLE_ESCAPES.has(next)) at += 2;
			else return -1;
		} else if (byte < 0x20) return -1;
		else {
			ascii.value = false;
			at++;
		}
	}
}

function isStructuralKey(bytes: Uint8Array, start: number, end: number): boolean {
	return STRUCTURAL_KEYS.some(
		(key) => key.length === end - start && key.every((byte, index) => bytes[start + index] === byte),
	);
}

/** A growable byte buffer for the line's copy. */
class Bytes {
	data: Uint8Array;
	length = 0;
	constructor(capacity: number) {
		this.data = new Uint8Array(capacity);
	}
	push(source: Uint8Array, start: number, end: number): void {
		const needed = this.length + end - start;
		if (needed > this.data.length) {
			const grown = new Uint8Array(Math.max(needed, this.data.length * 2));
			grown.set(this.data.subarray(0, this.length));
			this.data = grown;
		}
		this.data.set(source.subarray(start, end), this.length);
		this.length = needed;
	}
}

const PLACEHOLDER_BYTES = new Uint8Array(PLACEHOLDER);

/**
 * The line with its long strings replaced by a placeholder, as text, when every string checked out and
 * every non-ASCII string left out is valid UTF-8; `undefined` otherwise.
 */
function shortCopy(bytes: Uint8Array): string | undefined {
	const words = new Uint32Array(bytes.buffer, 0, bytes.buffer.byteLength >>> 2);
	const copy = new Bytes(Math.min(bytes.length, 4096));
	let lastKeyStart = -1;
	let lastKeyEnd = -1;
	let copiedFrom = 0;
	let at = 0;
	for (;;) {
		const open = bytes.indexOf(QUOTE, at);
		if (open < 0) break;
		const ascii = { value: true };
		const close = stringEnd(bytes, words, open + 1, ascii);
		if (close < 0) return undefined;
		let next = close + 1;
		while (next < bytes.length && (bytes[next] === 0x20 || bytes[next] === 0x09 || bytes[next] === 0x0d)) next++;
		const isKey = bytes[next] === COLON;
		if (isKey) {
			lastKeyStart = open + 1;
			lastKeyEnd = close;
		} else if (close - open - 1 > ELIDE_STRING_BYTES && !isStructuralKey(bytes, lastKeyStart, lastKeyEnd)) {
			if (!ascii.value) {
				try {
					strictDecoder.decode(bytes.subarray(open + 1, close));
				} catch {
					return undefined;
				}
			}
			copy.push(bytes, copiedFrom, open);
			copy.push(PLACEHOLDER_BYTES, 0, PLACEHOLDER_BYTES.length);
			copiedFrom = close + 1;
		}
		at = close + 1;
	}
	copy.push(bytes, copiedFrom, bytes.length);
	try {
		return strictDecoder.decode(copy.data.subarray(0, copy.length));
	} catch {
		return undefined;
	}
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * What the tree keeps of a deferred entry: its kind, id, parent and time, and the few fields that the
 * tree, the context rules and the outline read (a message's role, and an assistant's provider and model).
 */
function structureOf(line: Record<string, unknown>): SessionEntry | undefined {
	const { type, id, parentId, timestamp } = line;
	const base = { type, id, parentId, timestamp } as Record<string, unknown>;
	switch (type) {
		case "message": {
			const message = line.message;
			if (!isPlainObject(message) || message.role === "system") return undefined;
			base.message =
				message.role === "assistant"
					? { role: message.role, provider: message.provider, model: message.model }
					: { role: message.role };
			break;
		}
		case "branch_summary":
			base.fromId = line.fromId;
			base.summary = line.summary;
			break;
		case "context_edit":
			base.targetId = line.targetId;
			// Only whether there is a replacement, and whether it removes, is structure.
			base.replacement = isPlainObject(line.replacement) ? {} : line.replacement;
			break;
		case "custom_message":
			base.customType = line.customType;
			base.display = line.display;
			break;
		case "custom":
			base.customType = line.customType;
			break;
		default:
			break;
	}
	return base as unknown as SessionEntry;
}

/**
 * The structure of a line that is worth deferring, or `undefined` when it must be parsed whole: it is
 * short, unusual in any way, not an entry, or of a kind the tree keeps whole.
 */
export function lineStructure(bytes: Uint8Array): SessionEntry | undefined {
	if (bytes.length < DEFER_LINE_BYTES) return undefined;
	const text = shortCopy(bytes);
	if (text === undefined) return undefined;
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		return undefined;
	}
	if (!isPlainObject(value) || typeof value.type !== "string" || KEPT_WHOLE.has(value.type)) return undefined;
	return structureOf(value);
}
