/**
 * Importing a session file (`Engine#importSessionFile`): bytes as given, or a `Blob` (a picked `File`)
 * streamed in bounded chunks, so a file of gigabytes costs the importing thread two chunks of memory, not
 * its size. Whole or not at all, and never over an existing file.
 * @module
 */
import { SessionLockedError } from "./errors.ts";
import { lockFiles, realmLockIdentity } from "./lock-files.ts";
import { dirname } from "./paths.ts";
import { isStorageError, type Storage, StorageError, temporaryName } from "./storage.ts";
import type { HeldLock, WriterLocks } from "./writer-lock.ts";

/** A `Blob` is read and written this much at a time (one chunk is written while the next is read). */
export const IMPORT_CHUNK_BYTES: number = 8 << 20;

export interface ImportOptions {
	/** The writer locks of the storage (default: lock files judged by this realm alone, as `Session`'s). */
	locks?: WriterLocks;
	/** Bytes of a `Blob` read at a time (default `IMPORT_CHUNK_BYTES`); a `Blob` no bigger is written in one piece. */
	chunkBytes?: number;
}

/**
 * Write `bytes` as a new file at `path` (see `Engine#importSessionFile`). Bytes, and a `Blob` of at most
 * one chunk, are one exclusive create. A bigger `Blob` is written chunk by chunk under a temporary name
 * next to `path` (`temporaryName`, so a leftover of a crash is removed by the next writer to open the
 * session), flushed, then given its name.
 * @example
 * await importSessionFile(storage, "/pi/agent/sessions/--p--/a.jsonl", pickedFile, { locks });
 */
export async function importSessionFile(
	storage: Storage,
	path: string,
	bytes: Uint8Array | Blob,
	options: ImportOptions = {},
): Promise<void> {
	const locks = options.locks ?? lockFiles(storage, realmLockIdentity);
	const chunkBytes = options.chunkBytes ?? IMPORT_CHUNK_BYTES;
	const dir = dirname(path);
	if (dir !== ".") await storage.mkdir(dir);
	if (bytes instanceof Uint8Array || bytes.size <= chunkBytes) {
		const content = bytes instanceof Uint8Array ? bytes : new Uint8Array(await bytes.arrayBuffer());
		await underWriterLock(locks, path, () => storage.createExclusive(path, [content], true));
		return;
	}
	// Refused before a byte is copied; checked again when the file is given its name.
	if (await storage.stat(path)) throw existsError(path);
	const temporary = temporaryName(path);
	await storage.createExclusive(temporary, [], false);
	try {
		await writeChunks(storage, temporary, bytes, chunkBytes);
		// A writer opening the session removes temporaries it finds (`removeLeftoverTemporaries`), and an
		// append after that would make the file anew with only the rest: the size tells.
		const written = await storage.stat(temporary);
		if (written?.size !== bytes.size) {
			throw new StorageError(
				"io",
				path,
				`io: ${path}: its temporary file ${temporary} was removed or changed while it was written (${written?.size ?? "no"} bytes of ${bytes.size})`,
			);
		}
		await underWriterLock(locks, path, () => publish(storage, temporary, path));
	} finally {
		// After `link` the file has its name too; after `rename` there is nothing left to remove.
		await storage.remove(temporary).catch(() => undefined);
	}
}

/** Append `blob` to `path` a chunk at a time, reading the next chunk while one is written; the last is flushed. */
async function writeChunks(storage: Storage, path: string, blob: Blob, chunkBytes: number): Promise<void> {
	const read = (start: number): Promise<ArrayBuffer> => {
		const reading = blob.slice(start, Math.min(blob.size, start + chunkBytes)).arrayBuffer();
		reading.catch(() => undefined); // awaited below, unless a write fails first
		return reading;
	};
	let next: Promise<ArrayBuffer> | undefined = read(0);
	for (let start = 0; next; ) {
		const chunk: Uint8Array = new Uint8Array(await next);
		const end: number = start + chunk.length;
		if (chunk.length !== Math.min(chunkBytes, blob.size - start)) {
			throw new StorageError(
				"io",
				path,
				`io: ${path}: the Blob gave ${chunk.length} bytes at ${start}, not the bytes asked for (did its file change?)`,
			);
		}
		next = end < blob.size ? read(end) : undefined;
		await storage.append(path, chunk, next === undefined);
		start = end;
	}
}

/**
 * Give the written temporary file its name, which must still be free: a hard link where the storage has
 * them (refused by the storage itself if the name is taken: no window), otherwise a rename after a check.
 * Run under the name's writer lock, which the writers of this package take before they write a session's
 * file under a name that may be taken (an import, `Session.create`, an open for writing; a fork writes a
 * fresh name of its own first), so none of them gets the name between the check and the rename. The
 * window left: on a storage without hard links (OPFS, ZenFS), a writer that takes no lock (another program
 * or code writing through the storage directly, an exclusive create of its own) creating this very name
 * between the check and the rename would have its file replaced by this one, whole.
 */
async function publish(storage: Storage, temporary: string, path: string): Promise<void> {
	if (await storage.stat(path)) throw existsError(path);
	try {
		await storage.link(temporary, path);
		return;
	} catch (error) {
		if (isStorageError(error, "exists")) throw existsError(path, error);
		if (!isStorageError(error, "unsupported")) throw error;
	}
	await storage.rename(temporary, path);
}

/** Run `body` holding `path`'s writer lock; a lock held elsewhere means the name is taken (`exists`). */
async function underWriterLock<T>(locks: WriterLocks, path: string, body: () => Promise<T>): Promise<T> {
	let lock: HeldLock;
	try {
		lock = await locks.acquire(path);
	} catch (error) {
		if (error instanceof SessionLockedError) throw existsError(path, error, `${error.holder} is writing it`);
		throw error;
	}
	try {
		return await body();
	} finally {
		// Best effort: the import is done (or failed) whatever becomes of the lock.
		await locks.release(lock).catch(() => undefined);
	}
}

function existsError(path: string, cause?: unknown, why = "a file is already there"): StorageError {
	return new StorageError("exists", path, `exists: ${path}: ${why}; an import never overwrites`, { cause });
}
