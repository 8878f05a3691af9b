/**
 * Opening a session: a new one (`newSessionCore`), or a file. For a file, what to do is decided from the file as read (`planOpening`, pure), then done
 * as one task (`openSessionFile`). Where this differs from pi 0.73.1 and 1.6.0 on purpose:
 * - v1/v2 files are migrated into a rewrite, the original kept as `<file>.v<N>.bak` (pi rewrites in place);
 * - a last line without `\n` is terminated, so the next append cannot fuse onto it, but only when the
 *   file has been left unchanged for a moment (`settleMs`): pi 1.6 terminates it at once on every load,
 *   which splits a line another program is still writing in two. A tail that is still changing is left
 *   alone: the session opens, the partial line is no entry (a `torn-last-line` diagnostic), and the first
 *   append writes a line feed first only if the file then still ends without one (pi 1.6 never does);
 * - an empty file gets a header, once it has been left empty for that moment too (pi writes a new file
 *   as an exclusive create and then its lines: the header must not replace the file in between); a
 *   non-empty file without one is refused and left untouched (pi truncates it).
 * @module
 */
import { migrateWithBackup } from "./backup.ts";
import { SessionNotFoundError } from "./errors.ts";
import { encodeEntry } from "./jsonl.ts";
import { type EmptySession, type LoadMode, type ReadOptions, type ReadSession, readSessionFile } from "./load.ts";
import { dirname, joinPath, sessionFileName, validateSessionId } from "./paths.ts";
import { emptyReport, type OpenReport, SessionCore } from "./session-core.ts";
import { io, isStorageError, removeQuietly, StorageError, type Task, temporaryOf } from "./storage.ts";
import { type NewSessionOptions, SessionTree } from "./tree.ts";

export type { LoadMode };

export interface OpenOptions extends ReadOptions {
	/** Read without taking the writer lock, repairing or migrating on disk; appends are refused. */
	readOnly?: boolean;
	/**
	 * What a missing file gives: a new session at that path when true (pi's behaviour, and the
	 * pi-compatible facade's), a `SessionNotFoundError` when false. `Session.open` and the engine default
	 * to false, so a mistyped path is noticed.
	 */
	create?: boolean;
	/** Directory for files created from this session (forks); default: the file's directory. */
	sessionDir?: string;
	/** Working directory to use instead of the header's. */
	cwd?: string;
	/**
	 * How long (ms) a file must have been left unchanged before a writing open repairs it (terminates a
	 * last line without `\n`, gives an empty file a header); default `SETTLE_MS`. A younger file is watched
	 * until it is that old (waiting at most this long): if it changes meanwhile, another program is
	 * writing it, and the torn tail is left alone.
	 */
	settleMs?: number;
}

/**
 * A file unchanged this long is taken as nobody's to finish: a writer writes a line in one go (pi's
 * `appendFileSync`, this package's appends), so a tail torn for longer was most likely left by a writer
 * that died. (One stalled longer mid-line, on a slow network file system, would still be split.)
 */
export const SETTLE_MS = 500;
/** Looks in a row with the monotonic clock standing still after which a settle watch ends (a faked clock). */
const MAX_LOOKS_WITHOUT_A_TICK = 10_000;

/** What opening a file does, decided from the file as read. */
export type OpeningPlan =
	/** No file: a new session at this path, its file created with its first user or assistant message. */
	| { action: "start-new" }
	/** No file, and none was asked for. */
	| { action: "refuse"; error: Error }
	/** An empty file: it gets a header. */
	| { action: "write-header" }
	/** An older version: rewritten in the current one, the original kept as a backup. */
	| { action: "migrate"; fromVersion: number }
	/** The last line has no line feed: one is appended. */
	| { action: "terminate-last-line" }
	/** Nothing to change (or nothing may be changed: read-only). */
	| { action: "use-as-is" };

/**
 * Decide what opening does with a file as read (`null`: there is none). Pure: the same file and options
 * always give the same plan. A read-only open never changes the file.
 */
export function planOpening(
	path: string,
	read: ReadSession | EmptySession | null,
	options: { readOnly: boolean; create: boolean },
): OpeningPlan {
	if (!read) {
		return options.create ? { action: "start-new" } : { action: "refuse", error: new SessionNotFoundError(path) };
	}
	if (options.readOnly) return { action: "use-as-is" };
	if ("empty" in read) return { action: "write-header" };
	if (read.migration.changed) return { action: "migrate", fromVersion: read.migration.fromVersion };
	if (!read.endsWithNewline) return { action: "terminate-last-line" };
	return { action: "use-as-is" };
}

const encoder = new TextEncoder();
/** A file that another writer keeps changing is read again this many times before opening gives up. */
const ATTEMPTS = 3;

