/**
 * `Storage` over any Node-style `fs.promises` API. Shared by the Node adapter (`node:fs`) and the
 * ZenFS adapter (a ZenFS context's `fs.promises`), so both behave the same way by construction.
 * @module
 */
import type { DirEntry, FileStat, LockOwner, Storage } from "../src/storage.ts";
import { StorageError } from "../src/storage.ts";

interface FileHandleLike {
	stat(): Promise<{ size: number }>;
	read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
	write(buffer: Uint8Array, offset?: number, length?: number): Promise<{ bytesWritten: number }>;
	datasync(): Promise<void>;
	close(): Promise<void>;
}

/** The part of `fs.promises` this package uses. */
export interface FsPromisesLike {
	open(path: string, flags: string): Promise<FileHandleLike>;
	rename(from: string, to: string): Promise<void>;
	stat(
		path: string,
	): Promise<{ size: number; mtimeMs: number; mode: number; isFile(): boolean; isDirectory(): boolean }>;
	chmod(path: string, mode: number): Promise<void>;
	readdir(
		path: string,
		options: { withFileTypes: true },
	): Promise<{ name: string; isFile(): boolean; isDirectory(): boolean }[]>;
	mkdir(path: string, options: { recursive: true }): Promise<unknown>;
	unlink(path: string): Promise<void>;
}

/** How the adapter names and checks lock owners in its environment. */
export interface LockIdentity {
	lockOwner(): LockOwner;
	isLockOwnerAlive(owner: LockOwner): boolean;
}

/** Map a Node-style error to a `StorageError` the engine understands. */
export function storageErrorOf(error: unknown, path: string): StorageError {
	const code = (error as { code?: string }).code;
	const kind = code === "ENOENT" ? "not-found" : code === "EEXIST" ? "exists" : "io";
	const message = error instanceof Error ? error.message : String(error);
	return new StorageError(kind, path, `${kind}: ${path}: ${message}`, { cause: error });
}

/** The directory to list is not there, or is not a directory (listing it then finds nothing, as in pi). */
export function isNoDirectory(error: unknown): boolean {
	const code = (error as { code?: string }).code;
	return code === "ENOENT" || code === "ENOTDIR";
}

