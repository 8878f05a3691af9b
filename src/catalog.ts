/**
 * Finding and listing sessions on storage: the most recent session of a directory, a session by id, and
 * pi's `SessionInfo` listing with bounded concurrency and progress, optionally kept in a listing catalog
 * so that a repeated listing reads only what changed (listing-*.ts).
 * @module
 */
import type { SessionHeader } from "./entries.ts";
import { DEFAULT_MAX_LINE_BYTES } from "./jsonl.ts";
import { type CatalogRow, saveCatalog } from "./listing-catalog.ts";
import { listFile, listingFromRow } from "./listing-file.ts";
import { catalogFor, keepWritten } from "./listing-resident.ts";
import {
	emptyListingState,
	foldValue,
	isTooDeep,
	listingInfo,
	type SessionInfo,
	type SkippedLine,
} from "./listing-summary.ts";
import { HeaderTooLongError, readSessionFile, readSessionHeader } from "./load.ts";
import { joinPath, sessionIdOfFileName, validateSessionId } from "./paths.ts";
import { type FileStat, io, pool, ReadBuffers, runTask, STATS_AT_ONCE, type Storage, type Task } from "./storage.ts";

export type { SessionInfo, SkippedLine };

/** The lines a listing skipped in one file for a limit (`ListOptions.onSkippedLines`). */
export interface SkippedLines {
	path: string;
	/**
	 * Whether the file is listed (with everything but these lines). False when it is no session without
	 * them: its header was one of them, as a read would find too.
	 */
	listed: boolean;
	/** The first of them (at most 16), in file order. */
	lines: SkippedLine[];
	/** How many in all. */
	count: number;
	/** The listing's `maxLineBytes`. */
	maxLineBytes: number;
}

/**
 * `(loaded, total, sessions?)` as listing proceeds. `sessions`, when given, are the sessions found so far,
 * newest first (as pi 1.6 publishes them: after the first file, every `publishEvery` files, and the last).
 */
export type ListProgress = (loaded: number, total: number, sessions?: readonly SessionInfo[]) => void;

export interface ListOptions {
	onProgress?: ListProgress;
	signal?: AbortSignal;
	/** Files read at once (default 8). */
	concurrency?: number;
	/** How often progress carries the sessions found so far (default every 10 files). */
	publishEvery?: number;
	/**
	 * Cut each session's `allMessagesText` to at most this many characters (UTF-16 code units; one fewer
	 * rather than split a surrogate pair). Unset (as pi): the whole text. A limit also bounds what the
	 * catalog keeps; a later listing that asks for more reads the file again.
	 */
	allMessagesTextLimit?: number;
	/**
	 * Path of a listing catalog to use and renew (`listingCatalogPath(agentDir)` is pi's place for it):
	 * files whose size and modification time match their row are not read, files that only grew are read
	 * from where their row stopped. Unset: every file is read. The catalog is a cache: a damaged one is rebuilt.
	 */
	catalog?: string;
	/**
	 * Keep the catalog in memory once read or written (default true): the next listing in this process with
	 * the same storage, catalog and scope then reads only `stat`s while neither of the catalog's files
	 * changes (a text decoded once is not decoded again). It holds about what the listing's rows hold, for
	 * as long as the storage object lives; false reads the catalog's files every time and keeps nothing.
	 */
	keepCatalogInMemory?: boolean;
	/**
	 * Only the sessions this accepts are listed (and published as progress): applied before the sessions are
	 * ordered, as pi 1.6's `list` filters by working directory before it sorts.
	 */
	filter?: (session: SessionInfo) => boolean;
	/**
	 * The longest line read, in bytes (its line end not counted): default `DEFAULT_MAX_LINE_BYTES`, as
	 * reads (`ReadOptions.maxLineBytes`). A longer line is skipped as reads skip it (it neither counts nor
	 * adds text, a name or a time) and never held in memory; the session is listed with the rest. So is a
	 * line nested deeper than `MAX_NESTING_DEPTH`. A catalog row serves only a listing of the same limit.
	 */
	maxLineBytes?: number;
	/**
	 * Told, once per file and listing, of the lines skipped for a limit (also when a catalog row serves the
	 * file): those of the sessions listed (the filter's), and of files that are no session without them.
	 */
	onSkippedLines?: (skipped: SkippedLines) => void;
}

