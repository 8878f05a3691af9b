/**
 * The stock worker's storages, each loaded only when a client asks for it: a browser has no `node:fs`,
 * Node has no OPFS, and a worker on the file system needs no ZenFS.
 * @module
 */
import type { EngineOptions } from "../src/engine.ts";
import { realPathOn } from "./real-path.ts";
import type { WorkerEngineConfig } from "./worker-wire.ts";

/**
 * The node adapter, by a specifier bundlers do not follow: a browser build of the worker must not pull in
 * `node:fs` (it is never reached there), and Node, Bun and Deno resolve it next to this module.
 */
const nodeAdapter = import.meta.url.endsWith(".ts") ? "./node.ts" : "./node.js";
/** A module of Node's (also Bun's and Deno's), by a specifier bundlers do not follow either. */
const nodeBuiltin = (name: string): string => `node:${name}`;

export const stockStorages = {
	/**
	 * The local file system (Node, Bun, Deno), with lock files shared with other processes; agent directory
	 * `$PI_CODING_AGENT_DIR` or `~/.pi/agent`. The engine takes no path outside its sessions root, `root`
	 * (default: the agent directory), symbolic links resolved.
	 */
	async node(config: WorkerEngineConfig): Promise<EngineOptions> {
		const [node, fs, path]: [
			typeof import("./node.ts"),
			typeof import("node:fs/promises"),
			typeof import("node:path"),
		] = await Promise.all([
			import(/* @vite-ignore */ nodeAdapter),
			import(/* @vite-ignore */ nodeBuiltin("fs/promises")),
			import(/* @vite-ignore */ nodeBuiltin("path")),
		]);
		const storage = node.createNodeStorage();
		const agentDir = path.resolve(config.agentDir ?? node.agentDir());
		const root = path.resolve(config.root ?? agentDir);
		const realPath = realPathOn(fs, path);
		return { storage, locks: node.createNodeLocks(storage), agentDir, root, realPath };
	},
	/** ZenFS in memory, empty at first; agent directory `/pi/agent`. */
	async memory(config: WorkerEngineConfig): Promise<EngineOptions> {
		const { createMemoryStorage } = await import("./zenfs.ts");
		return { storage: await createMemoryStorage(), agentDir: config.agentDir ?? "/pi/agent" };
	},
	/**
	 * The browser's origin-private file system (a dedicated worker only), one writer per session across the
	 * origin's tabs (Web Locks); agent directory `/pi/agent`, laid out as on disk.
	 */
	async opfs(config: WorkerEngineConfig): Promise<EngineOptions> {
		const { createOpfsStorage } = await import("./opfs.ts");
		const storage = await createOpfsStorage();
		return { storage, locks: storage.locks, agentDir: config.agentDir ?? "/pi/agent" };
	},
};