/** Unique enough for temporary file names next to the target. */
export function temporaryName(path: string): string {
	return `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
}

/** Write every chunk in order; a write may be short, so each is repeated until all of it is written. */
async function writeChunks(handle: FileHandleLike, chunks: Iterable<Uint8Array>): Promise<void> {
	for (const chunk of chunks) {
		for (let written = 0; written < chunk.length; ) {
			written += (await handle.write(chunk, written, chunk.length - written)).bytesWritten;
		}
	}
}

/**
 * Append handles kept open between appends, by path, the least recently used closed past `limit`:
 * opening and closing a file can cost several times the append itself (ZenFS resolves the path and
 * builds its inodes each time). Only for file systems that nothing else changes: a kept handle would
 * go on writing to a file that another program had replaced. Changes made through this storage close
 * the path's handle first (`changing`): ZenFS writes a handle's inode back to its path when it closes,
 * which after a rename would undo the rename.
 */
class AppendHandles {
	readonly #kept = new Map<string, { handle: Promise<FileHandleLike>; idle: Promise<void> }>();
	/** Paths being changed (replaced, renamed, removed): appends to them wait until that is done. */
	readonly #changing = new Map<string, Promise<void>>();
	readonly #fs: FsPromisesLike;
	readonly #limit: number;

	constructor(fs: FsPromisesLike, limit: number) {
		this.#fs = fs;
		this.#limit = limit;
	}

	async append(real: string, data: Uint8Array, durable: boolean): Promise<void> {
		const change = this.#changing.get(real);
		if (change) await change;
		const kept = this.#kept.get(real) ?? { handle: this.#fs.open(real, "a"), idle: Promise.resolve() };
		// Most recently used last.
		this.#kept.delete(real);
		this.#kept.set(real, kept);
		for (const oldest of this.#kept.keys()) {
			if (this.#kept.size <= this.#limit) break;
			void this.forget(oldest);
		}
		const write = kept.idle.then(async () => {
			const handle = await kept.handle;
			await writeChunks(handle, [data]);
			if (durable) await handle.datasync();
		});
		kept.idle = write.catch(() => undefined);
		try {
			await write;
		} catch (error) {
			await this.forget(real);
			throw error;
		}
	}

	/** Run `action`, which changes `paths`, with no append handle open on them meanwhile. */
	async changing<T>(paths: string[], action: () => Promise<T>): Promise<T> {
		const done = Promise.all(paths.map((path) => this.forget(path))).then(action);
		const settled = done.then(
			() => undefined,
			() => undefined,
		);
		for (const path of paths) this.#changing.set(path, settled);
		try {
			return await done;
		} finally {
			for (const path of paths) if (this.#changing.get(path) === settled) this.#changing.delete(path);
		}
	}

	/** Close the handle kept for `real`, if any, once its writes are done. */
	async forget(real: string): Promise<void> {
		const kept = this.#kept.get(real);
		if (!kept) return;
		this.#kept.delete(real);
		await kept.idle;
		// Its writes are done and reported; a failure to close it changes nothing for them.
		await kept.handle.then((handle) => handle.close()).catch(() => undefined);
	}
}

/** How `fsPromisesStorage` treats its file system. */
export interface FsPromisesStorageOptions {
	/**
	 * Keep up to this many append handles open between appends (default 0: open and close for each).
	 * Only for a file system that nothing but this storage changes (see `AppendHandles`).
	 */
	keepAppendHandles?: number;
}

/**
 * A `Storage` on a Node-style promises API. `resolve` turns the engine's paths into the API's paths
 * (a root prefix, for example).
 */
export function fsPromisesStorage(
	fs: FsPromisesLike,
	identity: LockIdentity,
	resolve: (path: string) => string = (p) => p,
	options: FsPromisesStorageOptions = {},
): Storage {
	const appendHandles = options.keepAppendHandles ? new AppendHandles(fs, options.keepAppendHandles) : undefined;
	/** Run `action`, which changes the files at `paths`, with no append handle kept open on them. */
	const changing = <T>(paths: string[], action: () => Promise<T>): Promise<T> =>
		appendHandles ? appendHandles.changing(paths, action) : action();
	const guarded = async <T>(path: string, action: (real: string) => Promise<T>): Promise<T> => {
		try {
			return await action(resolve(path));
		} catch (error) {
			throw error instanceof StorageError ? error : storageErrorOf(error, path);
		}
	};
	const writeAll = async (
		real: string,
		flags: string,
		chunks: Iterable<Uint8Array>,
		durable: boolean,
	): Promise<void> => {
		const handle = await fs.open(real, flags);
		try {
			await writeChunks(handle, chunks);
			if (durable) await handle.datasync();
		} finally {
			await handle.close();
		}
	};

	return {
		readRange: (path, start, end) =>
			guarded(path, async (real) => {
				const handle = await fs.open(real, "r");
				try {
					// Size the buffer by what the file holds, not by the range asked for (which may be huge).
					const { size } = await handle.stat();
					const buffer = new Uint8Array(Math.max(0, Math.min(end, size) - start));
					let filled = 0;
					while (filled < buffer.length) {
						const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, start + filled);
						if (bytesRead === 0) break;
						filled += bytesRead;
					}
					return filled === buffer.length ? buffer : buffer.subarray(0, filled);
				} finally {
					await handle.close();
				}
			}),
		append: (path, data, durable) =>
			guarded(path, (real) =>
				appendHandles ? appendHandles.append(real, data, durable) : writeAll(real, "a", [data], durable),
			),
		createExclusive: (path, chunks, durable) => guarded(path, (real) => writeAll(real, "wx", chunks, durable)),
		replace: (path, chunks) =>
			guarded(path, async (real) => {
				const temporary = temporaryName(real);
				try {
					await writeAll(temporary, "wx", chunks, true);
					// The file keeps its permissions (a session made private stays private).
					const mode = await fs.stat(real).then(
						(stat) => stat.mode & 0o7777,
						() => undefined,
					);
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
				return changing([real, target], () => fs.rename(real, target));
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
		lockOwner: async () => identity.lockOwner(),
		isLockOwnerAlive: async (owner) => identity.isLockOwnerAlive(owner),
	};
}
