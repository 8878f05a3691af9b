/**
 * One session's persistence rules, as tasks over storage: which entries go to which file, when, as which
 * bytes. `Session` drives these tasks on an asynchronous storage, the pi-compatible facade synchronously.
 *
 * - A new session's file is created (exclusively, whole or not at all) with its first user or assistant
 *   message (as pi 1.6), holding every entry so far; later entries are appended. A create that fails
 *   leaves no file and is tried again by the next write.
 * - After an append that failed, the next one starts on a new line if the file ends in part of a line.
 * - Every append says how long the file must be (the size this session wrote it to): a file removed,
 *   truncated or replaced by a shorter one under the open session is never written (`SessionFileChangedError`);
 *   one another program appended to is appended to after its bytes, on a line of its own.
 * - Messages may arrive as the bytes of their JSON text (`appendMessageJson`, how the worker receives
 *   them): those bytes are written as they are, and the tree gets the message only when it is next read.
 * @module
 */
import type { AgentMessage, SessionEntry } from "./entries.ts";
import {
	InvalidArgumentError,
	SessionClosedError,
	SessionFileChangedError,
	SessionReadOnlyError,
	unencodableEntryError,
} from "./errors.ts";
import { createEntryId } from "./ids.ts";
import { bytesNestDeeperThan, type Diagnostic, encodeEntry, MAX_NESTING_DEPTH, nestsDeeperThan } from "./jsonl.ts";
import {
	assertMessageJson,
	decodeMessage,
	type EncodedLine,
	encodeChunks,
	encodeLines,
	type PendingLine,
} from "./line-bytes.ts";
import { io, isStorageError, type Task } from "./storage.ts";
import { assertObjectMessage, type NewSessionOptions, SessionTree } from "./tree.ts";
import type { HeldLock } from "./writer-lock.ts";

/** What opening found and did, for callers that want to tell the user. */
export interface OpenReport {
	diagnostics: Diagnostic[];
	/** Set when the file was migrated: the version it had and where the original was kept. */
	migratedFrom?: { version: number; backupPath?: string };
	/** True when a missing final newline was added. */
	repairedLastLine: boolean;
	/**
	 * True when the last line had no newline and was left alone, the file still changing (another program
	 * writing that line): the first append then starts on a new line if the file still ends without one.
	 */
	tornTailLeft?: boolean;
	/** True when an empty file was given a header. */
	wroteHeader: boolean;
	/** True when there was no file: the session is new and its file will be created later. */
	created: boolean;
}

export function emptyReport(created: boolean): OpenReport {
	return { diagnostics: [], repairedLastLine: false, wroteHeader: false, created };
}

/** How a core is bound to its file. */
export interface CoreFields {
	tree: SessionTree;
	/** Working directory to use instead of the header's. */
	cwd?: string;
	/** Session file; undefined for a session that is never written. */
	path: string | undefined;
	sessionDir: string;
	readOnly: boolean;
	/** Whether the file exists and holds every entry of `tree`. */
	fileExists: boolean;
	report: OpenReport;
	/** The file may end in part of a line (a torn tail left alone): checked before the first append. */
	tailMayBeTorn?: boolean;
	/** The file's size, when known (when not, the first append asks the storage). */
	fileBytes?: number;
}

/** What `JSON.stringify` writes for a value at the top: the result of its `toJSON`, if it has one. */
function writtenAtTop(value: unknown): unknown {
	const toJSON = (value as { toJSON?: unknown } | null)?.toJSON;
	return typeof toJSON === "function" ? toJSON.call(value, "") : value;
}

/**
 * An appended entry's line; a `TypeError` naming the entry when it cannot be encoded (a BigInt, a cycle)
 * or nests deeper than `MAX_NESTING_DEPTH` (a read would skip its line: it would be lost).
 */
function encodeAppended(entry: SessionEntry): string {
	let line: string;
	try {
		line = encodeEntry(entry);
	} catch (error) {
		throw unencodableEntryError(entry.type, error);
	}
	if (line.length > 2 * MAX_NESTING_DEPTH && nestsDeeperThan(entry, MAX_NESTING_DEPTH)) {
		throw unencodableEntryError(entry.type, tooDeep());
	}
	return line;
}

function tooDeep(): string {
	return `it nests deeper than ${MAX_NESTING_DEPTH} levels, which a read skips (see MAX_NESTING_DEPTH)`;
}

