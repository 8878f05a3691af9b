/**
 * `Storage` over any Node-style `fs.promises` API. Shared by the Node adapter (`node:fs`) and the
 * ZenFS adapter (a ZenFS context's `fs.promises`), so both behave the same way by construction.
 * @module
 */
import type { DirEntry, FileStat, Storage } from "../src/storage.ts";
import { notAFileError, StorageError, sizeChangedError, temporaryName } from "../src/storage.ts";
import { bufferFor, ReadHandles, readInto } from "./read-handles.ts";

export { temporaryName };

interface BufferClass {
	allocUnsafeSlow(size: number): Uint8Array;
}

/**
 * A buffer of `length` bytes for a read to fill, not zero-filled first where the runtime has Node's
 * `Buffer` (zeroing the 1 MiB chunks of a listing of 300 MB cost ~30 ms of its ~1 s). Its own memory (no
 * shared pool), so the view's buffer holds only it. Zeroed where a read leaves it short.
 */
function unfilledBytes(length: number): Uint8Array {
	const buffer = (globalThis as { Buffer?: BufferClass }).Buffer;
	if (!buffer || length === 0) return new Uint8Array(length);
	const bytes = buffer.allocUnsafeSlow(length);
	return new Uint8Array(bytes.buffer, bytes.byteOffset, length);
}

/** What a `stat` tells of a file's type; the tests a file system lacks are taken as false. */
export interface FileTypeLike {
	isFile(): boolean;
	isDirectory(): boolean;
	isFIFO?(): boolean;
	isSocket?(): boolean;
	isCharacterDevice?(): boolean;
	isBlockDevice?(): boolean;
}

/** What is at a path that is not a regular file, in words (for `notAFileError`). */
export function fileTypeOf(stat: FileTypeLike): string {
	if (stat.isDirectory()) return "a directory";
	if (stat.isFIFO?.()) return "a named pipe (FIFO)";
	if (stat.isSocket?.()) return "a socket";
	if (stat.isCharacterDevice?.()) return "a character device";
	if (stat.isBlockDevice?.()) return "a block device";
	return "not a regular file";
}

interface FileHandleLike {
	stat(): Promise<{ size: number } & FileTypeLike>;
	read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
	write(buffer: Uint8Array, offset?: number, length?: number): Promise<{ bytesWritten: number }>;
	datasync(): Promise<void>;
	close(): Promise<void>;
}

/** The part of `fs.promises` this package uses. */
export interface FsPromisesLike {
	open(path: string, flags: string | number): Promise<FileHandleLike>;
	rename(from: string, to: string): Promise<void>;
	link(existing: string, newPath: string): Promise<void>;
	stat(path: string): Promise<{ size: number; mtimeMs: number; mode: number } & FileTypeLike>;
	chmod(path: string, mode: number): Promise<void>;
	readdir(
		path: string,
		options: { withFileTypes: true },
	): Promise<{ name: string; isFile(): boolean; isDirectory(): boolean }[]>;
	mkdir(path: string, options: { recursive: true }): Promise<unknown>;
	unlink(path: string): Promise<void>;
}

/**
 * Map a Node-style error to a `StorageError` the engine understands. `EISDIR` (a directory opened to be
 * written) and `ENXIO` (a named pipe without a reader, or a socket, opened without blocking) are
 * `not-a-file`.
 */
export function storageErrorOf(error: unknown, path: string): StorageError {
	const code = (error as { code?: string }).code;
	const message = error instanceof Error ? error.message : String(error);
	if (code === "EISDIR" || code === "ENXIO") {
		const what = code === "EISDIR" ? "a directory" : "a named pipe (FIFO) or a socket";
		return new StorageError("not-a-file", path, `${notAFileError(path, what).message} (${message})`, { cause: error });
	}
	const kind = code === "ENOENT" ? "not-found" : code === "EEXIST" ? "exists" : "io";
	return new StorageError(kind, path, `${kind}: ${path}: ${message}`, { cause: error });
}

/**
 * How existing files are opened: to read them, to append to them (created if missing), and to append to
 * a file that must be there already (never created: Node-style numbers without `O_CREAT`).
 */
