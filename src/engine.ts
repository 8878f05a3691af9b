/**
 * The engine: one asynchronous facade over sessions and discovery that takes and returns only plain,
 * structured-cloneable data. In-process it is this object; from another thread it is `Comlink.wrap` of
 * it (see `pi-session-tree/worker`), with the same type. Sessions are named by handles (strings); whole
 * sessions never cross the boundary, only the pages and views asked for.
 * @module
 */
import {
	findById,
	findMostRecentSession,
	type ListProgress,
	listAllSessions,
	listSessions,
	type SessionInfo,
} from "./catalog.ts";
import type {
	AgentMessage,
	ContextEditReplacement,
	ImageContent,
	ModelRef,
	SessionEntry,
	SessionHeader,
	SessionTreeNode,
	StoredMessage,
	TextContent,
	Usage,
} from "./entries.ts";
import { type ErrorData, errorToData } from "./error-data.ts";
import { UnknownSessionError } from "./errors.ts";
import { type FlatTreeNode, flattenTree, unflattenTree } from "./flat-tree.ts";
import type { Diagnostic } from "./jsonl.ts";
import { defaultSessionDir, dirname, sessionsRoot } from "./paths.ts";
import { type Durability, type OpenReport, Session } from "./session.ts";
import { runTask, type Storage, StorageError, type Task } from "./storage.ts";
import type { SessionTree } from "./tree.ts";

export { UnknownSessionError };

/** Names an open session inside one engine. */
export type SessionHandle = string;

export interface EngineOptions {
	storage: Storage;
	/** pi's agent directory on that storage (sessions live in `<agentDir>/sessions`). */
	agentDir: string;
	/** Default durability of sessions this engine opens (default `"none"`, like pi). */
	durability?: Durability;
	/**
	 * Hand out copies of entries, contexts and reports (default `true`), so that a caller changing them
	 * cannot change the sessions. The worker turns it off: sending them to another thread copies them.
	 */
	copyResults?: boolean;
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

/** One entry of the tree outline: enough to draw a navigator without cloning entries. */
export interface OutlineNode {
	id: string;
	parentId: string | null;
	type: string;
	/** The message role, for message entries. */
	role?: string;
	timestamp: string;
	label?: string;
	childCount: number;
}

/** A slice of a leaf's model context. */
export interface ContextPage {
	messages: AgentMessage[];
	/** The id of the entry each message came from (a compaction gives its system message and summary). */
	entryIds: string[];
	/** Messages in the whole context. */
	total: number;
	offset: number;
	thinkingLevel: string;
	model: ModelRef | null;
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
}

/** Engine methods that change a session and can travel in one batch (`runBatch`), in order. */
export const BATCHABLE_METHODS: readonly string[] = [
	"appendMessage",
	"appendThinkingLevelChange",
	"appendModelChange",
	"appendCompaction",
	"appendUsage",
	"appendContextEdit",
	"appendCustomEntry",
	"appendCustomMessageEntry",
	"appendLabelChange",
	"appendSessionInfo",
	"branchWithSummary",
	"branch",
	"resetLeaf",
];

/**
 * One call of a batch: a batchable method's name and its arguments; or `appendEncodedMessages` with
 * `[handle, start, ends, roles]`: `appendMessage` of each message whose JSON text (UTF-8) is in the batch's
 * `encoded` buffer, the first from byte `start` to `ends[0]`, the next from there to `ends[1]`, and so on,
 * with its role. Each message has its own result.
 */
export interface BatchCall {
	method: string;
	args: unknown[];
}

/** A call of a batch that failed, and why. */
export interface BatchFailure {
	error: ErrorData;
}

/**
 * The outcome of one call of a batch: its value (an entry's id, or `undefined` for a branch move), or a
 * `BatchFailure`. Plain values, not an object each: a burst's results cross back to the caller's thread.
 */
export type BatchResult = string | undefined | BatchFailure;

/** Whether a batch's result is a failure. */
export function isBatchFailure(result: BatchResult): result is BatchFailure {
	return typeof result === "object" && result !== null;
}

/** The outcomes of a batch's calls in order; a change's outcome is final once its write is done. */
class BatchOutcomes {
	readonly #results: BatchResult[] = [];
	/** Indices of the changes waiting for each write; a burst shares a few writes. */
	readonly #waiting = new Map<Promise<void>, number[]>();

