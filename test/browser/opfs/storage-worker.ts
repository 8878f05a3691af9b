/**
 * A module Worker serving OPFS storages to the page (sync access handles exist only in workers): the page
 * forwards each storage operation here (`call`), takes and lets go of writer locks, and runs the checks
 * that must happen inside a worker (`appendCost`, `watch`).
 * @module
 */
import * as Comlink from "comlink";
import { createOpfsStorage, type OpfsStorage } from "../../../adapters/opfs.ts";
import { registerTransferHandlers } from "../../../adapters/worker-wire.ts";
import { type Durability, Session } from "../../../src/session.ts";
import type { StorageOps } from "../../../src/storage.ts";
import type { HeldLock, LockOwner } from "../../../src/writer-lock.ts";
import { type OpCount, traceOpfs } from "./trace.ts";

registerTransferHandlers();

const storages = new Map<number, { storage: OpfsStorage; root: string }>();
const locks = new Map<string, HeldLock>();
let nextId = 0;
let watching: { stop: boolean } | undefined;

function storageOf(id: number): OpfsStorage {
	const entry = storages.get(id);
	if (!entry) throw new Error(`no storage ${id} in this worker`);
	return entry.storage;
}

/** What a reader saw of a file while it was being written: each read, as the index of the version it equals. */
export interface Watched {
	reads: number;
	/** Reads that found no file yet. */
	missing: number;
	/** Reads that found no file after it had been there (should be none: a replace never removes it). */
	vanished: number;
	/** Reads and sizes that were none of the versions (should be none). */
	torn: string[];
}

/** What `durabilityCalls` saw of one mode: calls to the session's file, and to a migration's temporary. */
export interface SyncedAppends {
	/** Calls until the first message resolved (it creates the file). */
	first: string[];
	/** Every call to the file. */
	all: string[];
	/** The calls to the file when each of the burst's appends resolved, in the order they resolved. */
	seen: string[][];
	/** The calls of the v1 file's migration to files other than its own name, in order. */
	rewrite: string[];
	/** The version the v1 file was migrated from (1), as the report says. */
	migratedFrom: number | undefined;
}

