/**
 * A byte-level check that one line is a JSON object a listing may skip without parsing it: it validates
 * the JSON exactly as `JSON.parse` would accept the line's text, without building anything, and looks at
 * the keys that decide what the entry is.
 * @module
 */
import { isWord, startsWithWord } from "./byte-words.ts";
import { createWasmListingScan } from "./listing-scan-wasm.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** Deeper nesting is left to `JSON.parse` (the caller's fallback), so the stack stays small. */
const MAX_DEPTH = 512;
/** The containers open at each depth (reused: a scan never yields). */
const stack = new Uint8Array(MAX_DEPTH + 1);

const encoder = new TextEncoder();
const KEY_TYPE = encoder.encode("type");
const KEY_MESSAGE = encoder.encode("message");
const KEY_ROLE = encoder.encode("role");
const TRUE = encoder.encode("true");
const FALSE = encoder.encode("false");
const NULL = encoder.encode("null");

function isWhitespace(byte: number): boolean {
	return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

function isDigit(byte: number | undefined): boolean {
	return byte !== undefined && byte >= ZERO && byte <= NINE;
}

function isHex(byte: number | undefined): boolean {
	return byte !== undefined && ((byte >= ZERO && byte <= NINE) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66));
}

/** Set by `stringEnd`: whether the string it skipped had an escape. */
let stringHadEscape = false;

/** The bytes being scanned as 32-bit words (`useWords`): the whole of their buffer, from its start. */
let words: Int32Array<ArrayBufferLike> = new Int32Array(0);
let wordsBuffer: ArrayBufferLike | null = null;
/** Where the bytes being scanned start in their buffer. */
let base = 0;

/** Let `stringEnd` read `bytes` four at a time. */
function useWords(bytes: Uint8Array): void {
	if (bytes.buffer !== wordsBuffer || words.length !== bytes.buffer.byteLength >>> 2) {
		wordsBuffer = bytes.buffer;
		words = new Int32Array(bytes.buffer, 0, bytes.buffer.byteLength >>> 2);
	}
	base = bytes.byteOffset;
}

/**
 * The index just after the string whose body starts at `i`, or -1 when no valid string ends before `end`.
 * Four bytes at a time (one word test says whether any is a quote, a backslash or a control character,
 * and which comes first), since most of a session's bytes are in strings, where tool output has a quote
 * or a backslash every ten bytes or so. Bytes of invalid UTF-8 stand for themselves: they read as U+FFFD.
 * `useWords` must have been called with `bytes`.
 */
