/**
 * A session tree bound to its log file. `SessionCore` holds the rules — which bytes go to which file,
 * when — as tasks; `Session` drives them on an asynchronous `Storage` (with ordered, optionally grouped
 * writes), and the pi-compatible facade drives the same tasks synchronously.
 *
 * The rules, and where they differ from pi 0.73.1 on purpose:
 * - a new session's file is created (exclusively) when the first user or assistant message exists (as pi 1.6), with every
 *   entry so far; later entries are appended. An opened file is appended to at once.
 * - opening migrates v1/v2 files and rewrites them atomically, keeping the original as `<file>.v<N>.bak`
 *   (pi rewrites in place). Skipped lines are kept in the rewrite as they were.
 * - a last line without `\n` is terminated, so the next append cannot fuse onto it (pi never repairs);
 *   an empty file gets a header; a non-empty file without one is refused and left untouched (pi truncates it).
 * - one writer per file, by lock file (pi has none).
 * @module
 */
import {
	assertMessageJson,
	decodeMessage,
	EncodedMessage,
	encodeLines,
	lineSize,
	type PendingLine,
} from "./encoded-message.ts";
import type { AgentMessage, SessionEntry, SessionHeader, SessionMessageEntry } from "./entries.ts";
import { SessionClosedError, SessionNotFoundError, SessionReadOnlyError } from "./errors.ts";
import type { Diagnostic } from "./jsonl.ts";
import { encodeEntry } from "./jsonl.ts";
import { READ_CHUNK_BYTES, type ReadOptions, type ReadSession, readSessionFile } from "./load.ts";
import { acquireLock, releaseLock, type WriterLock } from "./lock.ts";
import { dirname, joinPath, sessionFileName, validateSessionId } from "./paths.ts";
import { io, isStorageError, removeQuietly, runTask, type Storage, StorageError, type Task } from "./storage.ts";
import { assertObjectMessage, type NewSessionOptions, SessionTree } from "./tree.ts";

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

const encoder = new TextEncoder();
/** Rewrites are handed to storage in chunks of about this many characters. */
const REWRITE_CHUNK_CHARS = 4 << 20;

/**
 * Encode lines into chunks of bounded size, each as it is asked for: a rewrite of a large file holds one
 * chunk at a time, not the whole file encoded.
 */
export function* encodeChunks(lines: Iterable<PendingLine>): Generator<Uint8Array, void, undefined> {
	let pending: PendingLine[] = [];
	let pendingChars = 0;
	for (const line of lines) {
		pending.push(line);
		pendingChars += lineSize(line);
		if (pendingChars >= REWRITE_CHUNK_CHARS) {
			yield encodeLines(pending);
			pending = [];
			pendingChars = 0;
		}
	}
	if (pending.length > 0) yield encodeLines(pending);
}

/** The error for an entry that cannot be written as JSON: `why` is what `JSON.stringify` threw. */
export function unencodableEntryError(type: string, why: unknown): TypeError {
	const reason = why instanceof Error ? why.message : String(why);
	return new TypeError(`cannot append this ${type} entry: it cannot be written as JSON (${reason})`, { cause: why });
}

/** A message entry whose message is still the bytes it arrived as (see encoded-message.ts). */
function isEncodedMessageEntry(entry: SessionEntry): entry is SessionMessageEntry & { message: EncodedMessage } {
	return entry.type === "message" && (entry.message as unknown) instanceof EncodedMessage;
}

/** What `JSON.stringify` writes for a value at the top: the result of its `toJSON`, if it has one. */
function writtenAtTop(value: unknown): unknown {
	const toJSON = (value as { toJSON?: unknown } | null)?.toJSON;
	return typeof toJSON === "function" ? toJSON.call(value, "") : value;
}

/** An appended entry's line; a `TypeError` naming the entry when it cannot be encoded (a BigInt, a cycle). */
function encodeAppended(entry: SessionEntry): string {
	try {
		return encodeEntry(entry);
	} catch (error) {
		throw unencodableEntryError(entry.type, error);
	}
}

/** A new session's file is created with the first of these (pi 1.6; pi 0.73.1 waited for an assistant message). */
function isConversationMessage(entry: SessionEntry): boolean {
	const role = entry.type === "message" ? entry.message?.role : undefined;
	return role === "user" || role === "assistant";
}