export interface OpenFlags {
	read: string | number;
	append: string | number;
	appendExisting: string | number;
}

/** `O_WRONLY | O_APPEND` as Linux numbers them (and ZenFS, whatever the platform). */
const LINUX_APPEND_EXISTING = 0x401;

/** The default flags: as Linux and ZenFS read them. */
const LINUX_STYLE_FLAGS: OpenFlags = { read: "r", append: "a", appendExisting: LINUX_APPEND_EXISTING };

/**
 * Open `real` (the file system's name of the engine's `path`) and make sure it is a regular file; anything
 * else is closed at once and refused with `not-a-file`. Opened with `flags` that do not block (see
 * `OpenFlags`), a named pipe is only opened and closed, never read or written.
 */
async function openRegular(
	fs: FsPromisesLike,
	real: string,
	path: string,
	flags: string | number,
): Promise<{ handle: FileHandleLike; size: number }> {
	const handle = await fs.open(real, flags);
	try {
		const stat = await handle.stat();
		if (!stat.isFile()) throw notAFileError(path, fileTypeOf(stat));
		return { handle, size: stat.size };
	} catch (error) {
		await handle.close().catch(() => undefined);
		throw error;
	}
}

/** `real` is missing or a regular file; anything else there is refused with `not-a-file` (never replaced). */
async function regularOrMissing(fs: FsPromisesLike, real: string, path: string): Promise<number | undefined> {
	let stat: Awaited<ReturnType<FsPromisesLike["stat"]>>;
	try {
		stat = await fs.stat(real);
	} catch (error) {
		if ((error as { code?: string }).code === "ENOENT") return undefined;
		throw error;
	}
	if (!stat.isFile()) throw notAFileError(path, fileTypeOf(stat));
	return stat.mode & 0o7777;
}

const COPY_CHUNK_BYTES = 1 << 20;

/** Error codes of a file system that has no hard links (or none for this file). */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK"]);

/** Map an error of `link` (see `storageErrorOf`): no hard links here is `unsupported`. */
export function linkErrorOf(error: unknown, path: string): StorageError {
	const code = (error as { code?: string }).code;
	if (code === undefined || !NO_HARD_LINKS.has(code)) return storageErrorOf(error, path);
	const message = error instanceof Error ? error.message : String(error);
	return new StorageError("unsupported", path, `unsupported: ${path}: no hard links here (${message})`, {
		cause: error,
	});
}

/** The directory to list is not there, or is not a directory (listing it then finds nothing, as in pi). */
export function isNoDirectory(error: unknown): boolean {
	const code = (error as { code?: string }).code;
	return code === "ENOENT" || code === "ENOTDIR";
}

/** Write every chunk in order; a write may be short, so each is repeated until all of it is written. */
async function writeChunks(handle: FileHandleLike, chunks: Iterable<Uint8Array>): Promise<void> {
	for (const chunk of chunks) {
		for (let written = 0; written < chunk.length; ) {
			written += (await handle.write(chunk, written, chunk.length - written)).bytesWritten;
		}
	}
}

/** One spelling per path (`/a//b/./c` is `/a/b/c`), so a path's kept handle is found however it is written. */
function pathKey(path: string): string {
	const parts = path.split(/[/\\]+/).filter((part) => part !== ".");
	return parts.join("/") || "/";
}

interface KeptHandle {
	handle: Promise<FileHandleLike>;
	/** Settles when the writes issued so far are done. */
	idle: Promise<void>;
	/** The file's size as far as known: the file system may hold a second copy of an open file. */
	bytes: number;
}

/** How many append handles, and how many bytes of files, `AppendHandles` keeps open at most. */
export interface AppendHandleLimits {
	handles: number;
	bytes: number;
}

/**
 * Append handles kept open between appends, by path, the least recently used closed past the limits:
 * opening and closing a file can cost several times the append itself (ZenFS resolves the path and
 * builds its inodes each time). The limits bound memory too, since ZenFS keeps a copy of each open file.
 * Only for file systems that nothing else changes: a kept handle would go on writing to a file that
 * another program had replaced. Changes made through this storage close the path's handle first
 * (`changing`): ZenFS writes a handle's inode back to its path when it closes, which after a rename
 * would undo the rename.
 */
