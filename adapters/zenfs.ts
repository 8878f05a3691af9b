/**
 * Storage on a ZenFS file system instance that the caller passes in (never ZenFS's global
 * `configure()`), under a root prefix. With ZenFS's `InMemory` backend this is the embedded, in-memory
 * storage for tests, examples and sessions that need no disk.
 *
 * Lock owners: a ZenFS file system is taken to be used by one JavaScript realm at a time, so a lock is
 * alive exactly while this realm holds it. (For OPFS in the browser, use the OPFS adapter.)
 * The adapter turns off access-time updates on the instance (`no_atime`); see `createZenfsStorage`.
 * @example
 * import { InMemory, resolveMountConfig } from "@zenfs/core";
 * import { createZenfsStorage } from "pi-session-tree/zenfs";
 * const storage = createZenfsStorage(await resolveMountConfig({ backend: InMemory }));
 * @module
 */
import { bindContext, type FileSystem, InMemory, resolveMountConfig } from "@zenfs/core";
import { isLockHeldHere } from "../src/lock.ts";
import { joinPath } from "../src/paths.ts";
import { type LockOwner, type Storage, StorageError } from "../src/storage.ts";
import { type FsPromisesLike, fsPromisesStorage, type LockIdentity } from "./fs-promises.ts";

export interface ZenfsStorageOptions {
	/** Directory inside the file system under which every path of the engine lives (default `/`). */
	root?: string;
}

const realmToken = crypto.randomUUID();

const zenfsLockIdentity: LockIdentity = {
	lockOwner: (): LockOwner => ({
		pid: 0,
		host: `zenfs:${realmToken}`,
		startedAt: Date.now(),
		token: crypto.randomUUID(),
	}),
	isLockOwnerAlive: (owner: LockOwner): boolean => isLockHeldHere(owner.token),
};

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
	return fsPromisesStorage(context.fs.promises as unknown as FsPromisesLike, zenfsLockIdentity, (path) => {
		if (path.split(/[/\\]/).includes("..")) {
			throw new StorageError("io", path, `io: ${path}: ".." may not leave the storage root`);
		}
		return joinPath(root, path);
	});
}

/**
 * A fresh in-memory storage (ZenFS `InMemory`): nothing touches a disk, nothing is shared.
 * @example
 * const storage = await createMemoryStorage();
 */
export async function createMemoryStorage(options: ZenfsStorageOptions = {}): Promise<Storage> {
	return createZenfsStorage(await resolveMountConfig({ backend: InMemory }), options);
}
