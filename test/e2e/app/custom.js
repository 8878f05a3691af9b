// The Worker made by the app, with Vite's `?worker` import of the package's worker entry (its browser build).

import { startEngineWorker } from "pi-session-tree/worker";
import EngineWorker from "pi-session-tree/worker-entry?worker";
import { run } from "./run.js";

run((config) => startEngineWorker({ ...config, worker: new EngineWorker() }));
