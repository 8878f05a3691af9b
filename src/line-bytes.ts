/**
 * The bytes of lines to write: encoded text, and message entries whose message is JSON bytes already
 * (the worker sends messages that way, so a burst costs it neither a copy of every message nor a
 * `JSON.stringify` of it). Also the chunking of large rewrites.
 * @module
 */
import { InvalidArgumentError } from "./errors.ts";

/**
 * A message entry's line whose message is JSON bytes already: `{"type":"message"`, these fields, then the
 * bytes, then `}` and a newline: byte for byte what `JSON.stringify` gives for the entry
 * `SessionTree.appendMessage` makes (type, id, parentId, timestamp, then the message).
 */
export interface EncodedLine {
	id: string;
	parentId: string | null;
	timestamp: string;
	/** The message's JSON text, UTF-8. */
	json: Uint8Array;
}

/** A line to write: text, or a message entry's line around encoded bytes. */
export type PendingLine = string | EncodedLine;

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const LINE_FEED = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Throws an `InvalidArgumentError` (a `TypeError`) unless `json` can be one entry's message on one line:
 * braced like a JSON object's text (as `JSON.stringify` makes it) and without a raw line feed, which would
 * split the file's lines.
 * Nothing more is checked here: that would cost what encoding on the caller's thread saves.
 */
export function assertMessageJson(json: Uint8Array): void {
	const framed = json.length >= 2 && json[0] === OPEN_BRACE && json[json.length - 1] === CLOSE_BRACE;
	if (!framed || json.indexOf(LINE_FEED) !== -1) {
		throw new InvalidArgumentError("an encoded message must be the JSON text of one object, on one line");
	}
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Decode a message sent encoded; an `InvalidArgumentError` if its bytes are not UTF-8 JSON. */
export function decodeMessage(json: Uint8Array): unknown {
	try {
		return JSON.parse(decoder.decode(json));
	} catch (error) {
		throw new InvalidArgumentError("an encoded message is not valid UTF-8 JSON", { cause: error });
	}
}

/** Characters (or bytes) a line adds to a chunk, to bound chunk sizes. */
export function lineSize(line: PendingLine): number {
	return typeof line === "string" ? line.length : line.json.length + 100;
}

const FIELD_ID = encoder.encode('{"type":"message","id":');
const FIELD_PARENT_ID = encoder.encode(',"parentId":');
const FIELD_TIMESTAMP = encoder.encode(',"timestamp":');
const FIELD_MESSAGE = encoder.encode(',"message":');
const NULL = encoder.encode("null");
const FIELD_BYTES = FIELD_ID.length + FIELD_PARENT_ID.length + FIELD_TIMESTAMP.length + FIELD_MESSAGE.length;

/**
 * Bytes a message entry's line may take: a character of a field takes 6 at most (escaped as a `\u`
 * sequence; a surrogate pair's 4 bytes of UTF-8 are fewer than its two characters may take).
 */
function encodedLineBytesAtMost({ id, parentId, timestamp, json }: EncodedLine): number {
	const fieldChars = id.length + (parentId?.length ?? 4) + timestamp.length + 6;
	return FIELD_BYTES + 6 * fieldChars + json.length + 2;
}

/**
 * Write `"text"` at `at` if every character is printable ASCII other than a quote or a backslash (so JSON
 * needs no escape); the new end, or -1 if it is not such a text.
 */
function writePlainString(bytes: Uint8Array, at: number, text: string): number {
	bytes[at++] = QUOTE;
	for (let index = 0; index < text.length; index++) {
		const code = text.charCodeAt(index);
		if (code < 0x20 || code > 0x7e || code === QUOTE || code === BACKSLASH) return -1;
		bytes[at++] = code;
	}
	bytes[at++] = QUOTE;
	return at;
}

/** Write the fields of `entry` before its message at `at`, when all are plain (the usual case); the new end, or -1. */
function writePlainPrefix(bytes: Uint8Array, at: number, { id, parentId, timestamp }: EncodedLine): number {
	bytes.set(FIELD_ID, at);
	at = writePlainString(bytes, at + FIELD_ID.length, id);
	if (at < 0) return -1;
	bytes.set(FIELD_PARENT_ID, at);
	at += FIELD_PARENT_ID.length;
	if (parentId === null) {
		bytes.set(NULL, at);
		at += NULL.length;
	} else {
		at = writePlainString(bytes, at, parentId);
		if (at < 0) return -1;
	}
	bytes.set(FIELD_TIMESTAMP, at);
	at = writePlainString(bytes, at + FIELD_TIMESTAMP.length, timestamp);
	if (at < 0) return -1;
	bytes.set(FIELD_MESSAGE, at);
	return at + FIELD_MESSAGE.length;
}

/** The fields of `entry` before its message, as `JSON.stringify` writes them, whatever they hold. */
function prefixText({ id, parentId, timestamp }: EncodedLine): string {
	const parent = parentId === null ? "null" : JSON.stringify(parentId);
	return `{"type":"message","id":${JSON.stringify(id)},"parentId":${parent},"timestamp":${JSON.stringify(timestamp)},"message":`;
}

/** Write a message entry's line at `at` (room for `encodedLineBytesAtMost`); the new end. */
function writeEncodedLine(bytes: Uint8Array, at: number, line: EncodedLine): number {
	let end = writePlainPrefix(bytes, at, line);
	if (end < 0) end = at + encoder.encodeInto(prefixText(line), bytes.subarray(at)).written;
	bytes.set(line.json, end);
	end += line.json.length;
	bytes[end++] = CLOSE_BRACE;
	bytes[end++] = LINE_FEED;
	return end;
}

/** The UTF-8 bytes of `lines` in order. */
export function encodeLines(lines: readonly PendingLine[]): Uint8Array {
	if (lines.every((line) => typeof line === "string")) return encoder.encode(lines.join(""));
	let capacity = 0;
	for (const line of lines) capacity += typeof line === "string" ? line.length * 3 : encodedLineBytesAtMost(line);
	const bytes = new Uint8Array(capacity);
	let at = 0;
	for (const line of lines) {
		if (typeof line === "string") at += encoder.encodeInto(line, bytes.subarray(at)).written;
		else at = writeEncodedLine(bytes, at, line);
	}
	return bytes.subarray(0, at);
}

/**
 * Rewrites are handed to storage in chunks of about this many characters: small enough that each chunk's
 * joined text (two bytes a character at most) and its bytes are young objects and small buffers, whose
 * memory the runtime hands out again, not fresh pages (a fork of 100 MB wrote its file in ~0.4 s so, in
 * ~0.8 s with chunks of 4 Mi characters; chunks of 64 Ki characters, past V8's largest young string, were
 * slower still).
 */
const REWRITE_CHUNK_CHARS = 16 << 10;

/**
 * Encode lines into chunks of bounded size, each as it is asked for: a rewrite of a large file holds one
 * chunk at a time, not the whole file encoded.
 */
export function* encodeChunks(lines: Iterable<PendingLine>): Generator<Uint8Array, void, undefined> {
	let pending: PendingLine[] = [];
	let pendingChars = 0;
	for (const line of lines) {
		pending.push(line);
		pendingChars += lineSize(line);
		if (pendingChars >= REWRITE_CHUNK_CHARS) {
			yield encodeLines(pending);
			pending = [];
			pendingChars = 0;
		}
	}
	if (pending.length > 0) yield encodeLines(pending);
}