function stringEnd(bytes: Uint8Array, i: number, end: number): number {
	stringHadEscape = false;
	// The last place a word can be read from (the view holds whole words only).
	const last = Math.min(base + end, words.length << 2) - 4;
	let at = base + i;
	for (;;) {
		if (at <= last) {
			const w = at >>> 2;
			const shift = (at & 3) << 3;
			// The four bytes from `at`, the first in the low byte (two aligned words joined when `at` is not).
			const x =
				shift === 0
					? (words[w] as number)
					: ((words[w] as number) >>> shift) | ((words[w + 1] as number) << (32 - shift));
			const quote = x ^ 0x22222222;
			const backslash = x ^ 0x5c5c5c5c;
			// The high bit of each byte below 0x20 or equal to 0x22 or 0x5c (and maybe of bytes after the first such).
			const special =
				(((x - 0x20202020) & ~x) | ((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash)) &
				0x80808080;
			if (special === 0) {
				at += 4;
				continue;
			}
			at += (31 - Math.clz32(special & -special)) >>> 3;
		} else {
			if (at >= base + end) return -1;
			const byte = bytes[at - base] as number;
			if (byte > 0x5c || (byte >= 0x20 && byte !== 0x22 && byte !== 0x5c)) {
				at++;
				continue;
			}
		}
		i = at - base;
		const byte = bytes[i] as number;
		if (byte === 0x22) return i + 1;
		if (byte !== 0x5c) return -1; // a control character
		stringHadEscape = true;
		const escaped = i + 1 < end ? bytes[i + 1] : -1;
		if (escaped === 0x75) {
			if (i + 6 > end) return -1;
			for (let k = i + 2; k < i + 6; k++) if (!isHex(bytes[k])) return -1;
			at += 6;
		} else if (
			escaped === QUOTE ||
			escaped === BACKSLASH ||
			escaped === 0x2f ||
			escaped === 0x62 ||
			escaped === 0x66 ||
			escaped === 0x6e ||
			escaped === 0x72 ||
			escaped === 0x74
		) {
			at += 2;
		} else {
			return -1;
		}
	}
}

/** The index just after the number at `i`, or -1. */
function numberEnd(bytes: Uint8Array, i: number, end: number): number {
	if (i < end && bytes[i] === MINUS) i++;
	if (i < end && bytes[i] === ZERO) i++;
	else if (i < end && isDigit(bytes[i])) while (i < end && isDigit(bytes[i])) i++;
	else return -1;
	if (i < end && bytes[i] === DOT) {
		i++;
		if (i >= end || !isDigit(bytes[i])) return -1;
		while (i < end && isDigit(bytes[i])) i++;
	}
	if (i < end && ((bytes[i] as number) | 0x20) === 0x65) {
		i++;
		if (i < end && (bytes[i] === PLUS || bytes[i] === MINUS)) i++;
		if (i >= end || !isDigit(bytes[i])) return -1;
		while (i < end && isDigit(bytes[i])) i++;
	}
	return i;
}

/** The index just after the value at `i` if it is a literal or a number (not a string or container), or -1. */
function scalarEnd(bytes: Uint8Array, i: number, end: number): number {
	const byte = bytes[i];
	if (byte === 0x74) return startsWithWord(bytes, i, end, TRUE) ? i + 4 : -1;
	if (byte === 0x66) return startsWithWord(bytes, i, end, FALSE) ? i + 5 : -1;
	if (byte === 0x6e) return startsWithWord(bytes, i, end, NULL) ? i + 4 : -1;
	return numberEnd(bytes, i, end);
}

/**
 * The same scans compiled to WebAssembly (`src/listing-scan-wasm.ts`), where it can run: they take the
 * tokens of a line several times faster, and a listing validates every line of every session.
 */
const wasmScan = createWasmListingScan();
/** Shorter lines are scanned in JavaScript: copying one into the module costs more than it saves. */
export const WASM_SCAN_MIN_LINE_BYTES = 64;

// Containers on the stack.
const OBJECT = 1;
const ARRAY = 2;
/** The object that is the entry's `message`. */
const MESSAGE_OBJECT = 3;

// What the scan expects next.
const VALUE = 0;
const FIRST_KEY = 1;
const KEY = 2;
const FIRST_ELEMENT = 3;
const AFTER_VALUE = 4;

/**
 * Whether bytes `[start, end)` are one JSON object (as `JSON.parse` reads the line's text: bytes that are
 * not UTF-8 are valid inside strings, where they read as U+FFFD) whose record kind and message role are
 * what their first occurrences say: exactly one `type` key, at most one `message` key, at most one `role`
 * key in the message object, and no escaped key at those levels (an escape could spell `type`).
 * `false` says nothing more: the caller parses the line (invalid JSON, or something to look at closely).
 */
export function isPlainEntryJson(bytes: Uint8Array, start: number, end: number): boolean {
	const answer =
		wasmScan && end - start >= WASM_SCAN_MIN_LINE_BYTES ? wasmScan.isPlainEntryJson(bytes, start, end) : undefined;
	return answer ?? scanPlainEntryJson(bytes, start, end);
}

/** `isPlainEntryJson` in JavaScript. */
export function scanPlainEntryJson(bytes: Uint8Array, start: number, end: number): boolean {
	let depth = 0;
	/** The innermost open container (`stack[depth]`). */
	let container = 0;
	let state = VALUE;
	let types = 0;
	let messages = 0;
	let roles = 0;
	/** The key just read is the entry's `message`. */
	let messageKey = false;
	useWords(bytes);
	let i = start;
	while (i < end && isWhitespace(bytes[i] as number)) i++;
	if (i >= end || bytes[i] !== OPEN_BRACE) return false;
	for (;;) {
		while (i < end && isWhitespace(bytes[i] as number)) i++;
		if (i >= end) return false;
		const byte = bytes[i] as number;
		// Every branch either moves on (`continue`) or closes the innermost container.
		if (state === FIRST_KEY || state === KEY) {
			if (state !== FIRST_KEY || byte !== CLOSE_BRACE) {
				if (byte !== QUOTE) return false;
				const keyStart = i + 1;
				i = stringEnd(bytes, keyStart, end);
				if (i < 0) return false;
				if (depth === 1 || container === MESSAGE_OBJECT) {
					if (stringHadEscape) return false;
					const keyEnd = i - 1;
					if (depth === 1 && isWord(bytes, keyStart, keyEnd, KEY_TYPE)) types++;
					else if (depth === 1 && isWord(bytes, keyStart, keyEnd, KEY_MESSAGE)) {
						messages++;
						messageKey = true;
					} else if (depth === 2 && isWord(bytes, keyStart, keyEnd, KEY_ROLE)) roles++;
				}
				while (i < end && isWhitespace(bytes[i] as number)) i++;
				if (i >= end || bytes[i] !== COLON) return false;
				i++;
				state = VALUE;
				continue;
			}
		} else if (state === AFTER_VALUE) {
			if (byte === COMMA) {
				i++;
				state = container === ARRAY ? VALUE : KEY;
				continue;
			}
			if (byte !== (container === ARRAY ? CLOSE_BRACKET : CLOSE_BRACE)) return false;
		} else if (state === FIRST_ELEMENT && byte === CLOSE_BRACKET) {
			// An empty array.
		} else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
			if (depth >= MAX_DEPTH) return false;
			container = byte === OPEN_BRACKET ? ARRAY : messageKey && depth === 1 ? MESSAGE_OBJECT : OBJECT;
			stack[++depth] = container;
			state = byte === OPEN_BRACKET ? FIRST_ELEMENT : FIRST_KEY;
			messageKey = false;
			i++;
			continue;
		} else {
			i = byte === QUOTE ? stringEnd(bytes, i + 1, end) : scalarEnd(bytes, i, end);
			if (i < 0) return false;
			messageKey = false;
			state = AFTER_VALUE;
			continue;
		}
		i++;
		state = AFTER_VALUE;
		if (--depth === 0) {
			while (i < end && isWhitespace(bytes[i] as number)) i++;
			return i === end && types === 1 && messages <= 1 && roles <= 1;
		}
		container = stack[depth] as number;
	}
}

