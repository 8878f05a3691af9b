/**
 * Reading a session file for a listing: ranged reads, lines split on bytes, and only the lines that can
 * change the listing parsed (`lineKind`). It starts at any line boundary with the state folded so far,
 * which is how a grown file is read from where its catalog row stopped. Lines that reads skip for a limit
 * (longer than `maxLineBytes`, nested deeper than `MAX_NESTING_DEPTH`) are skipped and noted; a line over
 * the length limit is never held, so no line takes more memory than the limit.
 * @module
 */

import { indexOfByte } from "./byte-search.ts";
import { DEFAULT_MAX_LINE_BYTES } from "./jsonl.ts";
import { hashText } from "./listing-hash.ts";
import { type MessageFields, messageFields, type StringSpan } from "./listing-json-scan.ts";
import { ASSISTANT_LINE, COUNT_LINE, lineKind, SKIP_LINE, USER_LINE } from "./listing-line-kind.ts";
import {
	foldTextPieces,
	foldValue,
	isTooDeep,
	type ListingState,
	noteSkipped,
	type TextPiece,
	trimTextBytes,
} from "./listing-summary.ts";
import { io, type Task } from "./storage.ts";
import { decodeUtf8 } from "./utf8-decode.ts";

/**
 * Bytes read per storage call. A listing reads eight files at once, each into two buffers of this size: at
 * 1 MiB they held 16 MiB of the peak RSS (a cold listing of 1,000 sessions peaked at 135–137 MB, at 256 KiB
 * at 123–131 MB, in the same time).
 */
export const LISTING_CHUNK_BYTES: number = 256 << 10;
/** Bytes before a row's end that are compared to tell that a file only grew since (fewer at its start). */
export const TAIL_CHECK_BYTES = 4096;

const LF = 0x0a;
const CR = 0x0d;

/** What a scan found. */
export interface ListingScan {
	/** The fold of every complete line; the last one ends at `consumed` (just after its line feed). */
	state: ListingState;
	consumed: number;
	/** `state` with the file's unterminated last line folded in too (`state` itself when there is none). */
	final: ListingState;
	/** Every byte up to the size asked for was read, or the file is no session (the rest cannot matter). */
	complete: boolean;
	/** `hashText` of the `TAIL_CHECK_BYTES` bytes (fewer at the start) before `consumed`. */
	tailHash: string;
}

/** A line's JSON value, or `undefined` when it is not JSON. Bad UTF-8 reads as U+FFFD, as a full read does. */
function parseBytes(bytes: Uint8Array, start: number, end: number): unknown {
	try {
		return JSON.parse(decodeUtf8(bytes, start, end));
	} catch {
		return undefined;
	}
}

/** A string value of a line, as `JSON.parse` of the line gives it. */
function stringOf(bytes: Uint8Array, span: StringSpan): string {
	const text = span.escaped ? decodeUtf8(bytes, span.start, span.end) : decodeUtf8(bytes, span.start + 1, span.end - 1);
	return span.escaped ? (JSON.parse(text) as string) : text;
}

/** Fold a user or assistant message from its fields, as `foldRecord` folds the parsed line. */
function foldFields(
	state: ListingState,
	bytes: Uint8Array,
	fields: MessageFields,
	role: "user" | "assistant",
	limit?: number,
) {
	state.messageCount++;
	const { timestamp, content } = fields;
	const activity = timestamp
		? Number(decodeUtf8(bytes, timestamp[0], timestamp[1]))
		: Date.parse(stringOf(bytes, fields.entryTimestamp));
	const spans = Array.isArray(content) ? content : [content];
	const pieces: TextPiece[] = spans.map((span) =>
		span === null ? "" : span.escaped ? stringOf(bytes, span) : [span.start + 1, span.end - 1],
	);
	foldTextPieces(state, role, activity, bytes, pieces, limit);
}

/**
 * Fold one line (without its line feed), as the line splitter of a full read would give it. `at`: the
 * file offset of its first byte.
 */
function takeLine(state: ListingState, bytes: Uint8Array, start: number, end: number, at: number, limit?: number) {
	state.lines++;
	const lineFrom = start; // the line's bytes, a BOM included, are counted from here
	if (at === 0 && end - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf) {
		start += 3; // a BOM
	}
	if (end > start && bytes[end - 1] === CR) end--;
	if (start === end || state.phase === "rejected") return;
	if (state.phase === "session") {
		const kind = lineKind(bytes, start, end);
		if (kind === SKIP_LINE) return;
		if (kind === COUNT_LINE) {
			state.messageCount++;
			return;
		}
		if (kind === USER_LINE || kind === ASSISTANT_LINE) {
			const fields = messageFields(bytes, start, end);
			if (fields) return foldFields(state, bytes, fields, kind === USER_LINE ? "user" : "assistant", limit);
		}
	}
	const value = parseBytes(bytes, start, end);
	// As reads: no copy of such a value could be made, sent to a worker or written as JSON.
	if (isTooDeep(value, end - start)) {
		noteSkipped(state, { reason: "too-deep", line: state.lines, byteOffset: at, bytes: end - lineFrom });
		return;
	}
	foldValue(state, value, limit);
}