/**
 * Open a session file (the caller holds its writer lock unless read-only): read it, plan, and carry the
 * plan out. pi writes without a lock, so a file may grow while it is read: a plan that rewrites the file
 * re-reads it when it changed, and a migration never loses a line appended meanwhile (see backup.ts).
 */
export function* openSessionFile(path: string, options: OpenOptions = {}): Task<SessionCore> {
	const readOnly = options.readOnly ?? false;
	const create = options.create ?? true;
	if (!readOnly) yield* removeLeftoverTemporaries(path);
	// A migration done by an earlier attempt, whose file then held more than what was read.
	let migrated: OpenReport["migratedFrom"];
	for (let attempt = 1; ; attempt++) {
		const read = yield* readSessionFile(path, { ...options, index: true });
		const plan = planOpening(path, read, { readOnly, create });
		const outcome = yield* carryOut(plan, path, read, options, readOnly);
		if ("core" in outcome) {
			if (migrated && !outcome.core.report.migratedFrom) outcome.core.report.migratedFrom = migrated;
			return outcome.core;
		}
		migrated ??= outcome.migrated;
		if (attempt >= ATTEMPTS) throw new StorageError("io", path, `io: ${path}: kept changing while it was being opened`);
	}
}

/** Do what the plan says, or say that the file must be read again (with the migration done, if any). */
function* carryOut(
	plan: OpeningPlan,
	path: string,
	read: ReadSession | EmptySession | null,
	options: OpenOptions,
	readOnly: boolean,
): Task<{ core: SessionCore } | { migrated?: OpenReport["migratedFrom"] }> {
	const sessionDir = options.sessionDir ?? dirname(path);
	const newTree = () => SessionTree.create({ cwd: options.cwd ?? "" });
	const bind = (
		tree: SessionTree,
		fileExists: boolean,
		report: OpenReport,
		file?: { bytes?: number; torn?: boolean },
	) => ({
		core: new SessionCore({
			tree,
			cwd: options.cwd,
			path,
			sessionDir,
			readOnly,
			fileExists,
			report,
			tailMayBeTorn: file?.torn,
			fileBytes: file?.bytes,
		}),
	});
	switch (plan.action) {
		case "refuse":
			throw plan.error;
		case "start-new":
			return bind(newTree(), false, emptyReport(true));
		case "write-header": {
			const tree = newTree();
			const now = yield* io("stat", path);
			if (now?.size !== 0) return {};
			if (!(yield* stayedUnchanged(path, 0, now.mtimeMs, settleOf(options)))) return {};
			const header = encoder.encode(encodeEntry(tree.getHeader()));
			yield* io("replace", path, [header]);
			return bind(tree, true, { ...emptyReport(false), wroteHeader: true }, { bytes: header.length });
		}
		default:
			break;
	}
	// An empty file read only: a session with no entries, and no header written.
	if (read && "empty" in read) return bind(newTree(), false, emptyReport(false));
	const file = read as ReadSession;
	const tree = file.tree ?? SessionTree.fromRecords(file.records, { file: path, locations: file.locations });
	const report: OpenReport = {
		...emptyReport(false),
		diagnostics: [...file.diagnostics, ...tree.diagnostics].sort((a, b) => a.line - b.line),
	};
	if (file.migration.changed) report.migratedFrom = { version: file.migration.fromVersion };
	if (plan.action === "migrate") {
		const { backupPath, complete } = yield* migrateWithBackup(path, file);
		report.migratedFrom = { version: plan.fromVersion, backupPath };
		// Lines appended while it was being migrated are in the file now, but not in this tree.
		if (!complete) return backupPath ? { migrated: report.migratedFrom } : {};
		// Rewritten: its size is asked for before the first append.
		return bind(tree, true, report);
	} else if (plan.action === "terminate-last-line") {
		// At the size it was read with: a write that began after the watch's last look is not split either.
		if (
			(yield* stayedUnchanged(path, file.size, file.mtimeMs, settleOf(options))) &&
			(yield* appendedAtSize(path, encoder.encode("\n"), file.size))
		) {
			report.repairedLastLine = true;
			return bind(tree, true, report, { bytes: file.size + 1 });
		}
		// Another program is writing that line: the first append starts a line of its own if it must.
		report.tornTailLeft = true;
		return bind(tree, true, report, { bytes: file.size, torn: true });
	}
	return bind(tree, true, report, { bytes: file.size });
}

/** Append `data` if the file still holds `size` bytes; false (nothing written) if it holds another number. */
function* appendedAtSize(path: string, data: Uint8Array, size: number): Task<boolean> {
	try {
		yield* io("append", path, data, false, size);
		return true;
	} catch (error) {
		if (isStorageError(error, "changed")) return false;
		throw error;
	}
}

