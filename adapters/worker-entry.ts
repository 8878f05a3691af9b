/**
 * The worker's entry module: load it as a module worker (or a Node worker thread) and it serves engines
 * to the thread that started it, on the stock storages: `"node"`, `"memory"` and `"opfs"` (see
 * worker-storages.ts). No top-level await: bundlers that make classic-script workers (Vite's default)
 * take it as it is. The build also makes a browser copy with every dependency inside
 * (`dist/worker-entry.browser.js`), which is what `startEngineWorker` starts in a browser.
 * @module
 */
import { exposeEngine, stockStorages } from "./worker-host.ts";

void exposeEngine({ storages: stockStorages });
