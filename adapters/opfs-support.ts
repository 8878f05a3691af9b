/**
 * What the OPFS storage (opfs.ts) is built from: the sync access handle's shape, paths as names, whole
 * reads and writes at an offset, temporary files, retries while another context has a file open, and
 * OPFS's DOMExceptions as `StorageError`s.
 * @module
 */
import { SessionLockedError } from "../src/errors.ts";
import { StorageError, temporaryName } from "../src/storage.ts";

/** `FileSystemSyncAccessHandle`, which TypeScript's DOM types lack (they know the page, not workers). */
export interface SyncAccessHandle {
	read(buffer: Uint8Array, options: { at: number }): number;
	write(buffer: Uint8Array, options: { at: number }): number;
	getSize(): number;
	flush(): void;
	close(): void;
	/** `"read-only"` for a handle asked for in that mode, where the browser knows modes (Chromium 121+). */
	readonly mode?: string;
}

/** A file handle with what OPFS adds to it in workers and Chromium. */
export interface OpfsFileHandle extends FileSystemFileHandle {
	createSyncAccessHandle(options?: { mode: "read-only" | "readwrite" }): Promise<SyncAccessHandle>;
	move(directory: FileSystemDirectoryHandle, name: string): Promise<void>;
}

/**
 * The names of an absolute path's directories and file, or `StorageError` (`io`) naming the path: a path
 * with `.`, `..` or empty names is refused, not resolved, so it can never leave the storage's root.
 */
export function segmentsOf(path: string): string[] {
	if (typeof path !== "string" || !path.startsWith("/")) {
		throw new StorageError("io", String(path), `io: ${String(path)}: an OPFS storage path must start with "/"`);
	}
	if (path === "/") return [];
	const segments = path.slice(1).split("/");
	if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) {
		throw new StorageError("io", path, `io: ${path}: a path may not have empty, "." or ".." names`);
	}
	return segments;
}

/** A temporary file written whole next to its target (see `temporaryName`) and flushed. */
export interface Temporary {
	handle(): Promise<OpfsFileHandle>;
	/** Best effort: a failure to remove it must not hide the failure being reported. */
	remove(): Promise<void>;
}

/** Write `chunks` as a temporary file next to `path` (whose last name is `name` in `dir`). */
export async function writeTemporary(
	dir: FileSystemDirectoryHandle,
	name: string,
	chunks: Iterable<Uint8Array>,
	path: string,
): Promise<Temporary> {
	const temporaryNameOf = temporaryName(name);
	const temporary: Temporary = {
		handle: async () => (await dir.getFileHandle(temporaryNameOf)) as OpfsFileHandle,
		remove: () => dir.removeEntry(temporaryNameOf).catch(() => undefined),
	};
	try {
		const file = (await dir.getFileHandle(temporaryNameOf, { create: true })) as OpfsFileHandle;
		const handle = await openSyncHandle(file, path);
		try {
			let at = 0;
			for (const chunk of chunks) {
				writeAll(handle, chunk, at, path);
				at += chunk.length;
			}
			handle.flush();
		} finally {
			handle.close();
		}
	} catch (error) {
		await temporary.remove();
		throw error;
	}
	return temporary;
}

/**
 * Bytes `[start, end)` of the file behind `handle`, fewer at its end: read into `into` when it has room (a
 * view of it is returned), else into a new buffer. `undefined` when the handle answers what no file can: a
 * handle of a file removed since it was made reports sizes and counts that are error codes (Chromium 156).
 */
export function readAt(
	handle: SyncAccessHandle,
	start: number,
	end: number,
	into?: Uint8Array,
): Uint8Array | undefined {
	const size = handle.getSize();
	if (!Number.isSafeInteger(size) || size < 0 || size > MAX_FILE_BYTES) return undefined;
	const from = Math.min(start, size);
	const length = Math.max(0, Math.min(end, size) - from);
	const out = into && into.length >= length ? into.subarray(0, length) : new Uint8Array(length);
	let done = 0;
	while (done < out.length) {
		const read = handle.read(out.subarray(done), { at: from + done });
		if (read > out.length - done) return undefined;
		if (read <= 0) break;
		done += read;
	}
	return done === out.length ? out : out.subarray(0, done);
}

