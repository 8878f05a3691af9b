/**
 * The engine: one asynchronous facade over sessions and discovery that takes and returns only plain,
 * structured-cloneable data. In-process it is this object; from another thread it is `Comlink.wrap` of
 * it (see `pi-session-tree/worker`), with the same type. Sessions are named by handles (strings); whole
 * sessions never cross the boundary, only the pages and views asked for.
 * @module
 */
import type { AppendMethod } from "./append-methods.ts";
import { APPEND_METHODS } from "./append-methods.ts";
import {
	findById,
	findMostRecentSession,
	type ListProgress,
	listAllSessions,
	listSessions,
	type SessionInfo,
} from "./catalog.ts";
import { type ProgressCallback, trackProgress } from "./engine-progress.ts";
import type { ContextPage, ContextPageRequest, OutlineNode, OutlinePageRequest } from "./engine-views.ts";
import type { SessionEntry, SessionHeader, SessionTreeNode } from "./entries.ts";
import { InvalidArgumentError, PathOutsideRootError, UnknownSessionError } from "./errors.ts";
import { type FlatTreeNode, flattenTree, unflattenTree } from "./flat-tree.ts";
import { importSessionFile } from "./import-session-file.ts";
import type { Diagnostic } from "./jsonl.ts";
import { listingCatalogPath } from "./listing-catalog.ts";
import type { ReadLimits } from "./load.ts";
import { defaultSessionDir, isInsideRoot, normalizeAbsolutePath, sessionsRoot } from "./paths.ts";
import { type Durability, type LoadMode, type OpenReport, Session } from "./session.ts";
import { runTask, type Storage, StorageError, type Task } from "./storage.ts";
import type { SessionTree } from "./tree.ts";
import type { WriterLocks } from "./writer-lock.ts";

export type { ContextPage, ContextPageRequest, OutlineNode, OutlinePageRequest, ProgressCallback };
export { PathOutsideRootError, UnknownSessionError };

/** Names an open session inside one engine. */
export type SessionHandle = string;

export interface EngineOptions {
	storage: Storage;
	/** pi's agent directory on that storage (sessions live in `<agentDir>/sessions`). */
	agentDir: string;
	/** Default durability of sessions this engine opens (default `"none"`, like pi). */
	durability?: Durability;
	/**
	 * The writer locks (default: lock files judged by this realm alone; on the local file system pass
	 * `createNodeLocks(storage)`, which takes over the lock of a process that is gone).
	 */
	locks?: WriterLocks;
	/**
	 * Hand out copies of entries, contexts and reports (default `true`), so that a caller changing them
	 * cannot change the sessions. The worker turns it off: sending them to another thread copies them.
	 */
	copyResults?: boolean;
	/**
	 * Limits of every session file this engine reads (`open`, `forkFrom`): the longest line (default
	 * `DEFAULT_MAX_LINE_BYTES`; a longer one is skipped and reported) and the most records (default none;
	 * more is a `SessionLimitError`). See `ReadOptions`. Listings (`list`, `listAll`) read with the same
	 * longest line (`ListOptions.maxLineBytes`: a session is listed without its longer lines); the most
	 * records does not apply to them: a listing keeps nothing per record.
	 */
	limits?: ReadLimits;
	/**
	 * The sessions root (default: none, every path the storage takes): an absolute path that every path this
	 * engine is given must lie in (`open`, `create`'s and `continueRecent`'s `sessionDir`, `forkFrom`, `list`,
	 * `findMostRecent`, `importSessionFile`, `exportSessionFile`), after `.` and `..` are resolved; anything
	 * else, and any relative path, is refused with a `PathOutsideRootError`. The worker's `"node"` storage
	 * sets it to its agent directory.
	 */
	root?: string;
	/**
	 * With `root`: the real path of a path, the symbolic links of its existing part resolved (on the local
	 * file system, `realPathOn(fs, path)` of adapters/real-path.ts, as the worker's `"node"` storage does). A path is then also refused when its real path
	 * is outside the root's, so that a link inside the root is no way out of it.
	 */
	realPath?: (path: string) => Promise<string>;
	/**
	 * Keep the listing catalog in memory between listings (default `true`; `ListOptions.keepCatalogInMemory`):
	 * a repeated `list` or `listAll` then reads only `stat`s, and holds about what its rows hold meanwhile.
	 */
	keepListingCatalogInMemory?: boolean;
}