/** Which header working directories a search accepts: one exactly, or those a predicate accepts. */
export type CwdFilter = string | ((headerCwd: unknown) => boolean);

function cwdMatches(filter: CwdFilter | undefined, headerCwd: unknown): boolean {
	if (filter === undefined) return true;
	return typeof filter === "string" ? headerCwd === filter : filter(headerCwd);
}

/**
 * The `*.jsonl` files of `dir` that are regular files or links to one. Not only plain files: a session may
 * be a symbolic link (reading it tells whether it is a session); an entry that is neither file nor
 * directory is `stat`ed (which follows a link), and kept only if it is a regular file: a named pipe, a
 * socket or a device (or a link to one, such as to `/dev/zero`) is never read.
 */
function* jsonlFiles(dir: string): Task<string[]> {
	const files: string[] = [];
	for (const entry of yield* io("list", dir)) {
		if (entry.isDirectory || !entry.name.endsWith(".jsonl")) continue;
		const path = joinPath(dir, entry.name);
		if (entry.isFile || (yield* regularFile(path))) files.push(path);
	}
	return files;
}

/** Whether `path` is a regular file (following a link); false when it cannot be told. */
function* regularFile(path: string): Task<boolean> {
	try {
		return (yield* io("stat", path))?.isFile === true;
	} catch {
		return false;
	}
}

/** The header of a file if it is a session (reads at most 1 MiB); `null` otherwise. */
function* headerOrNull(path: string): Task<SessionHeader | null> {
	try {
		return yield* readSessionHeader(path);
	} catch (error) {
		if (!(error instanceof HeaderTooLongError)) return null;
	}
	// Header discovery gives up past 1 MiB; a full read still decides.
	try {
		const read = yield* readSessionFile(path);
		return read && !("empty" in read) ? (read.records[0] as SessionHeader) : null;
	} catch {
		return null;
	}
}

/**
 * The most recently modified session file in `dir` (optionally only those whose header's cwd matches).
 * @example
 * const path = await runTask(findMostRecentSession("/s/--project--", "/project"), storage);
 */
export function* findMostRecentSession(dir: string, cwd?: CwdFilter): Task<string | null> {
	// Newest first (the sort is stable: ties in the directory's order), and only as many headers read as it
	// takes: a file that is no session, or of another cwd, gives way to the next.
	const paths = yield* jsonlFiles(dir);
	const stats = yield* io("statAll", paths);
	const files: { path: string; mtimeMs: number }[] = [];
	for (const [index, stat] of stats.entries()) {
		if (stat)
			files.push({ path: paths[index] as string, mtimeMs: Number.isNaN(stat.mtimeMs) ? -Infinity : stat.mtimeMs });
	}
	files.sort((a, b) => (a.mtimeMs === b.mtimeMs ? 0 : b.mtimeMs - a.mtimeMs));
	for (const { path } of files) {
		const header = yield* headerOrNull(path);
		if (header && cwdMatches(cwd, header.cwd)) return path;
	}
	return null;
}

/**
 * The file of a session id under a sessions root (`<agentDir>/sessions`), found by pi's file name.
 * @example
 * const path = await runTask(findById("/home/me/.pi/agent/sessions", id), storage);
 */
export function* findById(sessionsRoot: string, id: string): Task<string | null> {
	validateSessionId(id);
	for (const dir of yield* io("list", sessionsRoot)) {
		if (!dir.isDirectory) continue;
		for (const file of yield* io("list", joinPath(sessionsRoot, dir.name))) {
			if (file.isFile && sessionIdOfFileName(file.name) === id) return joinPath(sessionsRoot, dir.name, file.name);
		}
	}
	return null;
}

/**
 * pi 1.6's `findById`: the session file in `dir` whose header has this id (headers only are read;
 * optionally only a header whose cwd matches), or `null`.
 * @example
 * const path = await runTask(findByHeaderId("/s/--project--", id), storage);
 */
export function* findByHeaderId(dir: string, id: string, cwd?: CwdFilter): Task<string | null> {
	for (const path of yield* jsonlFiles(dir)) {
		const header = yield* headerOrNull(path);
		if (header?.id === id && cwdMatches(cwd, header.cwd)) return path;
	}
	return null;
}

/** Decodes a whole file as our reads do: a BOM at its start dropped, bad UTF-8 as U+FFFD. */
const fileDecoder = new TextDecoder();
const lineEncoder = new TextEncoder();