/** A string value's place in a line: `[start, end)` with its quotes, and whether it has an escape. */
export interface StringSpan {
	start: number;
	end: number;
	escaped: boolean;
}

/**
 * What a listing needs of a user or assistant message entry, read off its bytes (`messageFields`): the
 * spans of the strings that make its text, the entry's `timestamp` and the message's, if it is a number.
 */
export interface MessageFields {
	/** The entry's `timestamp` string. */
	entryTimestamp: StringSpan;
	/** The message's `timestamp` when it is a number: its literal's `[start, end)`; else `null`. */
	timestamp: [number, number] | null;
	/** The content as a string, or the `text` of each of its `text` blocks in order (`null`: a block without one). */
	content: StringSpan | (StringSpan | null)[];
}

// Containers `messageFields` tells apart (beyond `OBJECT` and `ARRAY`).
const CONTENT_ARRAY = 4;
const BLOCK_OBJECT = 5;

// What the value about to be read is.
const OTHER_VALUE = 0;
const ENTRY_TIMESTAMP = 1;
const MESSAGE_VALUE = 2;
const ROLE_VALUE = 3;
const CONTENT_VALUE = 4;
const TIMESTAMP_VALUE = 5;
const BLOCK_TYPE = 6;
const BLOCK_TEXT = 7;
const BLOCK_VALUE = 8;

