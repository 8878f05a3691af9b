/**
 * The listing catalog file: one row per session file listed (keyed by path, size and modification time,
 * with the fold state to go on from when the file grows), so that a repeated listing reads only files
 * that changed. It is a cache: whatever is wrong with it (damaged, truncated, another version, rows of the
 * wrong shape, unreadable) makes it count as empty, and every row is checked against a fresh `stat`.
 *
 * Format: a header line `{"format","version","length","checksum"}`, then `length` bytes of the rows as a
 * JSON array, whose `hashBytes` is `checksum`. Written whole with `replace` (atomic), so two listings that
 * write it at once each leave a whole file.
 * @module
 */
import { hashBytes } from "./listing-hash.ts";
import type { ListingState } from "./listing-summary.ts";
import { dirname, joinPath } from "./paths.ts";
import { io, type Task } from "./storage.ts";

const FORMAT = "pi-session-tree listing catalog";
/** Bumped whenever rows change meaning: a catalog of another version is rebuilt. */
export const LISTING_CATALOG_VERSION = 1;

/** One listed file. */
export interface CatalogRow {
	path: string;
	size: number;
	mtimeMs: number;
	/** End of the last complete line (just after its line feed): `state` is the fold of the lines before it. */
	consumed: number;
	/** `hashBytes` of the up to `TAIL_CHECK_BYTES` bytes before `consumed`: the file only grew if they are unchanged. */
	tailHash: string;
	/** The limit the texts of `state` and `final` were cut at (`null`: none). */
	textLimit: number | null;
	state: ListingState;
	/** The state with the file's unterminated last line folded in, when it has one. */
	final?: ListingState;
}

/**
 * Where the catalog lives by default: `<agentDir>/pi-session-tree/listing-catalog.json`, outside
 * `<agentDir>/sessions`, where pi looks for sessions.
 * @example
 * listingCatalogPath("/home/me/.pi/agent"); // "/home/me/.pi/agent/pi-session-tree/listing-catalog.json"
 */
export function listingCatalogPath(agentDir: string): string {
	return joinPath(agentDir, "pi-session-tree", "listing-catalog.json");
}

/**
 * The default catalog path for pi's sessions root `<agentDir>/sessions` (that is, beside it).
 * @example
 * listingCatalogPathForSessionsRoot("/home/me/.pi/agent/sessions"); // "/home/me/.pi/agent/pi-session-tree/listing-catalog.json"
 */
export function listingCatalogPathForSessionsRoot(sessionsRoot: string): string {
	return listingCatalogPath(dirname(joinPath(sessionsRoot)));
}

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function isState(value: unknown): value is ListingState {
	if (typeof value !== "object" || value === null) return false;
	const state = value as { [field: string]: unknown };
	const header = state.phase !== "session" || (typeof state.id === "string" && typeof state.cwd === "string");
	return (
		(state.phase === "none" || state.phase === "session" || state.phase === "rejected") &&
		header &&
		isCount(state.messageCount) &&
		typeof state.firstMessage === "string" &&
		(state.name === undefined || typeof state.name === "string") &&
		typeof state.lastActivity === "number" &&
		Number.isFinite(state.lastActivity) &&
		typeof state.text === "string" &&
		typeof state.textCut === "boolean"
	);
}

/** Whether `value` is a row, of sound shape. */
export function isCatalogRow(value: unknown): value is CatalogRow {
	if (typeof value !== "object" || value === null) return false;
	const row = value as { [field: string]: unknown };
	return (
		typeof row.path === "string" &&
		isCount(row.size) &&
		typeof row.mtimeMs === "number" &&
		Number.isFinite(row.mtimeMs) &&
		isCount(row.consumed) &&
		row.consumed <= row.size &&
		typeof row.tailHash === "string" &&
		(row.textLimit === null || isCount(row.textLimit)) &&
		isState(row.state) &&
		(row.final === undefined || isState(row.final))
	);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The catalog file's bytes. */
export function encodeCatalog(rows: Iterable<CatalogRow>): Uint8Array[] {
	const body = encoder.encode(JSON.stringify([...rows]));
	const header = { format: FORMAT, version: LISTING_CATALOG_VERSION, length: body.length, checksum: hashBytes(body) };
	return [encoder.encode(`${JSON.stringify(header)}\n`), body];
}

/** The rows of a catalog file's bytes, by path; `null` if it is not a whole, sound catalog of this version. */
export function decodeCatalog(bytes: Uint8Array): Map<string, CatalogRow> | null {
	try {
		const newline = bytes.indexOf(0x0a);
		if (newline < 0) return null;
		const header = JSON.parse(decoder.decode(bytes.subarray(0, newline)));
		const body = bytes.subarray(newline + 1);
		if (header?.format !== FORMAT || header.version !== LISTING_CATALOG_VERSION) return null;
		if (header.length !== body.length || header.checksum !== hashBytes(body)) return null;
		const rows: unknown = JSON.parse(decoder.decode(body));
		if (!Array.isArray(rows)) return null;
		const byPath = new Map<string, CatalogRow>();
		// A row of the wrong shape is dropped alone: its file is read again.
		for (const row of rows) if (isCatalogRow(row)) byPath.set(row.path, row);
		return byPath;
	} catch {
		return null;
	}
}

/** The catalog as read, and which version of its file that was (to tell whether someone rewrote it since). */
export interface LoadedCatalog {
	rows: Map<string, CatalogRow>;
	/** Size and modification time of the file read; `null` when there was none (or it could not be read). */
	version: { size: number; mtimeMs: number } | null;
}

/** Read the catalog at `path`: empty when it is missing, unreadable or unsound. */
export function* loadCatalog(path: string): Task<LoadedCatalog> {
	try {
		const stat = yield* io("stat", path);
		if (!stat?.isFile) return { rows: new Map(), version: null };
		const bytes = yield* io("readRange", path, 0, stat.size + 1);
		const rows = bytes.length === stat.size ? decodeCatalog(bytes) : null;
		return { rows: rows ?? new Map(), version: { size: stat.size, mtimeMs: stat.mtimeMs } };
	} catch {
		return { rows: new Map(), version: null };
	}
}

/**
 * Write the catalog: `ours` (the rows of what was just listed, `inScope`) over the rows of the other
 * files as the file holds them now (another listing may have written it since `loaded` was read).
 * Best effort, as befits a cache: a catalog that cannot be written is left as it is.
 */
export function* saveCatalog(
	path: string,
	loaded: LoadedCatalog,
	ours: Iterable<CatalogRow>,
	inScope: (path: string) => boolean,
): Task<void> {
	try {
		const stat = yield* io("stat", path);
		const unchanged =
			stat === null
				? loaded.version === null
				: stat.size === loaded.version?.size && stat.mtimeMs === loaded.version.mtimeMs;
		const current = unchanged ? loaded.rows : (yield* loadCatalog(path)).rows;
		const rows: CatalogRow[] = [];
		for (const row of current.values()) if (!inScope(row.path)) rows.push(row);
		rows.push(...ours);
		yield* io("mkdir", dirname(path));
		yield* io("replace", path, encodeCatalog(rows));
	} catch {
		// A read-only or full storage: the next listing reads the files again.
	}
}
