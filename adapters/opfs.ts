/**
 * Storage on the browser's origin-private file system (OPFS), for use inside a dedicated worker (the
 * engine worker): the only place `FileSystemSyncAccessHandle` exists. Paths map onto nested directories
 * under `root`, laid out as on disk (`<agentDir>/sessions/--cwd--/<file>.jsonl`), so a session file moves
 * between disk and browser unchanged. Its writer locks (`storage.locks`) are Web Locks, one per file,
 * named `pi-session-tree:<root><path>` (the root without its trailing slash), and backed by the file's
 * sync access handle, which this storage opens when it takes the lock and keeps until it lets go:
 * appends then write at the handle's end, whatever the file's size.
 *
 * What Chromium does (seen in Chromium 156; the tests in test/browser/opfs.test.ts check it):
 * - A sync access handle is exclusive across the origin: while one context has it open, another gets
 *   `NoModificationAllowedError` from `createSyncAccessHandle` (any mode), `createWritable`, `removeEntry`
 *   and `move` of that file (as source or target). `getFile()` still works there, and sees the handle's
 *   writes at once (unflushed ones too): so a second tab reads a session a first tab is writing.
 * - A handle asked for with `{ mode: "read-only" }` is shared with other read-only ones, and refused (as
 *   above) while a writing one is open; while it is open, writing handles, moves and removes are refused.
 *   Files not open here are read through one, opened for a range and closed at once, under a Web Lock
 *   that changes of the file wait on (`HANDLE_LOCK_TAG`): about a seventh of the time a `File` takes,
 *   through which they are read otherwise (a writer has them open, or handles here know no modes).
 * - A `FileSystemFileHandle` names a path: kept, it reaches a file put there since. Of a file removed since,
 *   it still gives a sync access handle, whose `getSize` and `read` answer error codes as counts.
 * - A `File` from `getFile()` stays readable after appends, but reading it after the file was replaced or
 *   truncated throws `NotReadableError` (`NotFoundError` when the replace comes during the read): such a
 *   read is retried on a fresh `File`.
 * - `FileSystemFileHandle.move()` replaces an existing file in one step (readers see the old file or the
 *   new one); over a directory it fails (`InvalidModificationError`).
 * - In a private (incognito) profile, whose OPFS is kept in memory, `lastModified` stays at the file's
 *   creation however it is written (a persistent profile updates it): `stat` reports the later of that and
 *   this storage's last append to the file, so within one storage the most recent session is right.
 * - When a worker ends, the browser closes its sync access handles and releases its Web Locks.
 * @example
 * // inside a module Worker
 * import { createOpfsStorage } from "pi-session-tree/opfs";
 * const storage = await createOpfsStorage();
 * const engine = new Engine({ storage, locks: storage.locks, agentDir: "/pi/agent" });
 * @module
 */
import { SessionLockedError } from "../src/errors.ts";
import { type DirEntry, type FileStat, type Storage, StorageError, sizeChangedError } from "../src/storage.ts";
import type { HeldLock, WriterLocks } from "../src/writer-lock.ts";
import {
	existsError,
	isDirectoryError,
	isDomError,
	kindOf,
	type OpfsFileHandle,
	openSyncHandle,
	opfsError,
	readAt,
	type SyncAccessHandle,
	segmentsOf,
	whileBusy,
	writeAll,
	writeTemporary,
} from "./opfs-support.ts";
import { createWebLocks, WEB_LOCK_PREFIX } from "./web-locks.ts";

export interface OpfsStorageOptions {
	/** The OPFS directory every path lives under, created if missing (default the OPFS root): `/`-separated, absolute. */
	root?: string;
	/** How other tabs and workers name this one when it holds a session they want (`"the editor tab"`). */
	label?: string;
}