const KEY_TIMESTAMP = encoder.encode("timestamp");
const KEY_CONTENT = encoder.encode("content");
const KEY_TEXT = encoder.encode("text");
const TEXT = encoder.encode('"text"');

/**
 * The fields of the message entry `[start, end)` that a listing folds, read as `JSON.parse` would read
 * them, validating the whole line as `isPlainEntryJson` does (nothing is built for the rest of it: tool
 * calls, thinking, usage). `null` when the line is not JSON, or anything is unusual (a key that matters
 * said twice or escaped, content that is neither a string nor an array of objects, a text block's text
 * that is not a string, timestamps of another type): the caller parses the line instead.
 */
export function messageFields(bytes: Uint8Array, start: number, end: number): MessageFields | null {
	const answer =
		wasmScan && end - start >= WASM_SCAN_MIN_LINE_BYTES ? wasmScan.messageFields(bytes, start, end) : undefined;
	return answer === undefined ? scanMessageFields(bytes, start, end) : answer;
}

/** `messageFields` in JavaScript. */
export function scanMessageFields(bytes: Uint8Array, start: number, end: number): MessageFields | null {
	let depth = 0;
	let container = 0;
	let state = VALUE;
	let next = OTHER_VALUE;
	const seen = new Uint8Array(BLOCK_VALUE + 1);
	let entryTimestamp: StringSpan | null = null;
	let timestamp: [number, number] | null = null;
	let contentString: StringSpan | null = null;
	let blocks: (StringSpan | null)[] | null = null;
	let blockIsText = false;
	let blockText: StringSpan | null = null;
	useWords(bytes);
	let i = start;
	while (i < end && isWhitespace(bytes[i] as number)) i++;
	if (i >= end || bytes[i] !== OPEN_BRACE) return null;
	for (;;) {
		while (i < end && isWhitespace(bytes[i] as number)) i++;
		if (i >= end) return null;
		const byte = bytes[i] as number;
		if (state === FIRST_KEY || state === KEY) {
			if (state !== FIRST_KEY || byte !== CLOSE_BRACE) {
				if (byte !== QUOTE) return null;
				const keyStart = i + 1;
				i = stringEnd(bytes, keyStart, end);
				if (i < 0) return null;
				next = OTHER_VALUE;
				if (depth === 1 || container === MESSAGE_OBJECT || container === BLOCK_OBJECT) {
					if (stringHadEscape) return null;
					const keyEnd = i - 1;
					if (depth === 1) {
						if (isWord(bytes, keyStart, keyEnd, KEY_TYPE))
							next = BLOCK_VALUE; // counted only
						else if (isWord(bytes, keyStart, keyEnd, KEY_MESSAGE)) next = MESSAGE_VALUE;
						else if (isWord(bytes, keyStart, keyEnd, KEY_TIMESTAMP)) next = ENTRY_TIMESTAMP;
					} else if (container === MESSAGE_OBJECT) {
						if (isWord(bytes, keyStart, keyEnd, KEY_ROLE)) next = ROLE_VALUE;
						else if (isWord(bytes, keyStart, keyEnd, KEY_CONTENT)) next = CONTENT_VALUE;
						else if (isWord(bytes, keyStart, keyEnd, KEY_TIMESTAMP)) next = TIMESTAMP_VALUE;
					} else if (isWord(bytes, keyStart, keyEnd, KEY_TYPE)) next = BLOCK_TYPE;
					else if (isWord(bytes, keyStart, keyEnd, KEY_TEXT)) next = BLOCK_TEXT;
					if (next !== OTHER_VALUE) {
						// The entry's `type` and the blocks' keys are counted per object: see below.
						const slot = depth === 1 && next === BLOCK_VALUE ? 0 : next;
						if (seen[slot] !== 0) return null;
						seen[slot] = 1;
					}
				}
				while (i < end && isWhitespace(bytes[i] as number)) i++;
				if (i >= end || bytes[i] !== COLON) return null;
				i++;
				state = VALUE;
				continue;
			}
		} else if (state === AFTER_VALUE) {
			if (byte === COMMA) {
				i++;
				state = container === ARRAY || container === CONTENT_ARRAY ? VALUE : KEY;
				continue;
			}
			const isArray = container === ARRAY || container === CONTENT_ARRAY;
			if (byte !== (isArray ? CLOSE_BRACKET : CLOSE_BRACE)) return null;
		} else if (state === FIRST_ELEMENT && byte === CLOSE_BRACKET) {
			// An empty array.
		} else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
			if (depth >= MAX_DEPTH) return null;
			if (container === CONTENT_ARRAY) {
				if (byte !== OPEN_BRACE) return null;
				container = BLOCK_OBJECT;
				seen[BLOCK_TYPE] = seen[BLOCK_TEXT] = 0;
				blockIsText = false;
				blockText = null;
			} else if (next === MESSAGE_VALUE) {
				if (byte !== OPEN_BRACE) return null;
				container = MESSAGE_OBJECT;
			} else if (next === CONTENT_VALUE) {
				if (byte !== OPEN_BRACKET) return null;
				container = CONTENT_ARRAY;
				blocks = [];
			} else if (next !== OTHER_VALUE && next !== BLOCK_VALUE) {
				return null; // a timestamp, role, block type or text that is an object or array
			} else container = byte === OPEN_BRACKET ? ARRAY : OBJECT;
			stack[++depth] = container;
			state = byte === OPEN_BRACKET ? FIRST_ELEMENT : FIRST_KEY;
			next = OTHER_VALUE;
			i++;
			continue;
		} else {
			if (container === CONTENT_ARRAY) return null; // a block that is no object
			const valueStart = i;
			i = byte === QUOTE ? stringEnd(bytes, i + 1, end) : scalarEnd(bytes, i, end);
			if (i < 0) return null;
			const span: StringSpan | null = byte === QUOTE ? { start: valueStart, end: i, escaped: stringHadEscape } : null;
			if (next === ENTRY_TIMESTAMP) {
				if (!span) return null;
				entryTimestamp = span;
			} else if (next === MESSAGE_VALUE || next === ROLE_VALUE) {
				if (!span || next === MESSAGE_VALUE) return null;
			} else if (next === CONTENT_VALUE) {
				if (!span) return null;
				contentString = span;
			} else if (next === TIMESTAMP_VALUE) {
				const isNumber = byte === MINUS || isDigit(byte);
				timestamp = isNumber ? [valueStart, i] : null;
				if (!isNumber && !span && byte !== 0x6e) return null; // true or false: parsed instead
			} else if (next === BLOCK_TYPE) {
				blockIsText = span !== null && isWord(bytes, valueStart, i, TEXT);
				if (span?.escaped) return null;
			} else if (next === BLOCK_TEXT) {
				if (!span) return null;
				blockText = span;
			}
			next = OTHER_VALUE;
			state = AFTER_VALUE;
			continue;
		}
		// Close the innermost container.
		i++;
		state = AFTER_VALUE;
		if (container === BLOCK_OBJECT && blockIsText) (blocks as (StringSpan | null)[]).push(blockText);
		if (--depth === 0) {
			while (i < end && isWhitespace(bytes[i] as number)) i++;
			if (i !== end || !entryTimestamp || seen[0] === 0 || seen[ROLE_VALUE] === 0) return null;
			const content = blocks ?? contentString;
			return content ? { entryTimestamp, timestamp, content } : null;
		}
		container = stack[depth] as number;
	}
}
