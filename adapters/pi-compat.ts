/**
 * pi's `SessionManager`, with pi 1.6's public API and synchronous semantics, over this package's core: a
 * program written against `@earendil-works/pi-coding-agent` (or `@mariozechner/pi-coding-agent`) can
 * switch its import. It runs the same persistence tasks as the asynchronous `Session`, on Node's
 * synchronous `fs` (Node, Bun and Deno). Where DESIGN.md differs from pi it follows DESIGN.md: files are
 * locked against writers in other processes (managers of this process share a file's lock, so code that
 * opens a file it already has open works as in pi; call `close()` to release early; locks are released at
 * exit), migrations keep a backup, damaged files are repaired or refused instead of truncated.
 * @example
 * import { SessionManager } from "pi-session-tree/pi-compat";
 * const session = SessionManager.create(process.cwd());
 * session.appendMessage({ role: "user", content: "hi", timestamp: Date.now() });
 * @module
 */
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import {
	findByHeaderId,
	findMostRecentSession as findMostRecentTask,
	type ListProgress,
	listAllSessions,
	listSessions,
	type SessionInfo,
} from "../src/catalog.ts";
import type {
	AgentMessage,
	ContextEditReplacement,
	FileEntry,
	ImageContent,
	SessionContext,
	SessionEntry,
	SessionHeader,
	SessionProjection,
	SessionTreeNode,
	StoredMessage,
	TextContent,
	Usage,
	UsageEntry,
} from "../src/entries.ts";
import { isSessionHeader } from "../src/entries.ts";
import { SessionLockedError } from "../src/errors.ts";
import { branchIntoNewFile, forkFromTask } from "../src/fork.ts";
import { LineSplitter, parseSessionEntries as parseEntries, parseLine } from "../src/jsonl.ts";
import { migrateToCurrentVersion } from "../src/migrate.ts";
import { newSessionCore, type OpenOptions, openSessionFile, prepareToOpen } from "../src/open-session.ts";
import { defaultSessionDir, sessionsRoot, validateSessionId } from "../src/paths.ts";
import { SessionCore } from "../src/session-core.ts";
import { runTaskSync, type Task } from "../src/storage.ts";
import { SessionTree } from "../src/tree.ts";
import type { HeldLock } from "../src/writer-lock.ts";
import { agentDir, createNodeStorage, createNodeSyncLocks, createNodeSyncStorage } from "./node.ts";

export type { SessionInfo } from "../src/catalog.ts";
export {
	buildContextEntries,
	buildSessionContext,
	buildSessionProjection,
	getLatestCompactionEntry,
	projectContextEntry,
	sessionEntryToContextMessages,
} from "../src/context.ts";
export type * from "../src/entries.ts";
export { CURRENT_SESSION_VERSION } from "../src/entries.ts";
export { migrateSessionEntries } from "../src/migrate.ts";

/** pi's `SessionListProgress`: `(loaded, total, sessions found so far?)`. */
export type SessionListProgress = ListProgress;

const storage = createNodeSyncStorage();
const locks = createNodeSyncLocks(storage);

/**
 * The writer locks this process holds, one per file, with the managers using each. pi has no locks and
 * lets a process open one file twice; here the managers of one file share its lock (each append is one
 * synchronous write of whole lines, so two managers never interleave inside a line), and the lock is
 * released when the last of them lets go. Writers in other processes are refused.
 */
const heldLocks = new Map<string, { lock: HeldLock; holders: Set<SessionCore> }>();
let exitHookInstalled = false;

/** Take over the lock a core acquired, so that it is shared and released with its last holder. */
function hold(core: SessionCore): SessionCore {
	if (!exitHookInstalled) {
		exitHookInstalled = true;
		process.once("exit", () => {
			for (const { lock } of heldLocks.values()) locks.release(lock);
			heldLocks.clear();
		});
	}
	if (core.path === undefined) return core;
	const held = heldLocks.get(core.path);
	if (held) held.holders.add(core);
	else if (core.lock) heldLocks.set(core.path, { lock: core.lock, holders: new Set([core]) });
	core.lock = undefined;
	return core;
}