/** Note a line over the length limit (its bytes without its line end: `content`), as reads skip it. */
function skipLongLine(state: ListingState, at: number, content: number) {
	state.lines++;
	noteSkipped(state, { reason: "too-long", line: state.lines, byteOffset: at, bytes: content });
}

/** The parts, joined (`length` bytes in all). */
export function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
	const bytes = new Uint8Array(length);
	let at = 0;
	for (const part of parts) {
		bytes.set(part, at);
		at += part.length;
	}
	return bytes;
}

/**
 * The last (at most) `count` bytes of `before` followed by `chunk[0, end)`, as a new array: what a scan keeps
 * of what it read for the tail hash, since the chunk's buffer is reused for the next read.
 */
function lastBytes(before: Uint8Array, chunk: Uint8Array, end: number, count: number): Uint8Array {
	const fromChunk = Math.min(end, count);
	const fromBefore = Math.min(before.length, count - fromChunk);
	const bytes = new Uint8Array(fromBefore + fromChunk);
	bytes.set(before.subarray(before.length - fromBefore));
	bytes.set(chunk.subarray(end - fromChunk, end), fromBefore);
	return bytes;
}

/**
 * Read `path` from `offset` (a line boundary; 0 for the whole file) up to `size`, folding into `state`
 * (changed in place). `offsetHash` is the tail hash at `offset`, when the caller knows it. Without
 * `withTailHash` (nothing will be kept of the scan) the tail hash is not computed: it is "". A line of
 * more than `maxLineBytes` bytes (a CR before its line feed not counted, as reads count) is skipped
 * and noted; once a line is past the limit its bytes are no longer kept.
 */
export function* scanListing(
	path: string,
	size: number,
	state: ListingState,
	offset: number,
	offsetHash: string | undefined,
	textLimit: number | undefined,
	signal?: AbortSignal,
	withTailHash = true,
	maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
): Task<ListingScan> {
	let pending: Uint8Array[] = [];
	/** Bytes of the line being read so far; `pending` holds them all unless the line is `over` the limit. */
	let lineLength = 0;
	let over = false;
	/** The last byte of the line so far (a CR there may be the first half of a CRLF). */
	let lastByte = -1;
	/** Where the line being read starts. */
	let lineStart = offset;
	let position = offset;
	// For the tail hash: the last bytes read before the chunk at hand (up to TAIL_CHECK_BYTES), and the ones
	// before `lineStart` once a line has ended (copies: the chunk's buffer serves the next read).
	let recent: Uint8Array = new Uint8Array(0);
	let tail: Uint8Array | undefined;
	while (position < size && state.phase !== "rejected") {
		signal?.throwIfAborted();
		// The chunk is this task's only until its next read: nothing of it is kept but copies.
		const chunk = yield* io("readReusing", path, position, Math.min(position + LISTING_CHUNK_BYTES, size));
		if (chunk.length === 0) break;
		let start = 0;
		for (let i = indexOfByte(chunk, LF); i !== -1; i = indexOfByte(chunk, LF, start)) {
			const length = lineLength + i - start;
			const last = i > start ? (chunk[i - 1] as number) : lastByte;
			const content = length - (last === CR ? 1 : 0);
			if (over || content > maxLineBytes) {
				skipLongLine(state, lineStart, content);
			} else if (lineLength > 0) {
				pending.push(chunk.subarray(start, i));
				const line = concat(pending, length);
				takeLine(state, line, 0, line.length, lineStart, textLimit);
			} else {
				takeLine(state, chunk, start, i, lineStart, textLimit);
			}
			pending = [];
			lineLength = 0;
			over = false;
			lastByte = -1;
			lineStart = position + i + 1;
			start = i + 1;
		}
		if (start < chunk.length) {
			lineLength += chunk.length - start;
			lastByte = chunk[chunk.length - 1] as number;
			// One byte over may still be the CR of a CRLF; past that the line is skipped, and not kept.
			if (!over && lineLength > maxLineBytes + 1) {
				over = true;
				pending = [];
			}
			if (!over) pending.push(chunk.slice(start)); // a copy: the chunk's buffer is reused
		}
		// A line ended in this chunk (`lineStart` moved into it): the bytes before it, as far as this scan read them.
		if (start > 0) tail = lastBytes(recent, chunk, start, TAIL_CHECK_BYTES);
		recent = lastBytes(recent, chunk, chunk.length, TAIL_CHECK_BYTES);
		position += chunk.length;
	}
	trimTextBytes(state);
	let final = state;
	if (lineLength > 0 && position >= size && state.phase !== "rejected") {
		final = { ...state };
		const content = lineLength - (lastByte === CR ? 1 : 0);
		if (over || content > maxLineBytes) skipLongLine(final, lineStart, content);
		else takeLine(final, concat(pending, lineLength), 0, lineLength, lineStart, textLimit);
	}
	const checkStart = Math.max(0, lineStart - TAIL_CHECK_BYTES);
	let tailHash = lineStart === offset ? offsetHash : withTailHash ? undefined : "";
	if (tailHash === undefined) {
		const held =
			tail && tail.length >= lineStart - checkStart ? tail.subarray(tail.length - (lineStart - checkStart)) : undefined;
		tailHash = hashText(held ?? (yield* io("readRange", path, checkStart, lineStart)));
	}
	return {
		state,
		consumed: lineStart,
		final,
		complete: position >= size || state.phase === "rejected",
		tailHash,
	};
}
