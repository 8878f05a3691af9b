/**
 * Real paths on the local file system, for an engine's sessions root (`EngineOptions.realPath`): the
 * symbolic links of the part of a path that exists resolved, so that a link inside the root that leads
 * outside it is seen for what it is. Built on the `node:fs/promises` and `node:path` it is given, so that
 * it loads where there are none (the stock worker's storages are loaded in browsers too).
 * @module
 */
import { storageErrorOf } from "./fs-promises.ts";

/** The part of `node:fs/promises` this uses. */
export interface RealPathFs {
	realpath(path: string): Promise<string>;
	lstat(path: string): Promise<{ isSymbolicLink(): boolean }>;
	readlink(path: string): Promise<string>;
}

/** The part of `node:path` this uses. */
export interface RealPathPath {
	resolve(...paths: string[]): string;
	dirname(path: string): string;
	basename(path: string): string;
	join(...paths: string[]): string;
}

/** Links followed at most while resolving one path (Linux's own limit is 40). */
const MAX_LINKS = 40;

/**
 * A function giving a path's real path: resolved against the current directory, the symbolic links of
 * its existing part resolved and the names that do not exist yet appended as they are. A dangling link
 * (a name that exists only as a link to nothing yet) is followed to where it leads, since writing
 * through it would create its target. Fails with a `StorageError` (`io`) when the path cannot be
 * resolved (a loop of links, no permission).
 * @example
 * const realPath = realPathOn(await import("node:fs/promises"), await import("node:path"));
 * await realPath("/home/me/.pi/agent/sessions/new-dir/file.jsonl");
 */
export function realPathOn(fs: RealPathFs, path: RealPathPath): (of: string) => Promise<string> {
	return async (of) => {
		let existing = path.resolve(of);
		const missing: string[] = []; // names below `existing` that do not exist, last first
		for (let links = 0; ; ) {
			try {
				return path.join(await fs.realpath(existing), ...missing.toReversed());
			} catch (error) {
				const code = (error as { code?: string }).code;
				if (code !== "ENOENT" && code !== "ENOTDIR") throw storageErrorOf(error, of);
			}
			const stat = await fs.lstat(existing).catch(() => undefined);
			if (stat?.isSymbolicLink()) {
				if (++links > MAX_LINKS) {
					throw storageErrorOf(Object.assign(new Error("too many symbolic links"), { code: "ELOOP" }), of);
				}
				const target = await fs.readlink(existing).catch((error: unknown) => Promise.reject(storageErrorOf(error, of)));
				existing = path.resolve(path.dirname(existing), target);
				continue;
			}
			const parent = path.dirname(existing);
			if (parent === existing) return path.join(existing, ...missing.toReversed());
			missing.push(path.basename(existing));
			existing = parent;
		}
	};
}
