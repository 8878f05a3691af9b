/**
 * The worker's side of the engine worker: it builds the engine with one of its storage factories and
 * serves it, with batches of changes, on a channel of its own. A worker entry of your own plugs in a
 * storage by naming a factory; `pi-session-tree/worker-entry` is this with the stock ones.
 * @example
 * // my-worker.ts, loaded as a module Worker and passed to startEngineWorker({ storage: "mine", worker })
 * import { exposeEngine, stockStorages } from "pi-session-tree/worker-host";
 * void exposeEngine({ storages: { ...stockStorages, mine: async () => ({ storage: await myStorage(), agentDir: "/pi" }) } });
 * @module
 */

import * as Comlink from "comlink";
import { Engine, type EngineOptions } from "../src/engine.ts";
import { InvalidArgumentError } from "../src/errors.ts";
import { randomUuid } from "../src/ids.ts";
import { markThreadDead } from "../src/lock-threads.ts";
import { runBatch } from "./worker-batch.ts";
import { guardedEndpoint } from "./worker-channel.ts";
import {
	type BatchCall,
	ENGINE_METHODS,
	type EngineFactory,
	isNode,
	nodeModules,
	registerTransferHandlers,
	WORKER_READY,
	type WorkerEngineConfig,
} from "./worker-wire.ts";

export { stockStorages } from "./worker-storages.ts";
export type { EngineFactory, WorkerEngineConfig };

/**
 * Makes the engine's storage for a client's config: the engine's options (at least `storage` and
 * `agentDir`), all passed to `new Engine`. The client's `durability`, when given, wins.
 */
export type StorageFactory = (config: WorkerEngineConfig) => EngineOptions | Promise<EngineOptions>;

export interface EngineHostOptions {
	/** The storages a client may name in `startEngineWorker({ storage })`, by name. */
	storages: Record<string, StorageFactory>;
}

/** The engine's methods bound to it, and `runBatch`: all a client can reach of the engine. */
function served(engine: Engine): Record<string, unknown> {
	const methods: Record<string, unknown> = {};
	for (const name of ENGINE_METHODS) methods[name] = (engine[name] as (...args: never[]) => unknown).bind(engine);
	methods.runBatch = (calls: BatchCall[], encoded?: Uint8Array) => runBatch(engine, calls, encoded);
	// A whole file's bytes are copied here, on the worker's thread, and the copy is moved to the other thread:
	// the caller's thread does no copying. (The storage's own buffer is never given away: a storage may keep
	// it, and a view of Node's small-Buffer pool shares it with other Buffers.)
	methods.exportSessionFile = async (path: string) => {
		const copy = (await engine.exportSessionFile(path)).slice();
		return Comlink.transfer(copy, [copy.buffer]);
	};
	return methods;
}

/** The factory a worker exposes: each `createEngine` builds an engine and serves it on a new channel. */
export function createEngineFactory({ storages }: EngineHostOptions): EngineFactory {
	return {
		async createEngine(config: WorkerEngineConfig): Promise<MessagePort> {
			const factory = Object.hasOwn(storages, config.storage) ? storages[config.storage] : undefined;
			if (!factory) {
				const names = Object.keys(storages).map((name) => JSON.stringify(name));
				throw new InvalidArgumentError(
					`this engine worker has no storage ${JSON.stringify(config.storage)} (it has ${names.join(", ") || "none"})`,
				);
			}
			for (const thread of config.deadThreads ?? []) markThreadDead(thread);
			const options = await factory(config);
			// No copies inside the engine: what it returns is copied on its way to the other thread anyway.
			const engine = new Engine({
				...options,
				durability: config.durability ?? options.durability ?? "group",
				limits: config.limits ?? options.limits,
				keepListingCatalogInMemory: config.keepListingCatalogInMemory ?? options.keepListingCatalogInMemory,
				copyResults: false,
			});
			const { port1, port2 } = new MessageChannel();
			Comlink.expose(served(engine), guardedEndpoint(port1, "host"));
			return Comlink.transfer(port2, [port2]);
		},
	};
}

/**
 * Serve engines on this worker's endpoint (a worker entry calls this once). A web worker then posts
 * `WORKER_READY` to the thread that started it.
 */
export async function exposeEngine(options: EngineHostOptions): Promise<void> {
	registerTransferHandlers();
	const factory = createEngineFactory(options);
	if (isNode) {
		const { parentPort }: typeof import("node:worker_threads") = await import(/* @vite-ignore */ nodeModules.threads);
		const { default: nodeEndpoint }: typeof import("comlink/dist/esm/node-adapter.mjs") = await import(
			/* @vite-ignore */ nodeModules.comlinkAdapter
		);
		Comlink.expose(factory, nodeEndpoint(parentPort as never));
	} else {
		// Exposed at once, before anything is awaited: a client's first message may be on its way already.
		const life = holdLifeLock();
		Comlink.expose({ ...factory, lifeLock: () => life }, globalThis as unknown as Comlink.Endpoint);
		(globalThis as unknown as { postMessage(message: unknown): void }).postMessage(WORKER_READY);
	}
}

/**
 * Take a Web Lock of a name of its own and never let go: the browser releases it when this worker ends,
 * however it ends, and the client, waiting for it, hears of that (`EngineFactory.lifeLock`).
 */
async function holdLifeLock(): Promise<string | undefined> {
	const locks = (globalThis.navigator as Navigator | undefined)?.locks;
	if (!locks) return undefined;
	const name = `pi-session-tree worker life:${randomUuid()}`;
	await new Promise<void>((granted) => {
		void locks.request(name, () => {
			granted();
			return new Promise<never>(() => undefined);
		});
	});
	return name;
}