/** Stop a core taking changes and release its file's lock if no other manager of this process uses it. */
function release(core: SessionCore): void {
	core.stopChanges();
	const held = core.path === undefined ? undefined : heldLocks.get(core.path);
	if (!held?.holders.delete(core) || held.holders.size > 0) return;
	heldLocks.delete(core.path as string);
	locks.release(held.lock);
}

/** The advice of a lock error, for what this facade offers. */
const LOCKED_ADVICE =
	"another process is writing this session: close it there, or read it without writing with SessionManager.inMemory(cwd, undefined, loadEntriesFromFile(path))";

/** Run a task (synchronously). */
function run<T>(task: Task<T>): T {
	return runTaskSync(task, storage);
}

/** Take a writer lock, with this facade's advice when the file is locked. */
function withAdvice<T>(take: () => T): T {
	try {
		return take();
	} catch (error) {
		if (error instanceof SessionLockedError)
			throw new SessionLockedError(error.path, error.owner, LOCKED_ADVICE, error.holder);
		throw error;
	}
}

/** Open a file for writing, sharing the lock with the managers of this process that already have it. */
function openCore(path: string, options: OpenOptions): SessionCore {
	run(prepareToOpen(path, { create: true }));
	const lock = heldLocks.has(path) ? undefined : withAdvice(() => locks.acquire(path));
	try {
		const core = run(openSessionFile(path, options));
		core.lock = lock;
		return hold(core);
	} catch (error) {
		if (lock) releaseQuietly(lock);
		throw error;
	}
}

/** A new core in `sessionDir`, or a fork of another file, with its writer lock. */
function lockedCore(task: Task<SessionCore>): SessionCore {
	const core = run(task);
	core.lock = withAdvice(() => locks.acquire(core.path as string));
	return core;
}

/** Release a lock after a failure: the failure is the one to report. */
function releaseQuietly(lock: HeldLock): void {
	try {
		locks.release(lock);
	} catch {
		// See above.
	}
}

/** pi's path resolution: `~` expanded, relative paths made absolute against the working directory. */
function resolvePath(path: string): string {
	if (path === "~") return homedir();
	if (path.startsWith("~/")) return join(homedir(), path.slice(2));
	return resolve(path);
}

/** pi's test that a header's cwd is `cwd`: a non-empty string that resolves to the same path. */
function startedIn(cwd: string): (headerCwd: unknown) => boolean {
	const wanted = resolvePath(cwd);
	return (headerCwd) => typeof headerCwd === "string" && headerCwd !== "" && resolvePath(headerCwd) === wanted;
}

/** pi's rule for a custom session directory: only the sessions of `cwd` are found there. */
function cwdFilterFor(cwd: string, sessionDir: string | undefined): ((headerCwd: unknown) => boolean) | undefined {
	const defaultDir = defaultSessionDir(resolvePath(cwd), resolvePath(agentDir()));
	return !sessionDir || resolvePath(sessionDir) === defaultDir ? undefined : startedIn(cwd);
}

/**
 * pi's default session directory for a cwd (created if missing, as pi does).
 * @example
 * const dir = getDefaultSessionDir(process.cwd());
 */
export function getDefaultSessionDir(cwd: string, agent: string = agentDir()): string {
	const dir = defaultSessionDir(resolvePath(cwd), resolvePath(agent));
	if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
	return dir;
}

/**
 * The most recently modified session file in a directory (optionally only one started in `cwd`), or `null`.
 * @example
 * const path = findMostRecentSession(getDefaultSessionDir(process.cwd()));
 */
export function findMostRecentSession(sessionDir: string, cwd?: string): string | null {
	return runTaskSync(findMostRecentTask(resolvePath(sessionDir), cwd ? startedIn(cwd) : undefined), storage);
}

/**
 * pi's `assertValidSessionId`: throws unless `id` is letters, digits, `.`, `_`, `-`, starting and
 * ending with a letter or digit.
 * @example
 * assertValidSessionId("my-session");
 */
