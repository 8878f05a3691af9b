/**
 * pi's `SessionManager`, with its public API and synchronous semantics, over this package's core: a
 * program written against `@mariozechner/pi-coding-agent`'s `SessionManager` can switch its import.
 * It runs the same persistence tasks as the asynchronous `Session`, on Node's synchronous `fs`
 * (Node, Bun and Deno). Where DESIGN.md differs from pi it follows DESIGN.md: files are locked for
 * writing (call `close()` to release early; locks are released at exit), migrations keep a backup,
 * damaged files are repaired or refused instead of truncated.
 * @example
 * import { SessionManager } from "pi-session-tree/pi-compat";
 * const session = SessionManager.create(process.cwd());
 * session.appendMessage({ role: "user", content: "hi", timestamp: Date.now() });
 * @module
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { resolve } from "node:path";
import {
	findMostRecentSession as findMostRecentTask,
	type ListProgress,
	listAllSessions,
	listSessions,
	type SessionInfo,
} from "../src/catalog.ts";
import type {
	AgentMessage,
	ImageContent,
	SessionContext,
	SessionEntry,
	SessionHeader,
	SessionTreeNode,
	StoredMessage,
	TextContent,
} from "../src/entries.ts";
import { defaultSessionDir, sessionsRoot } from "../src/paths.ts";
import { forkFromTask, SessionCore } from "../src/session.ts";
import { runTaskSync } from "../src/storage.ts";
import { agentDir, createNodeStorage, createNodeSyncStorage } from "./node.ts";

export type { ListProgress as SessionListProgress, SessionInfo } from "../src/catalog.ts";
export { buildSessionContext, getLatestCompactionEntry } from "../src/context.ts";
export type * from "../src/entries.ts";
export { CURRENT_SESSION_VERSION } from "../src/entries.ts";
export { parseSessionEntries } from "../src/jsonl.ts";
export { migrateSessionEntries } from "../src/migrate.ts";

const storage = createNodeSyncStorage();

/** Sessions holding a writer lock, released when the process exits. */
const openCores = new Set<SessionCore>();
let exitHookInstalled = false;

function track(core: SessionCore): SessionCore {
	if (core.lock) openCores.add(core);
	if (!exitHookInstalled) {
		exitHookInstalled = true;
		process.once("exit", () => {
			for (const open of openCores) runTaskSync(open.close(), storage);
		});
	}
	return core;
}

function release(core: SessionCore): void {
	openCores.delete(core);
	runTaskSync(core.close(), storage);
}

/**
 * pi's default session directory for a cwd (created if missing, as pi does).
 * @example
 * const dir = getDefaultSessionDir(process.cwd());
 */
export function getDefaultSessionDir(cwd: string, agent: string = agentDir()): string {
	const dir = defaultSessionDir(cwd, agent);
	if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
	return dir;
}

/**
 * The most recently modified session file in a directory, or `null`.
 * @example
 * const path = findMostRecentSession(getDefaultSessionDir(process.cwd()));
 */
