/**
 * The bench page's engine worker (a module Worker): the engine served by `exposeEngine` with three
 * storages, named as the page asks for them in `startEngineWorker({ storage })`:
 * - `opfs`: `createOpfsStorage()` (adapters/opfs.ts) on the OPFS root, with its Web Locks (`storage.locks`);
 * - `memory`: `createMemoryStorage()`, ZenFS in memory inside this worker;
 * - `webaccess`: `createZenfsStorage` over `@zenfs/dom`'s `WebAccess` backend on the OPFS root
 *   (`navigator.storage.getDirectory()`), which writes a file through `createWritable` on every operation.
 * Every case runs in a browser context of its own, so each finds an empty OPFS.
 * @module
 */
import { resolveMountConfig } from "@zenfs/core";
import { WebAccess } from "@zenfs/dom";
import { createOpfsStorage } from "../../../adapters/opfs.ts";
import { exposeEngine } from "../../../adapters/worker-host.ts";
import { createMemoryStorage, createZenfsStorage } from "../../../adapters/zenfs.ts";

const agentDir = "/pi/agent";

void exposeEngine({
	storages: {
		opfs: async () => {
			const storage = await createOpfsStorage();
			return { storage, locks: storage.locks, agentDir };
		},
		memory: async () => ({ storage: await createMemoryStorage(), agentDir }),
		webaccess: async () => {
			const handle = await navigator.storage.getDirectory();
			const fileSystem = await resolveMountConfig({ backend: WebAccess, handle });
			return { storage: createZenfsStorage(fileSystem), agentDir };
		},
	},
});
