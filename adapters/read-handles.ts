/**
 * Read handles kept open across reads of a file that follow one another without a pause, so that a file
 * read range by range is opened once. Opening, checking and closing a file for every range took three of
 * the four trips to the I/O threads of each read, and a read ahead started while the engine splits the
 * range before it could make only its first trip until the engine was done (a lazy open of 100 MB waited
 * ~190 ms of its ~650 ms for reads; with the handle kept, each read ahead is one trip).
 *
 * Only a read that starts where the one before it ended reuses the handle (a file read in order, as a
 * read ahead does); any other read opens the file afresh, as does the next read after any pause (a handle
 * is closed once no read of its file is under way and a timer turn has passed) and every read after a
 * change made through this storage (`forget`): a file read again to decide on it (a lock file, before a
 * takeover) is read as it is now. A burst of reads sees one file throughout, even if another program
 * renames a different one over it meanwhile.
 * @module
 */
import { notAFileError } from "../src/storage.ts";

/** What a `stat` of an open file tells (see `FileTypeLike` in `fs-promises.ts`). */
interface HandleStat {
	size: number;
	isFile(): boolean;
}

/** The part of a file handle reads use. */
export interface ReadHandleLike {
	stat(): Promise<HandleStat>;
	read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
	close(): Promise<void>;
}

/** A regular file opened for reading, with the size it had when opened. */
export interface OpenedForReading {
	handle: ReadHandleLike;
	size: number;
}

interface Kept {
	opened: Promise<OpenedForReading>;
	/**
	 * The file, once open: a read of it then goes to the I/O threads at once, in the call, instead of a
	 * microtask later (after `await opened`), which for a read ahead was after the engine's work on the range
	 * before it (a lazy open of 100 MB waited ~95 ms of its ~330 for reads asked for milliseconds earlier).
	 */
	file: OpenedForReading | undefined;
	/** The size was looked at for the read now under way (by the open), so it need not be again. */
	sizeIsFresh: boolean;
	/** Where the last read asked of it ends: only a read that starts there (the next range) reuses it. */
	nextStart: number;
	/** Reads under way. */
	readers: number;
	closing: ReturnType<typeof setTimeout> | undefined;
}

export class ReadHandles {
	readonly #kept = new Map<string, Kept>();
	readonly #open: (real: string, path: string) => Promise<OpenedForReading>;
	readonly #allocate: (length: number) => Uint8Array;

	/**
	 * @param open opens `real` (the file system's name of the engine's `path`) for reading, refusing what is
	 * not a regular file.
	 * @param allocate a buffer for a read to fill (need not be zeroed).
	 */
	constructor(
		open: (real: string, path: string) => Promise<OpenedForReading>,
		allocate: (length: number) => Uint8Array,
	) {
		this.#open = open;
		this.#allocate = allocate;
	}

	/**
	 * The bytes of `[start, end)` of the file at `real` (the file system's own name, which keys its handle),
	 * fewer where the file ends before `end`; read into `into` when it is long enough (see `readRange`).
	 */
	async read(real: string, path: string, start: number, end: number, into?: Uint8Array): Promise<Uint8Array> {
		const kept = this.#acquire(real, path, start);
		kept.nextStart = end;
		try {
			const file = kept.file ?? (await kept.opened);
			// A range within the size seen needs no new look at it; past it, the file may have grown since.
			if (end > file.size && !kept.sizeIsFresh) {
				const stat = await file.handle.stat();
				if (!stat.isFile()) throw notAFileError(path);
				file.size = stat.size;
			}
			kept.sizeIsFresh = false;
			// Sized by what the file holds, not by the range asked for (which may be huge).
			return await readInto(
				file.handle,
				bufferFor(Math.max(0, Math.min(end, file.size) - start), into, this.#allocate),
				start,
			);
		} finally {
			this.#release(real, kept);
		}
	}

	/** Let go of the handle of `real` (its file is about to change): reads from now on open it again. */
	forget(real: string): void {
		const kept = this.#kept.get(real);
		if (!kept) return;
		this.#kept.delete(real);
		if (kept.readers === 0) closeQuietly(kept);
	}

	#acquire(real: string, path: string, start: number): Kept {
		let kept = this.#kept.get(real);
		// Only the next range of a file read in order reuses its handle: a read that starts anywhere else
		// (a lock file read again to decide on it, a header) opens the file as it is now.
		if (kept && kept.nextStart !== start) {
			this.forget(real);
			kept = undefined;
		}
		if (!kept) {
			kept = {
				opened: this.#open(real, path),
				file: undefined,
				sizeIsFresh: true,
				nextStart: start,
				readers: 0,
				closing: undefined,
			};
			const opening = kept;
			opening.opened.then(
				(file) => {
					opening.file = file;
				},
				() => {
					// A failed open is not kept: the next read tries again (the read awaiting it reports it).
					if (this.#kept.get(real) === opening) this.#kept.delete(real);
				},
			);
			this.#kept.set(real, kept);
		}
		clearTimeout(kept.closing);
		kept.closing = undefined;
		kept.readers++;
		return kept;
	}

	#release(real: string, kept: Kept): void {
		kept.readers--;
		if (kept.readers > 0) return;
		if (this.#kept.get(real) !== kept) {
			closeQuietly(kept); // forgotten while it was read
			return;
		}
		// Closed after a timer turn: a read ahead asked for right after this read (a microtask later) keeps it.
		kept.closing = setTimeout(() => {
			if (this.#kept.get(real) === kept && kept.readers === 0) {
				this.#kept.delete(real);
				closeQuietly(kept);
			}
		}, 0);
	}
}

/** A buffer of `length` bytes for a read to fill: a view of `into` when it is long enough, else a new one. */
export function bufferFor(
	length: number,
	into: Uint8Array | undefined,
	allocate: (length: number) => Uint8Array,
): Uint8Array {
	return into && into.length >= length ? into.subarray(0, length) : allocate(length);
}

/** Fill `buffer` from `position` on; the part past the end of the file is zeroed and cut off. */
export async function readInto(handle: ReadHandleLike, buffer: Uint8Array, position: number): Promise<Uint8Array> {
	let filled = 0;
	while (filled < buffer.length) {
		const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
		if (bytesRead === 0) break;
		filled += bytesRead;
	}
	if (filled === buffer.length) return buffer;
	buffer.fill(0, filled); // the file shrank: what was never read is not left in memory as it was
	return buffer.subarray(0, filled);
}

function closeQuietly(kept: Kept): void {
	// Reads are done and answered; a failure to close changes nothing for them.
	kept.opened.then((file) => file.handle.close()).catch(() => undefined);
}
