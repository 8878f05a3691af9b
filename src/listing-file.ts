/**
 * Listing one file with its catalog row, if any: unchanged (same size and modification time) it is not
 * read; grown with the bytes before its old end unchanged, only the appended bytes are read; otherwise it
 * is read whole. Gives the `SessionInfo` and the row to keep.
 * @module
 */
import { DEFAULT_MAX_LINE_BYTES } from "./jsonl.ts";
import { type CatalogRow, sameModificationTime } from "./listing-catalog.ts";
import { hashText } from "./listing-hash.ts";
import { scanListing, TAIL_CHECK_BYTES } from "./listing-scan.ts";
import {
	emptyListingState,
	type ListingState,
	listingInfo,
	type SessionInfo,
	type SkippedLine,
} from "./listing-summary.ts";
import { type FileStat, io, type Task } from "./storage.ts";

/** A file's listing: its `SessionInfo` (or `null`: no session) and the catalog row for it (none to keep). */
export interface FileListing {
	info: SessionInfo | null;
	row?: CatalogRow;
	/** The file's modification time as listed (none when it could not be found). */
	mtimeMs?: number;
	/** The lines it skipped for a limit: the first few, and how many in all. */
	skipped?: { lines: SkippedLine[]; count: number };
}

/** What a listing reads with: the text limit (none: the whole text) and the longest line read. */
interface ListingLimits {
	textLimit: number | undefined;
	maxLineBytes: number;
}

function skippedOf(state: ListingState): FileListing["skipped"] {
	return state.skipped ? { lines: state.skipped, count: state.skippedCount ?? state.skipped.length } : undefined;
}

/** A listing of a file, with the lines its state skipped, if any. */
function withSkipped(listing: FileListing, state: ListingState): FileListing {
	const skipped = skippedOf(state);
	if (skipped) listing.skipped = skipped;
	return listing;
}

/** Whether a state's text, cut at `rowLimit`, gives the text cut at `limit`. */
function textServes(state: ListingState, rowLimit: number | null, limit: number | undefined): boolean {
	return !state.textCut || (limit !== undefined && rowLimit !== null && limit <= rowLimit);
}

/** Whether JSON gives `value` back as it is (a header field may be any JSON, such as `1e999`). */
function isJsonSafe(value: unknown): boolean {
	if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0);
	if (typeof value !== "object" || value === null) return true;
	return Object.values(value).every(isJsonSafe);
}

/** Whether a catalog can keep the state (a value nested too deep to check is not kept: the file is read again). */
function isStorable(state: ListingState): boolean {
	try {
		return isJsonSafe(state.id) && isJsonSafe(state.parentSession) && isJsonSafe(state.timestamp);
	} catch {
		return false;
	}
}

/**
 * Where to start reading: after a row's last complete line if the file only grew since (and the row was
 * read with the same longest line: it skipped what this listing skips), else at 0.
 */
function* startOf(path: string, size: number, row: CatalogRow | undefined, limits: ListingLimits) {
	const limit = limits.textLimit;
	if (row && size > row.size && row.lineLimit === limits.maxLineBytes && textServes(row.state, row.textLimit, limit)) {
		const checkStart = Math.max(0, row.consumed - TAIL_CHECK_BYTES);
		const check = yield* io("readRange", path, checkStart, row.consumed);
		if (check.length === row.consumed - checkStart && hashText(check) === row.tailHash) {
			// Text cut at the row's limit stays cut at it; a whole text may go on under the new one.
			const textLimit = row.state.textCut ? (row.textLimit as number) : limit;
			return { state: { ...row.state }, offset: row.consumed, hash: row.tailHash as string | undefined, textLimit };
		}
	}
	return { state: emptyListingState(), offset: 0, hash: undefined, textLimit: limit };
}

/**
 * The listing of a file from its row alone, when the row is of the file as `stat` found it (same size and
 * modification time), was read with the same longest line and holds the text asked for; `undefined` when
 * the file must be read.
 */
export function listingFromRow(
	path: string,
	stat: FileStat,
	row: CatalogRow | undefined,
	textLimit: number | undefined,
	maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
): FileListing | undefined {
	const known = row?.final ?? row?.state;
	if (!row || !known || !stat.isFile || row.size !== stat.size || !sameModificationTime(row.mtimeMs, stat.mtimeMs))
		return undefined;
	if (row.lineLimit !== maxLineBytes || !textServes(known, row.textLimit, textLimit)) return undefined;
	const info = listingInfo(path, known, stat.mtimeMs, textLimit);
	return withSkipped({ info, row, mtimeMs: stat.mtimeMs }, known);
}

/**
 * The listing of `path`, using and renewing its catalog row. A file that cannot be read lists as no
 * session and gets no row; an abort rejects. `known`: the file's `stat`, when the caller has just taken it.
 * `keepRow`: false when no catalog will keep the row (none is made). `maxLineBytes`: the longest line read.
 */
export function* listFile(
	path: string,
	row: CatalogRow | undefined,
	textLimit: number | undefined,
	signal?: AbortSignal,
	known?: FileStat | null,
	keepRow = true,
	maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
): Task<FileListing> {
	try {
		const stat = known === undefined ? yield* io("stat", path) : known;
		if (!stat?.isFile) return { info: null };
		const served = listingFromRow(path, stat, row, textLimit, maxLineBytes);
		if (served) return served;
		const start = yield* startOf(path, stat.size, row, { textLimit, maxLineBytes });
		const { state, offset, hash } = start;
		const scan = yield* scanListing(
			path,
			stat.size,
			state,
			offset,
			hash,
			start.textLimit,
			signal,
			keepRow,
			maxLineBytes,
		);
		const info = listingInfo(path, scan.final, stat.mtimeMs, textLimit);
		const { mtimeMs } = stat;
		if (!keepRow || !scan.complete || !isStorable(scan.final) || !isStorable(scan.state)) {
			return withSkipped({ info, mtimeMs }, scan.final);
		}
		const kept: CatalogRow = {
			path,
			size: stat.size,
			mtimeMs: stat.mtimeMs,
			consumed: scan.consumed,
			tailHash: scan.tailHash,
			textLimit: start.textLimit ?? null,
			lineLimit: maxLineBytes,
			state: scan.state,
		};
		if (scan.final !== scan.state) kept.final = scan.final;
		return withSkipped({ info, row: kept, mtimeMs }, scan.final);
	} catch (error) {
		if (signal?.aborted) throw error;
		return { info: null };
	}
}
