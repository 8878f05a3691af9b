/**
 * `search QUERY`: the user and assistant messages of sessions that hold a text, case-insensitively, newest
 * session first (the listing's order), entries in file order within a session, one row per matching entry
 * (its first occurrence), at most `--limit` rows.
 *
 * What is searched is the text pi's listing keeps as a session's `allMessagesText`: the content of user and
 * assistant messages (a string, or their text blocks joined by spaces), on every branch of the file.
 * Thinking, tool calls, tool results, bash output, summaries and custom messages are not searched. Since
 * it is the same text, the listing (through its catalog) says exactly which sessions can match, and only
 * those files are opened (read-only; lazily when big) to find the entries; a warm search reads no other
 * session file.
 * A session whose listed text matches but none of whose entries do (the text spans two messages, which
 * the listing joins with a space) gives no rows.
 *
 * Case-insensitive means Unicode simple case folding (a regular expression's `iu`): `Ä` finds `ä`, `K`
 * finds the Kelvin sign, but `ß` does not find `SS`; no normalization (a composed `é` does not find a
 * decomposed one).
 *
 * `--json` prints an array (empty when nothing matches) of rows, one per matching entry, in that order:
 * ```ts
 * {
 *   sessionId: string;    // the session header's id
 *   path: string;         // the session file
 *   cwd: string;          // the session's working directory ("" for old sessions)
 *   sessionName?: string; // its name (session_info), when it has one
 *   entryId: string;      // the matching entry (for `pi-sessions show SESSION ENTRY_ID`)
 *   role: "user" | "assistant";
 *   timestamp: string;    // the entry's timestamp, as written
 *   snippet: string;      // one line: about 40 characters either side of the match, `…` where cut
 *   matchStart: number;   // where the match starts in `snippet` (UTF-16 code units, as JavaScript counts)
 *   matchLength: number;  // and its length there
 * }
 * ```
 * Notes (the count of rows, the rows left out by the limit, lines not searched because they are over a
 * read limit: longer than the longest line read, or nested too deep) go to standard error.
 * @module
 */
import type { Session, SessionEntry, SessionInfo, SkippedLines } from "../../../src/index.ts";
import { textOf as listedMessageText } from "../../../src/listing-summary.ts";
import { CliError } from "../errors.ts";
import { shortIds } from "../find-session.ts";
import { withSession } from "../read-session.ts";
import type { RunContext } from "../run-context.ts";
import { type Colors, oneLine, plural } from "../terminal.ts";
import { listedSessions, shortTime, skippedLinesNote } from "./ls.ts";

export interface SearchOptions {
	all: boolean;
	cwd?: string;
	limit: number;
	json: boolean;
}

/** One matching entry: the `--json` row (see the module comment). */
export interface SearchMatch {
	sessionId: string;
	path: string;
	cwd: string;
	sessionName?: string;
	entryId: string;
	role: "user" | "assistant";
	timestamp: string;
	snippet: string;
	matchStart: number;
	matchLength: number;
}

/** What a search found: the rows, and what the limit left out. */
export interface SearchResult {
	matches: SearchMatch[];
	/** The sessions the rows come from, in order (for their titles). */
	sessions: Map<string, SessionInfo>;
	/** The limit stopped the search inside this session (it has more matching entries). */
	moreInSession?: SessionInfo;
	/** Sessions after that one whose listed text matches, not opened. */
	moreSessions: number;
	/** Sessions that could not be read: path and why. */
	unreadable: { path: string; reason: string }[];
}

/** Characters of context on either side of a match, and how many fewer a cut between words may leave. */
const SIDE = 40;
const WORD_SLACK = 12;
/** Entries decoded at once. */
const PAGE = 256;
/**
 * Files up to this size are read whole (for a small session about twice as fast as a lazy open, measured:
 * 60 sessions of 24 KB, 80 ms against 145 ms), bigger ones lazily (only the messages searched are decoded).
 */
const WHOLE_UP_TO = 4 << 20;

