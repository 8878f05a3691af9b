/**
 * The listing catalogs this process read or wrote last, kept in memory by storage and path: a listing
 * repeated in a long-lived process (an engine behind a UI's session list) then reads only the `stat`s of
 * the catalog's two files and of the sessions, and a text decoded for one listing is not decoded again
 * for the next. A catalog whose files another writer changed since (size or modification time) is read
 * again from its files; every row is still checked against a fresh `stat` of its session file, as a row
 * read from the file is. Held as long as the storage object is, for one scope of listing (all projects,
 * or one directory) per catalog; it keeps what the last listing's rows keep.
 * @module
 */
import { type FileVersion, type LoadedCatalog, loadCatalog, textsPathOf } from "./listing-catalog.ts";
import { runTask, type Storage } from "./storage.ts";

/** A catalog as this process left it: what it holds, for which listing scope, and its two files then. */
interface Resident {
	scope: string;
	loaded: LoadedCatalog;
	files: Versions;
}

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

function remember(storage: Storage, path: string, resident: Resident | undefined): void {
	let byPath = residents.get(storage);
	if (!resident) {
		byPath?.delete(path);
		return;
	}
	if (!byPath) {
		byPath = new Map();
		residents.set(storage, byPath);
	}
	byPath.set(path, resident);
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
		remember(storage, path, undefined);
		return runTask(loadCatalog(path, inScope), storage);
	}
	const before = await versionsOf(storage, path);
	const resident = residents.get(storage)?.get(path);
	if (resident?.scope === scope && sameVersions(resident.files, before)) return resident.loaded;
	const loaded = await runTask(loadCatalog(path, inScope), storage);
	const after = await versionsOf(storage, path);
	remember(storage, path, sameVersions(before, after) ? { scope, loaded, files: after } : undefined);
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
	remember(storage, path, current && written && files ? { scope, loaded: written, files } : undefined);
}
