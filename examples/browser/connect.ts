/**
 * The engine, in its worker. Sessions live in the origin-private file system (OPFS) unless the URL says
 * `?storage=memory` (an empty, in-memory store that is gone on reload: for browsers without OPFS).
 */
import { type EngineWorker, startEngineWorker } from "pi-session-tree/worker";

/** The engine as this page has it: every call goes to the worker and answers plain data. */
export type RemoteEngine = EngineWorker["engine"];

/** The storage the URL asks for (`?storage=`), OPFS by default. */
export function storageFromUrl(): string {
	return new URLSearchParams(location.search).get("storage") ?? "opfs";
}

/** Start the engine worker on `storage`. */
export async function connect(storage: string): Promise<RemoteEngine> {
	const { engine } = await startEngineWorker({ storage });
	// Closing the tab ends the worker: the browser then releases its locks and file handles itself.
	return engine;
}