/** Storage on OPFS, its writer locks, and `close`. */
export interface OpfsStorage extends Storage {
	/** Writer locks as Web Locks, each backed by the file's sync access handle (kept open while it is held). */
	readonly locks: WriterLocks;
	/** Let go of the locks still held through `locks`, close every handle; the storage takes no more calls. */
	close(): Promise<void>;
}

/** Names of the Web Locks under which files are moved into a name (whatever the writer lock prefix). */
const MOVE_LOCK_TAG = "pi-session-tree move:";
/**
 * Names of the Web Locks a reader holds shared while it has a read-only handle of a file, and everything
 * that a read-only handle would make fail (opening the file for writing, moving it, removing it) holds
 * exclusively: such a change waits for a reader's moment, and no stream of reads can keep it out (a lock
 * asked for is granted before any asked for after it). The changes still try again while a file is busy
 * (`whileBusy`): a handle's close may reach the browser a moment after its lock is let go, and other code
 * of the origin (an older version of this storage) opens files without these locks.
 */
const HANDLE_LOCK_TAG = "pi-session-tree handle:";
/** Tries of an operation on a file another context has open for a moment (a transient append elsewhere). */
const BUSY_TRIES = 6;
/** `File`s, and file handles, kept for reads of files not held here. */
const KEPT_FILES = 8;
/** Tries of opening a file whose lock was just granted: a holder that died may not have closed it yet. */
const LOCKED_FILE_TRIES = 12;

/**
 * Storage on OPFS under `options.root`. Rejects with `StorageError` (`unsupported`) outside a dedicated
 * worker, where there are no sync access handles.
 * @example
 * const storage = await createOpfsStorage({ root: "/pi-sessions" });
 */
export async function createOpfsStorage(options: OpfsStorageOptions = {}): Promise<OpfsStorage> {
	const root = options.root ?? "/";
	const proto = typeof FileSystemFileHandle === "undefined" ? undefined : FileSystemFileHandle.prototype;
	if (typeof (proto as Partial<OpfsFileHandle> | undefined)?.createSyncAccessHandle !== "function") {
		throw new StorageError(
			"unsupported",
			root,
			`unsupported: ${root}: the OPFS storage must run in a dedicated worker (FileSystemSyncAccessHandle exists only there)`,
		);
	}
	if (globalThis.isSecureContext === false) {
		throw new StorageError(
			"unsupported",
			root,
			`unsupported: ${root}: the origin-private file system needs a secure context (https, or http on localhost)`,
		);
	}
	const segments = segmentsOf(root);
	let directory: FileSystemDirectoryHandle;
	try {
		// Inside: a private window of some browsers refuses the origin-private file system itself.
		directory = await navigator.storage.getDirectory();
		for (const segment of segments) directory = await directory.getDirectoryHandle(segment, { create: true });
	} catch (error) {
		throw opfsError(error, root);
	}
	return new OpfsFiles(directory, segments.length ? `/${segments.join("/")}` : "", options).api();
}

/** After a read-only handle was refused (a writer has the file open), read the file through `File`s this long. */
const BUSY_FILE_MS = 1000;

/** Whether sync access handles here take a mode (Chromium 121+): without one, every handle is exclusive. */
function handlesHaveModes(): boolean {
	const handle = (globalThis as { FileSystemSyncAccessHandle?: { prototype: object } }).FileSystemSyncAccessHandle;
	return handle !== undefined && "mode" in handle.prototype;
}

/** Keep `value` under `key` as the most recent of `kept`; the oldest goes past `KEPT_FILES`. */
function keepRecent<T>(kept: Map<string, T>, key: string, value: T): T {
	kept.delete(key);
	kept.set(key, value);
	for (const old of kept.keys()) {
		if (kept.size <= KEPT_FILES) break;
		kept.delete(old);
	}
	return value;
}

/** A file whose writer lock is held here, and its sync access handle when the file exists. */
interface Pinned {
	handle: SyncAccessHandle | undefined;
}

