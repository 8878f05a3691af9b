/**
 * `ls --json` as UTF-8 bytes, exactly `JSON.stringify(sessions, null, 2)`, without decoding the texts.
 *
 * Most of a listing's JSON is the rows' `allMessagesText`, which a warm listing holds as the UTF-8 bytes of
 * its catalog. Decoding them, escaping the decoded text and encoding it again costs three passes over it;
 * here the bytes are escaped as they are, into one growing buffer. In sound UTF-8 every byte below 0x80 is
 * a character of its own, and the characters `JSON.stringify` escapes in a well-formed text (quote,
 * backslash, controls) are all below 0x80: escaping those bytes and copying every other byte escapes the text.
 * @module
 */
import { Buffer, isUtf8 } from "node:buffer";
import type { SessionInfo } from "../../src/index.ts";
import { allMessagesTextUtf8 } from "../../src/listing-summary.ts";

/** What `JSON.stringify` writes for each byte below 0x80 that it escapes (`undefined`: the byte itself). */
const ESCAPES: (Uint8Array | undefined)[] = Array.from({ length: 0x80 }, (_, byte) => {
	const character = String.fromCharCode(byte);
	const json = JSON.stringify(character);
	return json.length > 3 ? Buffer.from(json.slice(1, -1), "latin1") : undefined;
});
/** 1 for a byte `ESCAPES` names, else 0. */
const ESCAPED = Uint8Array.from({ length: 0x100 }, (_, byte) => (ESCAPES[byte] ? 1 : 0));

/** Bytes written one after another into a buffer that doubles when full. */
class ByteSink {
	bytes: Buffer;
	length = 0;
	constructor(capacity: number) {
		this.bytes = Buffer.allocUnsafe(Math.max(capacity, 256));
	}
	private reserve(more: number): void {
		if (this.length + more <= this.bytes.length) return;
		const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + more));
		this.bytes.copy(grown, 0, 0, this.length);
		this.bytes = grown;
	}
	text(text: string): void {
		this.reserve(Buffer.byteLength(text));
		this.length += this.bytes.write(text, this.length);
	}
	/** `JSON.stringify(text)` for `utf8` the sound UTF-8 of `text`. */
	jsonString(utf8: Uint8Array): void {
		// One loop that copies and escapes, byte by byte: views for the runs between escapes cost more.
		this.reserve(utf8.length + 2);
		let out = this.bytes;
		let length = this.length;
		out[length++] = 0x22;
		for (let at = 0; at < utf8.length; at++) {
			const byte = utf8[at] as number;
			if (ESCAPED[byte] === 0) {
				out[length++] = byte;
				continue;
			}
			const escaped = ESCAPES[byte] as Uint8Array;
			// Room for the escape, the bytes after it and the closing quote.
			const needed = length + escaped.length + (utf8.length - at - 1) + 1;
			if (needed > out.length) {
				this.length = length;
				this.reserve(needed - length);
				out = this.bytes;
			}
			for (let k = 0; k < escaped.length; k++) out[length++] = escaped[k] as number;
		}
		out[length++] = 0x22;
		this.length = length;
	}
	/** The bytes written since the last `clear`. */
	written(): Buffer {
		return this.bytes.subarray(0, this.length);
	}
	clear(): void {
		this.length = 0;
	}
}

/** A row's JSON as `JSON.stringify(rows, null, 2)` writes it inside the array (its lines indented once more). */
function rowJson(row: unknown): string {
	// Every line feed of JSON is between values: one in a string is written `\n`.
	return `  ${JSON.stringify(row, null, 2).replaceAll("\n", "\n  ")}`;
}

/** Write one row: its JSON with its text written from bytes where they are at hand. */
function writeRow(sink: ByteSink, info: SessionInfo): void {
	const utf8 = allMessagesTextUtf8(info);
	if (!utf8 || !isUtf8(utf8)) {
		sink.text(rowJson(info));
		return;
	}
	// The row with an empty text (read field by field: reading the text would decode it), then the text's place.
	const row: Record<string, unknown> = {};
	for (const key of Object.keys(info)) row[key] = key === "allMessagesText" ? "" : info[key as keyof SessionInfo];
	const json = rowJson(row);
	// Found once: a quote inside a string value is written `\"`, so `"allMessagesText": ""` is the key's.
	const key = '"allMessagesText": ';
	const found = json.indexOf(`${key}""`);
	if (found < 0) {
		sink.text(rowJson(info));
		return;
	}
	const at = found + key.length;
	sink.text(json.slice(0, at));
	sink.jsonString(utf8);
	sink.text(json.slice(at + 2));
}

/** Bytes the JSON is handed on in: between rows, once at least this many are written. */
const CHUNK_BYTES = 1 << 20;

/**
 * Write `JSON.stringify(sessions, null, 2)` and a line feed as UTF-8, a chunk at a time: `write` is given a
 * view of a buffer that is written again once the promise it returns settles (fresh memory is slow to
 * touch, so one buffer serves every chunk). Chunks end between rows, so never inside a character.
 */
export async function writeSessionsJson(
	sessions: readonly SessionInfo[],
	write: (chunk: Uint8Array) => Promise<void>,
): Promise<void> {
	if (sessions.length === 0) return write(Buffer.from("[]\n"));
	const sink = new ByteSink(2 * CHUNK_BYTES);
	sink.text("[\n");
	for (let index = 0; index < sessions.length; index++) {
		if (index > 0) sink.text(",\n");
		writeRow(sink, sessions[index] as SessionInfo);
		if (sink.length >= CHUNK_BYTES) {
			await write(sink.written());
			sink.clear();
		}
	}
	sink.text("\n]\n");
	await write(sink.written());
}

/** `JSON.stringify(sessions, null, 2)` and a line feed, as UTF-8, whole. */
export async function sessionsJson(sessions: readonly SessionInfo[]): Promise<Buffer> {
	const chunks: Buffer[] = [];
	await writeSessionsJson(sessions, async (chunk) => {
		chunks.push(Buffer.from(chunk));
	});
	return Buffer.concat(chunks);
}
