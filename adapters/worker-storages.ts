/**
 * The stock worker's storages, each loaded only when a client asks for it: browsers have no `node:fs`,
 * and a worker on the file system needs no ZenFS.
 * @module
 */
import type { EngineOptions } from "../src/engine.ts";
import type { WorkerEngineConfig } from "./worker-wire.ts";

export const stockStorages = {
	/** The local file system (Node, Bun, Deno), with lock files shared with other processes; agent directory `$PI_CODING_AGENT_DIR` or `~/.pi/agent`. */
	async node(config: WorkerEngineConfig): Promise<EngineOptions> {
		const node = await import("./node.ts");
		const storage = node.createNodeStorage();
		return { storage, locks: node.createNodeLocks(storage), agentDir: config.agentDir ?? node.agentDir() };
	},
	/** ZenFS in memory, empty at first; agent directory `/pi/agent`. */
	async memory(config: WorkerEngineConfig): Promise<EngineOptions> {
		const { createMemoryStorage } = await import("./zenfs.ts");
		return { storage: await createMemoryStorage(), agentDir: config.agentDir ?? "/pi/agent" };
	},
};
