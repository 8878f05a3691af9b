/**
 * Every error class of the engine, in one module with no other dependencies: the worker client rebuilds
 * errors from the worker as instances of these classes without loading the engine.
 * @module
 */
import type { LockOwner } from "./writer-lock.ts";

/**
 * `unsupported`: the storage cannot do this operation at all (a file system without hard links).
 * `not-a-file`: something other than a regular file (or a link to one) is at the path: a directory, a
 * named pipe, a socket, a device. Such a thing is never read, written or replaced.
 * `changed`: an append that said how long the file must be found it another size, and wrote nothing.
 */
export type StorageErrorCode = "not-found" | "exists" | "io" | "unsupported" | "not-a-file" | "changed";

/** A parsed-but-rejected input: names the file (when known), line and excerpt. */
export class SessionFormatError extends Error {
	override name = "SessionFormatError";
	readonly file: string | undefined;
	readonly line: number;
	readonly byteOffset: number;
	readonly excerpt: string;
	constructor(message: string, where: { file?: string; line: number; byteOffset: number; excerpt: string }) {
		super(`${where.file ?? "<session>"}:${where.line}: ${message} (${JSON.stringify(where.excerpt)})`);
		this.file = where.file;
		this.line = where.line;
		this.byteOffset = where.byteOffset;
		this.excerpt = where.excerpt;
	}
}

/** Appending to a session that was opened read-only. */
export class SessionReadOnlyError extends Error {
	override name = "SessionReadOnlyError";
}

/** `open` of a path where there is no session file (ask for `create: true` to start one there). */
export class SessionNotFoundError extends Error {
	override name = "SessionNotFoundError";
	readonly path: string;
	constructor(path: string, message?: string) {
		super(message ?? `${path}: no such session file (to start a new session at this path, open it with create: true)`);
		this.path = path;
	}
}

/** The session was closed: it takes no more changes (open it again to go on). */
export class SessionClosedError extends Error {
	override name = "SessionClosedError";
}

/** A storage failure with a code the engine can act on. */
export class StorageError extends Error {
	override name = "StorageError";
	readonly code: StorageErrorCode;
	readonly path: string;
	constructor(code: StorageErrorCode, path: string, message?: string, options?: { cause?: unknown }) {
		super(message ?? `${code}: ${path}`, options);
		this.code = code;
		this.path = path;
	}
}

/** Another writer holds the session. Open it read-only, or try again after that writer closes. */
export class SessionLockedError extends Error {
	override name = "SessionLockedError";
	readonly path: string;
	/** The holder, when its lock file could be read. */
	readonly owner: LockOwner | undefined;
	/** Who holds it, in words: `pid 12 on box`, `thread 3 of this process (pid 12)`, `another writer`. */
	readonly holder: string;
	constructor(
		path: string,
		owner: LockOwner | undefined,
		advice = "open it read-only or close the other writer",
		holder: string = owner ? `pid ${owner.pid} on ${owner.host}` : "another writer",
	) {
		super(`${path} is locked by ${holder}; ${advice}`);
		this.path = path;
		this.owner = owner;
		this.holder = holder;
	}
}

/** The first line of a file is longer than header discovery reads; a full load can still open it. */
export class HeaderTooLongError extends Error {
	override name = "HeaderTooLongError";
	readonly path: string;
	constructor(path: string, limit: number) {
		super(`${path}: the header line is longer than ${limit} bytes`);
		this.path = path;
	}
}

/** Thrown when an operation names an entry that the session does not have. */
export class EntryNotFoundError extends Error {
	override name = "EntryNotFoundError";
	readonly entryId: string;
	constructor(entryId: string) {
		super(`Entry ${entryId} not found`);
		this.entryId = entryId;
	}
}

/**
 * Thrown by a synchronous read of a lazily opened session's tree that needs an entry whose body has not
 * been decoded: read it through the session's asynchronous reads (or open the session with `load: "full"`).
 */
export class EntryNotLoadedError extends Error {
	override name = "EntryNotLoadedError";
	readonly entryId: string;
	readonly file: string;
	constructor(entryId: string, file: string) {
		super(
			`entry ${entryId} of ${file} is not decoded yet: the session was opened lazily; read it with the session's asynchronous reads, or open it with load: "full"`,
		);
		this.entryId = entryId;
		this.file = file;
	}
}

/** A context edit that pi 1.6 would refuse: its target is not on the active branch or has no editable content. */
export class InvalidContextEditError extends Error {
	override name = "InvalidContextEditError";
	readonly targetId: string;
	constructor(targetId: string, why: string) {
		super(`Entry ${targetId} ${why}`);
		this.targetId = targetId;
	}
}

/** A session is not open in this engine (never opened, or closed). */
export class UnknownSessionError extends Error {
	override name = "UnknownSessionError";
}

/** A session id, cwd or file name that could escape the sessions directory or is not a session. */
export class InvalidSessionPathError extends Error {
	override name = "InvalidSessionPathError";
}

