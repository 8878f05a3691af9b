/**
 * Reading a session file: streamed in ranged chunks through the line splitter (never one string of the
 * whole file), parsed with a diagnostic for every skipped line, and migrated to the current version.
 * Deciding what to repair or rewrite is the session's job; this module only reads.
 * @module
 */

import {
	CURRENT_SESSION_VERSION,
	type FileEntry,
	isSessionHeader,
	type SessionEntry,
	type SessionHeader,
} from "./entries.ts";
import { EntryBodies } from "./entry-bodies.ts";
import { HeaderTooLongError, SessionLimitError } from "./errors.ts";
import {
	DEFAULT_MAX_LINE_BYTES,
	type Diagnostic,
	decodeLine,
	excerptOf,
	excerptOfBytes,
	type Line,
	LineSplitter,
	type ParsedLine,
	parseLine,
	type RawLine,
	RawLineSplitter,
	SessionFormatError,
} from "./jsonl.ts";
import { lineStructure } from "./line-structure.ts";
import { type MigrationResult, migrateToCurrentVersion } from "./migrate.ts";
import { io, notAFileError, type Task } from "./storage.ts";
import { type RecordLocation, SessionTree } from "./tree.ts";

export { HeaderTooLongError, SessionLimitError };

/** Bytes read per storage call when looking for a header. */
export const READ_CHUNK_BYTES: number = 1 << 20;
/**
 * Bytes read per storage call when reading a whole file. Fewer calls cost less (each may cost an open and
 * a stat, and the read ahead of `runTask` overlaps only part of them with the work); smaller chunks take
 * less memory. A lazy open reads a hundredth of the file at a time, from 1 MiB to 8 MiB; a full open,
 * which keeps every entry, 1 MiB (bigger chunks make V8 collect its big heap more often). Measured: at
 * 100 MB, 4 MiB chunks peak at 135 MB RSS and 1 MiB at 130 MB in the same time; lazy at 1 GB, 8 MiB
 * chunks open the image-heavy session in 1.6 s instead of 2.3 s; full at 1 GB text, 1 MiB chunks take
 * 8.3–9.1 s and 8 MiB 10.8–11.2 s.
 */
function fileChunkBytes(size: number, load: LoadMode | undefined): number {
	if (load !== "lazy") return 1 << 20;
	return Math.min(8 << 20, Math.max(1 << 20, 2 ** Math.round(Math.log2(size / 100))));
}

/** How much of a file opening decodes: everything, or the structure only (see `ReadOptions.load`). */
export type LoadMode = "lazy" | "full";

export interface ReadOptions {
	/**
	 * `"full"` (the default of `Session.open`) decodes every entry while reading. `"lazy"` keeps only the
	 * structure of big entries (kind, ids, time, role) and where their lines are, so that memory grows with
	 * the number of entries, not with the bytes; their bodies are decoded when a read asks for them. Only a
	 * file of the current version is read lazily (an older one is migrated, which needs every entry).
	 */
	load?: LoadMode;
	/**
	 * Index a file of the current version into a tree while reading it (`ReadSession.tree`), instead of
	 * collecting its records: nothing of a line is kept but its entry.
	 */
	index?: boolean;
	/**
	 * The longest line read, in bytes (terminator excluded). A longer line is skipped with a `too-long`
	 * diagnostic naming its line and byte offset, and never held in memory (only its first bytes, for the
	 * excerpt); the rest of the file is read. Default `DEFAULT_MAX_LINE_BYTES`, V8's longest string: no
	 * longer line could be decoded anyway. A writing open refuses to migrate a file holding such a line
	 * (the rewrite could not carry it over): see `SessionLimitError`.
	 */
	maxLineBytes?: number;
	/**
	 * The most records (header included) a file may hold: a file with more is refused with a
	 * `SessionLimitError` as soon as reading reaches it, before it takes the memory of all of them. No
	 * limit by default: a session's size is its owner's to decide, and a lazy open keeps little per entry.
	 */
	maxEntries?: number;
	signal?: AbortSignal;
	/** Called after each chunk with bytes read so far and the file's size. */
	onProgress?: (loaded: number, total: number) => void;
	chunkBytes?: number;
}

/** The limits of a read (see `ReadOptions`), for the options of opens and forks. */
export type ReadLimits = Pick<ReadOptions, "maxLineBytes" | "maxEntries">;

