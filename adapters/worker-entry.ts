/**
 * The worker's entry module: load it as a module worker (or a Node worker thread) and it serves engines
 * to the thread that started it, on the stock storages: `"node"` and `"memory"` (see worker-storages.ts).
 * @module
 */
import { exposeEngine, stockStorages } from "./worker-host.ts";

await exposeEngine({ storages: stockStorages });