class AppendHandles {
	readonly #kept = new Map<string, KeptHandle>();
	/** Paths being changed (replaced, renamed, removed): appends to them wait until that is done. */
	readonly #changing = new Map<string, Promise<void>>();
	readonly #fs: FsPromisesLike;
	readonly #limits: AppendHandleLimits;
	readonly #flags: OpenFlags;

	constructor(fs: FsPromisesLike, limits: AppendHandleLimits, flags: OpenFlags) {
		this.#fs = fs;
		this.#limits = limits;
		this.#flags = flags;
	}

	/** Append to `real`, the file system's name of the engine's `path` (`atSize`: see `StorageOps.append`). */
	async append(real: string, path: string, data: Uint8Array, durable: boolean, atSize?: number): Promise<void> {
		const key = pathKey(real);
		const change = this.#changing.get(key);
		if (change) await change;
		const kept =
			this.#kept.get(key) ??
			this.#open(real, path, atSize === undefined ? this.#flags.append : this.#flags.appendExisting);
		// Most recently used last.
		this.#kept.delete(key);
		this.#kept.set(key, kept);
		const write = kept.idle.then(async () => {
			const handle = await kept.handle;
			if (atSize !== undefined && kept.bytes !== atSize) throw sizeChangedError(path, atSize, kept.bytes);
			await writeChunks(handle, [data]);
			kept.bytes += data.length;
			if (durable) await handle.datasync();
		});
		kept.idle = write.catch(() => undefined);
		try {
			await write;
		} catch (error) {
			await this.forget(key);
			throw error;
		}
		// A file too big to keep on its own is closed, rather than closing the others to make room.
		if (kept.bytes > this.#limits.bytes) void this.forget(key);
		this.#evict();
	}

	#open(real: string, path: string, flags: string | number): KeptHandle {
		const opened = openRegular(this.#fs, real, path, flags);
		const kept: KeptHandle = { handle: opened.then((file) => file.handle), idle: Promise.resolve(), bytes: 0 };
		kept.idle = opened.then(
			(file) => {
				kept.bytes = file.size;
			},
			() => undefined,
		);
		return kept;
	}

	/** Close the least recently used handles until the rest are within the limits. */
	#evict(): void {
		let bytes = 0;
		for (const kept of this.#kept.values()) bytes += kept.bytes;
		for (const [key, kept] of this.#kept) {
			if (this.#kept.size <= this.#limits.handles && bytes <= this.#limits.bytes) break;
			bytes -= kept.bytes;
			void this.forget(key);
		}
	}

	/** Run `action`, which changes `paths`, with no append handle open on them meanwhile. */
	async changing<T>(paths: string[], action: () => Promise<T>): Promise<T> {
		const keys = paths.map(pathKey);
		const done = Promise.all(keys.map((key) => this.forget(key))).then(action);
		const settled = done.then(
			() => undefined,
			() => undefined,
		);
		for (const key of keys) this.#changing.set(key, settled);
		try {
			return await done;
		} finally {
			for (const key of keys) if (this.#changing.get(key) === settled) this.#changing.delete(key);
		}
	}

	/** Close the handle kept for `key`, if any, once its writes are done. */
	async forget(key: string): Promise<void> {
		const kept = this.#kept.get(key);
		if (!kept) return;
		this.#kept.delete(key);
		await kept.idle;
		// Its writes are done and reported; a failure to close it changes nothing for them.
		await kept.handle.then((handle) => handle.close()).catch(() => undefined);
	}
}

/** How `fsPromisesStorage` treats its file system. */
export interface FsPromisesStorageOptions {
	/**
	 * Keep append handles open between appends, up to these limits (default: none kept, each append opens
	 * and closes its file). Only for a file system that nothing but this storage changes (see `AppendHandles`).
	 */
	keepAppendHandles?: AppendHandleLimits;
	/**
	 * Keep a file open for reading while reads of it follow one another without a pause (see
	 * `ReadHandles`), instead of opening and closing it for every range. Changes made through this storage
	 * let go of it first.
	 */
	keepReadHandles?: boolean;
	/**
	 * The file system has no (dependable) hard links: `link` is `unsupported`, and exclusive creates are
	 * published with this rename, which must refuse (`EEXIST`) a name that exists.
	 */
	withoutHardLinks?: { renameExclusive(from: string, to: string): Promise<void> };
	/**
	 * The flags existing files are opened with (default `"r"`, `"a"` and Linux's `O_WRONLY | O_APPEND`). Where the file system can hold
	 * named pipes, flags with `O_NONBLOCK`: opening a pipe then never waits for its other end (the open is
	 * followed by a check that the file is a regular one, so nothing else is ever read or written).
	 */
	openFlags?: OpenFlags;
}

/**
 * A `Storage` on a Node-style promises API. `resolve` turns the engine's paths into the API's paths
 * (a root prefix, for example).
 */
export function fsPromisesStorage(
	fs: FsPromisesLike,
	resolve: (path: string) => string = (p) => p,
	options: FsPromisesStorageOptions = {},
): Storage {
	const flags: OpenFlags = options.openFlags ?? LINUX_STYLE_FLAGS;
	const appendHandles = options.keepAppendHandles ? new AppendHandles(fs, options.keepAppendHandles, flags) : undefined;
	const readHandles = options.keepReadHandles
		? new ReadHandles((real, path) => openRegular(fs, real, path, flags.read), unfilledBytes)
		: undefined;
	const noHardLinks = options.withoutHardLinks;
	/** Run `action`, which changes the files at `paths`, with no handle kept open on them. */
	const changing = async <T>(paths: string[], action: () => Promise<T>): Promise<T> => {
		const forgetReads = () => {
			for (const path of paths) readHandles?.forget(path);
		};
		forgetReads();
		try {
			return await (appendHandles ? appendHandles.changing(paths, action) : action());
		} finally {
			forgetReads(); // a read begun meanwhile may have opened the file as it was
		}
	};
	const guarded = async <T>(path: string, action: (real: string) => Promise<T>): Promise<T> => {
		try {
			return await action(resolve(path));
		} catch (error) {
			throw error instanceof StorageError ? error : storageErrorOf(error, path);
		}
	};
	/** Write a file of our own making (`wx`: it cannot be anything but a new regular file). */
	const writeAll = async (real: string, chunks: Iterable<Uint8Array>, durable: boolean): Promise<void> => {
		const handle = await fs.open(real, "wx");
		try {
			await writeChunks(handle, chunks);
			if (durable) await handle.datasync();
		} finally {
			await handle.close();
		}
	};

	/** Link `from` to `to`: true when done, false when the file system has no hard links; throws otherwise. */
	const linkedOrUnsupported = async (from: string, to: string): Promise<boolean> => {
		try {
			await fs.link(from, to);
			return true;
		} catch (error) {
			if (linkErrorOf(error, to).code === "unsupported") return false;
			throw error;
		}
	};
	/** A file's content, a chunk at a time. */
	const copyOf = async (real: string): Promise<Uint8Array[]> => {
		const handle = await fs.open(real, flags.read);
		try {
			const chunks: Uint8Array[] = [];
			for (let offset = 0; ; ) {
				const chunk = new Uint8Array(COPY_CHUNK_BYTES);
				const { bytesRead } = await handle.read(chunk, 0, chunk.length, offset);
				if (bytesRead === 0) return chunks;
				chunks.push(chunk.subarray(0, bytesRead));
				offset += bytesRead;
			}
		} finally {
			await handle.close();
		}
	};
	/** An exclusive create written in place; if writing fails, the file it made is removed. */
	const writeInPlace = async (real: string, chunks: Iterable<Uint8Array>, durable: boolean): Promise<void> => {
		const handle = await fs.open(real, "wx");
		try {
			await writeChunks(handle, chunks);
			if (durable) await handle.datasync();
			await handle.close();
		} catch (error) {
			await handle.close().catch(() => undefined);
			await fs.unlink(real).catch(() => undefined);
			throw error;
		}
	};

	return {
		readRange: (path, start, end, into) =>
			guarded(path, async (real) => {
				// Keyed by the file system's own name: two spellings of one file only miss a reuse.
				if (readHandles) return readHandles.read(real, path, start, end, into);
				const { handle, size } = await openRegular(fs, real, path, flags.read);
				try {
					// Size the buffer by what the file holds, not by the range asked for (which may be huge).
					return await readInto(
						handle,
						bufferFor(Math.max(0, Math.min(end, size) - start), into, unfilledBytes),
						start,
					);
				} finally {
					await handle.close();
				}
			}),
		append: (path, data, durable, atSize) =>
			guarded(path, async (real) => {
				if (appendHandles) return appendHandles.append(real, path, data, durable, atSize);
				const existing = atSize !== undefined;
				const { handle, size } = await openRegular(fs, real, path, existing ? flags.appendExisting : flags.append);
				try {
					if (existing && size !== atSize) throw sizeChangedError(path, atSize, size);
					await writeChunks(handle, [data]);
					if (durable) await handle.datasync();
				} finally {
					await handle.close();
				}
			}),
		createExclusive: (path, chunks, durable) =>
			guarded(path, async (real) => {
				// Written under a temporary name, then linked to its own (which fails if that exists): nobody
				// sees it partly written, and a failure leaves nothing. Without hard links, written in place
				// and removed on failure (the exclusive open makes it ours).
				const temporary = temporaryName(real);
				try {
					await writeAll(temporary, chunks, durable);
					if (noHardLinks) await noHardLinks.renameExclusive(temporary, real);
					else if (!(await linkedOrUnsupported(temporary, real))) {
						await writeInPlace(real, await copyOf(temporary), durable);
					}
				} finally {
					readHandles?.forget(real); // a file of that name read before was another
					await fs.unlink(temporary).catch(() => undefined);
				}
			}),
		link: (from, to) =>
			guarded(from, async (real) => {
				if (noHardLinks) throw new StorageError("unsupported", from, `unsupported: ${from}: no hard links here`);
				try {
					await fs.link(real, resolve(to));
				} catch (error) {
					throw linkErrorOf(error, from);
				} finally {
					readHandles?.forget(resolve(to));
				}
			}),
		replace: (path, chunks) =>
			guarded(path, async (real) => {
				const temporary = temporaryName(real);
				try {
					await writeAll(temporary, chunks, true);
					// The file keeps its permissions (a session made private stays private); what is not a
					// regular file is never replaced.
					const mode = await regularOrMissing(fs, real, path);
					if (mode !== undefined) await fs.chmod(temporary, mode);
					await changing([real], () => fs.rename(temporary, real));
				} catch (error) {
					await fs.unlink(temporary).catch(() => undefined);
					throw error;
				}
			}),
		rename: (from, to) =>
			guarded(from, (real) => {
				const target = resolve(to);
				return changing([real, target], async () => {
					await regularOrMissing(fs, target, to);
					await fs.rename(real, target);
				});
			}),
		stat: (path) =>
			guarded(path, async (real): Promise<FileStat | null> => {
				try {
					const stat = await fs.stat(real);
					return { size: stat.size, mtimeMs: stat.mtimeMs, isFile: stat.isFile(), isDirectory: stat.isDirectory() };
				} catch (error) {
					if ((error as { code?: string }).code === "ENOENT") return null;
					throw error;
				}
			}),
		list: (dir) =>
			guarded(dir, async (real): Promise<DirEntry[]> => {
				try {
					const entries = await fs.readdir(real, { withFileTypes: true });
					return entries.map((e) => ({ name: e.name, isFile: e.isFile(), isDirectory: e.isDirectory() }));
				} catch (error) {
					if (isNoDirectory(error)) return [];
					throw error;
				}
			}),
		mkdir: (dir) =>
			guarded(dir, async (real) => {
				await fs.mkdir(real, { recursive: true });
			}),
		remove: (path) =>
			guarded(path, async (real) => {
				await changing([real], () =>
					fs.unlink(real).catch((error: { code?: string }) => {
						if (error.code !== "ENOENT") throw error;
					}),
				);
			}),
	};
}
