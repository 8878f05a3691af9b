/**
 * The engine worker of the OPFS tests: the engine on an OPFS storage whose root is the Worker's name
 * (`new Worker(url, { type: "module", name: root })`), so each test has a fresh directory.
 * @module
 */
import { createOpfsStorage } from "../../../adapters/opfs.ts";
import { exposeEngine } from "../../../adapters/worker-host.ts";

void exposeEngine({
	storages: {
		opfs: async () => {
			const storage = await createOpfsStorage({ root: self.name });
			return { storage, locks: storage.locks, agentDir: "/pi/agent" };
		},
	},
});
