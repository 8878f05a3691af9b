/**
 * The JSONL line codec: encoding records as pi writes them, splitting byte streams into lines, and
 * parsing lines into records with a diagnostic for every line that had to be skipped.
 * @module
 */

import { indexOfByte } from "./byte-search.ts";
import type { FileEntry } from "./entries.ts";
import { SessionFormatError } from "./errors.ts";

export { SessionFormatError };

/**
 * Why a line was skipped or flagged. `invalid-utf8` flags a line that was kept: its bytes were not UTF-8,
 * and it was read with U+FFFD in place of each bad sequence (as pi does); every other reason skips the line.
 */
export type DiagnosticReason =
	| "invalid-json"
	| "invalid-utf8"
	| "not-an-object"
	| "missing-type"
	| "torn-last-line"
	| "missing-id"
	| "duplicate-id"
	| "self-parent"
	| "missing-parent"
	| "forward-parent"
	| "too-deep"
	| "too-long";

/** One problem found while reading a session, located so that a person can find it. */
export interface Diagnostic {
	reason: DiagnosticReason;
	/** 1-based line number in the file. */
	line: number;
	/** Byte offset of the line's first byte in the file. */
	byteOffset: number;
	/** The start of the offending line, for humans. */
	excerpt: string;
	/** A sentence saying what happened and what was done about it. */
	message: string;
}

const EXCERPT_LENGTH = 80;

/**
 * Lines nested deeper than this (brackets, the entry's own braces counting as one level) are skipped on
 * read (`too-deep`) and refused on append: `JSON.parse` reads any depth, but `JSON.stringify`,
 * `structuredClone` and a worker's messages recurse, and overflow the stack a little past 3,200 levels on
 * a V8 main thread (Node, Chromium; about 13,000 in a Node worker). Real entries nest a few dozen levels.
 */
export const MAX_NESTING_DEPTH = 1000;

/**
 * The longest line read by default, in bytes: V8's longest string (2^29 - 24 UTF-16 units). A line of at
 * most this many bytes always decodes; a longer one cannot, and is skipped on read (`too-long`).
 */
export const DEFAULT_MAX_LINE_BYTES: number = 2 ** 29 - 24;

/** Limits of what one line may be (see `ReadOptions.maxLineBytes`). */
export interface LineLimits {
	/** Lines of more bytes (terminator excluded) are skipped with a `too-long` diagnostic; default `DEFAULT_MAX_LINE_BYTES`. */
	maxLineBytes?: number;
}

/**
 * Whether a parsed JSON value nests deeper than `limit` levels (the value itself being level 1). Walks
 * without recursion, so any depth is safe to ask about; only objects and arrays are visited.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
	if (typeof value !== "object" || value === null) return false;
	const values: object[] = [value];
	const depths: number[] = [1];
	while (values.length > 0) {
		const current = values.pop() as object;
		const depth = depths.pop() as number;
		if (depth > limit) return true;
		if (Array.isArray(current)) {
			for (const item of current) {
				if (typeof item === "object" && item !== null) {
					values.push(item);
					depths.push(depth + 1);
				}
			}
		} else {
			for (const key in current) {
				const item = (current as Record<string, unknown>)[key];
				if (typeof item === "object" && item !== null) {
					values.push(item);
					depths.push(depth + 1);
				}
			}
		}
	}
	return false;
}

/**
 * Whether JSON text as bytes nests deeper than `limit` levels: brackets counted outside strings, strings
 * skipped from quote to unescaped quote. Only well-formed JSON is meant; anything else gives some answer.
 */
export function bytesNestDeeperThan(bytes: Uint8Array, limit: number): boolean {
	if (bytes.length < 2 * (limit + 1)) return false; // each level takes two brackets
	let depth = 0;
	for (let at = 0; at < bytes.length; at++) {
		const byte = bytes[at];
		if (byte === 0x22) {
			for (at++; at < bytes.length && bytes[at] !== 0x22; at++) if (bytes[at] === 0x5c) at++;
		} else if (byte === 0x7b || byte === 0x5b) {
			if (++depth > limit) return true;
		} else if (byte === 0x7d || byte === 0x5d) depth--;
	}
	return false;
}

/** The first characters of a line, for diagnostics. */
export function excerptOf(text: string): string {
	return text.length > EXCERPT_LENGTH ? `${text.slice(0, EXCERPT_LENGTH)}…` : text;
}

/**
 * Encode one record as one JSONL line, exactly as pi does: `JSON.stringify` and a newline.
 * Field order is the object's own, so records built by this package follow pi's order per kind.
 * @example
 * encodeEntry({ type: "label", id: "a1b2c3d4", parentId: null, timestamp: "2025-01-01T00:00:00.000Z", targetId: "b", label: "x" });
 */
