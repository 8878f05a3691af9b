/**
 * Migrating a file in place while keeping the original: `<file>.v<N>.bak` (or `.v<N>.<k>.bak`, never
 * overwriting an earlier backup). pi appends without a lock, so a line may arrive while a migration runs;
 * it must end in the new file, or at worst in the backup, never in neither.
 * @module
 */
import { SessionLimitError } from "./errors.ts";
import { randomUuid } from "./ids.ts";
import { encodeEntry } from "./jsonl.ts";
import { encodeChunks } from "./line-bytes.ts";
import { READ_CHUNK_BYTES, type ReadSession } from "./load.ts";
import { io, isStorageError, removeQuietly, type Task } from "./storage.ts";

/** What a migration did. */
export interface Migrated {
	/** Where the original is kept; undefined when nothing was changed (the file changed first: read it again). */
	backupPath: string | undefined;
	/**
	 * False when the file holds more than what was read: lines appended meanwhile were carried over into
	 * the new file (or, when `backupPath` is undefined, nothing was done). Either way, read it again.
	 */
	complete: boolean;
}

/** The migrated file's lines: records re-encoded, skipped lines kept as they were, in the original order. */
export function* rewrittenLines(read: ReadSession): Generator<string> {
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

/** Backup names to try, in order: `<base>.bak`, then `<base>.1.bak`, `<base>.2.bak`, … */
function backupName(base: string, attempt: number): string {
	return attempt === 0 ? `${base}.bak` : `${base}.${attempt}.bak`;
}

const MAX_BACKUP_NAMES = 1000;

/**
 * Rewrite `path` migrated, keeping the original as a backup. The backup is a second name (a hard link)
 * of the original file, made before the rewrite replaces `path` atomically: a line appended before the
 * replace lands in the original, so in the backup, and is then carried over into the new file; one
 * appended after it lands in the new file. A storage without hard links gets a copy instead, flushed
 * before the rewrite, and the rewrite is dropped if the file changed meanwhile (a line appended in the
 * instant between that check and the rewrite is then in neither: only a writer that takes no lock, on a
 * storage without hard links, can do that).
 */
export function* migrateWithBackup(path: string, read: ReadSession): Task<Migrated> {
	assertRewritable(path, read);
	return yield* rewriteWithBackup(path, read, encodeChunks(rewrittenLines(read)));
}

/**
 * Throws a `SessionLimitError` (before anything is written, so no backup is made) when the file holds a
 * line over the read's `maxLineBytes`: its bytes were never held, so a rewrite could not carry it over.
 */
export function assertRewritable(path: string, read: ReadSession): void {
	const oversized = read.skippedLines.find((skipped) => skipped.oversized)?.oversized;
	if (!oversized) return;
	throw new SessionLimitError(
		path,
		"line-bytes",
		oversized.limit,
		oversized,
		"it cannot be rewritten (migrated) without that line, so it was left untouched: open it read-only, or with a larger maxLineBytes",
	);
}

/**
 * The same for any new content of a file as read (a repair that drops damaged lines): `content` replaces
 * the first `read.size` bytes, the original is kept as `<file>.v<N>.bak`, and lines appended meanwhile are
 * carried over as above. `content` is iterated once, when the rewrite is written.
 */
export function* rewriteWithBackup(path: string, read: ReadSession, content: Iterable<Uint8Array>): Task<Migrated> {
	const base = `${path}.v${read.migration.fromVersion}`;
	const linked = yield* linkBackup(path, base);
	const backupPath = linked ?? (yield* copyBackup(path, base, read.size));
	if (!linked && (yield* changedSince(path, read))) {
		yield* io("remove", backupPath); // a copy of what is still there: nothing was changed yet
		return { backupPath: undefined, complete: false };
	}
	try {
		yield* io("replace", path, content);
	} catch (error) {
		// Nothing was changed: the backup is a second name or a copy of what is still there.
		yield* removeQuietly(backupPath);
		throw error;
	}
	if (!linked) return { backupPath, complete: true };
	const original = yield* io("stat", backupPath);
	if (!original || original.size <= read.size) return { backupPath, complete: true };
	// Only lines appended after what was read are carried over; a file rewritten meanwhile (another program
	// migrating it in place) is left in the backup as it is.
	const seam = yield* io("readRange", backupPath, read.size - 1, read.size);
	if (!read.endsWithNewline || seam[0] !== 0x0a) return { backupPath, complete: true };
	yield* io("append", path, yield* io("readRange", backupPath, read.size, original.size), false);
	return { backupPath, complete: false };
}

/** Whether the file is no longer the one read (it grew, or was written). */
function* changedSince(path: string, read: ReadSession): Task<boolean> {
	const now = yield* io("stat", path);
	return now?.size !== read.size || now.mtimeMs !== read.mtimeMs;
}

/** Give the original a backup name; `undefined` if this storage cannot (no hard links). */
function* linkBackup(path: string, base: string): Task<string | undefined> {
	try {
		return yield* claimFreeName(base, (candidate) => io("link", path, candidate));
	} catch (error) {
		if (isStorageError(error, "unsupported")) return undefined;
		throw error;
	}
}

/** Claim the first backup name that is free (`claim` fails with `exists` on a taken one); that name. */
function* claimFreeName(base: string, claim: (candidate: string) => Task<void>): Task<string> {
	for (let attempt = 0; ; attempt++) {
		const candidate = backupName(base, attempt);
		try {
			yield* claim(candidate);
			return candidate;
		} catch (error) {
			if (!isStorageError(error, "exists") || attempt >= MAX_BACKUP_NAMES) throw error;
		}
	}
}

/**
 * Copy the original next to it. The copy is written and flushed under a temporary name, then moved to
 * the first free backup name (reserved exclusively first): a failure or a crash midway never leaves a
 * partial backup under the name people look for.
 */
function* copyBackup(path: string, base: string, size: number): Task<string> {
	const temporary = `${base}.bak.${randomUuid().slice(0, 8)}.tmp`;
	let reserving: string | undefined;
	let reserved: string | undefined;
	try {
		yield* io("createExclusive", temporary, [], false);
		for (let offset = 0; offset < size; offset += READ_CHUNK_BYTES) {
			const end = Math.min(size, offset + READ_CHUNK_BYTES);
			// The last part is flushed: the copy must be on disk before the original is rewritten.
			yield* io("append", temporary, yield* io("readRange", path, offset, end), end === size);
		}
		reserved = yield* claimFreeName(base, (candidate) => {
			reserving = candidate;
			return io("createExclusive", candidate, [], false);
		});
		yield* io("rename", temporary, reserved);
		return reserved;
	} catch (error) {
		yield* removeQuietly(temporary);
		if (reserved) yield* removeQuietly(reserved);
		// A reservation reported failed may have been made all the same (its create done, then an error):
		// an empty file there is that reservation, never a backup (a session file is never empty).
		else if (reserving && !isStorageError(error, "exists")) yield* removeIfEmpty(reserving);
		throw error;
	}
}

/** Remove the file at `path` if it is there and empty; best effort, like `removeQuietly`. */
function* removeIfEmpty(path: string): Task<void> {
	try {
		if ((yield* io("stat", path))?.size === 0) yield* io("remove", path);
	} catch {
		// The failure being reported is the one that matters.
	}
}