export function findMostRecentSession(sessionDir: string): string | null {
	return runTaskSync(findMostRecentTask(resolve(sessionDir)), storage);
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
	| "getHeader"
	| "getEntries"
	| "getTree"
	| "getSessionName"
>;

/**
 * Sessions as append-only trees in JSONL files, with pi's API. See pi's documentation for each method.
 */
export class SessionManager {
	#core: SessionCore;
	readonly #persist: boolean;
	/** The file named by `setSessionFile` when not persisting: read, never written (as pi). */
	#memoryFile: string | undefined;

	private constructor(core: SessionCore, persist: boolean) {
		this.#core = track(core);
		this.#persist = persist;
	}

	// Construction ----------------------------------------------------------------------------------

	/** A new session in `sessionDir` (default: pi's directory for `cwd`). */
	static create(cwd: string, sessionDir?: string): SessionManager {
		const dir = resolve(sessionDir ?? getDefaultSessionDir(cwd));
		return new SessionManager(runTaskSync(SessionCore.create({ cwd, sessionDir: dir }), storage), true);
	}

	/** Open a session file (a missing file becomes a new session at that path). */
	static open(path: string, sessionDir?: string, cwdOverride?: string): SessionManager {
		return new SessionManager(SessionManager.#openCore(resolve(path), sessionDir, cwdOverride), true);
	}

	static #openCore(path: string, sessionDir?: string, cwdOverride?: string): SessionCore {
		// As pi: a new or empty file gets this process's working directory, and so does a header without one.
		const cwd = cwdOverride ?? (statSync(path, { throwIfNoEntry: false })?.size ? undefined : process.cwd());
		const core = runTaskSync(SessionCore.open(path, { sessionDir: sessionDir && resolve(sessionDir), cwd }), storage);
		if (typeof core.cwd !== "string") core.cwd = process.cwd();
		return core;
	}

	/** Continue the most recent session in the directory, or start a new one. */
	static continueRecent(cwd: string, sessionDir?: string): SessionManager {
		const dir = resolve(sessionDir ?? getDefaultSessionDir(cwd));
		const mostRecent = findMostRecentSession(dir);
		return mostRecent
			? new SessionManager(SessionManager.#openCore(mostRecent, dir, cwd), true)
			: SessionManager.create(cwd, dir);
	}

	/** A session that is never written. */
	static inMemory(cwd: string = process.cwd()): SessionManager {
		return new SessionManager(SessionCore.inMemory({ cwd }), false);
	}

	/** Copy another project's session, whole, into a new session for `targetCwd`. */
	static forkFrom(sourcePath: string, targetCwd: string, sessionDir?: string): SessionManager {
		const dir = resolve(sessionDir ?? getDefaultSessionDir(targetCwd));
		return new SessionManager(runTaskSync(forkFromTask(resolve(sourcePath), targetCwd, dir), storage), true);
	}

	/** Sessions of one directory, most recently modified first. */
	static list(cwd: string, sessionDir?: string, onProgress?: ListProgress): Promise<SessionInfo[]> {
		return listSessions(createNodeStorage(), resolve(sessionDir ?? getDefaultSessionDir(cwd)), { onProgress });
	}

	/** Sessions of every project, most recently modified first. */
	static listAll(onProgress?: ListProgress): Promise<SessionInfo[]> {
		return listAllSessions(createNodeStorage(), sessionsRoot(agentDir()), { onProgress });
	}

	// Switching sessions ----------------------------------------------------------------------------

	/** Switch to another session file. */
	setSessionFile(sessionFile: string): void {
		const path = resolve(sessionFile);
		if (!this.#persist) {
			// Read the file (if any), lock nothing, write nothing.
			this.#memoryFile = path;
			const read = statSync(path, { throwIfNoEntry: false })?.size
				? runTaskSync(SessionCore.open(path, { readOnly: true }), storage)
				: undefined;
			const cwd = this.#core.cwd;
			this.#core = read ? SessionCore.detached(read.tree) : SessionCore.inMemory({ cwd });
			return;
		}
		// Reloading the current file: give up its lock first, or the reopen would find it taken (by us).
		if (path === this.#core.path) release(this.#core);
		const next = SessionManager.#openCore(path, this.#core.sessionDir, this.#core.cwd);
		release(this.#core);
		this.#core = track(next);
	}

	/** Start a new session in the same directory; returns its file path (undefined in memory). */
	newSession(options?: NewSessionOptions): string | undefined {
		const cwd = this.#core.cwd;
		const next = this.#persist
			? runTaskSync(SessionCore.create({ cwd, sessionDir: this.#core.sessionDir, ...options }), storage)
			: SessionCore.inMemory({ cwd, ...options });
		release(this.#core);
		this.#core = track(next);
		return this.#persist ? next.path : this.#memoryFile;
	}

	/** Release the writer lock (ours; pi has no locks). Appends afterwards throw `SessionClosedError`. */
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
	getSessionId(): string {
		return this.#core.tree.getSessionId();
	}
	getSessionFile(): string | undefined {
		return this.#persist ? this.#core.path : this.#memoryFile;
	}

	// Appending -------------------------------------------------------------------------------------

	#appended(id: string): string {
		runTaskSync(this.#core.persist(this.#core.tree.size, false), storage);
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
	appendCompaction<T = unknown>(
		summary: string,
		firstKeptEntryId: string,
		tokensBefore: number,
		details?: T,
		fromHook?: boolean,
	): string {
		return this.#appended(this.#tree().appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook));
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
	appendLabelChange(targetId: string, label: string | undefined): string {
		return this.#appended(this.#tree().appendLabelChange(targetId, label));
	}
	branchWithSummary(branchFromId: string | null, summary: string, details?: unknown, fromHook?: boolean): string {
		return this.#appended(this.#tree().branchWithSummary(branchFromId, summary, details, fromHook));
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
	buildSessionContext(): SessionContext {
		return this.#core.tree.buildSessionContext();
	}
	getHeader(): SessionHeader | null {
		return this.#core.tree.getHeader();
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

	/** Continue in a new file holding only the root → `leafId` path; returns its path (undefined in memory). */
	createBranchedSession(leafId: string): string | undefined {
		const previous = this.#core;
		previous.assertWritable();
		const next = previous.branch(leafId);
		runTaskSync(next.takeOver(previous, false), storage);
		openCores.delete(previous);
		this.#core = track(next);
		return next.path;
	}
}
