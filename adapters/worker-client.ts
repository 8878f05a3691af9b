/**
 * The caller's side of the engine worker (the UI thread's, or a server's main thread's): it starts the
 * worker, asks it for an engine, and hands back the remote engine. It loads neither the engine nor any
 * storage: only the wire (worker-wire.ts) and Comlink, so that a page bundling it stays small.
 * @module
 */
import * as Comlink from "comlink";
import type { Engine } from "../src/engine.ts";
import { knownDeadThreads, markThreadDead } from "../src/lock-threads.ts";
import { guardedEndpoint } from "./worker-channel.ts";
import { EngineWorkerError, Lifeline } from "./worker-lifeline.ts";
import { batching } from "./worker-proxy.ts";
import {
	type EngineFactory,
	type HostedEngine,
	isNode,
	registerTransferHandlers,
	type WorkerEngineConfig,
} from "./worker-wire.ts";

export type { WorkerEngineConfig };
export { EngineWorkerError };

/** The engine in a worker, and how to end it. */
export interface EngineWorker {
	engine: Comlink.Remote<Engine>;
	/** Close every session (writing what is pending, releasing locks), then end the worker. */
	terminate(): Promise<void>;
}

/** Where the worker entry module is, next to this module (source `.ts` or built `.js`). */
export function workerEntryUrl(): URL {
	return new URL(import.meta.url.endsWith(".ts") ? "./worker-entry.ts" : "./worker-entry.js", import.meta.url);
}

/**
 * The module a Node `worker_threads` Worker of the engine starts, for `new Worker(nodeWorkerEntryUrl(), …)`
 * passed to `startEngineWorker({ worker })`. Running from TypeScript sources (tests, development), Node
 * needs tsx's loader, which worker threads do not inherit: then it is a small bootstrap that registers it.
 */
export function nodeWorkerEntryUrl(): URL {
	const entry = workerEntryUrl();
	if (!entry.pathname.endsWith(".ts")) return entry;
	const tsx = import.meta.resolve("tsx/esm/api");
	const bootstrap = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(entry.href)});`;
	return new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`);
}

/** A Node `worker_threads` Worker, as far as it is used here. */
export interface NodeWorkerLike {
	postMessage(message: unknown, transfer?: readonly unknown[]): void;
	// biome-ignore lint/suspicious/noExplicitAny: Node's listener signatures differ by event.
	on(event: string, listener: (...args: any[]) => void): unknown;
	// biome-ignore lint/suspicious/noExplicitAny: as above.
	off(event: string, listener: (...args: any[]) => void): unknown;
	terminate(): Promise<number>;
	/** The thread's id in this process (Node's, Bun's and Deno's `worker_threads` have it). */
	readonly threadId?: number;
}

/** The endpoint Comlink talks through, how to end the worker, and how to hear of its death. */
interface Connection {
	endpoint: Comlink.Endpoint;
	end(): Promise<unknown> | unknown;
	onDeath(listener: (reason: unknown) => void): void;
}

async function connectNode(worker: NodeWorkerLike): Promise<Connection> {
	const { default: nodeEndpoint } = await import("comlink/dist/esm/node-adapter.mjs");
	return {
		endpoint: nodeEndpoint(worker as never),
		end: () => worker.terminate(),
		onDeath(listener) {
			// Read now: a thread that has exited reports -1. Once it is gone, the lock files its engine held are
			// stale (nodeLockIdentity), here and in the workers started after it.
			const thread = worker.threadId;
			const died = (reason: unknown) => {
				if (thread !== undefined && thread >= 0) markThreadDead(thread);
				listener(reason);
			};
			// Marked dead on exit only: after an error the thread may still finish a write it had started.
			worker.on("error", listener);
			worker.on("exit", (code: number) => died(`exited with code ${code}`));
		},
	};
}

function connectWeb(worker: Worker): Connection {
	return {
		endpoint: worker,
		end: () => worker.terminate(),
		onDeath(listener) {
			// A module that fails to load, or an error nothing caught: either way the engine cannot be trusted.
			// It is handled here (every call rejects with it), so it must not also surface as an uncaught error
			// of this thread: Deno re-throws an unhandled worker error in the parent, where it can abort the
			// very code that waits for the rejection.
			worker.addEventListener("error", (event) => {
				event.preventDefault();
				listener(event.error ?? event.message ?? "worker error");
			});
		},
	};
}

/**
 * Start the engine in a new worker and return its proxy. `storage` names one of the worker's storage
 * factories (the stock worker: `"node"` or `"memory"`). Pass `worker` to use a Worker you made yourself:
 * a module `Worker` of `pi-session-tree/worker-entry` or of your own entry (`pi-session-tree/worker-host`),
 * for example with your bundler's `new Worker(new URL(...))` pattern, or on Node a `worker_threads`
 * Worker of it (for example with `resourceLimits`). If the worker dies, every call waiting on it and every
 * later call rejects with `EngineWorkerError` (its `cause` says why); a worker that fails to load rejects
 * this call. A call whose arguments or answer cannot be read on the other side rejects with
 * `UnreadableMessageError`.
 * @example
 * const { engine, terminate } = await startEngineWorker({ storage: "node" });
 * const sessions = await engine.listAll((done, total) => console.log(done, total));
 * await terminate();
 */
export async function startEngineWorker(
	config: WorkerEngineConfig & { worker?: Worker | NodeWorkerLike },
): Promise<EngineWorker> {
	registerTransferHandlers();
	const { worker: given, ...engineConfig } = config;
	let connection: Connection;
	if (given) {
		connection = "addEventListener" in given ? connectWeb(given) : await connectNode(given);
	} else if (isNode) {
		const { Worker: NodeWorker } = await import("node:worker_threads");
		connection = await connectNode(new NodeWorker(nodeWorkerEntryUrl()));
	} else {
		connection = connectWeb(new Worker(workerEntryUrl(), { type: "module" }));
	}
	const lifeline = new Lifeline();
	let ending = false;
	let port: ReturnType<typeof guardedEndpoint> | undefined;
	connection.onDeath((reason) => {
		if (ending) return;
		lifeline.die(new EngineWorkerError(`the engine worker stopped: ${describe(reason)}`, { cause: reason }));
		port?.close();
		void connection.end();
	});
	const factory = Comlink.wrap<EngineFactory>(connection.endpoint);
	try {
		const deadThreads = knownDeadThreads();
		port = guardedEndpoint(await lifeline.guard(factory.createEngine({ ...engineConfig, deadThreads })), "caller");
	} catch (error) {
		ending = true;
		await connection.end();
		throw error;
	}
	const remote = Comlink.wrap<HostedEngine>(port);
	const engine = batching(remote, lifeline);
	const terminate = async () => {
		try {
			if (!lifeline.death) await engine.closeAll();
		} finally {
			ending = true;
			lifeline.die(new EngineWorkerError("the engine worker was terminated"));
			remote[Comlink.releaseProxy]();
			factory[Comlink.releaseProxy]();
			port?.close();
			await connection.end();
		}
	};
	let terminated: Promise<void> | undefined;
	// Terminating twice must not end the worker while the first call is still writing.
	return { engine, terminate: () => (terminated ??= terminate()) };
}

function describe(reason: unknown): string {
	return reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason);
}
