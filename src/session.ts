/**
 * A session bound to its log file on an asynchronous storage: the write queue (ordered writes, grouped
 * as the durability mode says) over the persistence rules of `SessionCore`, with the writer lock held
 * while it is open. The rules themselves are in session-core.ts; opening in open-session.ts; new files
 * from existing sessions in fork.ts.
 * @module
 */
import type { AppendMethod } from "./append-methods.ts";
import { APPEND_METHODS } from "./append-methods.ts";
import {
	type ContextPage,
	type ContextPageRequest,
	type OutlineNode,
	type OutlinePageRequest,
	outline,
} from "./engine-views.ts";
import type { SessionContext, SessionEntry, SessionHeader, SessionProjection, SessionTreeNode } from "./entries.ts";
import { SessionClosedError, SessionNotFoundError, SessionReadOnlyError } from "./errors.ts";
import { branchIntoNewFile, forkFromTask } from "./fork.ts";
import type { ReadLimits } from "./load.ts";
import { lockFiles, realmLockIdentity } from "./lock-files.ts";
import { type LoadMode, newSessionCore, type OpenOptions, openSessionFile, prepareToOpen } from "./open-session.ts";
import type { OpenReport, SessionCore } from "./session-core.ts";
import { SessionCore as Core } from "./session-core.ts";
import { type DecodedRead, readDecoded, reads } from "./session-reads.ts";
import { runTask, type Storage } from "./storage.ts";
import type { NewSessionOptions, SessionTree } from "./tree.ts";
import type { HeldLock, WriterLocks } from "./writer-lock.ts";

export type { LoadMode, OpenOptions, OpenReport };
export { SessionClosedError, SessionNotFoundError, SessionReadOnlyError };

/**
 * How appends reach stable storage. Before a new session's first user or assistant message no file exists (as in
 * pi), so appends made until then resolve at once and are written with it; durability applies from there.
 */
export type Durability =
	/** Like pi: appended, no fsync. Appends issued while a write is in flight go out together in the next one. */
	| "none"
	/** Each entry is appended and fsynced on its own before its append resolves. */
	| "fsync"
	/** Group commit: appends issued together are written in one write and fsynced together. */
	| "group";

export interface CreateOptions extends NewSessionOptions {
	/** Directory of the session file. */
	sessionDir: string;
}

/** Options of `Session.create` and `Session.open`. */
export interface SessionOptions {
	durability?: Durability;
	/**
	 * The writer locks (default: lock files judged by this realm alone, which never takes over a lock of
	 * another process; on the local file system use `createNodeLocks`, which does when that process is gone).
	 */
	locks?: WriterLocks;
}

/** The writer locks of a session's options. */
function locksOf(storage: Storage, options: SessionOptions): WriterLocks {
	return options.locks ?? lockFiles(storage, realmLockIdentity);
}

/** The tree's appends, each resolving with the new entry's id once it is written as the durability says. */
export type SessionAppends = { [K in AppendMethod]: (...args: Parameters<SessionTree[K]>) => Promise<string> };

/** Take `path`'s writer lock, run `open` (which binds the session), and let go of the lock if it fails. */
async function lockedWhile(locks: WriterLocks, path: string, open: () => Promise<SessionCore>): Promise<SessionCore> {
	const lock = await locks.acquire(path);
	try {
		const core = await open();
		core.lock = lock;
		return core;
	} catch (error) {
		await releaseQuietly(locks, lock);
		throw error;
	}
}

/** Release a lock after a failure: the failure is what the caller needs to hear, not this one. */
async function releaseQuietly(locks: WriterLocks, lock: HeldLock): Promise<void> {
	try {
		await locks.release(lock);
	} catch {
		// See above.
	}
}

/** The appends are installed on the prototype, from APPEND_METHODS (see the class's static block). */
export interface Session extends SessionAppends {}