const api = {
	async open(root: string, label?: string): Promise<number> {
		const id = ++nextId;
		storages.set(id, { storage: await createOpfsStorage({ root, label }), root });
		return id;
	},
	call(id: number, op: keyof StorageOps, args: unknown[]): Promise<unknown> {
		const storage = storageOf(id);
		return (storage[op] as (...a: unknown[]) => Promise<unknown>)(...args);
	},
	async acquire(id: number, path: string): Promise<LockOwner> {
		const lock = await storageOf(id).locks.acquire(path);
		locks.set(`${id}:${path}`, lock);
		return lock.owner;
	},
	async release(id: number, path: string): Promise<void> {
		const lock = locks.get(`${id}:${path}`);
		if (!lock) throw new Error(`storage ${id} holds no lock of ${path}`);
		locks.delete(`${id}:${path}`);
		await storageOf(id).locks.release(lock);
	},
	owner: (id: number, path: string): Promise<LockOwner | undefined> => storageOf(id).locks.owner(path),
	/** Close the storage and remove its root directory from OPFS. */
	async close(id: number): Promise<void> {
		const entry = storages.get(id);
		if (!entry) return;
		storages.delete(id);
		await entry.storage.close();
		await removeOpfsDirectory(entry.root);
	},
	/**
	 * Ten appends to a 1 KiB file and ten to a 100 MiB file, with their writer locks held here and without:
	 * the OPFS calls each made, counted (`trace.ts`).
	 */
	async appendCost(root: string): Promise<Record<"locked" | "unlocked", Record<"small" | "big", OpCount>>> {
		const storage = await createOpfsStorage({ root });
		try {
			const mib = new Uint8Array(1 << 20).fill(0x61);
			await storage.createExclusive("/small.jsonl", [mib.subarray(0, 1024)], false);
			await storage.createExclusive(
				"/big.jsonl",
				Array.from({ length: 100 }, () => mib),
				false,
			);
			const line = new TextEncoder().encode('{"type":"custom","n":1}\n');
			const tenAppends = (path: string) =>
				traceOpfs(async () => {
					for (let i = 0; i < 10; i++) await storage.append(path, line, i % 2 === 0);
				});
			const small = await storage.locks.acquire("/small.jsonl");
			const big = await storage.locks.acquire("/big.jsonl");
			const locked = { small: await tenAppends("/small.jsonl"), big: await tenAppends("/big.jsonl") };
			await storage.locks.release(small);
			await storage.locks.release(big);
			const unlocked = { small: await tenAppends("/small.jsonl"), big: await tenAppends("/big.jsonl") };
			return { locked, unlocked };
		} finally {
			await storage.close();
			await removeOpfsDirectory(root);
		}
	},
	/**
	 * The writes and flushes each durability mode asks OPFS for, by file name, as a `Session` on this storage
	 * appends: the first message (which makes the file), then `count` appends issued together; after each
	 * append resolves, the calls made to its file so far. Then a v1 file opened for writing, in every mode:
	 * the calls its migration's rewrite made (every file but the session's own name: the temporary it writes).
	 */
	async durabilityCalls(root: string, count: number): Promise<Record<Durability, SyncedAppends>> {
		const storage = await createOpfsStorage({ root });
		const calls: { kind: "write" | "flush"; file: string }[] = [];
		// The DOM types have no sync access handles (a worker's): the prototypes are reached untyped.
		type Method = (this: object, ...args: unknown[]) => unknown;
		const global = globalThis as unknown as Record<string, { prototype: Record<string, Method> }>;
		const handleProto = (global.FileSystemSyncAccessHandle as { prototype: Record<string, Method> }).prototype;
		const fileProto = (global.FileSystemFileHandle as { prototype: Record<string, Method> }).prototype;
		const originals = { write: handleProto.write, flush: handleProto.flush, create: fileProto.createSyncAccessHandle };
		const names = new WeakMap<object, string>();
		fileProto.createSyncAccessHandle = async function (this: FileSystemFileHandle, ...args) {
			const handle = (await originals.create?.apply(this, args)) as object;
			names.set(handle, this.name);
			return handle;
		} as Method;
		for (const kind of ["write", "flush"] as const) {
			handleProto[kind] = function (this: object, ...args) {
				const value = originals[kind]?.apply(this, args);
				calls.push({ kind, file: names.get(this) ?? "?" });
				return value;
			};
		}
		const toFile = (name: string) => calls.filter((call) => call.file === name).map((call) => call.kind);
		const result = {} as Record<Durability, SyncedAppends>;
		try {
			for (const durability of ["none", "fsync", "group"] as const) {
				const name = `${durability}.jsonl`;
				const session = await Session.open(storage, `/${name}`, { locks: storage.locks, durability, create: true });
				await session.appendMessage({ role: "user", content: "hi", timestamp: 1 });
				const first = toFile(name);
				const seen: string[][] = [];
				await Promise.all(
					Array.from({ length: count }, (_, n) =>
						session.appendCustomEntry("x", { n }).then(() => {
							seen.push(toFile(name));
						}),
					),
				);
				await session.close();
				const v1 = `v1-${durability}.jsonl`;
				const time = "2025-01-01T00:00:00.000Z";
				const lines = [
					{ type: "session", id: "v1", timestamp: time, cwd: "/p" },
					{ type: "message", timestamp: time, message: { role: "user", content: "hi", timestamp: 1 } },
				];
				await storage.createExclusive(
					`/${v1}`,
					[new TextEncoder().encode(lines.map((line) => `${JSON.stringify(line)}\n`).join(""))],
					false,
				);
				const before = calls.length;
				const migrated = await Session.open(storage, `/${v1}`, { locks: storage.locks, durability });
				const rewrite = calls
					.slice(before)
					.filter((call) => call.file !== v1)
					.map((call) => call.kind);
				const migratedFrom = migrated.report.migratedFrom?.version;
				await migrated.close();
				result[durability] = { first, all: toFile(name), seen, rewrite, migratedFrom };
			}
			return result;
		} finally {
			Object.assign(handleProto, { write: originals.write, flush: originals.flush });
			fileProto.createSyncAccessHandle = originals.create as Method;
			await storage.close();
			await removeOpfsDirectory(root);
		}
	},
	/**
	 * `readRange` on storage `id`, its OPFS calls counted; into a buffer of `intoBytes` (filled with 0xee)
	 * when given, and whether what came back is a view of that buffer.
	 */
	async tracedRead(
		id: number,
		path: string,
		start: number,
		end: number,
		intoBytes?: number,
	): Promise<{ bytes: Uint8Array; count: OpCount; inGiven: boolean }> {
		const into = intoBytes === undefined ? undefined : new Uint8Array(intoBytes).fill(0xee);
		let bytes: Uint8Array = new Uint8Array(0);
		const count = await traceOpfs(async () => {
			bytes = await storageOf(id).readRange(path, start, end, into);
		});
		return { bytes: bytes.slice(), count, inGiven: into !== undefined && bytes.buffer === into.buffer };
	},
	/** Read `path` again and again until `stopWatching`, checking each read is one of `versions`, whole. */
	async watch(id: number, path: string, versions: Uint8Array[]): Promise<Watched> {
		const storage = storageOf(id);
		const state = { stop: false };
		watching = state;
		const seen: Watched = { reads: 0, missing: 0, vanished: 0, torn: [] };
		const sizes = new Set(versions.map((version) => version.length));
		while (!state.stop) {
			const stat = await storage.stat(path);
			if (stat && !sizes.has(stat.size)) seen.torn.push(`stat: size ${stat.size}`);
			try {
				const bytes = await storage.readRange(path, 0, 1 << 30);
				seen.reads++;
				if (!versions.some((version) => sameBytes(bytes, version))) seen.torn.push(`read: ${bytes.length} bytes`);
			} catch (error) {
				if ((error as { code?: string }).code !== "not-found") throw error;
				if (seen.reads > 0) seen.vanished++;
				else seen.missing++;
			}
		}
		return seen;
	},
	/**
	 * Read the whole of `path` again and again until `stopWatching`: how many reads, what each failure was,
	 * and the OPFS calls they made.
	 */
	async keepReading(id: number, path: string): Promise<{ reads: number; failures: string[]; count: OpCount }> {
		const storage = storageOf(id);
		const state = { stop: false };
		watching = state;
		let reads = 0;
		const failures: string[] = [];
		const count = await traceOpfs(async () => {
			while (!state.stop) {
				try {
					await storage.readRange(path, 0, 1 << 30);
					reads++;
				} catch (error) {
					failures.push(String(error));
				}
			}
		});
		return { reads, failures, count };
	},
	/** `open`, as in a browser whose sync access handles know no modes (`mode` hidden while it is made). */
	async openWithoutModes(root: string): Promise<number> {
		const proto = (globalThis as unknown as Record<string, { prototype: object }>).FileSystemSyncAccessHandle
			?.prototype as object;
		const mode = Object.getOwnPropertyDescriptor(proto, "mode");
		if (!mode) throw new Error("this browser's sync access handles have no mode to hide");
		delete (proto as { mode?: unknown }).mode;
		try {
			return await api.open(root);
		} finally {
			Object.defineProperty(proto, "mode", mode);
		}
	},
	stopWatching(): void {
		if (watching) watching.stop = true;
	},
};

export type StorageWorkerApi = typeof api;

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
	if (a.length !== b.length) return false;
	for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
	return true;
}

/** Remove an OPFS directory and everything in it (a test's root); nothing happens when it is not there. */
export async function removeOpfsDirectory(path: string): Promise<void> {
	const names = path.split("/").filter((name) => name !== "");
	const last = names.pop();
	if (last === undefined) throw new Error("refusing to remove the OPFS root");
	let dir = await navigator.storage.getDirectory();
	try {
		for (const name of names) dir = await dir.getDirectoryHandle(name);
		await dir.removeEntry(last, { recursive: true });
	} catch (error) {
		if ((error as DOMException).name !== "NotFoundError") throw error;
	}
}

Comlink.expose(api);