class OpfsFiles {
	readonly #root: FileSystemDirectoryHandle;
	/** The root's OPFS path without a trailing slash (`""` for the OPFS root): names locks. */
	readonly #rootPath: string;
	readonly #pinned = new Map<string, Pinned>();
	/** Files read here and not held, by path (see `#readRange`). */
	readonly #files = new Map<string, File>();
	/** Handles of files read here and not held, by path (a handle names a path: it reaches what is there now). */
	readonly #fileHandles = new Map<string, OpfsFileHandle>();
	/** Whether files not held here are read through read-only sync access handles (see `#readShared`). */
	#sharedReads = handlesHaveModes();
	/** Files a writer elsewhere had open when a read-only handle was asked for, and until when to leave them be. */
	readonly #busyUntil = new Map<string, number>();
	/** When this storage last appended to a file (OPFS leaves `lastModified` at the creation). */
	readonly #written = new Map<string, number>();
	/** The last operation queued on each file: changes of one file run one at a time. */
	readonly #tails = new Map<string, Promise<void>>();
	readonly #held = new Map<string, HeldLock>();
	readonly #locks: WriterLocks;
	#closed = false;

	constructor(root: FileSystemDirectoryHandle, rootPath: string, options: OpfsStorageOptions) {
		this.#root = root;
		this.#rootPath = rootPath;
		this.#locks = createWebLocks({
			prefix: `${WEB_LOCK_PREFIX}${rootPath}`,
			label: options.label,
			onAcquire: (path) => this.#pin(path),
			onRelease: (path) => this.#unpin(path),
		});
	}

	api(): OpfsStorage {
		const held = this.#held;
		const locks = this.#locks;
		const check = (path: string) => this.#check(path);
		return {
			readRange: (path, start, end, into) => this.#run(path, () => this.#readRange(path, start, end, into)),
			append: (path, data, durable, atSize) => this.#append(path, data, durable, atSize),
			// Flushed before it gets its name, `durable` or not: after a crash the name must not show part of a file.
			createExclusive: (path, chunks) => this.#run(path, () => this.#createExclusive(path, chunks)),
			replace: (path, chunks) => this.#run(path, () => this.#replace(path, chunks)),
			rename: (from, to) => this.#run(from, () => this.#rename(from, to), to),
			link: (from, to) =>
				this.#run(from, async () => {
					this.#check(to);
					throw new StorageError("unsupported", to, `unsupported: ${to}: OPFS has no hard links`);
				}),
			stat: (path) => this.#run(path, () => this.#stat(path)),
			list: (dir) => this.#run(dir, () => this.#list(dir)),
			mkdir: (dir) => this.#run(dir, () => this.#directory(dir, true).then(() => undefined)),
			remove: (path) => this.#run(path, () => this.#remove(path)),
			locks: {
				async acquire(path) {
					check(path); // before taking a Web Lock named after it
					const lock = await locks.acquire(path);
					held.set(lock.owner.token, lock);
					return lock;
				},
				async release(lock) {
					held.delete(lock.owner.token);
					await locks.release(lock);
				},
				owner: (path) => locks.owner(path),
			},
			close: () => this.#close(),
		};
	}

	/** Check the paths, run `body`, and give its DOM failures as `StorageError`s naming `path`. */
	async #run<T>(path: string, body: () => Promise<T>, other?: string): Promise<T> {
		this.#check(path);
		if (other !== undefined) this.#check(other);
		try {
			return await body();
		} catch (error) {
			throw opfsError(error, path);
		}
	}

	/** Refuse a bad path, or any path once closed. */
	#check(path: string): void {
		segmentsOf(path);
		if (this.#closed) throw new StorageError("io", path, `io: ${path}: this OPFS storage is closed`);
	}

	/** Run `body` after every change queued before on any of `paths`, and before any queued after. */
	#serial<T>(paths: readonly string[], body: () => Promise<T>): Promise<T> {
		const before = paths.map((path) => this.#tails.get(path));
		const result = Promise.all(before).then(body);
		const tail = result.then(
			() => undefined,
			() => undefined,
		);
		for (const path of paths) this.#tails.set(path, tail);
		void tail.then(() => {
			for (const path of paths) if (this.#tails.get(path) === tail) this.#tails.delete(path);
		});
		return result;
	}

	async #directory(path: string, create = false): Promise<FileSystemDirectoryHandle> {
		let directory = this.#root;
		for (const segment of segmentsOf(path)) directory = await directory.getDirectoryHandle(segment, { create });
		return directory;
	}

	/** The directory a path is in (it must exist), and the path's last name. */
	async #parent(path: string): Promise<{ dir: FileSystemDirectoryHandle; name: string }> {
		const segments = segmentsOf(path);
		const name = segments.pop();
		if (name === undefined) throw new StorageError("io", path, `io: ${path}: the storage root is not a file`);
		let dir = this.#root;
		for (const segment of segments) dir = await dir.getDirectoryHandle(segment);
		return { dir, name };
	}

	async #readRange(path: string, start: number, end: number, into?: Uint8Array): Promise<Uint8Array> {
		// A handle's read first; where it cannot answer (none here, or its file was removed), a `File`'s.
		const kept = this.#pinned.get(path)?.handle;
		const read = kept ? readAt(kept, start, end, into) : await this.#readShared(path, start, end, into);
		if (read) return read;
		for (let attempt = 1; ; attempt++) {
			// Reading a session is many ranges of one file: its `File` is kept between them (a range past its
			// size, as after another tab's appends, takes a fresh one).
			let file = this.#files.get(path);
			if (!file || end > file.size) file = await this.#freshFile(path);
			try {
				return new Uint8Array(await file.slice(start, Math.max(start, end)).arrayBuffer());
			} catch (error) {
				// Replaced or truncated since `getFile`: the next `File` is the file there now (a file that is
				// gone is `not-found` from `getFileHandle` then).
				this.#files.delete(path);
				const stale = isDomError(error, "NotReadableError") || isDomError(error, "NotFoundError");
				if (!stale || attempt >= BUSY_TRIES) throw error;
			}
		}
	}

	/**
	 * Read through a read-only sync access handle, opened for this one range and closed at once: about a
	 * seventh of the time of reading a `File`, each of whose ranges is a round trip to the browser process
	 * (100 MB in 1 MiB ranges, in Chromium 156: 136 ms against 840–990). It is held under the file's handle
	 * lock, shared, which the storage's changes of the file wait on. `undefined` where that cannot be done,
	 * and the `File` read answers (and reports any error): the browser has no read-only mode, a writer has
	 * the file open (its handle is exclusive; the file is then read through `File`s for `BUSY_FILE_MS`), the
	 * file is missing, or the handle fails.
	 */
	async #readShared(path: string, start: number, end: number, into?: Uint8Array): Promise<Uint8Array | undefined> {
		if (!this.#sharedReads) return undefined;
		const busyUntil = this.#busyUntil.get(path);
		if (busyUntil !== undefined) {
			if (Date.now() < busyUntil) return undefined;
			this.#busyUntil.delete(path);
		}
		// Only when no change of the file waits (see `HANDLE_LOCK_TAG`); else its `File` is read at once.
		const options = { mode: "shared", ifAvailable: true } as const;
		return navigator.locks.request(this.#handleLockName(path), options, (lock) =>
			lock ? this.#readThroughHandle(path, start, end, into) : undefined,
		) as Promise<Uint8Array | undefined>;
	}

	async #readThroughHandle(
		path: string,
		start: number,
		end: number,
		into?: Uint8Array,
	): Promise<Uint8Array | undefined> {
		let handle: SyncAccessHandle;
		try {
			let file = this.#fileHandles.get(path);
			if (!file) {
				const { dir, name } = await this.#parent(path);
				file = (await dir.getFileHandle(name)) as OpfsFileHandle;
			}
			keepRecent(this.#fileHandles, path, file); // kept, or made the most recent
			handle = await file.createSyncAccessHandle({ mode: "read-only" });
		} catch (error) {
			// Busy (a writer has it open): the handle still names the file. Anything else: found afresh next time.
			if (isDomError(error, "NoModificationAllowedError")) keepRecent(this.#busyUntil, path, Date.now() + BUSY_FILE_MS);
			else this.#fileHandles.delete(path);
			return undefined;
		}
		try {
			if (handle.mode !== "read-only") {
				this.#sharedReads = false; // a browser that ignores the mode: its handles are exclusive
				return undefined;
			}
			const read = readAt(handle, start, end, into);
			if (!read) this.#fileHandles.delete(path);
			return read;
		} catch {
			this.#fileHandles.delete(path);
			return undefined;
		} finally {
			handle.close();
		}
	}

	/** The file at `path` as it is now, kept for the next reads (a few files at most). */
	async #freshFile(path: string): Promise<File> {
		const { dir, name } = await this.#parent(path);
		return this.#keep(path, await (await dir.getFileHandle(name)).getFile());
	}

	/** Keep `file` as the one at `path` for the next reads. */
	#keep(path: string, file: File): File {
		return keepRecent(this.#files, path, file);
	}

	/** This storage changed the file at `path`: what it knew of its contents is stale. */
	#changed(path: string, at?: number): void {
		this.#files.delete(path);
		if (at === undefined) this.#written.delete(path);
		else this.#written.set(path, at);
	}

	#append(path: string, data: Uint8Array, durable: boolean, atSize?: number): Promise<void> {
		try {
			this.#check(path);
			// A kept handle and nothing queued on the file: write now, without waiting for a turn.
			const kept = this.#pinned.get(path)?.handle;
			if (kept && !this.#tails.has(path)) {
				this.#write(path, kept, data, durable, atSize);
				return Promise.resolve();
			}
		} catch (error) {
			return Promise.reject(opfsError(error, path));
		}
		return this.#run(path, () =>
			this.#serial([path], async () => {
				const pinned = this.#pinned.get(path);
				if (pinned) {
					pinned.handle ??= await this.#openForAppend(path, atSize === undefined);
					this.#write(path, pinned.handle, data, durable, atSize);
					return;
				}
				// Not locked here: open it for this append only, so that other contexts may open it too.
				const handle = await this.#openForAppend(path, atSize === undefined);
				try {
					this.#write(path, handle, data, durable, atSize);
				} finally {
					handle.close();
				}
			}),
		);
	}

	#write(path: string, handle: SyncAccessHandle, data: Uint8Array, durable: boolean, atSize?: number): void {
		const size = handle.getSize();
		if (atSize !== undefined && size !== atSize) throw sizeChangedError(path, atSize, size);
		writeAll(handle, data, size, path);
		if (durable) handle.flush();
		this.#changed(path, Date.now());
	}

	/**
	 * A sync access handle of the file, created if missing and `create` (under its move lock, so no exclusive
	 * create is undone).
	 */
	async #openForAppend(path: string, create: boolean): Promise<SyncAccessHandle> {
		const { dir, name } = await this.#parent(path);
		let file: FileSystemFileHandle;
		try {
			file = await dir.getFileHandle(name);
		} catch (error) {
			if (!create || !isDomError(error, "NotFoundError")) throw error;
			file = await this.#underMoveLock(path, () => dir.getFileHandle(name, { create: true }));
		}
		return this.#openSync(file, path, BUSY_TRIES);
	}

	#openSync(file: FileSystemFileHandle, path: string, tries: number): Promise<SyncAccessHandle> {
		return this.#exclusively([path], () => whileBusy(() => openSyncHandle(file, path), tries));
	}

	/** Run `body` holding the handle locks of `paths` exclusively (see `HANDLE_LOCK_TAG`), taken in one order. */
	#exclusively<T>(paths: readonly string[], body: () => Promise<T>): Promise<T> {
		const names = [...new Set(paths.map((path) => this.#handleLockName(path)))].sort();
		const hold = (k: number): Promise<T> =>
			k === names.length
				? body()
				: (navigator.locks.request(names[k] as string, () => hold(k + 1)) as Promise<unknown> as Promise<T>);
		return hold(0);
	}

	#handleLockName(path: string): string {
		return `${HANDLE_LOCK_TAG}${this.#rootPath}${path}`;
	}

	/** Run `body` holding the Web Lock under which every storage on this origin moves files to `path`. */
	#underMoveLock<T>(path: string, body: () => Promise<T>): Promise<T> {
		return navigator.locks.request(`${MOVE_LOCK_TAG}${this.#rootPath}${path}`, body) as Promise<unknown> as Promise<T>;
	}

	async #createExclusive(path: string, chunks: Iterable<Uint8Array>): Promise<void> {
		const { dir, name } = await this.#parent(path);
		if (await kindOf(dir, name)) throw existsError(path);
		const temporary = await writeTemporary(dir, name, chunks, path);
		try {
			await this.#serial([path], () =>
				this.#underMoveLock(path, async () => {
					// Checked again under the lock: every storage of the origin moves files into this name under it.
					if (await kindOf(dir, name)) throw existsError(path);
					const source = await temporary.handle();
					await this.#exclusively([path], () => whileBusy(() => source.move(dir, name), BUSY_TRIES));
					this.#changed(path);
					await this.#reopen(path);
				}),
			);
		} catch (error) {
			await temporary.remove();
			throw error;
		}
	}

	async #replace(path: string, chunks: Iterable<Uint8Array>): Promise<void> {
		const { dir, name } = await this.#parent(path);
		const temporary = await writeTemporary(dir, name, chunks, path);
		try {
			await this.#serial([path], () =>
				this.#underMoveLock(path, async () => {
					if ((await kindOf(dir, name)) === "directory") throw isDirectoryError(path);
					const source = await temporary.handle();
					// Our own handle would make the move fail; it is opened again on the new file.
					this.#closeHandle(path);
					try {
						await this.#exclusively([path], () => whileBusy(() => source.move(dir, name), BUSY_TRIES));
						this.#changed(path);
					} finally {
						await this.#reopen(path);
					}
				}),
			);
		} catch (error) {
			await temporary.remove();
			throw error;
		}
	}

	async #rename(from: string, to: string): Promise<void> {
		const source = await this.#parent(from);
		const target = await this.#parent(to).catch((error: unknown) => Promise.reject(opfsError(error, to)));
		await this.#serial([from, to], () =>
			this.#underMoveLock(to, async () => {
				const file = (await source.dir.getFileHandle(source.name)) as OpfsFileHandle;
				if (from === to) return;
				if ((await kindOf(target.dir, target.name)) === "directory") throw isDirectoryError(to);
				this.#closeHandle(from);
				this.#closeHandle(to);
				try {
					await this.#exclusively([from, to], () => whileBusy(() => file.move(target.dir, target.name), BUSY_TRIES));
					const written = this.#written.get(from);
					this.#changed(from);
					this.#changed(to, written);
				} finally {
					await this.#reopen(from);
					await this.#reopen(to);
				}
			}),
		);
	}

	async #stat(path: string): Promise<FileStat | null> {
		if (segmentsOf(path).length === 0) return { size: 0, mtimeMs: 0, isFile: false, isDirectory: true };
		try {
			const { dir, name } = await this.#parent(path);
			try {
				// Kept: an open reads the file next, from the start.
				const file = this.#keep(path, await (await dir.getFileHandle(name)).getFile());
				const mtimeMs = Math.max(file.lastModified, this.#written.get(path) ?? 0);
				return { size: file.size, mtimeMs, isFile: true, isDirectory: false };
			} catch (error) {
				if (!isDomError(error, "TypeMismatchError")) throw error; // not a file: a directory
				return { size: 0, mtimeMs: 0, isFile: false, isDirectory: true };
			}
		} catch (error) {
			if (isDomError(error, "NotFoundError") || isDomError(error, "TypeMismatchError")) return null;
			throw error;
		}
	}

	async #list(path: string): Promise<DirEntry[]> {
		let directory: FileSystemDirectoryHandle;
		try {
			directory = await this.#directory(path);
		} catch (error) {
			if (isDomError(error, "NotFoundError") || isDomError(error, "TypeMismatchError")) return [];
			throw error;
		}
		const entries: DirEntry[] = [];
		for await (const [name, entry] of directory.entries()) {
			entries.push({ name, isFile: entry.kind === "file", isDirectory: entry.kind === "directory" });
		}
		return entries;
	}

	async #remove(path: string): Promise<void> {
		let parent: { dir: FileSystemDirectoryHandle; name: string };
		try {
			parent = await this.#parent(path);
		} catch (error) {
			if (isDomError(error, "NotFoundError") || isDomError(error, "TypeMismatchError")) return;
			throw error;
		}
		const { dir, name } = parent;
		await this.#serial([path], async () => {
			if ((await kindOf(dir, name)) === "directory") throw isDirectoryError(path);
			this.#closeHandle(path); // removing a file fails while a handle of it is open
			this.#changed(path);
			try {
				await this.#exclusively([path], () => whileBusy(() => dir.removeEntry(name), BUSY_TRIES));
			} catch (error) {
				if (!isDomError(error, "NotFoundError")) throw error;
			}
		});
	}

	/** The lock of `path` was granted here: open the file's handle now (when it exists) and keep it. */
	async #pin(path: string): Promise<void> {
		this.#check(path);
		await this.#serial([path], async () => {
			const pinned: Pinned = { handle: undefined };
			let file: FileSystemFileHandle | undefined;
			try {
				const { dir, name } = await this.#parent(path);
				file = await dir.getFileHandle(name);
			} catch (error) {
				if (!isDomError(error, "NotFoundError") && !isDomError(error, "TypeMismatchError")) {
					throw opfsError(error, path);
				}
			}
			try {
				if (file) pinned.handle = await this.#openSync(file, path, LOCKED_FILE_TRIES);
			} catch (error) {
				if (!isDomError(error, "NoModificationAllowedError")) throw opfsError(error, path);
				// Someone writes it without taking its lock (another program of this origin, or other lock names).
				throw new SessionLockedError(
					path,
					undefined,
					undefined,
					"another tab or worker of this origin, which has it open",
				);
			}
			this.#pinned.set(path, pinned);
		});
	}

	async #unpin(path: string): Promise<void> {
		await this.#serial([path], async () => {
			this.#closeHandle(path);
			this.#pinned.delete(path);
		});
	}

	#closeHandle(path: string): void {
		const pinned = this.#pinned.get(path);
		pinned?.handle?.close();
		if (pinned) pinned.handle = undefined;
	}

	/** After a file locked here was moved or replaced: keep a handle of the file there now (if there is one). */
	async #reopen(path: string): Promise<void> {
		const pinned = this.#pinned.get(path);
		if (!pinned || pinned.handle) return;
		try {
			const { dir, name } = await this.#parent(path);
			pinned.handle = await this.#openSync(await dir.getFileHandle(name), path, BUSY_TRIES);
		} catch {
			// No file there now, or not openable: the next append opens it (the Web Lock still guards it).
		}
	}

	async #close(): Promise<void> {
		if (this.#closed) return;
		this.#closed = true;
		await Promise.all(this.#tails.values());
		for (const lock of [...this.#held.values()]) {
			this.#held.delete(lock.owner.token);
			await this.#locks.release(lock).catch(() => undefined);
		}
		for (const path of this.#pinned.keys()) this.#closeHandle(path);
		this.#pinned.clear();
	}
}