export interface CreateOptions extends NewSessionOptions {
	/** Directory of the session file. */
	sessionDir: string;
}

export interface OpenOptions extends ReadOptions {
	/** Read without taking the writer lock, repairing or migrating on disk; appends are refused. */
	readOnly?: boolean;
	/**
	 * What a missing file gives: a new session at that path when true (pi's behaviour, and the
	 * pi-compatible facade's), a `SessionNotFoundError` when false. `Session.open` and the engine default
	 * to false, so a mistyped path is noticed.
	 */
	create?: boolean;
	/**
	 * The caller already holds this file's writer lock (a facade whose managers share one lock per file):
	 * none is taken here, and the session's `lock` stays unset.
	 */
	writerLockHeld?: boolean;
	/** Directory for files created from this session (forks); default: the file's directory. */
	sessionDir?: string;
	/** Working directory to use instead of the header's. */
	cwd?: string;
}

/** What opening found and did, for callers that want to tell the user. */
export interface OpenReport {
	diagnostics: Diagnostic[];
	/** Set when the file was migrated: the version it had and where the original was kept. */
	migratedFrom?: { version: number; backupPath?: string };
	/** True when a missing final newline was added. */
	repairedLastLine: boolean;
	/** True when an empty file was given a header. */
	wroteHeader: boolean;
	/** True when there was no file: the session is new and its file will be created later. */
	created: boolean;
}

/** The persistence rules of one session, as tasks over storage. */
export class SessionCore {
	tree: SessionTree;
	/** Working directory: the header's, unless the opener overrode it (the file keeps its header). */
	cwd: string;
	/** Session file; undefined for an in-memory session. */
	path: string | undefined;
	sessionDir: string;
	readonly readOnly: boolean;
	lock: WriterLock | undefined;
	report: OpenReport;
	/** Whether the file exists with every entry up to `persisted`. */
	#fileExists: boolean;
	/** Entries of the tree already in the file. */
	#persisted: number;
	/** Entries already scanned for a user or assistant message, and whether one was seen. */
	#scanned = 0;
	#sawConversation = false;
	/** An append failed: the file may end in part of its data (checked before the next append). */
	#appendMayHaveTorn = false;
	#closed = false;
	/**
	 * Lines of appended entries not written yet, from entry `#persisted` on (appends are contiguous):
	 * encoded when appended, or for a message that came encoded its bytes (its line is made when written).
	 */
	#unwritten: (string | EncodedMessage)[] = [];
	/** Message entries appended as JSON bytes whose message is not an object yet (see `materialize`). */
	#encoded: (SessionMessageEntry & { message: EncodedMessage })[] = [];

	private constructor(fields: {
		tree: SessionTree;
		cwd?: string;
		path: string | undefined;
		sessionDir: string;
		readOnly: boolean;
		fileExists: boolean;
		report: OpenReport;
	}) {
		this.tree = fields.tree;
		this.cwd = fields.cwd ?? fields.tree.getCwd();
		this.path = fields.path;
		this.sessionDir = fields.sessionDir;
		this.readOnly = fields.readOnly;
		this.#fileExists = fields.fileExists;
		this.#persisted = fields.fileExists ? fields.tree.size : 0;
		this.report = fields.report;
		// Encode each entry as it is appended: one that cannot be written is refused then, alone, instead
		// of failing the write it would join (which would stop the session). What is written is then the
		// entry as it was appended, even if the caller changes its objects later.
		const tree = this.tree;
		const writes = this.path !== undefined && !this.readOnly;
		tree.setOnAppend((entry) => {
			const encoded = isEncodedMessageEntry(entry);
			if (!encoded && entry.type === "message") assertObjectMessage(entry.message, writtenAtTop(entry.message));
			if (writes) this.#unwritten[tree.size - this.#persisted] = encoded ? entry.message : encodeAppended(entry);
			if (encoded) this.#encoded.push(entry);
		});
	}

