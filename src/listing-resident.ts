/**
 * The listing catalogs this process read or wrote last, kept in memory by storage and path: a listing
 * repeated in a long-lived process (an engine behind a UI's session list) then reads only the `stat`s of
 * the catalog's two files and of the sessions, and a text decoded for one listing is not decoded again
 * for the next. A catalog whose files another writer changed since (size or modification time) is read
 * again from its files; every row is still checked against a fresh `stat` of its session file, as a row
 * read from the file is. Kept per scope of listing (all projects, or one directory), the last
 * `KEPT_PER_STORAGE` of them, as long as the storage object lives; each keeps what its last listing's rows
 * keep. A writer that replaces the catalog between this process's write and its `stat` of it goes unseen:
 * its rows of other scopes are then lost from the file at this process's next write (a cache's loss: their
 * sessions are read again).
 * @module
 */
import { type FileVersion, type LoadedCatalog, loadCatalog, textsPathOf } from "./listing-catalog.ts";
import { runTask, type Storage } from "./storage.ts";

/** A catalog as this process left it for one listing scope: what it holds, and its two files then. */
interface Resident {
	loaded: LoadedCatalog;
	files: Versions;
}

/** The catalogs kept for one storage, at most (by catalog path and scope; the one used longest ago goes). */
const KEPT_PER_STORAGE = 4;

/** The catalog file's version and the texts file's (`null`: not there). */
type Versions = [FileVersion | null, FileVersion | null];

const residents = new WeakMap<Storage, Map<string, Resident>>();

async function versionOf(storage: Storage, path: string): Promise<FileVersion | null> {
	try {
		const stat = await storage.stat(path);
		return stat?.isFile ? { size: stat.size, mtimeMs: stat.mtimeMs } : null;
	} catch {
		return null;
	}
}

function versionsOf(storage: Storage, path: string): Promise<Versions> {
	return Promise.all([versionOf(storage, path), versionOf(storage, textsPathOf(path))]);
}

function sameVersion(a: FileVersion | null | undefined, b: FileVersion | null | undefined): boolean {
	return a === b || (!!a && !!b && a.size === b.size && a.mtimeMs === b.mtimeMs);
}

function sameVersions(a: Versions, b: Versions): boolean {
	return sameVersion(a[0], b[0]) && sameVersion(a[1], b[1]);
}

function keyOf(path: string, scope: string): string {
	return `${scope}\u0000${path}`;
}

/** Keep `resident` (none: forget it) as the catalog at `path` for `scope`, the one used last. */
function remember(storage: Storage, path: string, scope: string, resident: Resident | undefined): void {
	const key = keyOf(path, scope);
	let kept = residents.get(storage);
	kept?.delete(key);
	if (!resident) return;
	if (!kept) {
		kept = new Map();
		residents.set(storage, kept);
	}
	kept.set(key, resident);
	for (const oldest of kept.keys()) {
		if (kept.size <= KEPT_PER_STORAGE) break;
		kept.delete(oldest);
	}
}

/**
 * The catalog at `path` for a listing of `scope` (the rows `inScope` accepts): the one this process left
 * there if neither file changed since, else read from the files (and kept, if they did not change while
 * it was read). `keep: false` reads the files and keeps nothing.
 */
export async function catalogFor(
	storage: Storage,
	path: string,
	scope: string,
	inScope: (path: string) => boolean,
	keep: boolean,
): Promise<LoadedCatalog> {
	if (!keep) {
		remember(storage, path, scope, undefined);
		return runTask(loadCatalog(path, inScope), storage);
	}
	const before = await versionsOf(storage, path);
	const resident = residents.get(storage)?.get(keyOf(path, scope));
	if (resident && sameVersions(resident.files, before)) {
		remember(storage, path, scope, resident); // used last
		return resident.loaded;
	}
	const loaded = await runTask(loadCatalog(path, inScope), storage);
	const after = await versionsOf(storage, path);
	remember(storage, path, scope, sameVersions(before, after) ? { loaded, files: after } : undefined);
	return loaded;
}

/**
 * Keep the catalog a listing of `scope` just wrote (`saveCatalog`'s answer; `undefined` when it could not),
 * if its file is still the one written. `keep: false` keeps nothing.
 */
export async function keepWritten(
	storage: Storage,
	path: string,
	scope: string,
	written: LoadedCatalog | undefined,
	keep: boolean,
): Promise<void> {
	const files = keep && written ? await versionsOf(storage, path) : undefined;
	const current = !!files && !!written && sameVersion(written.version, files[0]);
	remember(storage, path, scope, current && written && files ? { loaded: written, files } : undefined);
}
