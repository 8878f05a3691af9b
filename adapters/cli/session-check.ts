/**
 * Checking a session file and repairing what is safe to repair (the work of `pi-sessions check`).
 *
 * A check reads the whole file (read-only, every line parsed) and lists its problems: each diagnostic of
 * the package's reader (a line that is not JSON, a torn last line, JSON that is not a record, bytes that
 * are not UTF-8, an entry whose id or parent is wrong), and two facts about the file as a whole: a format
 * version older than the current one, a last line without a line feed.
 *
 * What a repair does, and why only that:
 * - `drop-line`: a line that is not JSON at all (`invalid-json`), or the torn remains of a last line
 *   (`torn-last-line`), is dropped. Nobody can read it: pi skips it too, so dropping it changes nothing
 *   of what pi or this package reads, and the backup keeps every byte of it.
 * - `terminate-last-line`: a line feed is added after a last line that parses, so that the next append
 *   starts a line of its own instead of being joined onto it.
 * - `migrate`: an older version is rewritten in the current one, as opening it for writing does.
 * Everything else is reported and left alone: JSON that is not a record (pi takes some of it as a record),
 * entries with duplicate ids or missing parents (which entry is "right" is not the tool's call), bytes
 * that are not UTF-8 (the entry is read, with U+FFFD). The lines that are kept are kept byte for byte
 * (re-encoded only when the file is migrated). The original is first given a backup name, as a migration
 * does (`<file>.v<N>.bak`, or `.v<N>.<k>.bak` when that is taken), then the file is replaced atomically.
 * @module
 */

import { type Migrated, migrateWithBackup, rewriteWithBackup } from "../../src/backup.ts";
import {
	CURRENT_SESSION_VERSION,
	type Diagnostic,
	type DiagnosticReason,
	runTask,
	SessionFormatError,
	SessionTree,
	type Storage,
} from "../../src/index.ts";
import { type EmptySession, type ReadSession, readSessionFile } from "../../src/load.ts";
import { CliError } from "./errors.ts";

/** What `--repair` does about a problem; `null`: nothing (it is only reported). */
export type RepairAction = "drop-line" | "terminate-last-line" | "migrate";

/** The diagnostics' reasons, and the file-level facts. */
export type ProblemReason = DiagnosticReason | "old-version" | "missing-final-newline" | "not-a-session" | "empty-file";

/** One problem: a diagnostic's fields (line, byte offset, excerpt, message) and what a repair does about it. */
export interface Problem extends Omit<Diagnostic, "reason"> {
	reason: ProblemReason;
	repair: RepairAction | null;
}

export interface Examination {
	path: string;
	/** The version the file declares (1 when it says none); `null` when it is no session. */
	version: number | null;
	/** Entries read (header and skipped lines aside). */
	entries: number;
	/** In file order. */
	problems: Problem[];
	/** What a migration could not carry over faithfully (a v1 compaction index that points nowhere). */
	migrationWarnings: string[];
	/** The file as read, when it is a session. */
	read: ReadSession | undefined;
}

/** What a repair did. */
export interface RepairDone {
	backupPath: string;
	/** Line numbers (in the original) of the lines dropped. */
	droppedLines: number[];
	/** The version migrated from, or `null`. */
	migratedFrom: number | null;
	terminatedLastLine: boolean;
}

const DROPPED: ReadonlySet<ProblemReason> = new Set<ProblemReason>(["invalid-json", "torn-last-line"]);

function noSession(path: string, problem: Omit<Problem, "repair">): Examination {
	return {
		path,
		version: null,
		entries: 0,
		problems: [{ ...problem, repair: null }],
		migrationWarnings: [],
		read: undefined,
	};
}

/** Read `path` whole (nothing is written) and list its problems. */
export async function examine(storage: Storage, path: string): Promise<Examination> {
	let read: ReadSession | EmptySession | null;
	try {
		read = await runTask(readSessionFile(path, { load: "full" }), storage);
	} catch (error) {
		if (!(error instanceof SessionFormatError)) throw error;
		const { line, byteOffset, excerpt } = error;
		const message = "the first record is not a session header: this is no pi session (pi and this package refuse it)";
		return noSession(path, { reason: "not-a-session", line, byteOffset, excerpt, message });
	}
	if (!read) throw new CliError(`no such session file: ${path}`);
	if ("empty" in read) {
		const message = "the file is empty: it has no session header (opening it for writing gives it one)";
		return noSession(path, { reason: "empty-file", line: 1, byteOffset: 0, excerpt: "", message });
	}
	const tree = SessionTree.fromRecords(read.records, { file: path, locations: read.locations });
	const diagnostics = [...read.diagnostics, ...tree.diagnostics];
	const problems: Problem[] = diagnostics.map((diagnostic) => ({
		...diagnostic,
		repair: DROPPED.has(diagnostic.reason) ? "drop-line" : null,
	}));
	const { fromVersion, changed, warnings } = read.migration;
	const header = read.locations[0];
	if (changed && header) {
		problems.push({
			reason: "old-version",
			line: header.line,
			byteOffset: header.byteOffset,
			excerpt: header.excerpt ?? "",
			message: `format version ${fromVersion}, older than the current ${CURRENT_SESSION_VERSION}: pi rewrites it in place when it opens it`,
			repair: "migrate",
		});
	}
	if (!read.endsWithNewline && !diagnostics.some((diagnostic) => diagnostic.reason === "torn-last-line")) {
		const last = lastLine(read, diagnostics);
		problems.push({
			...last,
			reason: "missing-final-newline",
			message: "the last line has no line feed: the next line appended would be joined onto it",
			repair: "terminate-last-line",
		});
	}
	problems.sort((a, b) => a.line - b.line);
	return {
		path,
		version: fromVersion,
		entries: read.records.length - 1,
		// One field order for every problem: the JSON report's.
		problems: problems.map(({ reason, line, byteOffset, excerpt, message, repair }) => ({
			reason,
			line,
			byteOffset,
			excerpt,
			message,
			repair,
		})),
		migrationWarnings: warnings,
		read,
	};
}

