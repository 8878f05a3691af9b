/**
 * Which lines of a session a listing must parse, decided from their first bytes. pi writes an entry's
 * `type` first and a message entry's `message` last, with the message's `role` first in it:
 * `{"type":"message","id":"…","parentId":…,"timestamp":"…","message":{"role":"toolResult",…`. Only user and
 * assistant messages (text, activity) and `session_info` (the name) matter beyond their count: user and
 * assistant messages are read off their bytes (`messageFields`), every other line is validated
 * (`isPlainEntryJson`) instead of parsed. Anything unusual is parsed.
 * @module
 */
import { isWord, startsWithWord } from "./byte-words.ts";
import { isPlainEntryJson } from "./listing-json-scan.ts";

/** How a listing reads one line after the header. */
export type LineKind =
	| typeof PARSE_LINE
	| typeof COUNT_LINE
	| typeof SKIP_LINE
	| typeof USER_LINE
	| typeof ASSISTANT_LINE;
/** Parse it: a message that may carry text, a `session_info`, or anything that does not look like pi's. */
export const PARSE_LINE = 0;
/** A message entry whose role is neither user nor assistant: it only counts. */
export const COUNT_LINE = 1;
/** An entry of another kind: it does not change the listing. */
export const SKIP_LINE = 2;
/** A user message in pi's shape, not validated yet: its fields may be read off its bytes (`messageFields`), else it is parsed. */
export const USER_LINE = 3;
/** An assistant message, as `USER_LINE`. */
export const ASSISTANT_LINE = 4;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const encoder = new TextEncoder();
const TYPE_PREFIX = encoder.encode('{"type":"');
const ROLE_PREFIX = encoder.encode('{"role":"');
const NULL = encoder.encode("null");
const MESSAGE = encoder.encode("message");
const SESSION_INFO = encoder.encode("session_info");
const USER = encoder.encode("user");
const ASSISTANT = encoder.encode("assistant");

/** Scalar fields a message entry may have before its message (pi writes `id`, `parentId`, `timestamp`). */
const MAX_FIELDS_BEFORE_MESSAGE = 8;

/** The index of the closing quote of a string whose body starts at `i`, if it has no escape or control character; else -1. */
function plainStringClose(bytes: Uint8Array, i: number, end: number): number {
	for (; i < end; i++) {
		const byte = bytes[i] as number;
		if (byte === QUOTE) return i;
		if (byte === BACKSLASH || byte < 0x20) return -1;
	}
	return -1;
}

/** The role of a message entry, as `[start, end)` of its text, read over pi's fields before the message; null if it is not in pi's shape. */
function roleOf(bytes: Uint8Array, i: number, end: number): [number, number] | null {
	for (let field = 0; field < MAX_FIELDS_BEFORE_MESSAGE; field++) {
		if (i + 1 >= end || bytes[i] !== 0x2c || bytes[i + 1] !== QUOTE) return null;
		const keyStart = i + 2;
		const keyEnd = plainStringClose(bytes, keyStart, end);
		if (keyEnd < 0 || keyEnd + 1 >= end || bytes[keyEnd + 1] !== 0x3a) return null;
		i = keyEnd + 2;
		if (isWord(bytes, keyStart, keyEnd, MESSAGE)) {
			if (!startsWithWord(bytes, i, end, ROLE_PREFIX)) return null;
			const roleStart = i + ROLE_PREFIX.length;
			const roleEnd = plainStringClose(bytes, roleStart, end);
			return roleEnd < 0 ? null : [roleStart, roleEnd];
		}
		if (startsWithWord(bytes, i, end, NULL)) i += NULL.length;
		else if (i < end && bytes[i] === QUOTE) {
			const close = plainStringClose(bytes, i + 1, end);
			if (close < 0) return null;
			i = close + 1;
		} else return null;
	}
	return null;
}

/** How to read the entry line `[start, end)` (without its line end) of a session whose header has been read. */
export function lineKind(bytes: Uint8Array, start: number, end: number): LineKind {
	if (!startsWithWord(bytes, start, end, TYPE_PREFIX)) return PARSE_LINE;
	const typeStart = start + TYPE_PREFIX.length;
	const typeEnd = plainStringClose(bytes, typeStart, end);
	if (typeEnd < 0) return PARSE_LINE;
	let kind: LineKind;
	if (isWord(bytes, typeStart, typeEnd, MESSAGE)) {
		const role = roleOf(bytes, typeEnd + 1, end);
		if (!role) return PARSE_LINE;
		const [roleStart, roleEnd] = role;
		if (isWord(bytes, roleStart, roleEnd, USER)) return USER_LINE;
		if (isWord(bytes, roleStart, roleEnd, ASSISTANT)) return ASSISTANT_LINE;
		kind = COUNT_LINE;
	} else if (isWord(bytes, typeStart, typeEnd, SESSION_INFO)) {
		return PARSE_LINE;
	} else {
		kind = SKIP_LINE;
	}
	// The first bytes name the kind only if the line is JSON and says it once (a later `type` would win).
	return isPlainEntryJson(bytes, start, end) ? kind : PARSE_LINE;
}