/**
 * An argument the engine cannot take: a message that is not an object, a context edit's replacement without
 * content, an entry whose JSON cannot be made, an encoded message that is not one object's text, a batch of
 * calls of the wrong shape, a sessions root that is not absolute, a storage a worker does not have. Thrown
 * before anything is written, with one exception: encoded message bytes are only framed when appended (they
 * come from `JSON.stringify` on the client), so bytes that are no UTF-8 JSON are found when the tree reads
 * them. A `TypeError` (pi's own checks throw `TypeError`s or plain `Error`s), typed so that it crosses the
 * worker as itself.
 */
export class InvalidArgumentError extends TypeError {
	override name = "InvalidArgumentError";
}

/** Why an entry cannot be appended: its JSON cannot be made (a cycle, a BigInt). */
export function unencodableEntryError(type: string, why: unknown): InvalidArgumentError {
	const reason = why instanceof Error ? why.message : String(why);
	return new InvalidArgumentError(`cannot append this ${type} entry: it cannot be written as JSON (${reason})`, {
		cause: why,
	});
}

/**
 * A call to the engine worker whose arguments or answer arrived but could not be read on the other side
 * (the runtime reports `messageerror`: too deeply nested to deserialise, for example). The call rejects
 * with this instead of waiting for an answer that will never come.
 */
export class UnreadableMessageError extends Error {
	override name = "UnreadableMessageError";
	/** The engine method called, when known. */
	readonly method: string | undefined;
	/** What could not be read: the call's arguments (in the worker) or its answer (on the caller's side). */
	readonly part: "arguments" | "answer";
	constructor(method: string | undefined, part: "arguments" | "answer") {
		const where =
			part === "answer" ? "its answer could not be read here" : "its arguments could not be read in the worker";
		super(`${method ?? "a call to the engine worker"}: ${where} (too deeply nested to deserialise, for example)`);
		this.method = method;
		this.part = part;
	}
}

/**
 * A path given to an engine with a sessions root (`EngineOptions.root`) that lies outside that root, after
 * `.` and `..` are resolved and, where the storage can tell, symbolic links of the part that exists (a link
 * inside the root to a place outside it is no way out); or a relative path, whose meaning depends on the
 * storage. Nothing was read or written.
 */
export class PathOutsideRootError extends InvalidSessionPathError {
	override name = "PathOutsideRootError";
	/** The path as given. */
	readonly path: string;
	/** The engine's sessions root. */
	readonly root: string;
	constructor(path: string, root: string, why = "lies outside") {
		super(`${path} ${why} the engine's sessions root ${root}`);
		this.path = path;
		this.root = root;
	}
}

/** Which limit a `SessionLimitError` reports: a file's record count, or one line's length in bytes. */
export type SessionLimit = "entries" | "line-bytes";

/**
 * A session is beyond a configured limit (`maxEntries`, `maxLineBytes` of the read options): refused
 * before it takes the memory it would need, the file left as it is.
 */
export class SessionLimitError extends Error {
	override name = "SessionLimitError";
	readonly path: string;
	readonly limit: SessionLimit;
	/** The limit's value: records, or bytes. */
	readonly max: number;
	/** Where reading reached the limit: the 1-based line and its byte offset. */
	readonly line: number;
	readonly byteOffset: number;
	constructor(
		path: string,
		limit: SessionLimit,
		max: number,
		where: { line: number; byteOffset: number },
		why?: string,
	) {
		const what = limit === "entries" ? `more than ${max} records` : `a line longer than ${max} bytes`;
		super(`${path}:${where.line}: the session holds ${what} (at byte ${where.byteOffset})${why ? `; ${why}` : ""}`);
		this.path = path;
		this.limit = limit;
		this.max = max;
		this.line = where.line;
		this.byteOffset = where.byteOffset;
	}
}

/** How a session's file was found changed under the open session. */
export type SessionFileChange = "removed" | "truncated";

/**
 * The file of an open session was removed, or truncated or replaced by a shorter one, by another program:
 * the session writes nothing more to it (pi would append to a new, headerless file, or after someone
 * else's bytes). What was appended and not yet written is still in the session's tree; open the session
 * again to go on where the file stands, or fork it to a new file to keep what the tree holds.
 */
export class SessionFileChangedError extends Error {
	override name = "SessionFileChangedError";
	readonly path: string;
	readonly change: SessionFileChange;
	/** Bytes the session had written the file to. */
	readonly expectedBytes: number;
	/** Bytes found (0 when removed). */
	readonly foundBytes: number;
	constructor(path: string, change: SessionFileChange, expectedBytes: number, foundBytes: number) {
		const what =
			change === "removed"
				? "was removed"
				: `was truncated or replaced by another program (it holds ${foundBytes} bytes, this session had written ${expectedBytes})`;
		super(`${path}: the session's file ${what} while the session was open; nothing more was written to it`);
		this.path = path;
		this.change = change;
		this.expectedBytes = expectedBytes;
		this.foundBytes = foundBytes;
	}
}