/** Where the file's last non-blank line is: the last record's or the last skipped line's. */
function lastLine(read: ReadSession, diagnostics: readonly Diagnostic[]): Omit<Diagnostic, "reason" | "message"> {
	const record = read.locations[read.locations.length - 1];
	let last = { line: record?.line ?? 1, byteOffset: record?.byteOffset ?? 0, excerpt: record?.excerpt ?? "" };
	for (const diagnostic of diagnostics) if (diagnostic.line > last.line) last = diagnostic;
	return { line: last.line, byteOffset: last.byteOffset, excerpt: last.excerpt };
}

/** Whether a repair would change the file. */
export function repairable(examination: Examination): boolean {
	return examination.problems.some((problem) => problem.repair !== null);
}

/**
 * Repair what is safe (see the module's notes), the original kept as a backup first. The caller holds
 * the file's writer lock, and `examination` was made under it. `undefined` when there is nothing to repair.
 */
export async function repair(storage: Storage, examination: Examination): Promise<RepairDone | undefined> {
	const { path, read } = examination;
	if (!read || !repairable(examination)) return undefined;
	const dropped = examination.problems
		.filter((problem) => problem.repair === "drop-line")
		.map((problem) => problem.line);
	const drop = new Set(dropped);
	let migrated: Migrated;
	if (read.migration.changed) {
		// Every skipped line has one diagnostic, in file order; an `invalid-utf8` one belongs to a kept record.
		const skipping = read.diagnostics.filter((diagnostic) => diagnostic.reason !== "invalid-utf8");
		if (skipping.length !== read.skippedLines.length) {
			throw new Error(`${path}: the skipped lines and their diagnostics do not match; nothing was written`);
		}
		const skippedLines = read.skippedLines.filter((_, index) => !drop.has((skipping[index] as Diagnostic).line));
		migrated = await runTask(migrateWithBackup(path, { ...read, skippedLines }), storage);
	} else {
		const bytes = await readBytes(storage, path, read.size);
		const ranges = examination.problems
			.filter((problem) => problem.repair === "drop-line")
			.map((problem) => lineRange(bytes, problem.byteOffset));
		migrated = await runTask(rewriteWithBackup(path, read, keptBytes(bytes, ranges)), storage);
	}
	if (!migrated.backupPath) {
		throw new CliError(`${path} changed while it was being repaired: nothing was written; check it again`);
	}
	return {
		backupPath: migrated.backupPath,
		droppedLines: dropped,
		migratedFrom: read.migration.changed ? read.migration.fromVersion : null,
		terminatedLastLine: examination.problems.some((problem) => problem.repair === "terminate-last-line"),
	};
}

const READ_BYTES = 16 << 20;
const LINE_FEED = 0x0a;

/** The first `size` bytes of a file (what was read; lines appended since are carried over by the rewrite). */
async function readBytes(storage: Storage, path: string, size: number): Promise<Uint8Array> {
	const bytes = new Uint8Array(size);
	for (let offset = 0; offset < size; ) {
		const chunk = await storage.readRange(path, offset, Math.min(size, offset + READ_BYTES));
		if (chunk.length === 0) throw new CliError(`${path} became shorter while it was being repaired; check it again`);
		bytes.set(chunk, offset);
		offset += chunk.length;
	}
	return bytes;
}

/** `[start, end)` of the line that starts at `start`, its line feed included. */
function lineRange(bytes: Uint8Array, start: number): [number, number] {
	const feed = bytes.indexOf(LINE_FEED, start);
	return [start, feed === -1 ? bytes.length : feed + 1];
}

/** The bytes outside `ranges` (in file order), ending with a line feed. */
function* keptBytes(bytes: Uint8Array, ranges: readonly [number, number][]): Generator<Uint8Array> {
	let at = 0;
	let last = -1;
	const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
	for (const [start, end] of [...sorted, [bytes.length, bytes.length] as [number, number]]) {
		if (start > at) {
			yield bytes.subarray(at, start);
			last = bytes[start - 1] as number;
		}
		at = Math.max(at, end);
	}
	if (last !== -1 && last !== LINE_FEED) yield new Uint8Array([LINE_FEED]);
}
