/**
 * `ls`: sessions newest first, as pi 1.6's `list` (one project) or `listAll` (every project) gives them,
 * through the listing catalog; `--json` prints pi's `SessionInfo` rows as they are (dates as ISO strings).
 * @module
 */
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import {
	encodeCwd,
	listAllSessions,
	listSessions,
	MAX_NESTING_DEPTH,
	type SessionInfo,
	type SkippedLine,
	type SkippedLines,
} from "../../../src/index.ts";
import { CliError } from "../errors.ts";
import { shortIds } from "../find-session.ts";
import { writeSessionsJson } from "../listing-json.ts";
import { isDirectory } from "../places.ts";
import type { RunContext } from "../run-context.ts";
import { formatBytes, oneLine, plural } from "../terminal.ts";

export interface LsOptions {
	all: boolean;
	cwd?: string;
	json: boolean;
}

/** Lines a note names one by one; the rest are counted. */
const NAMED_LINES = 3;

/** One skipped line in words: `line 3 (608.0 MB) is longer than the limit of 512.0 MB`. */
function skippedLineText(line: SkippedLine, maxLineBytes: number): string {
	const why =
		line.reason === "too-long"
			? `is longer than the limit of ${formatBytes(maxLineBytes)}`
			: `nests deeper than ${MAX_NESTING_DEPTH} levels`;
	return `line ${line.line} (${formatBytes(line.bytes)}) ${why}`;
}

/**
 * The note (one line) for the lines a listing skipped in one file: each of the first few with its number,
 * size and limit, then what became of the file (`outcome`: "listed without it", "not searched"…).
 */
export function skippedLinesNote(skipped: SkippedLines, outcome: string): string {
	const named = skipped.lines.slice(0, NAMED_LINES).map((line) => skippedLineText(line, skipped.maxLineBytes));
	const more = skipped.count - named.length;
	const lines = more > 0 ? `${named.join("; ")}; and ${plural(more, "more line")}` : named.join("; ");
	return `pi-sessions: ${skipped.path}: ${lines}: ${outcome}`;
}

/** The sessions an `ls`-like command names: every project's, or those of one project directory. */
export async function listedSessions(
	context: RunContext,
	options: { all: boolean; cwd?: string },
	onSkippedLines?: (skipped: SkippedLines) => void,
): Promise<SessionInfo[]> {
	if (options.all && options.cwd !== undefined) throw new CliError("give --all or --cwd, not both", 2);
	const places = context.places();
	const progress = context.output.progress("listing");
	const listOptions = {
		catalog: places.catalog,
		onProgress: (done: number, total: number) => progress.update(done, total),
		maxLineBytes: context.limits?.maxLineBytes,
		onSkippedLines,
	};
	try {
		if (options.all) return await listAllSessions(context.storage, places.root, listOptions);
		const cwd = resolve(options.cwd ?? process.cwd());
		const dir = join(places.root, encodeCwd(cwd));
		if (!isDirectory(dir)) {
			context.output.note(`No sessions for ${cwd} (looked in ${dir}); --all lists every project's.`);
			return [];
		}
		return await listSessions(context.storage, dir, listOptions);
	} finally {
		progress.end();
	}
}

function sizeOf(path: string): number | undefined {
	try {
		return statSync(path).size;
	} catch {
		return undefined;
	}
}

/** `2026-01-12 08:07` in UTC: the same on every machine, sortable. */
export function shortTime(date: Date): string {
	const time = date.getTime();
	return Number.isNaN(time) ? "????-??-?? ??:??" : date.toISOString().slice(0, 16).replace("T", " ");
}

export async function lsCommand(context: RunContext, options: LsOptions): Promise<void> {
	const { output } = context;
	const skipped: SkippedLines[] = [];
	const sessions = await listedSessions(context, options, (lines) => skipped.push(lines));
	// After the listing: a progress bar may be drawn on standard error while it reads.
	for (const lines of skipped) {
		const them = lines.count > 1 ? "them" : "it";
		const outcome = lines.listed ? `listed without ${them}` : `not listed: without ${them} the file is no session`;
		output.note(skippedLinesNote(lines, outcome));
	}
	if (options.json) {
		await writeSessionsJson(sessions, (chunk) => output.jsonBytes(chunk));
		return;
	}
	if (sessions.length === 0) {
		output.note("No sessions.");
		return;
	}
	const { color } = output;
	const width = Math.max(40, (process.stdout.columns ?? 120) - 48);
	const short = shortIds(
		sessions.map((session) => session.id),
		context.places(),
	);
	for (const session of sessions) {
		const size = sizeOf(session.path);
		const id = short(session.id);
		const title = session.name ?? (session.firstMessage || "(no messages)");
		const cells = [
			color.dim(shortTime(session.modified)),
			color.cyan(id.padEnd(8)),
			`${String(session.messageCount).padStart(5)} msg`,
			(size === undefined ? "?" : formatBytes(size)).padStart(9),
			session.name ? color.bold(oneLine(title, width)) : oneLine(title, width),
		];
		output.line(cells.join("  "));
		if (options.all) output.line(color.dim(`${" ".repeat(18)}${session.cwd || "(no working directory)"}`));
	}
	output.note(
		`${sessions.length} session${sessions.length === 1 ? "" : "s"} · pi-sessions tree|context|stats ID for one of them`,
	);
}