export function encodeEntry(entry: FileEntry): string {
	return `${JSON.stringify(entry)}\n`;
}

/** One line of a byte stream, decoded, without its terminator. */
export interface Line {
	text: string;
	/** 1-based line number. */
	line: number;
	/** Byte offset of the line's first byte. */
	byteOffset: number;
	/** Bytes of the line including its terminator. */
	byteLength: number;
	/** False only for a last line that had no `\n` (a torn append, or a file written without one). */
	terminated: boolean;
	/** False when the bytes were not valid UTF-8; `text` then holds replacement characters. */
	validUtf8: boolean;
	/** True for a line longer than the reader's limit: `text` is only its start (see `RawLine.oversized`). */
	oversized?: boolean;
}

const LF = 0x0a;
const CR = 0x0d;
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** One line of a byte stream, not decoded: its bytes without the terminator (nor a CR before it, nor a BOM). */
export interface RawLine {
	/** Valid until the next chunk is pushed: a view of the caller's chunk where possible. */
	bytes: Uint8Array;
	/** 1-based line number. */
	line: number;
	/** Byte offset of the line's first byte. */
	byteOffset: number;
	/** Bytes of the line including its terminator. */
	byteLength: number;
	/** False only for a last line that had no `\n`. */
	terminated: boolean;
	/**
	 * True for a line longer than the splitter's `maxLineBytes`: `bytes` then holds only its first bytes
	 * (enough for an excerpt), the rest was never kept.
	 */
	oversized?: boolean;
}

/** Bytes kept of an oversized line: enough for its excerpt (`excerptOfBytes`). */
const OVERSIZED_HEAD_BYTES = 4 * 80 + 4;

/**
 * Splits byte chunks into raw lines. Splitting happens on bytes (a `\n` byte never occurs inside a
 * multi-byte UTF-8 sequence), so nothing is decoded here and no string of the whole input is ever built.
 * Accepts CRLF and strips a leading BOM. A line longer than `maxLineBytes` (a CR before its line feed
 * counted) is not kept: only its first bytes are, and it comes out `oversized`, so that no line of any
 * length takes more memory than the limit.
 */
export class RawLineSplitter {
	#pending: Uint8Array[] = [];
	/** Bytes held in `#pending`. */
	#pendingLength = 0;
	/** Bytes of the current line so far (more than are held, once it is oversized). */
	#lineLength = 0;
	/** The last byte of the current line so far (a CR before the line feed is not part of the line). */
	#lastByte = -1;
	#oversized = false;
	#offset = 0;
	#line = 0;
	readonly #maxLineBytes: number;

	constructor(limits: LineLimits = {}) {
		this.#maxLineBytes = limits.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
	}

	/** Feed a chunk; returns the lines it completed. */
	*push(chunk: Uint8Array): Generator<RawLine> {
		let start = 0;
		for (let i = indexOfByte(chunk, LF); i !== -1; i = indexOfByte(chunk, LF, start)) {
			yield this.#emit(chunk.subarray(start, i), true);
			start = i + 1;
		}
		if (start < chunk.length) this.#keep(chunk.subarray(start));
	}

