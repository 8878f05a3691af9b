/**
 * Messages that arrive already encoded: the worker client turns each appended message into JSON text on
 * the caller's thread and sends the UTF-8 bytes of a whole burst in one transferred buffer. The engine
 * writes those bytes as they are and makes the message an object only when the session is read, so a
 * burst of appends costs the worker neither a structured-clone copy of every message nor a
 * `JSON.stringify` of it.
 * @module
 */
import type { SessionMessageEntry } from "./entries.ts";

/**
 * Stands in for a message, in its entry, until the session is read (see `SessionCore.materialize`).
 * `role` is known at once, since a new session's file is created with its first assistant message.
 */
export class EncodedMessage {
	readonly role: string | undefined;
	readonly json: Uint8Array;

	constructor(role: string | undefined, json: Uint8Array) {
		this.role = role;
		this.json = json;
	}

	/** Never written as itself: a path that forgot to make it an object fails loudly instead. */
	toJSON(): never {
		throw new Error("internal error: an encoded message was written before it was decoded");
	}
}

/** A message entry's line whose message is JSON bytes already: `prefix`, the bytes, then `}` and a newline. */
export interface EncodedLine {
	prefix: string;
	json: Uint8Array;
}

/** A line to write: text, or a message entry's line around encoded bytes. */
export type PendingLine = string | EncodedLine;

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const LINE_FEED = 0x0a;

/**
 * Throws a `TypeError` unless `json` can be one entry's message on one line: braced like a JSON object's
 * text (as `JSON.stringify` makes it) and without a raw line feed, which would split the file's lines.
 * Nothing more is checked here: that would cost what encoding on the caller's thread saves.
 */
export function assertMessageJson(json: Uint8Array): void {
	const framed = json.length >= 2 && json[0] === OPEN_BRACE && json[json.length - 1] === CLOSE_BRACE;
	if (!framed || json.indexOf(LINE_FEED) !== -1) {
		throw new TypeError("an encoded message must be the JSON text of one object, on one line");
	}
}

/**
 * The line of a message entry whose message is encoded: byte for byte what `JSON.stringify` of the whole
 * entry gives, for an entry made by `SessionTree.appendMessage` (these fields, in this order).
 */
export function encodedLine(entry: SessionMessageEntry & { message: EncodedMessage }): EncodedLine {
	const { id, parentId, timestamp } = entry;
	const parent = parentId === null ? "null" : JSON.stringify(parentId);
	const prefix = `{"type":"message","id":${JSON.stringify(id)},"parentId":${parent},"timestamp":${JSON.stringify(timestamp)},"message":`;
	return { prefix, json: entry.message.json };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Decode a message sent encoded; a `TypeError` if its bytes are not UTF-8 JSON. */
export function decodeMessage(message: EncodedMessage): unknown {
	try {
		return JSON.parse(decoder.decode(message.json));
	} catch (error) {
		throw new TypeError("an encoded message is not valid UTF-8 JSON", { cause: error });
	}
}

/** Characters (or bytes) a line adds to a chunk, to bound chunk sizes. */
export function lineSize(line: PendingLine): number {
	return typeof line === "string" ? line.length : line.prefix.length + line.json.length;
}

/** The UTF-8 bytes of `lines` in order. */
export function encodeLines(lines: readonly PendingLine[]): Uint8Array {
	if (lines.every((line) => typeof line === "string")) return encoder.encode(lines.join(""));
	let capacity = 0;
	for (const line of lines) {
		capacity += typeof line === "string" ? line.length * 3 : line.prefix.length * 3 + line.json.length + 2;
	}
	const bytes = new Uint8Array(capacity);
	let at = 0;
	for (const line of lines) {
		if (typeof line === "string") {
			at += encoder.encodeInto(line, bytes.subarray(at)).written;
			continue;
		}
		at += encoder.encodeInto(line.prefix, bytes.subarray(at)).written;
		bytes.set(line.json, at);
		at += line.json.length;
		bytes[at++] = CLOSE_BRACE;
		bytes[at++] = LINE_FEED;
	}
	return bytes.subarray(0, at);
}
