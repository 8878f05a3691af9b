/**
 * The JSONL line codec: encoding records as pi writes them, splitting byte streams into lines, and
 * parsing lines into records with a diagnostic for every line that had to be skipped.
 * @module
 */
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
	| "forward-parent";

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
}

/**
 * Splits byte chunks into raw lines. Splitting happens on bytes (a `\n` byte never occurs inside a
 * multi-byte UTF-8 sequence), so nothing is decoded here and no string of the whole input is ever built.
 * Accepts CRLF and strips a leading BOM.
 */
export class RawLineSplitter {
	#pending: Uint8Array[] = [];
	#pendingLength = 0;
	#offset = 0;
	#line = 0;

	/** Feed a chunk; returns the lines it completed. */
	*push(chunk: Uint8Array): Generator<RawLine> {
		let start = 0;
		for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, start)) {
			yield this.#emit(this.#take(chunk.subarray(start, i)), true);
			start = i + 1;
		}
		if (start < chunk.length) {
			// Copy: callers may reuse their chunk buffers.
			this.#pending.push(chunk.slice(start));
			this.#pendingLength += chunk.length - start;
		}
	}

	/** Signal the end of input; returns the last line if it had no terminator. */
	*end(): Generator<RawLine> {
		if (this.#pendingLength > 0) yield this.#emit(this.#take(new Uint8Array(0)), false);
	}

	#take(tail: Uint8Array): Uint8Array {
		if (this.#pendingLength === 0) return tail;
		const bytes = new Uint8Array(this.#pendingLength + tail.length);
		let at = 0;
		for (const part of this.#pending) {
			bytes.set(part, at);
			at += part.length;
		}
		bytes.set(tail, at);
		this.#pending = [];
		this.#pendingLength = 0;
		return bytes;
	}

	#emit(raw: Uint8Array, terminated: boolean): RawLine {
		const byteOffset = this.#offset;
		const byteLength = raw.length + (terminated ? 1 : 0);
		this.#offset += byteLength;
		this.#line++;
		return { bytes: lineContent(raw, this.#line === 1), line: this.#line, byteOffset, byteLength, terminated };
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
	readonly #raw = new RawLineSplitter();

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
 */
export function parseLine(line: Line): ParsedLine | undefined {
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