/** What a caller learns about an open session. */
export interface SessionSummary {
	handle: SessionHandle;
	/** Session file; undefined for an in-memory session. */
	path: string | undefined;
	header: SessionHeader;
	cwd: string;
	name: string | undefined;
	leafId: string | null;
	entryCount: number;
	readOnly: boolean;
	/** What opening found and did (diagnostics, migration, repairs). */
	report: OpenReport;
}

export interface CreateSessionOptions {
	cwd: string;
	/** Default: pi's directory for `cwd` under the engine's agent directory. */
	sessionDir?: string;
	id?: string;
	parentSession?: string;
	durability?: Durability;
}

export interface OpenSessionOptions {
	readOnly?: boolean;
	/** Start a new session when there is no file at the path (default: `SessionNotFoundError`). */
	create?: boolean;
	sessionDir?: string;
	cwd?: string;
	durability?: Durability;
	/**
	 * `"lazy"` (the engine's default: every read of the engine is asynchronous anyway) indexes the structure
	 * while opening and decodes bodies when a read asks for them; `"full"` decodes everything at once.
	 */
	load?: LoadMode;
}

/** The tree's appends, by handle, each resolving with the new entry's id once it is written. */
export type EngineAppends = {
	[K in AppendMethod]: (handle: SessionHandle, ...args: Parameters<SessionTree[K]>) => Promise<string>;
};

// The appends are installed on the prototype, from APPEND_METHODS (in the class's static block).
export interface Engine extends EngineAppends {}

/** Set once the class is defined: reaches a handle's session from outside the class (`sessionOfHandle`). */
let sessionOf: (engine: Engine, handle: SessionHandle) => Session;

/**
 * The open session of `handle` (an `UnknownSessionError` if there is none). For the worker host, which
 * applies batches of changes to sessions directly; not part of the package's API.
 */
export function sessionOfHandle(engine: Engine, handle: SessionHandle): Session {
	return sessionOf(engine, handle);
}