/** A session file as read: its records (migrated), where each came from, and what was wrong with it. */
export interface ReadSession {
	path: string;
	size: number;
	/** Modification time when reading began. */
	mtimeMs: number;
	/** Header first, then entries, in file order, migrated to the current version. */
	records: FileEntry[];
	/** Location of each record in `records`. */
	locations: RecordLocation[];
	/**
	 * Text of each skipped non-blank line, with the number of records that preceded it. For a line over
	 * `maxLineBytes`, `text` is only its start and `oversized` says where the whole line is.
	 */
	skippedLines: {
		afterRecords: number;
		text: string;
		oversized?: { line: number; byteOffset: number; limit: number };
	}[];
	diagnostics: Diagnostic[];
	migration: MigrationResult;
	/** False when the last byte is not `\n` (a torn append, or a file written without one). */
	endsWithNewline: boolean;
	/**
	 * With `index`, for a file of the current version: the tree, indexed while reading (then `records` and
	 * `locations` hold the header only). Lazily read, it decodes its deferred entries from the file.
	 */
	tree?: SessionTree;
}

/** The file exists but is empty. */
export interface EmptySession {
	path: string;
	size: 0;
	empty: true;
}

/**
 * A line we skip that pi takes as a record: JSON that is not an object or has no `type` (only `null`,
 * `false`, `0` and `""` are skipped by pi too). Before the header it makes the file no session, for both.
 */
function isRecordToPi(line: Line, parsed: ParsedLine): boolean {
	const reason = parsed.diagnostic?.reason;
	if (reason !== "not-an-object" && reason !== "missing-type") return false;
	try {
		return Boolean(JSON.parse(line.text));
	} catch {
		return false;
	}
}

/** pi's validity rule for a header: type `session` and a string id. */
export function isValidHeader(record: FileEntry | undefined): record is SessionHeader {
	return !!record && isSessionHeader(record) && typeof record.id === "string";
}

/** The error for a file whose first line is not a session header; the file is left as it is. */
export function notASessionError(path: string, line: Line | undefined): SessionFormatError {
	return new SessionFormatError(
		"not a pi session: the first line is not a session header; the file was left untouched",
		{
			file: path,
			line: line?.line ?? 1,
			byteOffset: line?.byteOffset ?? 0,
			excerpt: excerptOf(line?.text ?? ""),
		},
	);
}

/**
 * Read and migrate a session file. `null` when there is no file; `{ empty: true }` for an empty one.
 * Throws `SessionFormatError` when a non-empty file does not start with a valid header.
 */