/** Larger than any file OPFS holds (a quota is a share of the disk): a size past it is an error code. */
const MAX_FILE_BYTES = 2 ** 50;

/**
 * A sync access handle of `file`, checked to be the synchronous kind: browsers that first shipped OPFS
 * (Safari 15.2 to 16) made its `getSize`, `flush` and `close` asynchronous, and writing at a promise's
 * offset would overwrite the start of a session. Those are refused (`unsupported`) instead.
 */
export async function openSyncHandle(file: FileSystemFileHandle, path: string): Promise<SyncAccessHandle> {
	const handle = await (file as OpfsFileHandle).createSyncAccessHandle();
	const size: unknown = handle.getSize();
	if (typeof size === "number") return handle;
	await Promise.resolve(size).catch(() => undefined);
	await (handle.close() as unknown as Promise<void> | undefined);
	throw new StorageError(
		"unsupported",
		path,
		`unsupported: ${path}: this browser's sync access handles are asynchronous (an early OPFS); the OPFS storage needs synchronous ones`,
	);
}

export function writeAll(handle: SyncAccessHandle, data: Uint8Array, at: number, path: string): void {
	const written = handle.write(data, { at });
	if (written !== data.length) {
		throw new StorageError("io", path, `io: ${path}: wrote ${written} of ${data.length} bytes (out of quota?)`);
	}
}

/**
 * Run `attempt`, again after a short wait while another context has the file open for a moment
 * (`NoModificationAllowedError`); the last failure is thrown.
 */
export async function whileBusy<T>(attempt: () => Promise<T>, tries: number): Promise<T> {
	for (let n = 1; ; n++) {
		try {
			return await attempt();
		} catch (error) {
			if (!isDomError(error, "NoModificationAllowedError") || n >= tries) throw error;
			await new Promise((resolve) => setTimeout(resolve, Math.min(100, 5 * 2 ** n)));
		}
	}
}

/** What is at `name` in `dir`: a file, a directory, or nothing. */
export async function kindOf(dir: FileSystemDirectoryHandle, name: string): Promise<"file" | "directory" | undefined> {
	try {
		await dir.getFileHandle(name);
		return "file";
	} catch (error) {
		if (isDomError(error, "TypeMismatchError")) return "directory";
		if (isDomError(error, "NotFoundError")) return undefined;
		throw error;
	}
}

export const existsError = (path: string): StorageError =>
	new StorageError("exists", path, `exists: ${path}: the file already exists`);
export const isDirectoryError = (path: string): StorageError =>
	new StorageError("not-a-file", path, `not-a-file: ${path}: is a directory`);

export function isDomError(error: unknown, name: string): boolean {
	return typeof DOMException !== "undefined" && error instanceof DOMException && error.name === name;
}

/** What each DOMException of OPFS means for a path, in words. */
const DOM_ERRORS: Record<string, string> = {
	NoModificationAllowedError:
		"another tab or worker of this origin has this file open (a sync access handle) or is moving it; only one may write it at a time",
	TypeMismatchError: "a directory is where a file was expected, or a file where a directory was",
	InvalidModificationError: "cannot be changed this way (a directory is in the way, or is not empty)",
	QuotaExceededError: "the origin's storage quota is used up",
	NotReadableError: "the file changed while it was read",
	InvalidStateError: "the file's handle was closed",
	SecurityError: "this context may not use the origin-private file system",
};

/** A failure of OPFS as a `StorageError` naming `path`; our own errors, and others (a chunk's), as they are. */
export function opfsError(error: unknown, path: string): unknown {
	if (error instanceof StorageError || error instanceof SessionLockedError) return error;
	if (isDomError(error, "NotFoundError")) {
		return new StorageError("not-found", path, `not-found: ${path}: no such file or directory`, { cause: error });
	}
	if (typeof DOMException !== "undefined" && error instanceof DOMException) {
		const words = DOM_ERRORS[error.name] ?? `${error.name}: ${error.message}`;
		return new StorageError("io", path, `io: ${path}: ${words}`, { cause: error });
	}
	return error;
}