/** A new session's file is created with the first of these (pi 1.6; pi 0.73.1 waited for an assistant message). */
function isConversationRole(role: unknown): boolean {
	return role === "user" || role === "assistant";
}

/** A message appended as JSON bytes, not in the tree yet. */
/** An append that finds the file grown is tried again at its new size this often before it gives up. */
const MAX_APPEND_ATTEMPTS = 4;

/** The chunks, each told to `count` (its length) as it passes. */
function* counted(chunks: Iterable<Uint8Array>, count: (bytes: number) => void): Iterable<Uint8Array> {
	for (const chunk of chunks) {
		count(chunk.length);
		yield chunk;
	}
}

interface DeferredMessage extends EncodedLine {
	role: string | undefined;
}

/** The persistence rules of one session, as tasks over storage. */
export class SessionCore {
	#tree: SessionTree;
	/** Working directory: the header's, unless the opener overrode it (the file keeps its header). */
	cwd: string;
	/** Session file; undefined for an in-memory session. */
	readonly path: string | undefined;
	readonly sessionDir: string;
	readonly readOnly: boolean;
	/** The writer lock, while the session holds it (its driver takes and releases it). */
	lock: HeldLock | undefined;
	readonly report: OpenReport;
	/** Whether the file exists with every entry up to `persisted`. */
	#fileExists: boolean;
	/** The file's size as this session last wrote or saw it; undefined until known. */
	#fileBytes: number | undefined;
	/** Entries already in the file (the tree's first ones, then the deferred messages). */
	#persisted: number;
	/** Entries already scanned for a user or assistant message, and whether one was seen. */
	#scanned = 0;
	#sawConversation = false;
	/** An append failed: the file may end in part of its data (checked before the next append). */
	#appendMayHaveTorn = false;
	/** The last write was a create that failed and left no file: the next write tries it again. */
	#createFailed = false;
	#closed = false;
	/** Lines of the entries not written yet, from entry `#persisted` on, encoded when appended. */
	#unwritten: PendingLine[] = [];
	/** Messages appended as JSON bytes after the tree's entries, in order (see `appendMessageJson`). */
	#deferred: DeferredMessage[] = [];
	#deferredIds = new Set<string>();
	/** Ids in use: the tree's and the deferred messages' (made once: appends are a hot path). */
	readonly #takenIds = { has: (id: string) => this.#tree.structureOf(id) !== undefined || this.#deferredIds.has(id) };

	constructor(fields: CoreFields) {
		this.#tree = fields.tree;
		this.cwd = fields.cwd ?? fields.tree.getCwd();
		this.path = fields.path;
		this.sessionDir = fields.sessionDir;
		this.readOnly = fields.readOnly;
		this.#fileExists = fields.fileExists;
		this.#persisted = fields.fileExists ? fields.tree.size : 0;
		this.report = fields.report;
		this.#appendMayHaveTorn = fields.tailMayBeTorn ?? false;
		this.#fileBytes = fields.fileBytes;
		// Encode each entry as it is appended: one that cannot be written is refused then, alone, instead
		// of failing the write it would join (which would stop the session). What is written is then the
		// entry as it was appended, even if the caller changes its objects later.
		const tree = this.#tree;
		const writes = this.#writes;
		tree.setOnAppend((entry) => {
			if (entry.type === "message") assertObjectMessage(entry.message, writtenAtTop(entry.message));
			if (writes) this.#unwritten[tree.size - this.#persisted] = encodeAppended(entry);
		});
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
		const tree = SessionTree.create(options);
		return new SessionCore({
			tree,
			path: undefined,
			sessionDir: "",
			readOnly: false,
			fileExists: false,
			report: emptyReport(true),
		});
	}

