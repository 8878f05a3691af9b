/**
 * Storage on a ZenFS file system instance that the caller passes in (never ZenFS's global
 * `configure()`), under a root prefix. With ZenFS's `InMemory` backend this is the embedded, in-memory
 * storage for tests, examples and sessions that need no disk.
 *
 * A ZenFS file system is taken to be used by one JavaScript realm at a time: sessions on it are locked
 * with the default writer locks (lock files alive while this realm holds them, `realmLockIdentity`).
 * The adapter turns off access-time updates on the instance (`no_atime`); see `createZenfsStorage`.
 * @example
 * import { InMemory, resolveMountConfig } from "@zenfs/core";
 * import { createZenfsStorage } from "pi-session-tree/zenfs";
 * const storage = createZenfsStorage(await resolveMountConfig({ backend: InMemory }));
 * @module
 */
import { bindContext, type FileSystem, InMemoryStore, StoreFS } from "@zenfs/core";
import { joinPath } from "../src/paths.ts";
import { type Storage, StorageError } from "../src/storage.ts";
import { type AppendHandleLimits, type FsPromisesLike, fsPromisesStorage } from "./fs-promises.ts";

export type { AppendHandleLimits };

/** Append handles the memory storage keeps open: 64 files, of 16 MiB in all (a file past that is not kept). */
export const MEMORY_APPEND_HANDLES: AppendHandleLimits = { handles: 64, bytes: 16 << 20 };

export interface ZenfsStorageOptions {
	/** Directory inside the file system under which every path of the engine lives (default `/`). */
	root?: string;
	/**
	 * Keep append handles open between appends, up to these limits (default: none). Opening a ZenFS file
	 * costs several times an append, and ZenFS keeps a copy of each open file in memory. Only for a file
	 * system that nothing but this storage changes. `createMemoryStorage` keeps `MEMORY_APPEND_HANDLES`.
	 */
	keepAppendHandles?: AppendHandleLimits;
}

/**
 * Storage over a ZenFS `FileSystem` instance.
 * @example
 * const storage = createZenfsStorage(fileSystem, { root: "/sessions-root" });
 */
export function createZenfsStorage(fileSystem: FileSystem, options: ZenfsStorageOptions = {}): Storage {
	// ZenFS writes a read handle's inode (with its old size) back on close when it updated the access time;
	// racing with an atomic replace, that corrupts the replaced file. Sessions never need access times.
	fileSystem.attributes.set("no_atime");
	const context = bindContext({ root: "/", mounts: { "/": fileSystem } });
	const root = options.root ?? "/";
	const resolve = (path: string): string => {
		if (path.split("/").includes("..")) {
			throw new StorageError("io", path, `io: ${path}: ".." may not leave the storage root`);
		}
		// ZenFS takes every `\` for a `/`: a name holding one would be a directory and a name to it, and the
		// engine (for which `\` is part of a name) would not find the file where it wrote it.
		if (path.includes("\\")) {
			throw new StorageError("io", path, `io: ${path}: ZenFS takes "\\" for a separator; a name may not hold one`);
		}
		return joinPath(root, path);
	};
	const fs = context.fs.promises as unknown as FsPromisesLike;
	return fsPromisesStorage(fs, resolve, {
		keepAppendHandles: options.keepAppendHandles,
		withoutHardLinks: { renameExclusive: exclusiveRename(fileSystem, fs) },
	});
}

/** The exclusive renames being made on each file system, one after another. */
const renameQueues = new WeakMap<FileSystem, Promise<void>>();

/**
 * ZenFS's hard links do not survive the original's name being replaced, so exclusive creates are
 * published by a rename that refuses an existing name. One realm uses a ZenFS file system, so a check
 * followed by the rename, one at a time per file system, is exclusive.
 */
function exclusiveRename(fileSystem: FileSystem, fs: FsPromisesLike): (from: string, to: string) => Promise<void> {
	return (from, to) => {
		const done = (renameQueues.get(fileSystem) ?? Promise.resolve()).then(async () => {
			const taken = await fs.stat(to).then(
				() => true,
				(error: { code?: string }) => {
					if (error.code === "ENOENT") return false;
					throw error;
				},
			);
			if (taken) throw Object.assign(new Error(`EEXIST: file already exists, rename to '${to}'`), { code: "EEXIST" });
			await fs.rename(from, to);
		});
		renameQueues.set(
			fileSystem,
			done.catch(() => undefined),
		);
		return done;
	};
}

/**
 * ZenFS's in-memory store, with big file contents kept in resizable `ArrayBuffer`s. ZenFS grows a file's
 * buffer on every write past its end (`extendBuffer`), which copies the whole file unless the buffer can
 * be resized in place: appends to a 20 MiB file cost ~10 ms each, and a session grew quadratically.
 * Byte arrays past `GROWABLE_FROM_BYTES` are stored with room to double, so appends to a big file cost
 * their own size (amortized). Small ones (inodes, listings, small files) stay plain: each resizable
 * buffer is a memory mapping of its own, and a process may have only so many (65,530 on Linux).
 */
class GrowableMemoryStore extends InMemoryStore {
	override set(id: number, data: Uint8Array): this {
		const growable = data.constructor === Uint8Array && data.byteLength >= GROWABLE_FROM_BYTES;
		return super.set(id, growable ? withRoomToGrow(data) : data);
	}
}

/** Byte arrays from this size on are stored growable; below it, copying them to grow is cheap. */
const GROWABLE_FROM_BYTES = 64 << 10;

/** `data` itself when its buffer can already grow in place, otherwise a copy in a buffer that can. */
function withRoomToGrow(data: Uint8Array): Uint8Array {
	const buffer = data.buffer as ArrayBuffer;
	if (buffer.resizable) return data;
	const grown = new ArrayBuffer(data.byteLength, { maxByteLength: 2 * data.byteLength });
	const copy = new Uint8Array(grown, 0, data.byteLength);
	copy.set(data);
	return copy;
}

/**
 * A fresh in-memory storage (ZenFS `StoreFS` over its in-memory store): nothing touches a disk, nothing
 * is shared. Appends cost their own size, however big the file is.
 * @example
 * const storage = await createMemoryStorage();
 */
export async function createMemoryStorage(options: ZenfsStorageOptions = {}): Promise<Storage> {
	const fileSystem = new StoreFS(new GrowableMemoryStore());
	fileSystem.checkRootSync();
	// The file system is this storage's alone, so its append handles can stay open.
	return createZenfsStorage(fileSystem, { keepAppendHandles: MEMORY_APPEND_HANDLES, ...options });
}