/**
 * A session bound to a file on an asynchronous storage. Opened whole (`load: "full"`, the default), its
 * `tree` answers every read synchronously; opened lazily, the asynchronous reads (`getEntry`, `contextPage`,
 * …) decode what they hand out from the file, and `tree` holds the structure. Appends (the tree's
 * `append*` methods and `branchWithSummary`) return the new entry's id once it is written as the
 * durability mode says. Appends issued without awaiting are written in order; in
 * `"group"` mode they are coalesced into one write.
 * @example
 * const session = await Session.create(storage, { cwd: "/project", sessionDir: "/sessions/--project--" });
 * await session.appendMessage({ role: "user", content: "hi", timestamp: Date.now() });
 * await session.close();
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: see the interface above.
export class Session {
	#core: SessionCore;
	readonly #storage: Storage;
	readonly #locks: WriterLocks;
	readonly #durability: Durability;
	#tail: Promise<void> = Promise.resolve();
	#openBatch: Promise<void> | undefined;
	#failure: unknown;
	/** Cores this session branched away from whose lock the switch has not released yet. */
	readonly #branchedFrom = new Set<SessionCore>();
	#released = false;

	static {
		for (const method of APPEND_METHODS) {
			Object.defineProperty(Session.prototype, method, {
				value(this: Session, ...args: unknown[]): Promise<string> {
					return this.#append((tree) => (tree[method] as (...a: unknown[]) => string).apply(tree, args));
				},
				writable: true,
				configurable: true,
			});
		}
	}

	private constructor(core: SessionCore, storage: Storage, options: SessionOptions) {
		this.#core = core;
		this.#storage = storage;
		this.#locks = locksOf(storage, options);
		this.#durability = options.durability ?? "none";
	}

	/** A new session; its file appears with the first user or assistant message. */
	static async create(storage: Storage, options: CreateOptions & SessionOptions): Promise<Session> {
		const core = await runTask(newSessionCore(options), storage);
		core.lock = await locksOf(storage, options).acquire(core.path as string);
		return new Session(core, storage, options);
	}

	/**
	 * Open (and lock, repair, migrate) a session file. A missing file is a `SessionNotFoundError`, unless
	 * `create: true` asks for a new session at that path (as pi does).
	 */
	static async open(storage: Storage, path: string, options: OpenOptions & SessionOptions = {}): Promise<Session> {
		const opening = { ...options, create: options.create ?? false };
		await runTask(prepareToOpen(path, opening), storage);
		const open = () => runTask(openSessionFile(path, opening), storage);
		const core = opening.readOnly ? await open() : await lockedWhile(locksOf(storage, options), path, open);
		return new Session(core, storage, options);
	}

	/** Fork another session's whole history into `sessionDir` for `targetCwd`. */
	static async forkFrom(
		storage: Storage,
		sourcePath: string,
		targetCwd: string,
		sessionDir: string,
		options: SessionOptions & ReadLimits = {},
	): Promise<Session> {
		const durable = (options.durability ?? "none") !== "none";
		const { maxLineBytes, maxEntries } = options;
		const forking = { durable, maxLineBytes, maxEntries };
		const core = await runTask(forkFromTask(sourcePath, targetCwd, sessionDir, forking), storage);
		core.lock = await locksOf(storage, options).acquire(core.path as string);
		return new Session(core, storage, options);
	}

	/** A session that is never written (the storage is not used). */
	static inMemory(storage: Storage, options: NewSessionOptions & SessionOptions): Session {
		return new Session(Core.inMemory(options), storage, options);
	}

	/** The in-memory tree (read it freely; change it only through this session). */
	get tree(): SessionTree {
		return this.#core.tree;
	}
	get path(): string | undefined {
		return this.#core.path;
	}
	/** Working directory: the header's, unless the opener overrode it. */
	get cwd(): string {
		return this.#core.cwd;
	}
	get sessionDir(): string {
		return this.#core.sessionDir;
	}
	get readOnly(): boolean {
		return this.#core.readOnly;
	}
	/** What opening found and did. */
	get report(): OpenReport {
		return this.#core.report;
	}
	get header(): SessionHeader {
		return this.#core.tree.getHeader();
	}
	/** Whether the session was opened lazily: `tree`'s reads of bodies not decoded yet then throw. */
	get lazy(): boolean {
		return this.#core.tree.bodies !== undefined;
	}

	// Reads that decode what they hand out: on a lazily opened session, from the file, only what the
	// answer holds. On a whole session they give what `tree` gives. --------------------------------

	async getEntry(id: string): Promise<SessionEntry | undefined> {
		return this.#read(reads.entry(id));
	}
	/** Entries by id (`undefined` for an id it does not hold), decoded together: the previews of a page of rows. */
	async getEntriesById(ids: readonly string[]): Promise<(SessionEntry | undefined)[]> {
		return this.#read(reads.entriesById(ids));
	}
	async getChildren(parentId: string): Promise<SessionEntry[]> {
		return this.#read(reads.children(parentId));
	}
	/** Entries root → `fromId` (default: the leaf). */
	async getBranch(fromId?: string): Promise<SessionEntry[]> {
		return this.#read(reads.branch(fromId));
	}
	/** Every entry in file order (on a lazily opened session this decodes them all). */
	async getEntries(): Promise<SessionEntry[]> {
		return this.#read(reads.entries());
	}
	/** The whole tree (on a lazily opened session this decodes every entry; `outline` decodes none). */
	async getTree(): Promise<SessionTreeNode[]> {
		return this.#read(reads.tree());
	}
	async buildSessionContext(leafId?: string | null): Promise<SessionContext> {
		return this.#read(reads.context(leafId));
	}
	async buildSessionProjection(leafId?: string | null): Promise<SessionProjection> {
		return this.#read(reads.projection(leafId));
	}
	async buildContextEntries(leafId?: string | null): Promise<SessionEntry[]> {
		return this.#read(reads.contextEntries(leafId));
	}
	/** A page of the context (`{ last: 50 }`: the last 50 messages), decoding only the entries it holds. */
	async contextPage(page: ContextPageRequest = {}): Promise<ContextPage> {
		return this.#read(reads.contextPage(page));
	}
	/** The tree as flat outline nodes in file order, from the structure alone (nothing is decoded). */
	outline(page: OutlinePageRequest = {}): OutlineNode[] {
		return outline(this.#core.tree, page);
	}

	#read<T>(read: DecodedRead<T>): Promise<T> {
		return readDecoded(() => this.#core.tree, this.#storage, read);
	}

	/**
	 * Append a message that arrives as the UTF-8 bytes of its JSON text (how the worker receives messages):
	 * the bytes are written as they are, and the tree gets the message when it is next read. As `change`,
	 * it applies now and says when it is written. The bytes must be `JSON.stringify`'s output for an object;
	 * a `TypeError` if they cannot be one line's object.
	 */
	changeEncodedMessage(role: string | undefined, json: Uint8Array): { id: string; written: Promise<void> } {
		this.#assertChangeable();
		const id = this.#core.appendMessageJson(role, json);
		return { id, written: this.#schedule() };
	}
	branch(entryId: string): void {
		this.#core.tree.branch(entryId);
	}
	resetLeaf(): void {
		this.#core.tree.resetLeaf();
	}

	/**
	 * Fork the root → `leafId` path into a new file and continue there (pi's `createBranchedSession`).
	 * The switch happens now: appends made after this call belong to the new session, while appends made
	 * before it are still written to the old file, first. If the new file cannot be locked or written, this
	 * rejects and the session takes no more appends (`close` releases every lock it holds; open the old file
	 * again to go on).
	 */
	async createBranchedSession(leafId: string): Promise<string | undefined> {
		this.#assertChangeable();
		const previous = this.#core;
		const next = branchIntoNewFile(previous, leafId);
		this.#core = next;
		this.#openBatch = undefined;
		// If the switch fails or never runs (an earlier write failed), `close` still releases the old lock.
		this.#branchedFrom.add(previous);
		await this.#enqueue(async () => {
			if (next.path) {
				const path = next.path;
				await lockedWhile(this.#locks, path, async () => {
					await runTask(next.persist(next.size, this.#durability !== "none"), this.#storage);
					return next;
				});
			}
			await this.#closeCore(previous);
			this.#branchedFrom.delete(previous);
		});
		return next.path;
	}

	/** Resolves when every append issued so far is written (a new file that could not be created is tried again). */
	async flush(): Promise<void> {
		// A write of everything so far: it also retries a first create that failed and left nothing.
		const write = this.#failure === undefined ? this.#schedule() : undefined;
		write?.catch(() => undefined); // awaited below, unless an earlier failure is the one to throw
		await this.#tail;
		if (this.#failure) throw this.#failure;
		await write;
	}

	/**
	 * Write what is pending and release the writer lock. If an earlier write failed, that failure is thrown,
	 * after the lock is released (`released` then says so: the session is closed all the same).
	 */
	async close(): Promise<void> {
		this.#core.stopChanges();
		try {
			await this.flush();
		} finally {
			for (const core of [...this.#branchedFrom, this.#core]) await this.#closeCore(core);
			this.#branchedFrom.clear();
			this.#released = true;
		}
	}

	/** True once `close` has released every lock this session held, even if it threw a write's failure. */
	get released(): boolean {
		return this.#released;
	}

	async #closeCore(core: SessionCore): Promise<void> {
		core.stopChanges();
		const lock = core.lock;
		if (lock) await this.#locks.release(lock);
		core.lock = undefined;
	}

	#append(add: (tree: SessionTree) => string): Promise<string> {
		try {
			const { id, written } = this.change(add);
			return written.then(() => id);
		} catch (error) {
			return Promise.reject(error);
		}
	}

	/**
	 * Apply one append now (it is in the tree when this returns) and say when it is written: `written` is
	 * shared by every append of the same write, so a burst of changes need not make a promise each.
	 * Throws (synchronously) when the append is refused.
	 */
	change(add: (tree: SessionTree) => string): { id: string; written: Promise<void> } {
		this.#assertChangeable();
		const id = add(this.#core.tree);
		return { id, written: this.#schedule() };
	}

	/** Throws unless the session takes changes: open, writable, and no write has failed. */
	#assertChangeable(): void {
		this.#core.assertWritable();
		if (this.#failure) throw this.#failure;
	}

	/**
	 * Chain the write of everything appended so far behind earlier writes. Except in `"fsync"` mode, an
	 * append joins the batch that has not started yet, so pipelined appends share one write.
	 */
	#schedule(): Promise<void> {
		const grouped = this.#durability !== "fsync";
		if (grouped && this.#openBatch) return this.#openBatch;
		// The core of now: a branch made before this write runs does not take the write with it.
		const core = this.#core;
		const upTo = core.size;
		const write = this.#enqueue(async () => {
			if (grouped && this.#openBatch === write) this.#openBatch = undefined;
			await runTask(core.persist(grouped ? core.size : upTo, this.#durability !== "none"), this.#storage);
		}, core);
		if (grouped) this.#openBatch = write;
		return write;
	}

	/**
	 * Run `job` after every job before it. A job that fails may have left part of a line: the session then
	 * refuses further appends until it is reopened (which repairs). A new file whose create failed left
	 * nothing: the session goes on, and its next write tries again.
	 */
	#enqueue(job: () => Promise<void>, writing?: SessionCore): Promise<void> {
		const run = this.#tail.then(async () => {
			if (this.#failure) throw this.#failure;
			try {
				await job();
			} catch (error) {
				if (!writing?.lastWriteLeftNothing) this.#failure = error;
				throw error;
			}
		});
		this.#tail = run.catch(() => undefined);
		return run;
	}
}