function settleOf(options: OpenOptions): number {
	const ms = options.settleMs ?? SETTLE_MS;
	if (!(typeof ms === "number" && ms >= 0)) throw new RangeError(`settleMs must be 0 or more, not ${String(ms)}`);
	return ms;
}

/**
 * Whether the file still has the size and modification time it was read with, and has kept them for
 * `settleMs`: at once when its time is that old; otherwise it is watched (stat after stat, as a task cannot
 * sleep) until it is, never longer than `settleMs` from now (a time in the future, clocks apart, counts
 * from now), and a change meanwhile says another program is writing it. Called under the writer lock, so
 * the only other writers are programs that take none (pi). A write that starts after the last look is not
 * split either: the repair appends only at the size the file was read with.
 */
function* stayedUnchanged(path: string, size: number, mtimeMs: number, settleMs: number): Task<boolean> {
	// The file's age by the wall clock (a time in the future counts as none), the watch by a monotonic one,
	// so a wall clock that stands still or goes back (a corrected system time, a test's fake Date) cannot
	// keep it going. Should the monotonic clock stand still too (faked), many looks in a row without a tick
	// and without a change end the watch as settled.
	const wait = Math.max(0, settleMs - Math.max(0, Date.now() - mtimeMs));
	const start = performance.now();
	let last = start;
	for (let stillLooks = 0; ; ) {
		const now = yield* io("stat", path);
		if (now?.size !== size || now.mtimeMs !== mtimeMs) return false;
		const time = performance.now();
		if (time - start >= wait) return true;
		stillLooks = time === last ? stillLooks + 1 : 0;
		if (stillLooks >= MAX_LOOKS_WITHOUT_A_TICK) return true;
		last = time;
	}
}

/**
 * Remove the temporary files that writers killed midway left beside `path` (creates, replaces, lock files
 * and backup copies they never finished: nothing of them was acknowledged). The caller holds `path`'s
 * writer lock, or `path` is a new name nobody else knows (a fork), so only it writes `path`'s content and
 * backups: those are removed at once. Anyone may be taking the lock, so a lock's temporary must first
 * be older than a moment. Another session's are removed when it has no lock file and they have not been
 * written for a minute (a killed fork's, whose random name nobody opens again).
 */
function* removeLeftoverTemporaries(path: string): Task<void> {
	const dir = dirname(path);
	const name = path.slice(dir.endsWith("/") ? dir.length : dir.length + 1);
	const entries = yield* io("list", dir);
	const names = new Set(entries.map((entry) => entry.name));
	for (const entry of entries) {
		const temporary = entry.isFile ? temporaryOf(entry.name) : undefined;
		if (!temporary) continue;
		const at = joinPath(dir, entry.name);
		const orphan = temporary.of !== name && temporary.of.endsWith(".jsonl") && !names.has(`${temporary.of}.lock`);
		const waitMs =
			temporary.of === name
				? temporary.part === "lock"
					? LOCK_TEMPORARY_AGE_MS
					: 0
				: orphan
					? ORPHAN_AGE_MS
					: undefined;
		if (waitMs === undefined) continue;
		if (waitMs === 0) {
			yield* io("remove", at);
		} else if (yield* untouchedFor(at, waitMs)) {
			// Another's leftover (a lock's, a killed fork's): one that cannot be removed must not stop this open.
			yield* removeQuietly(at);
		}
	}
}

/** A lock file's temporary is another taker's at work until it is this old. */
const LOCK_TEMPORARY_AGE_MS = 10_000;
/** Another session's temporary is left alone until it has not been written for this long. */
const ORPHAN_AGE_MS = 60_000;

/** Whether the file at `path` was last written at least `ms` ago (a time in the future is no age). */
function* untouchedFor(path: string, ms: number): Task<boolean> {
	const stat = yield* io("stat", path);
	return stat !== null && Date.now() - stat.mtimeMs >= ms;
}

/** A session may be opened at a path whose directory does not exist yet (pi creates it). */
export function* prepareToOpen(path: string, options: { readOnly?: boolean; create?: boolean }): Task<void> {
	if (options.create === false && !(yield* io("stat", path))) throw new SessionNotFoundError(path);
	if (!options.readOnly) yield* io("mkdir", dirname(path));
}

/** A new session in `sessionDir` whose file is created with its first user or assistant message. */
export function* newSessionCore(options: NewSessionOptions & { sessionDir: string }): Task<SessionCore> {
	if (options.id !== undefined) validateSessionId(options.id);
	const tree = SessionTree.create(options);
	const path = joinPath(options.sessionDir, sessionFileName(tree.getHeader().timestamp, tree.getSessionId()));
	yield* io("mkdir", options.sessionDir);
	return new SessionCore({
		tree,
		path,
		sessionDir: options.sessionDir,
		readOnly: false,
		fileExists: false,
		report: emptyReport(true),
	});
}
