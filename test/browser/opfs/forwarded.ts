/**
 * The page's side of OPFS storages for the browser tests: a module Worker holding them (sync access
 * handles exist only in workers), and a `Storage` that forwards each operation to one of them. Importing it
 * registers the transfer handlers of adapters/worker-wire.ts.
 */
import * as Comlink from "comlink";
import { registerTransferHandlers } from "../../../adapters/worker-wire.ts";
import type { Storage, StorageOps } from "../../../src/storage.ts";
import type { StorageWorkerApi } from "./storage-worker.ts";

// Errors from the worker arrive as instances of their classes (a StorageError's code is acted on).
registerTransferHandlers();

/** Every storage worker started, to be terminated after the tests. */
export const workers: Worker[] = [];
/** A new storage worker (the `new URL(…, import.meta.url)` pattern vitest needs for workers). */
export function storageWorker(): Comlink.Remote<StorageWorkerApi> {
	const worker = new Worker(new URL("./storage-worker.ts", import.meta.url), { type: "module" });
	workers.push(worker);
	return Comlink.wrap<StorageWorkerApi>(worker);
}

/** The page's side of a storage in a worker: each operation is sent there (chunks as an array). */
export function forwarded(remote: Comlink.Remote<StorageWorkerApi>, id: number): Storage {
	const call = <K extends keyof StorageOps>(op: K, ...args: unknown[]) =>
		remote.call(id, op, args) as Promise<ReturnType<StorageOps[K]>>;
	return {
		readRange: (path, start, end) => call("readRange", path, start, end),
		append: (path, data, durable, atSize) => call("append", path, data, durable, atSize),
		createExclusive: async (path, chunks, durable) => call("createExclusive", path, Array.from(chunks), durable),
		replace: async (path, chunks) => call("replace", path, Array.from(chunks)),
		rename: (from, to) => call("rename", from, to),
		link: (from, to) => call("link", from, to),
		stat: (path) => call("stat", path),
		list: (dir) => call("list", dir),
		mkdir: (dir) => call("mkdir", dir),
		remove: (path) => call("remove", path),
	};
}