/**
 * The `SessionInfo` of one file by the listing's rules, the plain way: the whole file read and decoded,
 * split into lines as our reads split them (at line feeds, a carriage return before one dropped), every
 * line parsed but those reads skip (longer than `maxLineBytes`, nested too deep); `null` when it is no
 * session or cannot be read. Listings read less (listing-scan.ts) and must agree with it.
 */
export function* sessionInfoTask(
	path: string,
	signal?: AbortSignal,
	maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
): Task<SessionInfo | null> {
	try {
		const stat = yield* io("stat", path);
		if (!stat?.isFile) return null;
		const bytes = yield* io("readRange", path, 0, stat.size);
		signal?.throwIfAborted();
		const state = emptyListingState();
		for (const line of fileDecoder.decode(bytes).split(/\r?\n/)) {
			// A character takes at most three bytes: only a line that may be too long is encoded to tell.
			if (line.length * 3 > maxLineBytes && lineEncoder.encode(line).length > maxLineBytes) continue;
			let value: unknown;
			try {
				value = JSON.parse(line);
			} catch {
				continue;
			}
			if (!isTooDeep(value, line.length)) foldValue(state, value, undefined);
		}
		return listingInfo(path, state, stat.mtimeMs, undefined);
	} catch (error) {
		if (signal?.aborted) throw error;
		return null;
	}
}

function newestFirst(sessions: SessionInfo[]): SessionInfo[] {
	return sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

/** How pi 1.6 orders files before it sorts their sessions by `modified` (which keeps ties in that order). */
export type FileOrder = "file-time" | "name";

const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1);

/**
 * Sessions in pi 1.6's order: `newestFirst` over the files in the order pi reads them — `listAll` by
 * modification time, newest first, then by name, last first; `list` by name, last first — so that ties
 * (and invalid dates, which the sort compares as neither before nor after) come out as pi's do.
 */
function inPiOrder(listed: { info: SessionInfo | null; mtimeMs?: number }[], order: FileOrder): SessionInfo[] {
	const time = (file: { mtimeMs?: number }) => (order === "file-time" ? (file.mtimeMs ?? Number.NEGATIVE_INFINITY) : 0);
	const files = listed.filter((file): file is { info: SessionInfo; mtimeMs?: number } => file.info !== null);
	files.sort((a, b) => time(b) - time(a) || baseName(b.info.path).localeCompare(baseName(a.info.path)));
	return newestFirst(files.map((file) => file.info));
}

/** A text limit as given: a whole number of characters, or none. */
function textLimitOf(limit: number | undefined): number | undefined {
	if (limit === undefined || Number.isNaN(limit) || limit === Number.POSITIVE_INFINITY) return undefined;
	return Math.max(0, Math.floor(limit));
}

/** A line limit as given: a whole number of bytes (a catalog row keeps it), the default when none. */
function lineLimitOf(limit: number | undefined): number {
	if (limit === undefined || Number.isNaN(limit)) return DEFAULT_MAX_LINE_BYTES;
	return Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.floor(limit)));
}

/**
 * List `files` by `options`. `inScope` tells the catalog rows this listing renews (its `scope`, in words:
 * a listing of another scope does not take the rows of this one kept in memory).
 */
