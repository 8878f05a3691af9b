/**
 * The worker's entry module: load it as a module worker (or a Node worker thread) and it exposes the
 * engine factory of `pi-session-tree/worker` to the thread that started it.
 * @module
 */
import { exposeEngineFactory } from "./worker.ts";

await exposeEngineFactory();
