/**
 * The engine in a worker behind a Comlink proxy, on every runtime: a browser or Deno or Bun module
 * `Worker`, or Node's `worker_threads`. Parsing and file work then never block the thread that draws a
 * UI or serves requests, and the caller's code is the same as in-process: `Remote<Engine>` has the
 * engine's methods, and callbacks and `AbortSignal`s may be passed as they are (they cross as proxies).
 * This is the caller's side only (small: it loads neither the engine nor a storage); the worker's side is
 * `pi-session-tree/worker-host`, and `pi-session-tree/worker-entry` is the stock worker.
 * @example
 * import { startEngineWorker } from "pi-session-tree/worker";
 * const { engine, terminate } = await startEngineWorker({ storage: "memory" });
 * const { handle } = await engine.create({ cwd: "/project" });
 * await engine.appendMessage(handle, { role: "user", content: "hi", timestamp: Date.now() });
 * await terminate();
 * @module
 */
// The errors a call may reject with: the client rebuilds them as these classes (`instanceof` works), so a
// page catches them without loading the package root.
export {
	EntryNotFoundError,
	EntryNotLoadedError,
	HeaderTooLongError,
	InvalidArgumentError,
	InvalidContextEditError,
	InvalidSessionPathError,
	PathOutsideRootError,
	SessionClosedError,
	SessionFileChangedError,
	SessionFormatError,
	SessionLimitError,
	SessionLockedError,
	SessionNotFoundError,
	SessionReadOnlyError,
	StorageError,
	UnknownSessionError,
	UnreadableMessageError,
} from "../src/errors.ts";
export {
	type EngineWorker,
	EngineWorkerError,
	type NodeWorkerLike,
	nodeWorkerEntryUrl,
	startEngineWorker,
	type WorkerEngineConfig,
	workerEntryUrl,
} from "./worker-client.ts";
export { errorFromData, registerTransferHandlers } from "./worker-wire.ts";
