/**
 * Finding and listing sessions on storage: the most recent session of a directory, a session by id, and
 * pi's `SessionInfo` listing with bounded concurrency and progress.
 * @module
 */
import type { FileEntry, SessionHeader } from "./entries.ts";
import { HeaderTooLongError, readSessionFile, readSessionHeader } from "./load.ts";
import { joinPath, sessionIdOfFileName, validateSessionId } from "./paths.ts";
import { io, runTask, type Storage, type Task } from "./storage.ts";
import { normalizeSessionName } from "./tree.ts";

/** pi's `SessionInfo`: what a session picker shows. */
export interface SessionInfo {
	path: string;
	id: string;
	/** Working directory where the session was started; empty for old sessions. */
	cwd: string;
	name?: string;
	parentSessionPath?: string;
	created: Date;
	modified: Date;
	messageCount: number;
	firstMessage: string;
	allMessagesText: string;
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
}

/** Which header working directories a search accepts: one exactly, or those a predicate accepts. */
export type CwdFilter = string | ((headerCwd: unknown) => boolean);

function cwdMatches(filter: CwdFilter | undefined, headerCwd: unknown): boolean {
	if (filter === undefined) return true;
	return typeof filter === "string" ? headerCwd === filter : filter(headerCwd);
}

function* jsonlFiles(dir: string): Task<string[]> {
	const entries = yield* io("list", dir);
	// Not only plain files: a session may be a symbolic link (reading it tells whether it is a session).
	return entries.filter((e) => !e.isDirectory && e.name.endsWith(".jsonl")).map((e) => joinPath(dir, e.name));
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
	let best: { path: string; mtimeMs: number } | null = null;
	for (const path of yield* jsonlFiles(dir)) {
		const header = yield* headerOrNull(path);
		if (!header || !cwdMatches(cwd, header.cwd)) continue;
		const stat = yield* io("stat", path);
		if (stat && (!best || stat.mtimeMs > best.mtimeMs)) best = { path, mtimeMs: stat.mtimeMs };
	}
	return best?.path ?? null;
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

function textOf(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.filter((block): block is { type: "text"; text: string } => block?.type === "text")
		.map((block) => block.text)
		.join(" ");
}

/** pi's summary of one session's records. */
export function sessionInfoOf(path: string, records: readonly FileEntry[], mtimeMs: number): SessionInfo | null {
	const header = records[0] as SessionHeader | undefined;
	if (header?.type !== "session") return null;
	let messageCount = 0;
	let firstMessage = "";
	let name: string | undefined;
	let lastActivity = 0;
	const texts: string[] = [];
	for (const record of records) {
		if (record.type === "session_info") name = normalizeSessionName(record.name);
		if (record.type !== "message") continue;
		messageCount++;
		const message = record.message as { role?: unknown; content?: unknown; timestamp?: unknown };
		// As pi: only user and assistant messages that have content count as activity and text.
		if (typeof message !== "object" || message === null || !("content" in message)) continue;
		if (message.role !== "user" && message.role !== "assistant") continue;
		const activity = typeof message.timestamp === "number" ? message.timestamp : Date.parse(record.timestamp);
		if (!Number.isNaN(activity)) lastActivity = Math.max(lastActivity, activity);
		const text = textOf(message.content);
		if (!text) continue;
		texts.push(text);
		if (!firstMessage && message.role === "user") firstMessage = text;
	}
	const created = Date.parse(header.timestamp);
	const modified = lastActivity > 0 ? lastActivity : Number.isNaN(created) ? mtimeMs : created;
	return {
		path,
		id: header.id,
		cwd: typeof header.cwd === "string" ? header.cwd : "",
		name,
		parentSessionPath: header.parentSession,
		created: new Date(header.timestamp),
		modified: new Date(modified),
		messageCount,
		firstMessage: firstMessage || "(no messages)",
		allMessagesText: texts.join(" "),
	};
}

/** The `SessionInfo` of one file, or `null` when it is not a readable session. */
export function* sessionInfoTask(path: string, signal?: AbortSignal): Task<SessionInfo | null> {
	try {
		const read = yield* readSessionFile(path, { signal });
		if (!read || "empty" in read) return null;
		return sessionInfoOf(path, read.records, read.mtimeMs);
	} catch (error) {
		if (signal?.aborted) throw error;
		return null;
	}
}

/** Run tasks with at most `limit` at once; results in input order. */
async function pool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
	const results = new Array<R>(items.length);
	let next = 0;
	const worker = async () => {
		for (let index = next++; index < items.length; index = next++) results[index] = await work(items[index] as T);
	};
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
	return results;
}

function newestFirst(sessions: SessionInfo[]): SessionInfo[] {
	return sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

async function listFiles(storage: Storage, files: string[], options: ListOptions): Promise<SessionInfo[]> {
	options.signal?.throwIfAborted();
	const publishEvery = Math.max(1, Math.floor(options.publishEvery ?? 10) || 10);
	const found: SessionInfo[] = [];
	let loaded = 0;
	const infos = await pool(files, Math.max(1, Math.floor(options.concurrency ?? 8) || 8), async (path) => {
		options.signal?.throwIfAborted();
		const info = await runTask(sessionInfoTask(path, options.signal), storage);
		loaded++;
		if (info) found.push(info);
		if (options.onProgress) {
			const publish = loaded === 1 || loaded % publishEvery === 0 || loaded === files.length;
			options.onProgress(loaded, files.length, publish ? newestFirst([...found]) : undefined);
		}
		return info;
	});
	return newestFirst(infos.filter((info): info is SessionInfo => info !== null));
}

/**
 * pi's `SessionManager.list`: the sessions of one directory, most recently modified first.
 * @example
 * const sessions = await listSessions(storage, "/home/me/.pi/agent/sessions/--project--");
 */
export async function listSessions(storage: Storage, dir: string, options: ListOptions = {}): Promise<SessionInfo[]> {
	return listFiles(storage, await runTask(jsonlFiles(dir), storage), options);
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
	return listFiles(storage, files, options);
}