export function* readSessionFile(path: string, options: ReadOptions = {}): Task<ReadSession | EmptySession | null> {
	const stat = yield* io("stat", path);
	if (!stat) return null;
	// A named pipe, a device or a directory is no session, and never one to write a header into.
	if (!stat.isFile) throw notAFileError(path, stat.isDirectory ? "a directory" : undefined);
	if (stat.size === 0) return { path, size: 0, empty: true };
	const chunkBytes = options.chunkBytes ?? fileChunkBytes(stat.size, options.load);
	const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
	const splitter = new RawLineSplitter({ maxLineBytes });
	const records: FileEntry[] = [];
	const locations: RecordLocation[] = [];
	const skippedLines: ReadSession["skippedLines"] = [];
	const diagnostics: Diagnostic[] = [];
	let lastByte = -1;

	/** The first line skipped, to name in the error when no record follows (a file that is no session). */
	let firstSkipped: Line | undefined;
	/** Set once the header shows a current file, when the read is lazy. */
	let bodies: EntryBodies | undefined;
	/** Set once the header shows a current file, when the read indexes as it goes. */
	let tree: SessionTree | undefined;
	let recordCount = 0;
	/**
	 * Where the line being indexed is, for a diagnostic (copied into it then): one object for every line,
	 * its excerpt made only when asked, from the bytes at hand.
	 */
	const location = {
		raw: undefined as RawLine | undefined,
		get line() {
			return this.raw?.line ?? 0;
		},
		get byteOffset() {
			return this.raw?.byteOffset ?? 0;
		},
		get excerpt() {
			return this.raw ? excerptOfBytes(this.raw.bytes) : "";
		},
	};
	const keep = (record: FileEntry, raw: RawLine): void => {
		recordCount++;
		if (options.maxEntries !== undefined && recordCount > options.maxEntries) {
			throw new SessionLimitError(path, "entries", options.maxEntries, { line: raw.line, byteOffset: raw.byteOffset });
		}
		if (tree) {
			location.raw = raw;
			tree.addEntry(record as SessionEntry, location);
			return;
		}
		records.push(record);
		// From the bytes: a slice of the text would keep the whole line's text alive.
		locations.push({ line: raw.line, byteOffset: raw.byteOffset, excerpt: excerptOfBytes(raw.bytes) });
		if (recordCount === 1 && isCurrent(record)) {
			// Lazily only when indexing: loose structures must never be handed out as records.
			if (options.load === "lazy" && options.index) bodies = new EntryBodies(path);
			if (options.index) tree = new SessionTree(record as SessionHeader, {}, bodies);
		}
	};
	const take = (raw: RawLine): void => {
		const structure = bodies && !raw.oversized && lineStructure(raw.bytes);
		if (bodies && structure) {
			bodies.defer(structure, { offset: raw.byteOffset, length: raw.bytes.length, line: raw.line });
			keep(structure, raw);
			return;
		}
		const line = decodeLine(raw);
		const parsed = parseLine(line);
		if (!parsed) return;
		// As pi 1.6: blank and unparsable lines before the header are skipped; the first record must be it.
		if (recordCount === 0 && (parsed.record ? !isValidHeader(parsed.record) : isRecordToPi(line, parsed))) {
			throw notASessionError(path, line);
		}
		if (parsed.diagnostic) diagnostics.push(parsed.diagnostic);
		if (parsed.record) keep(parsed.record, raw);
		else if (line.oversized) {
			// Its text was never held: a rewrite of the file cannot carry it over (see backup.ts).
			skippedLines.push({
				afterRecords: recordCount,
				text: line.text,
				oversized: { line: line.line, byteOffset: line.byteOffset, limit: maxLineBytes },
			});
			firstSkipped ??= line;
		} else {
			skippedLines.push({ afterRecords: recordCount, text: line.text });
			firstSkipped ??= line;
		}
	};

	let offset = 0;
	for (;;) {
		options.signal?.throwIfAborted();
		// Nothing of a chunk is kept once the next is asked for (a line that goes on is copied): one buffer serves.
		const read = yield* io("readReusing", path, offset, offset + chunkBytes);
		// A plain view: a runtime's own subclass (Node's Buffer) makes each line's subarray cost more.
		const chunk = new Uint8Array(read.buffer, read.byteOffset, read.byteLength);
		if (chunk.length === 0) break;
		offset += chunk.length;
		lastByte = chunk[chunk.length - 1] as number;
		for (const line of splitter.push(chunk)) take(line);
		options.onProgress?.(offset, Math.max(offset, stat.size));
		if (chunk.length < chunkBytes) break;
	}
	for (const line of splitter.end()) take(line);
	if (recordCount === 0) throw notASessionError(path, firstSkipped);

	const migration = migrateToCurrentVersion(records);
	return {
		path,
		size: offset,
		mtimeMs: stat.mtimeMs,
		records: migration.entries,
		locations,
		skippedLines,
		diagnostics,
		migration,
		endsWithNewline: lastByte === 0x0a,
		tree,
	};
}

/** Whether a header is of the current version (a lazy read of an older file would need migrating later). */
function isCurrent(header: FileEntry): boolean {
	return (header as SessionHeader).version === CURRENT_SESSION_VERSION;
}

/**
 * Read only the header, looking at no more than `limit` bytes (1 MiB by default). As pi 1.6, blank and
 * unparsable lines before it are skipped; `null` when the first record is not a valid header (or there is
 * none). `HeaderTooLongError` when no record ends within the limit: a full read can still decide.
 */
export function* readSessionHeader(path: string, limit: number = READ_CHUNK_BYTES): Task<SessionHeader | null> {
	// A header is a few hundred bytes: the first read is small, and only a longer one reads more (from the start).
	for (let size = Math.min(HEADER_FIRST_READ_BYTES, limit); ; size = Math.min(size * 16, limit)) {
		const bytes = yield* io("readRange", path, 0, size + 1);
		const splitter = new LineSplitter();
		const complete = bytes.length <= size;
		const lines = [...splitter.push(bytes.subarray(0, size)), ...(complete ? splitter.end() : [])];
		for (const line of lines) {
			const parsed = parseLine(line);
			if (parsed?.record) return isValidHeader(parsed.record) ? parsed.record : null;
			if (parsed && isRecordToPi(line, parsed)) return null;
		}
		if (complete) return null;
		if (size === limit) throw new HeaderTooLongError(path, limit);
	}
}

/** What `readSessionHeader` reads first (pi 1.6 reads a header 4 KiB at a time). */
const HEADER_FIRST_READ_BYTES = 4 << 10;
