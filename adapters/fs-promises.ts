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

/**
 * A `Storage` on a Node-style promises API. `resolve` turns the engine's paths into the API's paths
 * (a root prefix, for example).
 */
export function fsPromisesStorage(
	fs: FsPromisesLike,
	identity: LockIdentity,
	resolve: (path: string) => string = (p) => p,
): Storage {
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
			// A write may be short; an append is acknowledged only when all of it is written.
			for (const chunk of chunks) {
				for (let written = 0; written < chunk.length; ) {
					written += (await handle.write(chunk, written, chunk.length - written)).bytesWritten;
				}
			}
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
		append: (path, data, durable) => guarded(path, (real) => writeAll(real, "a", [data], durable)),
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
					await fs.rename(temporary, real);
				} catch (error) {
					await fs.unlink(temporary).catch(() => undefined);
					throw error;
				}
			}),
		rename: (from, to) => guarded(from, (real) => fs.rename(real, resolve(to))),
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
				await fs.unlink(real).catch((error: { code?: string }) => {
					if (error.code !== "ENOENT") throw error;
				});
			}),
		lockOwner: async () => identity.lockOwner(),
		isLockOwnerAlive: async (owner) => identity.isLockOwnerAlive(owner),
	};
}