/** The query as a pattern: the text itself, case-insensitive (Unicode simple case folding). */
export function queryPattern(query: string): RegExp {
	return new RegExp(query.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&"), "iu");
}

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** The last `width` code units of `text`, without half a surrogate pair at the start. */
function tail(text: string, width: number): string {
	const start = Math.max(0, text.length - width);
	return start > 0 && isLow(text.charCodeAt(start)) && isHigh(text.charCodeAt(start - 1))
		? text.slice(start + 1)
		: text.slice(start);
}

/** The first `width` code units of `text`, without half a surrogate pair at the end. */
function head(text: string, width: number): string {
	if (text.length <= width) return text;
	return isHigh(text.charCodeAt(width - 1)) && isLow(text.charCodeAt(width))
		? text.slice(0, width - 1)
		: text.slice(0, width);
}

const flat = (text: string) => text.replace(/\s+/g, " ");

/**
 * A one-line snippet of `text` around the match `[start, start + length)`: about `SIDE` code units on
 * either side (cut between words where one ends near), runs of white space as one space, `…` where text
 * was left out; and where the match is in it.
 * @example
 * snippetOf("so the dark mode toggle", 7, 4); // { snippet: "so the dark mode toggle", matchStart: 7, matchLength: 4 }
 */
export function snippetOf(
	text: string,
	start: number,
	length: number,
): { snippet: string; matchStart: number; matchLength: number } {
	// A window wider than the snippet, so that white space that collapses still leaves enough.
	const from = Math.max(0, start - 4 * SIDE);
	const to = Math.min(text.length, start + length + 4 * SIDE);
	let before = flat(text.slice(from, start));
	let after = flat(text.slice(start + length, to));
	const match = flat(text.slice(start, start + length));
	// A window's edge may fall inside a surrogate pair: drop the half.
	if (from > 0 && isLow(before.charCodeAt(0))) before = before.slice(1);
	if (to < text.length && isHigh(after.charCodeAt(after.length - 1))) after = after.slice(0, -1);
	let cutBefore = from > 0;
	if (before.length > SIDE) {
		before = tail(before, SIDE);
		cutBefore = true;
		// Not in the middle of a word, where a word ends near the cut.
		const space = before.indexOf(" ");
		if (space >= 0 && space < WORD_SLACK) before = before.slice(space + 1);
	}
	let cutAfter = to < text.length;
	if (after.length > SIDE) {
		after = head(after, SIDE);
		cutAfter = true;
		const space = after.lastIndexOf(" ");
		if (space > after.length - WORD_SLACK) after = after.slice(0, space);
	}
	before = cutBefore ? `…${before.trimStart()}` : before.trimStart();
	after = cutAfter ? `${after.trimEnd()}…` : after.trimEnd();
	return { snippet: `${before}${match}${after}`, matchStart: before.length, matchLength: match.length };
}

/** The header id as a string (a damaged header's may be any JSON value). */
function idOf(info: SessionInfo): string {
	return typeof info.id === "string" ? info.id : (JSON.stringify(info.id) ?? String(info.id));
}

/** The listed text of a user or assistant message entry (pi's listing rules), or undefined for other entries. */
function searchedText(entry: SessionEntry | undefined): { role: "user" | "assistant"; text: string } | undefined {
	if (entry?.type !== "message") return undefined;
	const message = entry.message as unknown;
	if (typeof message !== "object" || message === null || !("content" in message)) return undefined;
	const { role, content } = message as { role?: unknown; content?: unknown };
	if (role !== "user" && role !== "assistant") return undefined;
	return { role, text: listedMessageText(content) };
}

/**
 * The matching entries of one opened session, in file order, until `enough` says stop. Only user and
 * assistant messages are decoded (the outline tells which, from the structure), a page at a time.
 */
async function matchesIn(
	session: Session,
	info: SessionInfo,
	pattern: RegExp,
	found: (match: SearchMatch) => boolean,
): Promise<void> {
	const ids = session
		.outline()
		.filter((node) => node.type === "message" && (node.role === "user" || node.role === "assistant"))
		.map((node) => node.id);
	for (let page = 0; page < ids.length; page += PAGE) {
		for (const entry of await session.getEntriesById(ids.slice(page, page + PAGE))) {
			const searched = searchedText(entry);
			if (!entry || !searched) continue;
			const match = pattern.exec(searched.text);
			if (!match) continue;
			const row: SearchMatch = {
				sessionId: idOf(info),
				path: info.path,
				cwd: info.cwd,
				...(info.name !== undefined ? { sessionName: info.name } : {}),
				entryId: entry.id,
				role: searched.role,
				timestamp: String(entry.timestamp),
				...snippetOf(searched.text, match.index, match[0].length),
			};
			if (!found(row)) return;
		}
	}
}

/**
 * Search `sessions` (in their order) for `query`: the sessions whose listed text matches are opened, the
 * others are not; stops after `limit` rows, at the first row past them.
 */
export async function searchSessions(
	context: RunContext,
	sessions: readonly SessionInfo[],
	query: string,
	limit: number,
): Promise<SearchResult> {
	const pattern = queryPattern(query);
	const result: SearchResult = { matches: [], sessions: new Map(), moreSessions: 0, unreadable: [] };
	for (const info of sessions) {
		if (!pattern.test(info.allMessagesText)) continue;
		if (result.moreInSession || result.matches.length >= limit) {
			result.moreSessions++;
			continue;
		}
		try {
			const size = (await context.storage.stat(info.path))?.size ?? 0;
			await withSession(
				context,
				info.path,
				(session) =>
					matchesIn(session, info, pattern, (row) => {
						if (result.matches.length >= limit) {
							result.moreInSession = info;
							return false;
						}
						result.matches.push(row);
						result.sessions.set(info.path, info);
						return true;
					}),
				size > WHOLE_UP_TO ? "lazy" : "full",
			);
		} catch (error) {
			result.unreadable.push({ path: info.path, reason: error instanceof Error ? error.message : String(error) });
		}
	}
	return result;
}

export async function searchCommand(context: RunContext, query: string, options: SearchOptions): Promise<void> {
	if (query === "") throw new CliError("search: give the text to look for");
	const { output } = context;
	const skipped: SkippedLines[] = [];
	const sessions = await listedSessions(context, options, (lines) => skipped.push(lines));
	// The listed text (what is searched) and the opened session both leave such lines out: say so.
	for (const lines of skipped) {
		const them = lines.count > 1 ? "them" : "it";
		const outcome = lines.listed ? "not searched" : `not searched: without ${them} the file is no session`;
		output.note(skippedLinesNote(lines, outcome));
	}
	if (sessions.length === 0) {
		if (options.json) output.line("[]");
		output.note("No sessions to search.");
		return;
	}
	const result = await searchSessions(context, sessions, query, options.limit);
	const short = shortIds(
		sessions.map((session) => session.id),
		context.places(),
	);
	for (const { path, reason } of result.unreadable) output.note(`pi-sessions: could not read ${path}: ${reason}`);
	if (options.json) output.json(result.matches);
	else printMatches(result, output.color, short, (text) => output.line(text));
	output.note(summary(result, query, sessions.length, options.limit, short));
}

/** Rows grouped under their session: id prefix, name or first message, working directory. */
function printMatches(
	result: SearchResult,
	color: Colors,
	short: (id: unknown) => string,
	line: (text?: string) => void,
): void {
	let current: string | undefined;
	for (const match of result.matches) {
		if (match.path !== current) {
			if (current !== undefined) line();
			current = match.path;
			const info = result.sessions.get(match.path);
			const title = match.sessionName ?? (info?.firstMessage || "(no messages)");
			const heading = match.sessionName ? color.bold(oneLine(title, 60)) : oneLine(title, 60);
			line(`${color.cyan(short(match.sessionId))}  ${heading}  ${color.dim(match.cwd || "(no working directory)")}`);
		}
		const { snippet, matchStart, matchLength } = match;
		const shown = `${snippet.slice(0, matchStart)}${color.bold(color.red(snippet.slice(matchStart, matchStart + matchLength)))}${snippet.slice(matchStart + matchLength)}`;
		const when = shortTime(new Date(match.timestamp));
		line(`  ${color.dim(when)}  ${color.cyan(match.entryId)}  ${match.role.padEnd(9)}  ${shown}`);
	}
}

function summary(
	result: SearchResult,
	query: string,
	searched: number,
	limit: number,
	short: (id: unknown) => string,
): string {
	const { matches, moreInSession, moreSessions } = result;
	const inSessions = plural(result.sessions.size, "session");
	const of = `${plural(searched, "session")} searched`;
	if (matches.length === 0 && !moreInSession && moreSessions === 0) return `No matches for "${query}" (${of}).`;
	const shown = `${plural(matches.length, "match", "matches")} in ${inSessions} (${of})`;
	if (!moreInSession && moreSessions === 0) return `${shown}.`;
	const more: string[] = [];
	if (moreInSession) more.push(`more in ${short(idOf(moreInSession))}`);
	if (moreSessions > 0) more.push(`${plural(moreSessions, "more session")} whose text matches`);
	return `${shown}; the limit of ${limit} left out ${more.join(" and ")} (--limit N shows more).`;
}