/**
 * The session engine.
 * @example
 * const engine = new Engine({ storage: await createMemoryStorage(), agentDir: "/pi/agent" });
 * const { handle } = await engine.create({ cwd: "/project" });
 * await engine.appendMessage(handle, { role: "user", content: "hi", timestamp: Date.now() });
 * const page = await engine.getContext(handle, { limit: 50 });
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: see the interface above.
export class Engine {
	readonly #storage: Storage;
	readonly #locks: WriterLocks | undefined;
	readonly #agentDir: string;
	readonly #durability: Durability;
	readonly #sessions = new Map<SessionHandle, Session>();
	#nextHandle = 1;

	readonly #copyResults: boolean;
	readonly #limits: ReadLimits;
	readonly #keepCatalog: boolean;
	readonly #root: string | undefined;
	readonly #realPath: ((path: string) => Promise<string>) | undefined;

	static {
		sessionOf = (engine, handle) => engine.#session(handle);
		for (const method of APPEND_METHODS) {
			Object.defineProperty(Engine.prototype, method, {
				value(this: Engine, handle: SessionHandle, ...args: unknown[]): Promise<string> {
					try {
						const session = sessionOf(this, handle);
						return (session[method] as (...a: unknown[]) => Promise<string>).apply(session, args);
					} catch (error) {
						// An unknown handle rejects, as every other method's failure does.
						return Promise.reject(error);
					}
				},
				writable: true,
				configurable: true,
			});
		}
	}

	constructor(options: EngineOptions) {
		this.#storage = options.storage;
		this.#locks = options.locks;
		this.#agentDir = options.agentDir;
		this.#durability = options.durability ?? "none";
		this.#copyResults = options.copyResults ?? true;
		this.#limits = { maxLineBytes: options.limits?.maxLineBytes, maxEntries: options.limits?.maxEntries };
		this.#keepCatalog = options.keepListingCatalogInMemory ?? true;
		if (options.root !== undefined && normalizeAbsolutePath(options.root) === undefined) {
			throw new InvalidArgumentError(
				`the engine's sessions root must be an absolute path: ${JSON.stringify(options.root)}`,
			);
		}
		this.#root = options.root;
		this.#realPath = options.realPath;
	}

	// Discovery -------------------------------------------------------------------------------------

	/** The sessions directory pi uses for `cwd`. */
	async sessionDirFor(cwd: string): Promise<string> {
		return defaultSessionDir(cwd, this.#agentDir);
	}

	/**
	 * Sessions of one directory, most recently modified first. A listing catalog in the agent directory
	 * (where pi does not look for sessions) remembers each file's row, so a repeated listing reads only the
	 * files that changed since, and of a file that grew only its new bytes.
	 */
	async list(dir: string, onProgress?: ListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
		await this.#confine(dir);
		const progress = trackProgress(onProgress);
		const catalog = listingCatalogPath(this.#agentDir);
		const { maxLineBytes } = this.#limits;
		const options = {
			onProgress: progress.callback,
			signal,
			catalog,
			maxLineBytes,
			keepCatalogInMemory: this.#keepCatalog,
		};
		const sessions = await listSessions(this.#storage, dir, options);
		await progress.settled(signal);
		return this.#confined(sessions);
	}

	/** Sessions of every project, most recently modified first (through the listing catalog, as `list`). */
	async listAll(onProgress?: ListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
		const progress = trackProgress(onProgress);
		const root = sessionsRoot(this.#agentDir);
		await this.#confine(root);
		const catalog = listingCatalogPath(this.#agentDir);
		const { maxLineBytes } = this.#limits;
		const options = {
			onProgress: progress.callback,
			signal,
			catalog,
			maxLineBytes,
			keepCatalogInMemory: this.#keepCatalog,
		};
		const sessions = await listAllSessions(this.#storage, root, options);
		await progress.settled(signal);
		return this.#confined(sessions);
	}

	/** The file of a session id, or null. */
	async findById(id: string): Promise<string | null> {
		const root = sessionsRoot(this.#agentDir);
		await this.#confine(root);
		return this.#run(findById(root, id));
	}

	/** The most recently modified session of a directory (optionally with header cwd `cwd`), or null. */
	async findMostRecent(dir: string, cwd?: string): Promise<string | null> {
		await this.#confine(dir);
		return this.#run(findMostRecentSession(dir, cwd));
	}

	// Opening ---------------------------------------------------------------------------------------

	async create(options: CreateSessionOptions): Promise<SessionSummary> {
		const sessionDir = options.sessionDir ?? defaultSessionDir(options.cwd, this.#agentDir);
		await this.#confine(sessionDir);
		const durability = options.durability ?? this.#durability;
		const locks = this.#locks;
		return this.#register(await Session.create(this.#storage, { ...options, sessionDir, durability, locks }));
	}

	async open(
		path: string,
		options: OpenSessionOptions = {},
		onProgress?: ProgressCallback,
		signal?: AbortSignal,
	): Promise<SessionSummary> {
		await this.#confine(path);
		if (options.sessionDir !== undefined) await this.#confine(options.sessionDir);
		const durability = options.durability ?? this.#durability;
		const progress = trackProgress(onProgress);
		const session = await Session.open(this.#storage, path, {
			locks: this.#locks,
			load: "lazy",
			...this.#limits,
			...options,
			durability,
			onProgress: progress.callback,
			signal,
		});
		try {
			await progress.settled(signal);
		} catch (error) {
			await session.close(); // releases the lock it took
			throw error;
		}
		return this.#register(session);
	}

	/** The most recent session for `cwd` (pi's directory unless given), or a new one. */
	async continueRecent(cwd: string, sessionDir?: string): Promise<SessionSummary> {
		const dir = sessionDir ?? defaultSessionDir(cwd, this.#agentDir);
		await this.#confine(dir);
		const recent = await this.findMostRecent(dir);
		return recent ? this.open(recent, { sessionDir: dir, cwd }) : this.create({ cwd, sessionDir: dir });
	}

	/** A session that is never written. */
	async inMemory(cwd: string): Promise<SessionSummary> {
		return this.#register(Session.inMemory(this.#storage, { cwd }));
	}

	/** Copy another session's whole history into a new session for `targetCwd`. */
	async forkFrom(sourcePath: string, targetCwd: string, sessionDir?: string): Promise<SessionSummary> {
		const dir = sessionDir ?? defaultSessionDir(targetCwd, this.#agentDir);
		await this.#confine(sourcePath);
		await this.#confine(dir);
		return this.#register(
			await Session.forkFrom(this.#storage, sourcePath, targetCwd, dir, {
				durability: this.#durability,
				locks: this.#locks,
				...this.#limits,
			}),
		);
	}

	/**
	 * Write a session file as given, e.g. one uploaded by a user: never over an existing file (`StorageError`
	 * `exists`, the file left as it was), and whole or not at all (nobody sees part of it under `path`; a
	 * failure leaves nothing there and rejects with its error). A `Blob` (a `File` from a picker) is read
	 * here: passed to the worker, it crosses as a handle, not as a copy of its bytes, so the page does no
	 * work for a large file. A `Blob` bigger than 8 MiB is streamed, 8 MiB at a time, into a temporary file
	 * next to `path` (one a crash leaves is removed when the session is next opened for writing), then given
	 * its name: importing 1 GB holds two 8 MiB buffers at a time here, not 1 GB. The import holds `path`'s
	 * writer lock while it puts the file in place (a session open for writing there makes it `exists`); on
	 * storages without hard links (OPFS, ZenFS) the name is taken by a check and a rename, and only a writer
	 * that takes no lock could create the same name between the two (see src/import-session-file.ts).
	 */
	async importSessionFile(path: string, bytes: Uint8Array | Blob): Promise<void> {
		await this.#confine(path);
		await importSessionFile(this.#storage, path, bytes, { locks: this.#locks });
	}

	/**
	 * The bytes of a file, e.g. to download a session. A new session has no file before its first
	 * assistant message: that is `not-found`, as for any missing file.
	 */
	async exportSessionFile(path: string): Promise<Uint8Array<ArrayBuffer>> {
		await this.#confine(path);
		const stat = await this.#storage.stat(path);
		if (!stat) throw new StorageError("not-found", path, `not-found: ${path}: no such file`);
		if (!stat.isFile) throw new StorageError("io", path, `io: ${path}: not a file`);
		const bytes = await this.#storage.readRange(path, 0, stat.size);
		// Of a plain ArrayBuffer, so that `new Blob([bytes])` takes it as it is (a shared buffer's view is copied).
		return bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : bytes.slice();
	}

	// Per session -----------------------------------------------------------------------------------

	async summary(handle: SessionHandle): Promise<SessionSummary> {
		return this.#out(this.#summarize(handle, this.#session(handle)));
	}

	// The appends (`appendMessage` … `branchWithSummary`, see `EngineAppends`) are installed above.

	async branch(handle: SessionHandle, entryId: string): Promise<void> {
		this.#session(handle).branch(entryId);
	}
	async resetLeaf(handle: SessionHandle): Promise<void> {
		this.#session(handle).resetLeaf();
	}

	async getEntry(handle: SessionHandle, id: string): Promise<SessionEntry | undefined> {
		return this.#out(await this.#session(handle).getEntry(id));
	}
	async getChildren(handle: SessionHandle, parentId: string): Promise<SessionEntry[]> {
		return this.#out(await this.#session(handle).getChildren(parentId));
	}
	/** Entries root → `fromId` (default: the leaf). */
	async getBranch(handle: SessionHandle, fromId?: string): Promise<SessionEntry[]> {
		return this.#out(await this.#session(handle).getBranch(fromId));
	}
	async getLabel(handle: SessionHandle, id: string): Promise<string | undefined> {
		return this.#tree(handle).getLabel(id);
	}
	/**
	 * The whole tree, nested, of any depth. Through the worker client it crosses flat (`getFlatTree`) and is
	 * rebuilt on the caller's side: a nested tree as deep as a long session cannot be copied or sent.
	 */
	async getTree(handle: SessionHandle): Promise<SessionTreeNode[]> {
		const roots = await this.#session(handle).getTree();
		return this.#copyResults ? unflattenTree(structuredClone(flattenTree(roots))) : roots;
	}

	/** The tree as flat nodes, each after its parent (`unflattenTree` nests them again). */
	async getFlatTree(handle: SessionHandle): Promise<FlatTreeNode[]> {
		return this.#out(flattenTree(await this.#session(handle).getTree()));
	}

	/**
	 * Every entry of the tree as a flat outline node in file order: cheap to send, enough to draw a
	 * navigator (see `outline`); `{ offset, limit }` gives a slice of it.
	 */
	async getOutline(handle: SessionHandle, page: OutlinePageRequest = {}): Promise<OutlineNode[]> {
		return this.#session(handle).outline(page);
	}

	/**
	 * A page of the model context of `leafId` (default: the current leaf); `{ last: 50 }` gives the last 50
	 * messages. Only the entries holding the page's messages are decoded.
	 */
	async getContext(handle: SessionHandle, page: ContextPageRequest = {}): Promise<ContextPage> {
		return this.#out(await this.#session(handle).contextPage(page));
	}

	/** Diagnostics found when the session was opened. */
	async getDiagnostics(handle: SessionHandle): Promise<Diagnostic[]> {
		return this.#out(this.#session(handle).report.diagnostics);
	}

	/** Continue in a new file holding the root → `leafId` path (pi's `createBranchedSession`). */
	async createBranchedSession(handle: SessionHandle, leafId: string): Promise<string | undefined> {
		return this.#session(handle).createBranchedSession(leafId);
	}

	/** Resolves when every append issued so far is written. */
	async flush(handle: SessionHandle): Promise<void> {
		await this.#session(handle).flush();
	}

	/** Write what is pending, release the session's lock and forget the handle. */
	async close(handle: SessionHandle): Promise<void> {
		// The handle is forgotten once its lock is released, even when closing reports an earlier write's
		// failure; a close whose lock could not be released can be tried again. Meanwhile no changes.
		const session = this.#session(handle);
		try {
			await session.close();
		} finally {
			if (session.released) this.#sessions.delete(handle);
		}
	}

	/** Close every open session (the worker calls this before it ends); every failure is reported. */
	async closeAll(): Promise<void> {
		const handles = [...this.#sessions.keys()];
		const results = await Promise.allSettled(handles.map((handle) => this.close(handle)));
		const failures = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
		if (failures.length === 1) throw failures[0];
		if (failures.length > 1) throw new AggregateError(failures, `${failures.length} sessions failed to close`);
	}

	/** Handles of the sessions open now. */
	async openHandles(): Promise<SessionHandle[]> {
		return [...this.#sessions.keys()];
	}

	// Internals -------------------------------------------------------------------------------------

	/** A result to hand out: a copy, unless copying is left to the thread boundary (`copyResults`). */
	#out<T>(value: T): T {
		return this.#copyResults ? structuredClone(value) : value;
	}

	/**
	 * Refuse a path outside the sessions root (`EngineOptions.root`), first as written (`.` and `..`
	 * resolved), then by its real path when the storage can tell one (`realPath`).
	 */
	async #confine(path: string): Promise<void> {
		const root = this.#root;
		if (root === undefined) return;
		if (typeof path !== "string" || normalizeAbsolutePath(path) === undefined) {
			throw new PathOutsideRootError(String(path), root, "is not an absolute path inside");
		}
		if (!isInsideRoot(path, root)) throw new PathOutsideRootError(path, root);
		if (!this.#realPath) return;
		const [real, realRoot] = await Promise.all([this.#realPath(path), this.#realPath(root)]);
		if (!isInsideRoot(real, realRoot)) {
			throw new PathOutsideRootError(path, root, `leads by a symbolic link (to ${real}) outside`);
		}
	}

	/** The sessions of a listing whose files are inside the sessions root by their real paths (links leading out dropped). */
	async #confined(sessions: SessionInfo[]): Promise<SessionInfo[]> {
		const realPath = this.#realPath;
		if (this.#root === undefined || !realPath) return sessions;
		const realRoot = await realPath(this.#root);
		const inside = await Promise.all(
			sessions.map((info) =>
				realPath(info.path).then(
					(real) => isInsideRoot(real, realRoot),
					() => false,
				),
			),
		);
		return sessions.filter((_, index) => inside[index]);
	}

	#run<T>(task: Task<T>): Promise<T> {
		return runTask(task, this.#storage);
	}

	#register(session: Session): SessionSummary {
		const handle = `s${this.#nextHandle++}`;
		this.#sessions.set(handle, session);
		return this.#out(this.#summarize(handle, session));
	}

	#summarize(handle: SessionHandle, session: Session): SessionSummary {
		const tree = session.tree;
		return {
			handle,
			path: session.path,
			header: tree.getHeader(),
			cwd: session.cwd,
			name: tree.getSessionName(),
			leafId: tree.getLeafId(),
			entryCount: tree.size,
			readOnly: session.readOnly,
			report: session.report,
		};
	}

	#session(handle: SessionHandle): Session {
		const session = this.#sessions.get(handle);
		if (!session) throw new UnknownSessionError(`no open session ${handle}`);
		return session;
	}

	#tree(handle: SessionHandle): SessionTree {
		return this.#session(handle).tree;
	}
}
