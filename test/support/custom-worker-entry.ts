/**
 * A worker entry of one's own (test/worker-host.test.ts): the stock storages and one more, whose factory
 * returns every option it wants the engine to have.
 */

import { exposeEngine, stockStorages } from "../../adapters/worker-host.ts";
import { createMemoryStorage } from "../../adapters/zenfs.ts";

await exposeEngine({
	storages: {
		...stockStorages,
		custom: async (config) => ({
			storage: await createMemoryStorage(),
			agentDir: `/custom/${config.agentDir ?? "default"}`,
			durability: "fsync",
		}),
	},
});