	done(value: string | undefined, written?: Promise<void>): void {
		if (written) {
			const indices = this.#waiting.get(written);
			if (indices) indices.push(this.#results.length);
			else this.#waiting.set(written, [this.#results.length]);
		}
		this.#results.push(value);
	}

	failed(error: unknown): void {
		this.#results.push({ error: errorToData(error) });
	}

	/** The results, once every write they wait for is done; a failed write fails its changes. */
	async settle(): Promise<BatchResult[]> {
		for (const [written, indices] of this.#waiting) {
			try {
				await written;
			} catch (error) {
				for (const index of indices) this.#results[index] = { error: errorToData(error) };
			}
		}
		return this.#results;
	}
}

/** A page bound as given by a caller: a whole number, at least 0 (NaN is refused). */
function pageBound(value: number, name: string): number {
	if (Number.isNaN(value)) throw new RangeError(`getContext: ${name} is NaN`);
	return Math.max(0, Math.floor(value));
}

/** Progress of long work: `(done, total)` in bytes (opening) or files (listing). */
export type ProgressCallback = (done: number, total: number) => void;

/**
 * A progress callback from another thread answers each call with a promise, delivered on its own
 * channel. The work's result must not overtake those answers, and a callback that fails must fail the
 * work (as a callback that throws in-process does) rather than go unhandled: `settled` waits for the last
 * answer and rethrows the first failure.
 */
function trackProgress(onProgress: ProgressCallback | undefined): {
	callback: ProgressCallback | undefined;
	settled(): Promise<void>;
} {
	let last: Promise<void> | undefined;
	let failure: { error: unknown } | undefined;
	return {
		callback:
			onProgress &&
			((done, total) => {
				const answer: unknown = onProgress(done, total);
				if (answer instanceof Promise) {
					last = answer.then(
						() => undefined,
						(error: unknown) => {
							failure ??= { error };
						},
					);
				}
			}),
		async settled(): Promise<void> {
			await last;
			if (failure) throw failure.error;
		},
	};
}

/**
 * The session engine.
 * @example
 * const engine = new Engine({ storage: await createMemoryStorage(), agentDir: "/pi/agent" });
 * const { handle } = await engine.create({ cwd: "/project" });
 * await engine.appendMessage(handle, { role: "user", content: "hi", timestamp: Date.now() });
 * const page = await engine.getContext(handle, { limit: 50 });
 */
export class Engine {
	readonly #storage: Storage;
	readonly #agentDir: string;
	readonly #durability: Durability;
	readonly #sessions = new Map<SessionHandle, Session>();
	#nextHandle = 1;

	readonly #copyResults: boolean;

	constructor(options: EngineOptions) {
		this.#storage = options.storage;
		this.#agentDir = options.agentDir;
		this.#durability = options.durability ?? "none";
		this.#copyResults = options.copyResults ?? true;
	}

	// Discovery -------------------------------------------------------------------------------------