	/**
	 * Decode the messages appended as JSON bytes, in place: done before the tree is read, so appends alone
	 * never pay for it. Throws a `TypeError` naming the entry if one is not UTF-8 JSON (only bytes that did
	 * not come from the worker client's `JSON.stringify` can fail); the others stay decoded.
	 */
	materialize(): void {
		const encoded = this.#encoded;
		for (let index = 0; index < encoded.length; index++) {
			const entry = encoded[index] as SessionMessageEntry & { message: EncodedMessage };
			try {
				(entry as SessionMessageEntry).message = decodeMessage(entry.message) as AgentMessage;
			} catch (error) {
				this.#encoded = encoded.slice(index);
				const session = this.path ?? "an in-memory session";
				throw new TypeError(`message entry ${entry.id} of ${session}: ${String(error)}`, { cause: error });
			}
		}
		this.#encoded = [];
	}

	/** A session that is never written, holding `tree` (read from a file, say, by a manager that never writes). */
	static detached(tree: SessionTree, sessionDir = ""): SessionCore {
		return new SessionCore({
			tree,
			path: undefined,
			sessionDir,
			readOnly: false,
			fileExists: false,
			report: emptyReport(false),
		});
	}

	/** A session that is never written. */
	static inMemory(options: NewSessionOptions): SessionCore {
		return new SessionCore({
			tree: SessionTree.create(options),
			path: undefined,
			sessionDir: "",
			readOnly: false,
			fileExists: false,
			report: emptyReport(true),
		});
	}

	/** A new session in `sessionDir`; its file is created with the first user or assistant message. */
	static *create(options: CreateOptions): Task<SessionCore> {
		if (options.id !== undefined) validateSessionId(options.id);
		const tree = SessionTree.create(options);
		const path = joinPath(options.sessionDir, sessionFileName(tree.getHeader().timestamp, tree.getSessionId()));
		yield* io("mkdir", options.sessionDir);
		const core = new SessionCore({
			tree,
			path,
			sessionDir: options.sessionDir,
			readOnly: false,
			fileExists: false,
			report: emptyReport(true),
		});
		core.lock = yield* acquireLock(path);
		return core;
	}

	/**
	 * Open a session file: lock it (unless read-only), read it, and bring it to a state where appends
	 * are safe. A missing file becomes a new session at that path, as in pi.
	 */
	static *open(path: string, options: OpenOptions = {}): Task<SessionCore> {
		const readOnly = options.readOnly ?? false;
		if (options.create === false && !(yield* io("stat", path))) throw new SessionNotFoundError(path);
		// A session may be opened at a path whose directory does not exist yet (pi creates it).
		if (!readOnly) yield* io("mkdir", dirname(path));
		const lock = readOnly || options.writerLockHeld ? undefined : yield* acquireLock(path);
		try {
			const core = yield* SessionCore.#load(path, options, readOnly);
			core.lock = lock;
			return core;
		} catch (error) {
			try {
				if (lock) yield* releaseLock(lock);
			} catch {
				// The reason the open failed is what the caller needs to hear, not this one.
			}
			throw error;
		}
	}

	static *#load(path: string, options: OpenOptions, readOnly: boolean, attempt = 1): Task<SessionCore> {
		const sessionDir = options.sessionDir ?? dirname(path);
		const read = yield* readSessionFile(path, options);
		// pi writes without a lock: a file rewritten here may have grown since it was read. Then the
		// rewrite is dropped (the original is untouched) and the file read again.
		const changedSinceRead = function* (): Task<boolean> {
			const now = yield* io("stat", path);
			if (now?.size === (read?.size ?? 0) && (!read || "empty" in read || now.mtimeMs === read.mtimeMs)) return false;
			if (attempt >= 3) throw new StorageError("io", path, `io: ${path}: kept changing while it was being rewritten`);
			return true;
		};
		const fresh = (created: boolean, wroteHeader: boolean) => {
			const tree = SessionTree.create({ cwd: options.cwd ?? "" });
			return new SessionCore({
				tree,
				path,
				sessionDir,
				readOnly,
				fileExists: wroteHeader,
				report: { ...emptyReport(created), wroteHeader },
			});
		};
		if (!read) return fresh(true, false);
		if ("empty" in read) {
			const core = fresh(false, !readOnly);
			if (readOnly) return core;
			if (yield* changedSinceRead()) return yield* SessionCore.#load(path, options, readOnly, attempt + 1);
			yield* io("replace", path, [encoder.encode(encodeEntry(core.tree.getHeader()))]);
			return core;
		}