export function assertValidSessionId(id: string): void {
	validateSessionId(id);
}

/**
 * pi's `parseSessionEntries`: the records of a session text; lines that are not records are skipped.
 * @example
 * const entries = parseSessionEntries(readFileSync(path, "utf8"));
 */
export function parseSessionEntries(content: string): FileEntry[] {
	return parseEntries(content);
}

/**
 * pi's `loadEntriesFromFile`: the records of a session file as written (not migrated); `[]` when there is
 * no file or it is not a session. Unlike pi it never writes (pi terminates a torn last line): reading is
 * safe while another process writes the file.
 * @example
 * const readOnly = SessionManager.inMemory(process.cwd(), undefined, loadEntriesFromFile(path));
 */
export function loadEntriesFromFile(filePath: string): FileEntry[] {
	const path = resolvePath(filePath);
	if (!statSync(path, { throwIfNoEntry: false })?.isFile()) return [];
	const splitter = new LineSplitter();
	const records: FileEntry[] = [];
	for (const line of [...splitter.push(readFileSync(path)), ...splitter.end()]) {
		const record = parseLine(line)?.record;
		if (record) records.push(record);
	}
	const first = records[0];
	return first && isSessionHeader(first) && typeof first.id === "string" ? records : [];
}

/** pi's `NewSessionOptions`. */
export interface NewSessionOptions {
	id?: string;
	parentSession?: string;
}

/** pi's `ReadonlySessionManager`. */
export type ReadonlySessionManager = Pick<
	SessionManager,
	| "getCwd"
	| "getSessionDir"
	| "getSessionId"
	| "getSessionFile"
	| "getLeafId"
	| "getLeafEntry"
	| "getEntry"
	| "getLabel"
	| "getBranch"
	| "buildContextEntries"
	| "buildSessionProjection"
	| "getHeader"
	| "getEntries"
	| "getTree"
	| "getSessionName"
>;

/** A manager's session: the core, and the working directory pi reports (resolved, as pi 1.6 does). */
function withCwd(core: SessionCore, cwd: string): SessionCore {
	core.cwd = resolvePath(cwd);
	return core;
}

/** The records given to `inMemory`, as a tree: with their header (migrated), or after a new one. */
function treeOfEntries(
	entries: readonly FileEntry[],
	cwd: string,
	options: NewSessionOptions | undefined,
): SessionTree {
	const header = entries.find(isSessionHeader);
	if (!header) {
		const tree = SessionTree.create({ cwd, ...options });
		for (const entry of entries) tree.addEntry(entry as SessionEntry);
		return tree;
	}
	const records = [header, ...entries.filter((entry) => entry !== header)];
	return SessionTree.fromRecords(migrateToCurrentVersion(records).entries);
}

/**
 * Sessions as append-only trees in JSONL files, with pi 1.6's API. See pi's documentation for each method.
 */
export class SessionManager {
	#core: SessionCore;
	readonly #persist: boolean;
	/** The file named by `setSessionFile` when not persisting: read, never written (as pi). */
	#memoryFile: string | undefined;

	private constructor(core: SessionCore, persist: boolean) {
		this.#core = hold(core);
		this.#persist = persist;
	}

	// Construction ----------------------------------------------------------------------------------

	/** A new session in `sessionDir` (default: pi's directory for `cwd`). */
	static create(cwd: string, sessionDir?: string, options?: NewSessionOptions): SessionManager {
		const resolvedCwd = resolvePath(cwd);
		const dir = sessionDir ? resolvePath(sessionDir) : getDefaultSessionDir(resolvedCwd);
		return new SessionManager(lockedCore(newSessionCore({ ...options, cwd: resolvedCwd, sessionDir: dir })), true);
	}