	/** The sessions directory pi uses for `cwd`. */
	async sessionDirFor(cwd: string): Promise<string> {
		return defaultSessionDir(cwd, this.#agentDir);
	}

	/** Sessions of one directory, most recently modified first. */
	async list(dir: string, onProgress?: ListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
		const progress = trackProgress(onProgress);
		const sessions = await listSessions(this.#storage, dir, { onProgress: progress.callback, signal });
		await progress.settled();
		return sessions;
	}

	/** Sessions of every project, most recently modified first. */
	async listAll(onProgress?: ListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
		const progress = trackProgress(onProgress);
		const root = sessionsRoot(this.#agentDir);
		const sessions = await listAllSessions(this.#storage, root, { onProgress: progress.callback, signal });
		await progress.settled();
		return sessions;
	}

	/** The file of a session id, or null. */
	async findById(id: string): Promise<string | null> {
		return this.#run(findById(sessionsRoot(this.#agentDir), id));
	}

	/** The most recently modified session of a directory (optionally with header cwd `cwd`), or null. */
	async findMostRecent(dir: string, cwd?: string): Promise<string | null> {
		return this.#run(findMostRecentSession(dir, cwd));
	}

	// Opening ---------------------------------------------------------------------------------------

	async create(options: CreateSessionOptions): Promise<SessionSummary> {
		const sessionDir = options.sessionDir ?? defaultSessionDir(options.cwd, this.#agentDir);
		const durability = options.durability ?? this.#durability;
		return this.#register(await Session.create(this.#storage, { ...options, sessionDir, durability }));
	}

	async open(
		path: string,
		options: OpenSessionOptions = {},
		onProgress?: ProgressCallback,
		signal?: AbortSignal,
	): Promise<SessionSummary> {
		const durability = options.durability ?? this.#durability;
		const progress = trackProgress(onProgress);
		const session = await Session.open(this.#storage, path, {
			...options,
			durability,
			onProgress: progress.callback,
			signal,
		});
		try {
			await progress.settled();
		} catch (error) {
			await session.close(); // releases the lock it took
			throw error;
		}
		return this.#register(session);
	}

	/** The most recent session for `cwd` (pi's directory unless given), or a new one. */
	async continueRecent(cwd: string, sessionDir?: string): Promise<SessionSummary> {
		const dir = sessionDir ?? defaultSessionDir(cwd, this.#agentDir);
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
		return this.#register(
			await Session.forkFrom(this.#storage, sourcePath, targetCwd, dir, { durability: this.#durability }),
		);
	}

	/** Write a session file as given (exclusive: never overwrites), e.g. one uploaded by a user. */
	async importSessionFile(path: string, bytes: Uint8Array): Promise<void> {
		const dir = dirname(path);
		if (dir !== ".") await this.#storage.mkdir(dir);
		await this.#storage.createExclusive(path, [bytes], true);
	}

	/**
	 * The bytes of a file, e.g. to download a session. A new session has no file before its first
	 * assistant message: that is `not-found`, as for any missing file.
	 */
	async exportSessionFile(path: string): Promise<Uint8Array> {
		const stat = await this.#storage.stat(path);
		if (!stat) throw new StorageError("not-found", path, `not-found: ${path}: no such file`);
		if (!stat.isFile) throw new StorageError("io", path, `io: ${path}: not a file`);
		return this.#storage.readRange(path, 0, stat.size);
	}

	// Per session -----------------------------------------------------------------------------------

	async summary(handle: SessionHandle): Promise<SessionSummary> {
		return this.#out(this.#summarize(handle, this.#session(handle)));
	}

	appendMessage(handle: SessionHandle, message: StoredMessage | AgentMessage): Promise<string> {
		return this.#session(handle).appendMessage(message);
	}
	appendThinkingLevelChange(handle: SessionHandle, thinkingLevel: string): Promise<string> {
		return this.#session(handle).appendThinkingLevelChange(thinkingLevel);
	}
	appendModelChange(handle: SessionHandle, provider: string, modelId: string): Promise<string> {
		return this.#session(handle).appendModelChange(provider, modelId);
	}
	/** Record a compaction keeping the entries from `firstKeptEntryId` on (`null`: none). */
	appendCompaction(
		handle: SessionHandle,
		summary: string,
		firstKeptEntryId: string | null,
		tokensBefore: number,
		details?: unknown,
		fromHook?: boolean,
		usage?: Usage,
	): Promise<string> {
		return this.#session(handle).appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook, usage);
	}
	/** Record model usage that is not an assistant message (never in the context). */
	appendUsage(
		handle: SessionHandle,
		kind: string,
		provider: string,
		model: string,
		usage: Usage,
		note?: string,
	): Promise<string> {
		return this.#session(handle).appendUsage(kind, provider, model, usage, note);
	}
	/** Replace (or with `null` remove) an entry's content in this branch's context from here on. */
	appendContextEdit(
		handle: SessionHandle,
		targetId: string,
		replacement: ContextEditReplacement | null,
	): Promise<string> {
		return this.#session(handle).appendContextEdit(targetId, replacement);
	}
	appendCustomEntry(handle: SessionHandle, customType: string, data?: unknown): Promise<string> {
		return this.#session(handle).appendCustomEntry(customType, data);
	}
	appendCustomMessageEntry(
		handle: SessionHandle,
		customType: string,
		content: string | (TextContent | ImageContent)[],
		display: boolean,
		details?: unknown,
	): Promise<string> {
		return this.#session(handle).appendCustomMessageEntry(customType, content, display, details);
	}
	/** Set (or with `undefined`/`""` clear) an entry's label. */
	appendLabelChange(handle: SessionHandle, targetId: string, label: string | undefined): Promise<string> {
		return this.#session(handle).appendLabelChange(targetId, label);
	}
	/** Set (or with `""` clear) the session's name. */
	appendSessionInfo(handle: SessionHandle, name: string): Promise<string> {
		return this.#session(handle).appendSessionInfo(name);
	}
	branchWithSummary(
		handle: SessionHandle,
		branchFromId: string | null,
		summary: string,
		details?: unknown,
		fromHook?: boolean,
		usage?: Usage,
	): Promise<string> {
		return this.#session(handle).branchWithSummary(branchFromId, summary, details, fromHook, usage);
	}
	async branch(handle: SessionHandle, entryId: string): Promise<void> {
		this.#session(handle).branch(entryId);
	}
	async resetLeaf(handle: SessionHandle): Promise<void> {
		this.#session(handle).resetLeaf();
	}

	async getEntry(handle: SessionHandle, id: string): Promise<SessionEntry | undefined> {
		return this.#out(this.#tree(handle).getEntry(id));
	}
	async getChildren(handle: SessionHandle, parentId: string): Promise<SessionEntry[]> {
		return this.#out(this.#tree(handle).getChildren(parentId));
	}
	/** Entries root → `fromId` (default: the leaf). */
	async getBranch(handle: SessionHandle, fromId?: string): Promise<SessionEntry[]> {
		return this.#out(this.#tree(handle).getBranch(fromId));
	}
	async getLabel(handle: SessionHandle, id: string): Promise<string | undefined> {
		return this.#tree(handle).getLabel(id);
	}
	/**
	 * The whole tree, nested, of any depth. Through the worker client it crosses flat (`getFlatTree`) and is
	 * rebuilt on the caller's side: a nested tree as deep as a long session cannot be copied or sent.
	 */
	async getTree(handle: SessionHandle): Promise<SessionTreeNode[]> {
		const roots = this.#tree(handle).getTree();
		return this.#copyResults ? unflattenTree(structuredClone(flattenTree(roots))) : roots;
	}

	/** The tree as flat nodes, each after its parent (`unflattenTree` nests them again). */
	async getFlatTree(handle: SessionHandle): Promise<FlatTreeNode[]> {
		return this.#out(flattenTree(this.#tree(handle).getTree()));
	}

	/**
	 * Every entry of the tree as a flat outline node in file order: cheap to send, enough to draw a
	 * navigator. Parents are as the tree placed them (a damaged file's re-rooted entries are roots), and
	 * an entry whose id was taken by an earlier one is left out, as in `getTree`.
	 */
	async getOutline(handle: SessionHandle): Promise<OutlineNode[]> {
		const tree = this.#tree(handle);
		const indexed = tree.getEntries().filter((entry) => tree.getEntry(entry.id) === entry);
		return indexed.map((entry) => {
			const label = tree.getLabel(entry.id);
			const node: OutlineNode = {
				id: entry.id,
				parentId: tree.getParentId(entry.id) ?? null,
				type: entry.type,
				timestamp: entry.timestamp,
				childCount: tree.getChildren(entry.id).length,
			};
			if (entry.type === "message") node.role = entry.message?.role;
			if (label !== undefined) node.label = label;
			return node;
		});
	}

	/** A page of the model context of `leafId` (default: the current leaf). */
	async getContext(
		handle: SessionHandle,
		page: { leafId?: string | null; offset?: number; limit?: number } = {},
	): Promise<ContextPage> {
		const context = this.#tree(handle).buildSessionProjection(page.leafId);
		const total = context.messages.length;
		const offset = Math.min(total, pageBound(page.offset ?? 0, "offset"));
		const end = page.limit === undefined ? undefined : offset + pageBound(page.limit, "limit");
		const entryIds = context.entries.flatMap(({ sourceEntry, messages }) => messages.map(() => sourceEntry.id));
		return this.#out({
			messages: context.messages.slice(offset, end),
			entryIds: entryIds.slice(offset, end),
			total,
			offset,
			thinkingLevel: context.thinkingLevel,
			model: context.model,
		});
	}

	/** Diagnostics found when the session was opened. */
	async getDiagnostics(handle: SessionHandle): Promise<Diagnostic[]> {
		return this.#out(this.#session(handle).report.diagnostics);
	}

	/** Continue in a new file holding the root → `leafId` path (pi's `createBranchedSession`). */
	async createBranchedSession(handle: SessionHandle, leafId: string): Promise<string | undefined> {
		return this.#session(handle).createBranchedSession(leafId);
	}

	/**
	 * Run many batchable calls (appends, branch moves) in order, as if issued back to back, and report each
	 * outcome. The worker client sends calls issued in the same tick this way: one message, one write.
	 * Messages come as `appendEncodedMessages` runs whose JSON text is in `encoded` (see `BatchCall`), each
	 * message with its own outcome, in order. The engine takes `encoded` over: it keeps views of it.
	 */
	async runBatch(calls: BatchCall[], encoded?: Uint8Array): Promise<BatchResult[]> {
		const outcomes = new BatchOutcomes();
		for (const call of calls) {
			if (call.method === "appendEncodedMessages") {
				this.#appendEncodedMessages(call.args, encoded, outcomes);
				continue;
			}
			try {
				const { value, written } = this.#applyChange(call);
				outcomes.done(value, written);
			} catch (error) {
				outcomes.failed(error);
			}
		}
		return outcomes.settle();
	}

	/** One batchable call, applied now; `written` (if any) resolves when it is on storage. */
	#applyChange({ method, args }: BatchCall): { value: string | undefined; written?: Promise<void> } {
		const [handle, ...rest] = args as [SessionHandle, ...unknown[]];
		const session = this.#session(handle);
		if (method === "branch") {
			session.branch(rest[0] as string);
			return { value: undefined };
		}
		if (method === "resetLeaf") {
			session.resetLeaf();
			return { value: undefined };
		}
		if (!BATCHABLE_METHODS.includes(method)) throw new TypeError(`${method} cannot be batched`);
		const { id, written } = session.change((tree) =>
			(tree[method as keyof SessionTree] as (...a: unknown[]) => string).apply(tree, rest),
		);
		return { value: id, written };
	}

	/** The messages of one `appendEncodedMessages` call, each appended on its own (see `BatchCall`). */
	#appendEncodedMessages(args: unknown[], encoded: Uint8Array | undefined, outcomes: BatchOutcomes): void {
		const [handle, start, ends, roles] = args as [SessionHandle, number, number[], (string | undefined)[]];
		// Without one outcome per message, every later result would answer the wrong call: refuse the batch.
		if (!Array.isArray(ends) || !Array.isArray(roles) || ends.length !== roles.length) {
			throw new TypeError("appendEncodedMessages takes [handle, start, ends, roles], with as many roles as ends");
		}
		let session: Session;
		let bytes: Uint8Array;
		try {
			session = this.#session(handle);
			const last = ends[ends.length - 1] ?? start;
			if (!encoded || !Number.isInteger(start) || start < 0 || !(last >= start && last <= encoded.length)) {
				throw new TypeError("appendEncodedMessages: the byte ranges do not fit the batch's buffer");
			}
			// A run that shares the buffer with others gets its own copy: a session keeps its messages' bytes
			// until it is read, and must not keep other sessions' bytes with them.
			bytes = start === 0 && last === encoded.length ? encoded : encoded.slice(start, last);
		} catch (error) {
			for (let index = 0; index < ends.length; index++) outcomes.failed(error);
			return;
		}
		let from = start;
		for (let index = 0; index < ends.length; index++) {
			const to = ends[index] as number;
			try {
				if (!(to >= from && from >= start && to - start <= bytes.length)) {
					throw new TypeError("appendEncodedMessages: a byte range is out of order");
				}
				const json = bytes.subarray(from - start, to - start);
				const { id, written } = session.changeEncodedMessage(roles[index], json);
				outcomes.done(id, written);
			} catch (error) {
				outcomes.failed(error);
			}
			from = to;
		}
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