		const tree = SessionTree.fromRecords(read.records, { file: path, locations: read.locations });
		const report: OpenReport = {
			...emptyReport(false),
			diagnostics: [...read.diagnostics, ...tree.diagnostics].sort((a, b) => a.line - b.line),
		};
		if (read.migration.changed) report.migratedFrom = { version: read.migration.fromVersion };
		if (!readOnly && read.migration.changed) {
			const backupPath = yield* backUp(path, read);
			if (yield* changedSinceRead()) {
				yield* io("remove", backupPath); // a copy of what is still there: nothing was changed yet
				return yield* SessionCore.#load(path, options, readOnly, attempt + 1);
			}
			report.migratedFrom = { version: read.migration.fromVersion, backupPath };
			yield* io("replace", path, encodeChunks(rewrittenLines(read)));
		} else if (!readOnly && !read.endsWithNewline) {
			yield* io("append", path, encoder.encode("\n"), false);
			report.repairedLastLine = true;
		}
		return new SessionCore({ tree, cwd: options.cwd, path, sessionDir, readOnly, fileExists: true, report });
	}

	/** Throws unless appends are allowed. */
	assertWritable(): void {
		if (this.#closed) throw new SessionClosedError(`${this.path ?? "the in-memory session"} is closed`);
		if (this.readOnly) throw new SessionReadOnlyError(`${this.path} was opened read-only`);
	}

	/**
	 * Write the tree's entries up to `upTo` (exclusive): nothing before the first user or assistant message of a
	 * new session, then header and everything at once with an exclusive create, then appends.
	 */
	*persist(upTo: number, durable: boolean): Task<void> {
		if (!this.path || this.readOnly || upTo <= this.#persisted) return;
		if (!this.#fileExists) {
			for (const entry of this.tree.entriesBetween(this.#scanned, upTo)) {
				if (isConversationMessage(entry)) this.#sawConversation = true;
			}
			this.#scanned = Math.max(this.#scanned, upTo);
			if (!this.#sawConversation) return;
			const lines = [encodeEntry(this.tree.getHeader()), ...this.#linesBetween(0, upTo)];
			yield* io("createExclusive", this.path, encodeChunks(lines), durable);
			this.#fileExists = true;
		} else {
			const lines = encodeLines(this.#linesBetween(this.#persisted, upTo));
			const data = this.#appendMayHaveTorn ? yield* this.#afterTornTail(lines) : lines;
			try {
				yield* io("append", this.path, data, durable);
			} catch (error) {
				// Part of the data may be in the file: the next append must not fuse onto a half line.
				this.#appendMayHaveTorn = true;
				throw error;
			}
			this.#appendMayHaveTorn = false;
		}
		this.#unwritten = this.#unwritten.slice(upTo - this.#persisted);
		this.#persisted = upTo;
	}

	/** `data` after a line feed when the file's last byte is not one (an earlier append was cut short). */
	*#afterTornTail(data: Uint8Array): Task<Uint8Array> {
		const stat = yield* io("stat", this.path as string);
		if (!stat || stat.size === 0) return data;
		const last = yield* io("readRange", this.path as string, stat.size - 1, stat.size);
		if (last[0] === 0x0a) return data;
		const terminated = new Uint8Array(data.length + 1);
		terminated[0] = 0x0a;
		terminated.set(data, 1);
		return terminated;
	}

	/** The lines of the tree's entries `[start, end)`: as encoded when appended, or encoded now (loaded, forked). */
	#linesBetween(start: number, end: number): PendingLine[] {
		return this.tree.entriesBetween(start, end).map((entry, offset): PendingLine => {
			const line = this.#unwritten[start + offset - this.#persisted] ?? encodeEntry(entry);
			return line instanceof EncodedMessage ? { entry: entry as SessionMessageEntry, json: line.json } : line;
		});
	}

	/**
	 * pi's `createBranchedSession`: a core holding the root → `leafId` path with its labels, its header's
	 * `parentSession` pointing here, to continue in a new file next to this one (none for an in-memory
	 * session). Nothing is locked or written until `takeOver` runs.
	 */
	branch(leafId: string): SessionCore {
		this.materialize();
		const tree = SessionTree.create({ cwd: this.cwd, parentSession: this.path });
		for (const entry of this.tree.forkEntries(leafId)) tree.addEntry(entry);
		const fileName = sessionFileName(tree.getHeader().timestamp, tree.getSessionId());
		return new SessionCore({
			tree,
			path: this.path && joinPath(this.sessionDir, fileName),
			sessionDir: this.sessionDir,
			readOnly: false,
			fileExists: false,
			report: emptyReport(true),
		});
	}

	/**
	 * Continue from `previous` (of which this is a branch): lock this core's file, write it (at once if it
	 * has a user or assistant message, otherwise with the first one), then release the previous one. If the
	 * write fails, this core's lock is released and `previous` is left as it was, still open.
	 */
	*takeOver(previous: SessionCore, durable: boolean): Task<void> {
		if (!this.path) return;
		const lock = yield* acquireLock(this.path);
		this.lock = lock;
		try {
			yield* this.persist(this.tree.size, durable);
		} catch (error) {
			this.lock = undefined;
			try {
				yield* releaseLock(lock);
			} catch {
				// The write's failure is the one to report.
			}
			throw error;
		}
		yield* previous.close();
	}

	/**
	 * Undo the last append, whose write failed (the synchronous facade, as pi does): the tree and the
	 * lines waiting to be written are as before it.
	 */
	retractLastAppend(): void {
		this.tree.retractLastAppend();
		this.#unwritten.length = Math.max(0, this.tree.size - this.#persisted);
		if (!this.#fileExists) {
			// The retracted entry may be the message that would have created the file: look again.
			this.#scanned = 0;
			this.#sawConversation = false;
		}
	}

	/** Refuse changes from now on (a session stops taking them as soon as it starts closing). */
	stopChanges(): void {
		this.#closed = true;
	}

	/** Release the writer lock. */
	*close(): Task<void> {
		this.stopChanges();
		if (this.lock) yield* releaseLock(this.lock);
		this.lock = undefined;
	}
}

function emptyReport(created: boolean): OpenReport {
	return { diagnostics: [], repairedLastLine: false, wroteHeader: false, created };
}

/** The migrated file's lines: records re-encoded, skipped lines kept as they were, in the original order. */
function* rewrittenLines(read: ReadSession): Generator<string> {
	let skipped = 0;
	for (let index = 0; index <= read.records.length; index++) {
		while (read.skippedLines[skipped] && (read.skippedLines[skipped]?.afterRecords ?? 0) <= index) {
			yield `${read.skippedLines[skipped]?.text}\n`;
			skipped++;
		}
		const record = read.records[index];
		if (record) yield encodeEntry(record);
	}
}

/**
 * Copy the original next to it before a migration rewrite. The copy is written and flushed under a
 * temporary name, then moved to the first free `<file>.v<N>.bak` name (reserved exclusively first, so an
 * earlier backup is never overwritten): a failure or a crash midway never leaves a partial backup under
 * the name people look for.
 */
function* backUp(path: string, read: ReadSession): Task<string> {
	const base = `${path}.v${read.migration.fromVersion}`;
	const temporary = `${base}.bak.${crypto.randomUUID().slice(0, 8)}.tmp`;
	let reserved: string | undefined;
	try {
		yield* io("createExclusive", temporary, [], false);
		for (let offset = 0; offset < read.size; offset += READ_CHUNK_BYTES) {
			const end = Math.min(read.size, offset + READ_CHUNK_BYTES);
			// The last part is flushed: the copy must be on disk before the original is rewritten.
			yield* io("append", temporary, yield* io("readRange", path, offset, end), end === read.size);
		}
		for (let attempt = 0; reserved === undefined; attempt++) {
			const candidate = attempt === 0 ? `${base}.bak` : `${base}.${attempt}.bak`;
			try {
				yield* io("createExclusive", candidate, [], false);
				reserved = candidate;
			} catch (error) {
				if (!isStorageError(error, "exists") || attempt >= 1000) throw error;
			}
		}
		yield* io("rename", temporary, reserved);
		return reserved;
	} catch (error) {
		yield* removeQuietly(temporary);
		if (reserved) yield* removeQuietly(reserved);
		throw error;
	}
}

/**
 * pi's `forkFrom`: a new session in `sessionDir` for `targetCwd` holding the source's whole history,
 * `parentSession` pointing at the source. Written at once with an exclusive create. The source is only read.
 */
export function* forkFromTask(
	sourcePath: string,
	targetCwd: string,
	sessionDir: string,
	options: ReadOptions & { durable?: boolean; id?: string } = {},
): Task<SessionCore> {
	if (options.id !== undefined) validateSessionId(options.id);
	const source = yield* readSessionFile(sourcePath, options);
	if (!source || "empty" in source) {
		throw new Error(`Cannot fork: source session file is empty or missing: ${sourcePath}`);
	}
	const tree = SessionTree.create({ cwd: targetCwd, parentSession: sourcePath, id: options.id });
	const path = joinPath(sessionDir, sessionFileName(tree.getHeader().timestamp, tree.getSessionId()));
	yield* io("mkdir", sessionDir);
	const lines = [tree.getHeader(), ...source.records.slice(1)].map((record) => encodeEntry(record));
	yield* io("createExclusive", path, encodeChunks(lines), options.durable ?? false);
	return yield* SessionCore.open(path, { sessionDir });
}

/** Options of `Session.create` and `Session.open`. */
export interface SessionOptions {
	durability?: Durability;
}

/**
 * A session bound to a file on an asynchronous storage. Reads are synchronous (the tree is in memory);
 * appends return the new entry's id once it is written as the durability mode says. Appends issued
 * without awaiting are written in order; in `"group"` mode they are coalesced into one write.
 * @example
 * const session = await Session.create(storage, { cwd: "/project", sessionDir: "/sessions/--project--" });
 * await session.appendMessage({ role: "user", content: "hi", timestamp: Date.now() });
 * await session.close();
 */
export class Session {
	#core: SessionCore;
	readonly #storage: Storage;
	readonly #durability: Durability;
	#tail: Promise<void> = Promise.resolve();
	#openBatch: Promise<void> | undefined;
	#failure: unknown;
	/** Cores this session branched away from whose lock the takeover has not released yet. */
	readonly #branchedFrom = new Set<SessionCore>();
	#released = false;

	private constructor(core: SessionCore, storage: Storage, durability: Durability) {
		this.#core = core;
		this.#storage = storage;
		this.#durability = durability;
	}

	/** A new session; its file appears with the first user or assistant message. */
	static async create(storage: Storage, options: CreateOptions & SessionOptions): Promise<Session> {
		return new Session(await runTask(SessionCore.create(options), storage), storage, options.durability ?? "none");
	}

	/**
	 * Open (and lock, repair, migrate) a session file. A missing file is a `SessionNotFoundError`, unless
	 * `create: true` asks for a new session at that path (as pi does).
	 */
	static async open(storage: Storage, path: string, options: OpenOptions & SessionOptions = {}): Promise<Session> {
		const core = await runTask(SessionCore.open(path, { ...options, create: options.create ?? false }), storage);
		return new Session(core, storage, options.durability ?? "none");
	}

	/** Fork another session's whole history into `sessionDir` for `targetCwd`. */
	static async forkFrom(
		storage: Storage,
		sourcePath: string,
		targetCwd: string,
		sessionDir: string,
		options: SessionOptions = {},
	): Promise<Session> {
		const durable = (options.durability ?? "none") !== "none";
		const core = await runTask(forkFromTask(sourcePath, targetCwd, sessionDir, { durable }), storage);
		return new Session(core, storage, options.durability ?? "none");
	}

	/** A session that is never written (the storage is not used). */
	static inMemory(storage: Storage, options: NewSessionOptions & SessionOptions): Session {
		return new Session(SessionCore.inMemory(options), storage, options.durability ?? "none");
	}

	/** The in-memory tree (read it freely; change it only through this session). */
	get tree(): SessionTree {
		this.#core.materialize();
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

	appendMessage(...args: Parameters<SessionTree["appendMessage"]>): Promise<string> {
		return this.#append((tree) => tree.appendMessage(...args));
	}
	appendThinkingLevelChange(...args: Parameters<SessionTree["appendThinkingLevelChange"]>): Promise<string> {
		return this.#append((tree) => tree.appendThinkingLevelChange(...args));
	}
	appendModelChange(...args: Parameters<SessionTree["appendModelChange"]>): Promise<string> {
		return this.#append((tree) => tree.appendModelChange(...args));
	}
	appendCompaction(...args: Parameters<SessionTree["appendCompaction"]>): Promise<string> {
		return this.#append((tree) => tree.appendCompaction(...args));
	}
	appendUsage(...args: Parameters<SessionTree["appendUsage"]>): Promise<string> {
		return this.#append((tree) => tree.appendUsage(...args));
	}
	appendContextEdit(...args: Parameters<SessionTree["appendContextEdit"]>): Promise<string> {
		return this.#append((tree) => tree.appendContextEdit(...args));
	}
	appendCustomEntry(...args: Parameters<SessionTree["appendCustomEntry"]>): Promise<string> {
		return this.#append((tree) => tree.appendCustomEntry(...args));
	}
	appendCustomMessageEntry(...args: Parameters<SessionTree["appendCustomMessageEntry"]>): Promise<string> {
		return this.#append((tree) => tree.appendCustomMessageEntry(...args));
	}
	appendSessionInfo(...args: Parameters<SessionTree["appendSessionInfo"]>): Promise<string> {
		return this.#append((tree) => tree.appendSessionInfo(...args));
	}
	appendLabelChange(...args: Parameters<SessionTree["appendLabelChange"]>): Promise<string> {
		return this.#append((tree) => tree.appendLabelChange(...args));
	}
	branchWithSummary(...args: Parameters<SessionTree["branchWithSummary"]>): Promise<string> {
		return this.#append((tree) => tree.branchWithSummary(...args));
	}
	/**
	 * Append a message that arrives as the UTF-8 bytes of its JSON text (how the worker client sends
	 * messages): the bytes are written as they are, and become an object when the tree is next read. As
	 * `change`, it applies now and says when it is written. The bytes must be `JSON.stringify`'s output for
	 * an object; a `TypeError` if they cannot be one line's object. Read the tree through `tree` after this:
	 * a tree reference held from before shows the message as a placeholder until `tree` is read again.
	 */
	changeEncodedMessage(role: string | undefined, json: Uint8Array): { id: string; written: Promise<void> } {
		assertMessageJson(json);
		const message = new EncodedMessage(role, json) as unknown as AgentMessage;
		return this.change((tree) => tree.appendMessage(message));
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
	 * before it are still written to the old file, first.
	 */
	async createBranchedSession(leafId: string): Promise<string | undefined> {
		this.#assertChangeable();
		const previous = this.#core;
		const next = previous.branch(leafId);
		this.#core = next;
		this.#openBatch = undefined;
		// If the takeover fails or never runs (an earlier write failed), `close` still releases the old lock.
		this.#branchedFrom.add(previous);
		await this.#enqueue(async () => {
			await runTask(next.takeOver(previous, this.#durability !== "none"), this.#storage);
			this.#branchedFrom.delete(previous);
		});
		return next.path;
	}

	/** Resolves when every append issued so far is written. */
	async flush(): Promise<void> {
		await this.#tail;
		if (this.#failure) throw this.#failure;
	}

	/** Write what is pending and release the writer lock. */
	/**
	 * Write what is pending and release the writer lock. If an earlier write failed, that failure is thrown,
	 * after the lock is released (`released` then says so: the session is closed all the same).
	 */
	async close(): Promise<void> {
		this.#core.stopChanges();
		try {
			await this.flush();
		} finally {
			for (const core of [...this.#branchedFrom, this.#core]) await runTask(core.close(), this.#storage);
			this.#branchedFrom.clear();
			this.#released = true;
		}
	}

	/** True once `close` has released every lock this session held, even if it threw a write's failure. */
	get released(): boolean {
		return this.#released;
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
		const upTo = core.tree.size;
		const write = this.#enqueue(async () => {
			if (grouped && this.#openBatch === write) this.#openBatch = undefined;
			const target = grouped ? core.tree.size : upTo;
			await runTask(core.persist(target, this.#durability !== "none"), this.#storage);
		});
		if (grouped) this.#openBatch = write;
		return write;
	}

	/**
	 * Run `job` after every job before it. A job that fails may have left part of a line: the session then
	 * refuses further appends until it is reopened (which repairs).
	 */
	#enqueue(job: () => Promise<void>): Promise<void> {
		const run = this.#tail.then(async () => {
			if (this.#failure) throw this.#failure;
			try {
				await job();
			} catch (error) {
				this.#failure = error;
				throw error;
			}
		});
		this.#tail = run.catch(() => undefined);
		return run;
	}
}