	get #writes(): boolean {
		return this.path !== undefined && !this.readOnly;
	}

	/** The session's tree, holding every entry appended so far (messages appended as bytes are decoded now). */
	get tree(): SessionTree {
		if (this.#deferred.length > 0) this.#catchUp();
		return this.#tree;
	}

	/** Entries in the session, counting messages not decoded yet. */
	get size(): number {
		return this.#tree.size + this.#deferred.length;
	}

	/**
	 * Append a message given as the UTF-8 bytes of its JSON text, `JSON.stringify`'s output for an object
	 * (how the worker receives messages): the bytes are written as they are, and the tree gets the message
	 * when it is next read. A `TypeError` if the bytes cannot be one line's object; bytes that are braced
	 * but not JSON are written, and the next read of the tree throws a `TypeError` naming the entry.
	 */
	appendMessageJson(role: string | undefined, json: Uint8Array): string {
		this.assertWritable();
		assertMessageJson(json);
		// The message is one level below the entry.
		if (bytesNestDeeperThan(json, MAX_NESTING_DEPTH - 1)) throw unencodableEntryError("message", tooDeep());
		const deferred = this.#deferred;
		const message: DeferredMessage = {
			id: createEntryId(this.#takenIds),
			parentId: deferred.length > 0 ? (deferred[deferred.length - 1] as DeferredMessage).id : this.#tree.getLeafId(),
			timestamp: new Date().toISOString(),
			json,
			role,
		};
		if (this.#writes) this.#unwritten[this.size - this.#persisted] = message;
		deferred.push(message);
		this.#deferredIds.add(message.id);
		return message.id;
	}

	/** Put the deferred messages into the tree, in order; stops at one whose bytes are not UTF-8 JSON. */
	#catchUp(): void {
		const deferred = this.#deferred;
		let index = 0;
		try {
			for (; index < deferred.length; index++) {
				const { id, parentId, timestamp, json } = deferred[index] as DeferredMessage;
				let message: AgentMessage;
				try {
					message = decodeMessage(json) as AgentMessage;
				} catch (error) {
					const session = this.path ?? "an in-memory session";
					throw new InvalidArgumentError(`message entry ${id} of ${session}: ${String(error)}`, { cause: error });
				}
				this.#tree.addEntry({ type: "message", id, parentId, timestamp, message });
			}
		} finally {
			for (let done = 0; done < index; done++) this.#deferredIds.delete((deferred[done] as DeferredMessage).id);
			this.#deferred = index === deferred.length ? [] : deferred.slice(index);
		}
	}

	/** Throws unless appends are allowed. */
	assertWritable(): void {
		if (this.#closed) throw new SessionClosedError(`${this.path ?? "the in-memory session"} is closed`);
		if (this.readOnly) throw new SessionReadOnlyError(`${this.path} was opened read-only`);
	}

	/** Whether the last write failed without writing anything, so trying again is safe. */
	get lastWriteLeftNothing(): boolean {
		return this.#createFailed;
	}

	/**
	 * Write the session's entries up to `upTo` (exclusive): nothing before the first user or assistant
	 * message of a new session, then header and everything at once with an exclusive create, then appends.
	 */
	*persist(upTo: number, durable: boolean): Task<void> {
		if (!this.#writes || upTo <= this.#persisted) return;
		if (!this.#fileExists) {
			if (!this.#scanForConversation(upTo)) return;
			// A branch of a lazily read session: its entries are decoded from the old file to be written.
			const bodies = this.#tree.bodies;
			const loaded = bodies && (yield* bodies.load(this.#tree.structureBetween(0, Math.min(upTo, this.#tree.size))));
			const eachLine = () => this.#eachLineBetween(0, upTo, encodeEntry(this.#tree.getHeader()));
			// Encoded as the storage asks for them, so that each line dies young; a lazily read tree's entries are
			// whole only inside `withLoaded`, so their lines are encoded there, all of them.
			const lines = bodies && loaded ? bodies.withLoaded(loaded, () => [...eachLine()]) : eachLine();
			let bytes = 0;
			try {
				yield* io(
					"createExclusive",
					this.path as string,
					counted(encodeChunks(lines), (n) => (bytes += n)),
					durable,
				);
			} catch (error) {
				// A create leaves the whole file or none: unless the name is taken, the next write can try again.
				this.#createFailed = !isStorageError(error, "exists");
				throw error;
			}
			this.#createFailed = false;
			this.#fileExists = true;
			this.#fileBytes = bytes;
			// From now on it holds them whole: it must not depend on the old file, which may go.
			if (loaded) this.#tree.adoptWhole(loaded);
		} else {
			yield* this.#appendToFile(encodeLines(this.#linesBetween(this.#persisted, upTo)), durable);
		}
		this.#unwritten = this.#unwritten.slice(upTo - this.#persisted);
		this.#persisted = upTo;
	}

	/** Whether a user or assistant message is among the first `upTo` entries (scanning only what is new). */
	#scanForConversation(upTo: number): boolean {
		const inTree = this.#tree.size;
		if (!this.#sawConversation && this.#scanned < inTree) {
			for (const entry of this.#tree.structureBetween(this.#scanned, Math.min(upTo, inTree))) {
				if (entry.type === "message" && isConversationRole(entry.message?.role)) this.#sawConversation = true;
			}
		}
		for (let index = Math.max(this.#scanned, inTree); index < upTo && !this.#sawConversation; index++) {
			if (isConversationRole(this.#deferred[index - inTree]?.role)) this.#sawConversation = true;
		}
		this.#scanned = Math.max(this.#scanned, upTo);
		return this.#sawConversation;
	}

	/**
	 * Append `lines` to the existing file at the size this session knows it to be. Grown meanwhile (another
	 * program appended, pi takes no lock): after its bytes, on a new line. Removed or shorter: refused.
	 */
	*#appendToFile(lines: Uint8Array, durable: boolean): Task<void> {
		const path = this.path as string;
		let measure = this.#fileBytes === undefined || this.#appendMayHaveTorn;
		for (let attempt = 1; ; attempt++) {
			if (measure) yield* this.#learnSize();
			const size = this.#fileBytes as number;
			const data = this.#appendMayHaveTorn ? yield* this.#afterTornTail(lines, size) : lines;
			try {
				yield* io("append", path, data, durable, size);
			} catch (error) {
				if (isStorageError(error, "changed") && attempt < MAX_APPEND_ATTEMPTS) {
					measure = true;
					continue;
				}
				if (isStorageError(error, "not-found")) throw new SessionFileChangedError(path, "removed", size, 0);
				// Part of the data may be in the file: the next append must not fuse onto a half line.
				this.#appendMayHaveTorn = true;
				throw error;
			}
			this.#appendMayHaveTorn = false;
			this.#fileBytes = size + data.length;
			return;
		}
	}

	/** Ask the storage how long the file is now: never shorter than this session wrote it. */
	*#learnSize(): Task<void> {
		const path = this.path as string;
		const stat = yield* io("stat", path);
		const known = this.#fileBytes ?? 0;
		if (!stat) throw new SessionFileChangedError(path, "removed", known, 0);
		if (stat.size < known) throw new SessionFileChangedError(path, "truncated", known, stat.size);
		// It grew, or was never measured: whoever wrote last may have left part of a line.
		if (stat.size !== this.#fileBytes) this.#appendMayHaveTorn = true;
		this.#fileBytes = stat.size;
	}

	/** `data` after a line feed when the file's last byte is not one (an earlier append was cut short). */
	*#afterTornTail(data: Uint8Array, size: number): Task<Uint8Array> {
		if (size === 0) return data;
		const last = yield* io("readRange", this.path as string, size - 1, size);
		if (last[0] === 0x0a) return data;
		const terminated = new Uint8Array(data.length + 1);
		terminated[0] = 0x0a;
		terminated.set(data, 1);
		return terminated;
	}

	/** The lines of entries `[start, end)`: as encoded when appended, or encoded now (loaded, forked). */
	#linesBetween(start: number, end: number): PendingLine[] {
		return [...this.#eachLineBetween(start, end)];
	}

	/** `#linesBetween`, a line at a time, after `first` when given (a new file's header). */
	*#eachLineBetween(start: number, end: number, first?: string): Generator<PendingLine, void, undefined> {
		if (first !== undefined) yield first;
		const inTree = Math.max(start, Math.min(end, this.#tree.size));
		const entries = this.#tree.entriesBetween(start, inTree);
		for (let offset = 0; offset < entries.length; offset++) {
			yield this.#unwritten[start + offset - this.#persisted] ?? encodeEntry(entries[offset] as SessionEntry);
		}
		// Deferred messages are never in the file unwritten: their lines are always kept.
		for (let index = inTree; index < end; index++) yield this.#unwritten[index - this.#persisted] as PendingLine;
	}

	/**
	 * Undo the last append, whose write failed (the synchronous facade, as pi does): the tree and the
	 * lines waiting to be written are as before it.
	 */
	retractLastAppend(): void {
		this.tree.retractLastAppend();
		this.#unwritten.length = Math.max(0, this.#tree.size - this.#persisted);
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
}