async function listFiles(
	storage: Storage,
	files: string[],
	scope: string,
	inScope: (path: string) => boolean,
	options: ListOptions,
	order: FileOrder,
): Promise<SessionInfo[]> {
	options.signal?.throwIfAborted();
	const publishEvery = Math.max(1, Math.floor(options.publishEvery ?? 10) || 10);
	const textLimit = textLimitOf(options.allMessagesTextLimit);
	const maxLineBytes = lineLimitOf(options.maxLineBytes);
	// With a catalog most files need only their `stat`: they are all taken (many at once) while the catalog
	// is read, and only the files whose rows do not serve are read (`concurrency` at once).
	const keep = options.keepCatalogInMemory ?? true;
	const [catalog, stats] = options.catalog
		? await Promise.all([
				catalogFor(storage, options.catalog, scope, inScope, keep),
				pool(files, STATS_AT_ONCE, (path) => storage.stat(path).catch(() => null)),
			])
		: [undefined, undefined];
	options.signal?.throwIfAborted();
	const rows: CatalogRow[] = [];
	let changed = false;
	const found: SessionInfo[] = [];
	let loaded = 0;
	const concurrency = Math.max(1, Math.floor(options.concurrency ?? 8) || 8);
	// Read buffers, one pair for each file being read at once (taken back when it is done): a listing of a
	// thousand files allocates a few, where a pair per file made a thousand to collect (and its peak RSS).
	const freeBuffers: ReadBuffers[] = [];
	const listed = await pool(files, concurrency, async (path, index) => {
		options.signal?.throwIfAborted();
		const previous = catalog?.rows.get(path);
		const stat: FileStat | null | undefined = stats?.[index];
		let listing = stat ? listingFromRow(path, stat, previous, textLimit, maxLineBytes) : undefined;
		if (!listing) {
			const buffers = freeBuffers.pop() ?? new ReadBuffers();
			try {
				listing = await runTask(
					listFile(path, previous, textLimit, options.signal, stat, catalog !== undefined, maxLineBytes),
					storage,
					buffers,
				);
			} finally {
				freeBuffers.push(buffers);
			}
		}
		const { row } = listing;
		if (row) rows.push(row);
		if (row !== previous) changed = true;
		loaded++;
		const info = listing.info && (options.filter?.(listing.info) ?? true) ? listing.info : null;
		if (info) found.push(info);
		// A session the filter leaves out is not reported; a file that is no session may be one of its.
		if (listing.skipped && options.onSkippedLines && (info || !listing.info)) {
			const { lines, count } = listing.skipped;
			// Copies: the lines are a kept catalog row's, and the next listing's too.
			const copies = lines.map((line) => ({ ...line }));
			options.onSkippedLines({ path, listed: info !== null, lines: copies, count, maxLineBytes });
		}
		if (options.onProgress) {
			const publish = loaded === 1 || loaded % publishEvery === 0 || loaded === files.length;
			options.onProgress(loaded, files.length, publish ? newestFirst([...found]) : undefined);
		}
		return { info, mtimeMs: listing.mtimeMs };
	});
	if (catalog && options.catalog) {
		// Rows of files that are gone are dropped with the rest of the listed scope.
		const listed = new Set(files);
		for (const path of catalog.rows.keys()) if (inScope(path) && !listed.has(path)) changed = true;
		options.signal?.throwIfAborted();
		if (changed) {
			const written = await runTask(saveCatalog(options.catalog, catalog, rows, inScope), storage);
			await keepWritten(storage, options.catalog, scope, written, keep);
		}
	}
	return inPiOrder(listed, order);
}

/** `dir` with one trailing `/`: what the paths of its files start with. */
function dirPrefix(dir: string): string {
	const base = joinPath(dir);
	return base.endsWith("/") ? base : `${base}/`;
}

/**
 * pi's `SessionManager.list`: the sessions of one directory, most recently modified first.
 * @example
 * const sessions = await listSessions(storage, "/home/me/.pi/agent/sessions/--project--");
 */
export async function listSessions(storage: Storage, dir: string, options: ListOptions = {}): Promise<SessionInfo[]> {
	const prefix = dirPrefix(dir);
	const inDir = (path: string) => path.startsWith(prefix) && !path.includes("/", prefix.length);
	return listFiles(storage, await runTask(jsonlFiles(dir), storage), `directory ${prefix}`, inDir, options, "name");
}

/**
 * pi's `SessionManager.listAll`: the sessions of every project under a sessions root.
 * @example
 * const sessions = await listAllSessions(storage, "/home/me/.pi/agent/sessions", { onProgress: console.log });
 */
export async function listAllSessions(
	storage: Storage,
	sessionsRoot: string,
	options: ListOptions = {},
): Promise<SessionInfo[]> {
	const files: string[] = [];
	for (const entry of await storage.list(sessionsRoot)) {
		const dir = joinPath(sessionsRoot, entry.name);
		// A project directory may be a symbolic link to one (as pi 1.6 accepts): `stat` follows it.
		const isDirectory = entry.isDirectory || (!entry.isFile && (await storage.stat(dir))?.isDirectory === true);
		if (isDirectory) files.push(...(await runTask(jsonlFiles(dir), storage)));
	}
	const prefix = dirPrefix(sessionsRoot);
	return listFiles(storage, files, `all ${prefix}`, (path) => path.startsWith(prefix), options, "file-time");
}