	/** Signal the end of input; returns the last line if it had no terminator. */
	*end(): Generator<RawLine> {
		if (this.#lineLength > 0) yield this.#emit(new Uint8Array(0), false);
	}

	/** Hold part of a line that goes on in the next chunk: all of it, or only the head of an oversized line. */
	#keep(part: Uint8Array): void {
		this.#lineLength += part.length;
		this.#lastByte = part[part.length - 1] as number;
		// One byte over is allowed until the line ends: it may be the CR of a CRLF.
		if (!this.#oversized && this.#lineLength > this.#maxLineBytes + 1) this.#becomeOversized();
		if (!this.#oversized) {
			// Copy: callers may reuse their chunk buffers.
			this.#pending.push(part.slice());
			this.#pendingLength += part.length;
		} else if (this.#pendingLength < OVERSIZED_HEAD_BYTES) {
			const piece = part.slice(0, OVERSIZED_HEAD_BYTES - this.#pendingLength);
			this.#pending.push(piece);
			this.#pendingLength += piece.length;
		}
	}

	/** Drop what is held of the current line but its head. */
	#becomeOversized(): void {
		this.#oversized = true;
		const head = this.#join(new Uint8Array(0)).subarray(0, OVERSIZED_HEAD_BYTES);
		this.#pending = head.length > 0 ? [head.slice()] : [];
		this.#pendingLength = head.length;
	}

	/** What is held of the current line, then `tail`, as one array. */
	#join(tail: Uint8Array): Uint8Array {
		if (this.#pendingLength === 0) return tail;
		const bytes = new Uint8Array(this.#pendingLength + tail.length);
		let at = 0;
		for (const part of this.#pending) {
			bytes.set(part, at);
			at += part.length;
		}
		bytes.set(tail, at);
		return bytes;
	}

	/** The line that ends with `tail` (before its line feed, if `terminated`). */
	#emit(tail: Uint8Array, terminated: boolean): RawLine {
		const total = this.#lineLength + tail.length;
		const lastByte = tail.length > 0 ? tail[tail.length - 1] : this.#lastByte;
		const oversized = this.#oversized || total - (lastByte === CR ? 1 : 0) > this.#maxLineBytes;
		const raw = oversized
			? this.#join(tail.subarray(0, Math.max(0, OVERSIZED_HEAD_BYTES - this.#pendingLength)))
			: this.#join(tail);
		this.#pending = [];
		this.#pendingLength = 0;
		this.#lineLength = 0;
		this.#lastByte = -1;
		this.#oversized = false;
		const byteOffset = this.#offset;
		const byteLength = total + (terminated ? 1 : 0);
		this.#offset += byteLength;
		this.#line++;
		const line = this.#line;
		if (oversized)
			return { bytes: raw.subarray(0, OVERSIZED_HEAD_BYTES), line, byteOffset, byteLength, terminated, oversized };
		return { bytes: lineContent(raw, line === 1), line, byteOffset, byteLength, terminated };
	}
}

/** A line's bytes without a trailing CR, and without a BOM when it is the first line. */
export function lineContent(raw: Uint8Array, first: boolean): Uint8Array {
	let bytes = raw;
	if (first && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
	if (bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, bytes.length - 1);
	return bytes;
}

/** Decode a raw line: strictly, or (its bytes not being UTF-8) with U+FFFD in place of each bad sequence. */
export function decodeLine(raw: RawLine): Line {
	let text: string;
	let validUtf8 = true;
	try {
		text = strictDecoder.decode(raw.bytes);
	} catch {
		text = lenientDecoder.decode(raw.bytes);
		validUtf8 = false;
	}
	const { line, byteOffset, byteLength, terminated } = raw;
	if (raw.oversized) return { text, line, byteOffset, byteLength, terminated, validUtf8, oversized: true };
	return { text, line, byteOffset, byteLength, terminated, validUtf8 };
}

/**
 * The excerpt of a line from its bytes: the same text as `excerptOf` of the decoded line, but a string of
 * its own (a slice of the line's text would keep the whole text alive for as long as the excerpt lives).
 */
export function excerptOfBytes(bytes: Uint8Array): string {
	// 80 characters take at most 320 bytes; one more byte tells whether there is more.
	return excerptOf(lenientDecoder.decode(bytes.subarray(0, EXCERPT_LENGTH * 4 + 4)));
}

/**
 * Splits byte chunks into decoded lines (`RawLineSplitter`, then each line decoded).
 * @example
 * const splitter = new LineSplitter();
 * const lines = [...splitter.push(new TextEncoder().encode("a\nb")), ...splitter.end()];
 */
export class LineSplitter {
	readonly #raw: RawLineSplitter;

	constructor(limits: LineLimits = {}) {
		this.#raw = new RawLineSplitter(limits);
	}

	/** Feed a chunk; returns the lines it completed. */
	*push(chunk: Uint8Array): Generator<Line> {
		for (const raw of this.#raw.push(chunk)) yield decodeLine(raw);
	}

	/** Signal the end of input; returns the last line if it had no terminator. */
	*end(): Generator<Line> {
		for (const raw of this.#raw.end()) yield decodeLine(raw);
	}
}

/**
 * A `TransformStream` of byte chunks to lines (in the manner of Deno's `TextLineStream`).
 * @example
 * const lines = response.body.pipeThrough(lineStream());
 */
export function lineStream(): TransformStream<Uint8Array, Line> {
	const splitter = new LineSplitter();
	return new TransformStream<Uint8Array, Line>({
		transform(chunk, controller) {
			for (const line of splitter.push(chunk)) controller.enqueue(line);
		},
		flush(controller) {
			for (const line of splitter.end()) controller.enqueue(line);
		},
	});
}

/** Split a whole string into lines (for callers that already hold the text). */
export function* linesOfText(content: string): Generator<Line> {
	const splitter = new LineSplitter();
	yield* splitter.push(new TextEncoder().encode(content));
	yield* splitter.end();
}

/**
 * The outcome of parsing one line: a record, a diagnostic saying why there is none, or both (a record read
 * from bytes that were not valid UTF-8, with the diagnostic that says so).
 */
export type ParsedLine =
	| { record: FileEntry; diagnostic?: Diagnostic }
	| { record?: undefined; diagnostic: Diagnostic };

function lineDiagnostic(line: Line, reason: DiagnosticReason, message: string): Diagnostic {
	return { reason, line: line.line, byteOffset: line.byteOffset, excerpt: excerptOf(line.text), message };
}

/**
 * Parse one line into a record, or say why it cannot be one. Blank lines give `undefined`.
 * An unterminated last line that does not parse is reported as `torn-last-line` (a crash mid-append; a
 * write cut inside a multi-byte character is one too, since its text then ends in U+FFFD).
 * A line whose bytes are not valid UTF-8 is parsed from its text with U+FFFD in place of each bad sequence,
 * as pi reads it (Node's decoder gives the same text): the record is kept, with an `invalid-utf8` diagnostic.
 * A line longer than the reader's limit (`too-long`) or nested deeper than `maxDepth` (`too-deep`, see
 * `MAX_NESTING_DEPTH`) is skipped: no copy of it could be made or sent.
 */
export function parseLine(line: Line, limits: { maxDepth?: number } = {}): ParsedLine | undefined {
	// An object, not a number: `lines.map(parseLine)` passes an index here.
	const maxDepth = limits.maxDepth ?? MAX_NESTING_DEPTH;
	if (line.oversized) {
		const message = `line is longer than the limit (${line.byteLength} bytes with its terminator); skipped, left in the file`;
		return { diagnostic: lineDiagnostic(line, "too-long", message) };
	}
	if (line.text.trim() === "") return undefined;
	let value: unknown;
	try {
		value = JSON.parse(line.text);
	} catch (error) {
		if (!line.terminated) {
			return { diagnostic: lineDiagnostic(line, "torn-last-line", "last line is incomplete (torn write); skipped") };
		}
		const detail = error instanceof Error ? error.message : String(error);
		return { diagnostic: lineDiagnostic(line, "invalid-json", `line is not valid JSON (${detail}); skipped`) };
	}
	if (typeof value !== "object" || value === null || Array.isArray(value)) {
		return { diagnostic: lineDiagnostic(line, "not-an-object", "line is JSON but not an object; skipped") };
	}
	if (typeof (value as { type?: unknown }).type !== "string") {
		return { diagnostic: lineDiagnostic(line, "missing-type", 'record has no string "type"; skipped') };
	}
	// Each level takes two brackets: a shorter line cannot be too deep, and most lines are not walked.
	if (line.text.length > 2 * maxDepth && nestsDeeperThan(value, maxDepth)) {
		const message = `line nests deeper than ${maxDepth} levels, more than can be copied or sent; skipped, left in the file`;
		return { diagnostic: lineDiagnostic(line, "too-deep", message) };
	}
	const record = value as FileEntry;
	if (line.validUtf8) return { record };
	const message = "line is not valid UTF-8; read with U+FFFD in place of the bad bytes and kept";
	return { record, diagnostic: lineDiagnostic(line, "invalid-utf8", message) };
}

/** Records of a session text with a diagnostic for every skipped line. */
export interface ParseResult {
	entries: FileEntry[];
	diagnostics: Diagnostic[];
}

/**
 * Parse the text of a session file. Every line that is not a record is reported, not dropped silently.
 * @example
 * const { entries, diagnostics } = parseSessionText('{"type":"session","id":"x","timestamp":"t","cwd":"/"}\n');
 */
export function parseSessionText(content: string): ParseResult {
	const entries: FileEntry[] = [];
	const diagnostics: Diagnostic[] = [];
	for (const line of linesOfText(content)) {
		const parsed = parseLine(line);
		if (parsed?.record) entries.push(parsed.record);
		if (parsed?.diagnostic) diagnostics.push(parsed.diagnostic);
	}
	return { entries, diagnostics };
}

/**
 * pi's `parseSessionEntries`: the records of a session text. Lines that are not records are skipped,
 * as in pi, but each is passed to `onDiagnostic` when one is given.
 * @example
 * const entries = parseSessionEntries(text, (d) => console.warn(`line ${d.line}: ${d.message}`));
 */
export function parseSessionEntries(content: string, onDiagnostic?: (diagnostic: Diagnostic) => void): FileEntry[] {
	const { entries, diagnostics } = parseSessionText(content);
	if (onDiagnostic) for (const diagnostic of diagnostics) onDiagnostic(diagnostic);
	return entries;
}