	/** Open a session file (a missing file becomes a new session at that path). */
	static open(path: string, sessionDir?: string, cwdOverride?: string): SessionManager {
		return new SessionManager(SessionManager.#openCore(resolvePath(path), sessionDir, cwdOverride), true);
	}

	static #openCore(path: string, sessionDir?: string, cwdOverride?: string): SessionCore {
		// As pi: a new or empty file gets this process's working directory, and so does a header without one.
		const newOrEmpty = !statSync(path, { throwIfNoEntry: false })?.size;
		const cwd = cwdOverride !== undefined ? resolvePath(cwdOverride) : newOrEmpty ? process.cwd() : undefined;
		const core = openCore(path, { sessionDir: sessionDir ? resolvePath(sessionDir) : undefined, cwd });
		return withCwd(core, typeof core.cwd === "string" && core.cwd !== "" ? core.cwd : process.cwd());
	}

	/** Continue the most recent session in the directory, or start a new one. */
	static continueRecent(cwd: string, sessionDir?: string): SessionManager {
		const dir = sessionDir ? resolvePath(sessionDir) : getDefaultSessionDir(cwd);
		const mostRecent = runTaskSync(findMostRecentTask(dir, cwdFilterFor(cwd, sessionDir)), storage);
		return mostRecent
			? new SessionManager(SessionManager.#openCore(mostRecent, dir, cwd), true)
			: SessionManager.create(cwd, dir);
	}

	/**
	 * A session that is never written; with `entries` (a file's records, say from `loadEntriesFromFile`),
	 * that session restored: its header's, or after a new header when they have none.
	 */
	static inMemory(cwd: string = process.cwd(), options?: NewSessionOptions, entries?: FileEntry[]): SessionManager {
		const resolvedCwd = resolvePath(cwd);
		if (options?.id !== undefined) validateSessionId(options.id);
		const core = entries?.length
			? SessionCore.detached(treeOfEntries(entries, resolvedCwd, options))
			: SessionCore.inMemory({ cwd: resolvedCwd, ...options });
		return new SessionManager(withCwd(core, resolvedCwd), false);
	}

	/** Copy another project's session, whole, into a new session for `targetCwd`. */
	static forkFrom(
		sourcePath: string,
		targetCwd: string,
		sessionDir?: string,
		options?: NewSessionOptions,
	): SessionManager {
		const cwd = resolvePath(targetCwd);
		const dir = sessionDir ? resolvePath(sessionDir) : getDefaultSessionDir(cwd);
		const core = lockedCore(forkFromTask(resolvePath(sourcePath), cwd, dir, { id: options?.id }));
		return new SessionManager(withCwd(core, cwd), true);
	}

	/** The file of the session with this id in `sessionDir` (default: pi's directory for `cwd`); headers only are read. */
	static findById(cwd: string, id: string, sessionDir?: string): string | undefined {
		const dir = sessionDir ? resolvePath(sessionDir) : getDefaultSessionDir(cwd);
		try {
			return runTaskSync(findByHeaderId(dir, id, cwdFilterFor(cwd, sessionDir)), storage) ?? undefined;
		} catch {
			return undefined; // as pi: discovery is best effort
		}
	}

	/** Sessions of one directory, most recently modified first. */
	static async list(
		cwd: string,
		sessionDir?: string,
		onProgress?: SessionListProgress,
		signal?: AbortSignal,
	): Promise<SessionInfo[]> {
		const dir = sessionDir ? resolvePath(sessionDir) : getDefaultSessionDir(cwd);
		const filter = cwdFilterFor(cwd, sessionDir);
		const included = filter && ((session: SessionInfo) => filter(session.cwd));
		return listSessions(createNodeStorage(), dir, { onProgress, signal, filter: included });
	}

	/** Sessions of every project (or of one sessions directory), most recently modified first. */
	static async listAll(
		sessionDirOrOnProgress?: string | SessionListProgress,
		onProgressOrSignal?: SessionListProgress | AbortSignal,
		signal?: AbortSignal,
	): Promise<SessionInfo[]> {
		const dir =
			typeof sessionDirOrOnProgress === "string" && sessionDirOrOnProgress
				? resolvePath(sessionDirOrOnProgress)
				: undefined;
		const onProgress =
			typeof sessionDirOrOnProgress === "function"
				? sessionDirOrOnProgress
				: typeof onProgressOrSignal === "function"
					? onProgressOrSignal
					: undefined;
		const abort = typeof onProgressOrSignal === "object" ? onProgressOrSignal : signal;
		const options = { onProgress, signal: abort };
		if (dir !== undefined) return listSessions(createNodeStorage(), dir, options);
		return listAllSessions(createNodeStorage(), sessionsRoot(agentDir()), { ...options, publishEvery: 100 });
	}

	// Switching sessions ----------------------------------------------------------------------------

	/** Switch to another session file. */
	setSessionFile(sessionFile: string): void {
		const path = resolvePath(sessionFile);
		if (!this.#persist) {
			// Read the file (if any), lock nothing, write nothing.
			this.#memoryFile = path;
			const read = statSync(path, { throwIfNoEntry: false })?.size
				? runTaskSync(openSessionFile(path, { readOnly: true }), storage)
				: undefined;
			const cwd = this.#core.cwd;
			this.#core = withCwd(read ? SessionCore.detached(read.tree) : SessionCore.inMemory({ cwd }), cwd);
			return;
		}
		const next = SessionManager.#openCore(path, this.#core.sessionDir, this.#core.cwd);
		release(this.#core);
		this.#core = hold(next);
	}

	/** Start a new session in the same directory; returns its file path (undefined in memory). */
	newSession(options?: NewSessionOptions): string | undefined {
		const cwd = this.#core.cwd;
		const next = this.#persist
			? lockedCore(newSessionCore({ cwd, sessionDir: this.#core.sessionDir, ...options }))
			: SessionCore.inMemory({ cwd, ...options });
		release(this.#core);
		this.#core = hold(withCwd(next, cwd));
		return this.#persist ? next.path : this.#memoryFile;
	}

	/**
	 * Let go of the session (ours; pi has no locks): its writer lock is released unless another manager of
	 * this process has the same file open. Appends afterwards throw `SessionClosedError`.
	 */
	close(): void {
		release(this.#core);
	}

	isPersisted(): boolean {
		return this.#persist;
	}
	getCwd(): string {
		return this.#core.cwd;
	}
	getSessionDir(): string {
		return this.#core.sessionDir;
	}
	/** Whether the session directory is pi's default one for the working directory. */
	usesDefaultSessionDir(): boolean {
		return resolvePath(this.#core.sessionDir) === defaultSessionDir(this.#core.cwd, resolvePath(agentDir()));
	}
	getSessionId(): string {
		return this.#core.tree.getSessionId();
	}
	getSessionFile(): string | undefined {
		return this.#persist ? this.#core.path : this.#memoryFile;
	}

	// Appending -------------------------------------------------------------------------------------

	/** Write the entry just appended; if that fails, take it back out (as pi does) and throw. */
	#appended(id: string): string {
		try {
			runTaskSync(this.#core.persist(this.#core.tree.size, false), storage);
		} catch (error) {
			this.#core.retractLastAppend();
			throw error;
		}
		return id;
	}
	#tree() {
		this.#core.assertWritable();
		return this.#core.tree;
	}

	appendMessage(message: StoredMessage | AgentMessage): string {
		return this.#appended(this.#tree().appendMessage(message));
	}
	appendThinkingLevelChange(thinkingLevel: string): string {
		return this.#appended(this.#tree().appendThinkingLevelChange(thinkingLevel));
	}
	appendModelChange(provider: string, modelId: string): string {
		return this.#appended(this.#tree().appendModelChange(provider, modelId));
	}
	/** Record model usage that is not an assistant message; returns the entry, as pi 1.6 does. */
	appendUsage(kind: string, provider: string, model: string, usage: Usage, note?: string): UsageEntry {
		const id = this.#appended(this.#tree().appendUsage(kind, provider, model, usage, note));
		return this.#core.tree.getEntry(id) as UsageEntry;
	}
	appendCompaction<T = unknown>(
		summary: string,
		firstKeptEntryId: string | null,
		tokensBefore: number,
		details?: T,
		fromHook?: boolean,
		usage?: Usage,
	): string {
		const tree = this.#tree();
		return this.#appended(tree.appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook, usage));
	}
	appendCustomEntry(customType: string, data?: unknown): string {
		return this.#appended(this.#tree().appendCustomEntry(customType, data));
	}
	appendSessionInfo(name: string): string {
		return this.#appended(this.#tree().appendSessionInfo(name));
	}
	appendCustomMessageEntry<T = unknown>(
		customType: string,
		content: string | (TextContent | ImageContent)[],
		display: boolean,
		details?: T,
	): string {
		return this.#appended(this.#tree().appendCustomMessageEntry(customType, content, display, details));
	}
	appendContextEdit(targetId: string, replacement: ContextEditReplacement | null): string {
		return this.#appended(this.#tree().appendContextEdit(targetId, replacement));
	}
	appendLabelChange(targetId: string, label: string | undefined): string {
		return this.#appended(this.#tree().appendLabelChange(targetId, label));
	}
	branchWithSummary(
		branchFromId: string | null,
		summary: string,
		details?: unknown,
		fromHook?: boolean,
		usage?: Usage,
	): string {
		return this.#appended(this.#tree().branchWithSummary(branchFromId, summary, details, fromHook, usage));
	}

	// Reading and navigating ------------------------------------------------------------------------

	getSessionName(): string | undefined {
		return this.#core.tree.getSessionName();
	}
	getLeafId(): string | null {
		return this.#core.tree.getLeafId();
	}
	getLeafEntry(): SessionEntry | undefined {
		return this.#core.tree.getLeafEntry();
	}
	getEntry(id: string): SessionEntry | undefined {
		return this.#core.tree.getEntry(id);
	}
	getChildren(parentId: string): SessionEntry[] {
		return this.#core.tree.getChildren(parentId);
	}
	getLabel(id: string): string | undefined {
		return this.#core.tree.getLabel(id);
	}
	getBranch(fromId?: string): SessionEntry[] {
		// pi treats `null` (from a loose caller) as "from the leaf", like no argument.
		return this.#core.tree.getBranch(fromId ?? undefined);
	}
	buildContextEntries(): SessionEntry[] {
		return this.#core.tree.buildContextEntries();
	}
	buildSessionProjection(): SessionProjection {
		return this.#core.tree.buildSessionProjection();
	}
	buildSessionContext(): SessionContext {
		return this.#core.tree.buildSessionContext();
	}
	getHeader(): SessionHeader | null {
		return this.#core.tree.getHeader();
	}
	/** Number of entries, without copying them as `getEntries()` does. */
	getEntryCount(): number {
		return this.#core.tree.getEntryCount();
	}
	getEntries(): SessionEntry[] {
		return this.#core.tree.getEntries();
	}
	getTree(): SessionTreeNode[] {
		return this.#core.tree.getTree();
	}
	branch(branchFromId: string): void {
		this.#core.tree.branch(branchFromId);
	}
	resetLeaf(): void {
		this.#core.tree.resetLeaf();
	}

	/**
	 * Continue in a new file holding only the root → `leafId` path; returns its path (undefined in memory).
	 * If the new file cannot be written, this manager stays in the session it was in.
	 */
	createBranchedSession(leafId: string): string | undefined {
		const previous = this.#core;
		previous.assertWritable();
		const next = withCwd(branchIntoNewFile(previous, leafId), previous.cwd);
		if (next.path) {
			// The new file is locked and written before the manager lets go of the old one.
			const lock = withAdvice(() => locks.acquire(next.path as string));
			try {
				runTaskSync(next.persist(next.size, false), storage);
			} catch (error) {
				releaseQuietly(lock);
				throw error;
			}
			next.lock = lock;
		}
		release(previous);
		this.#core = hold(next);
		return next.path;
	}
}
