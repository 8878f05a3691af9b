/**
 * `ls --json` as UTF-8 bytes, exactly `JSON.stringify(sessions, null, 2)`, without decoding the texts.
 *
 * Most of a listing's JSON is the rows' `allMessagesText`, which a warm listing holds as the UTF-8 bytes of
 * its catalog. Decoding them, escaping the decoded text and encoding it again costs three passes over it;
 * here the bytes are escaped as they are. In sound UTF-8 every byte below 0x80 is a character of its own, so
 * escaping the bytes read as Latin-1 (one character each) escapes exactly the characters `JSON.stringify`
 * escapes in the decoded text (quote, backslash, controls), and writing the result back as Latin-1 gives
 * the other bytes back unchanged.
 * @module
 */
import { Buffer, isUtf8 } from "node:buffer";
import type { SessionInfo } from "../../src/index.ts";
import { allMessagesTextUtf8 } from "../../src/listing-summary.ts";

/** A row's JSON as `JSON.stringify(rows, null, 2)` writes it inside the array (its lines indented once more). */
function rowJson(row: unknown): string {
	// Every line feed of JSON is between values: one in a string is written `\n`.
	return `  ${JSON.stringify(row, null, 2).replaceAll("\n", "\n  ")}`;
}

/** `JSON.stringify(text)` as UTF-8, for `utf8` the sound UTF-8 of `text`. */
function jsonStringOfUtf8(utf8: Uint8Array): Buffer {
	const latin1 = Buffer.from(utf8.buffer, utf8.byteOffset, utf8.byteLength).toString("latin1");
	return Buffer.from(JSON.stringify(latin1), "latin1");
}

/** The pieces of one row: its JSON with its text written from bytes where they are at hand. */
function rowPieces(info: SessionInfo): Buffer[] {
	const utf8 = allMessagesTextUtf8(info);
	if (!utf8 || !isUtf8(utf8)) return [Buffer.from(rowJson(info))];
	// The row with an empty text (read field by field: reading the text would decode it), then the text's place.
	const row: Record<string, unknown> = {};
	for (const key of Object.keys(info)) row[key] = key === "allMessagesText" ? "" : info[key as keyof SessionInfo];
	const json = rowJson(row);
	// Found once: a quote inside a string value is written `\"`, so `"allMessagesText": ""` is the key's.
	const key = '"allMessagesText": ';
	const found = json.indexOf(`${key}""`);
	if (found < 0) return [Buffer.from(rowJson(info))];
	const at = found + key.length;
	return [Buffer.from(json.slice(0, at)), jsonStringOfUtf8(utf8), Buffer.from(json.slice(at + 2))];
}

/** `JSON.stringify(sessions, null, 2)` and a line feed, as UTF-8. */
export function sessionsJson(sessions: readonly SessionInfo[]): Buffer {
	if (sessions.length === 0) return Buffer.from("[]\n");
	const comma = Buffer.from(",\n");
	const pieces: Buffer[] = [Buffer.from("[\n")];
	sessions.forEach((info, index) => {
		if (index > 0) pieces.push(comma);
		// Each row's pieces made bytes at once: their strings die young, which the collector finds cheap.
		pieces.push(...rowPieces(info));
	});
	pieces.push(Buffer.from("\n]\n"));
	return Buffer.concat(pieces);
}
