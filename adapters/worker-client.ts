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
	nodeModules,
	registerTransferHandlers,
	WORKER_READY,
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
	const { default: nodeEndpoint }: typeof import("comlink/dist/esm/node-adapter.mjs") = await import(
		/* @vite-ignore */ nodeModules.comlinkAdapter
	);
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

/** How long `startEngineWorker` waits for a worker's first answer by default (a bundle may load slowly). */
const START_TIMEOUT_MS = 60_000;

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
				listener(event.error ?? describeEvent(event));
			});
		},
	};
}

/**
 * Start the engine in a new worker and return its proxy. `storage` names one of the worker's storage
 * factories (the stock worker: `"node"`, `"memory"` or `"opfs"`). Pass `worker` to use a Worker you made yourself:
 * a module `Worker` of `pi-session-tree/worker-entry` or of your own entry (`pi-session-tree/worker-host`),
 * for example with your bundler's `new Worker(new URL(...))` pattern, or on Node a `worker_threads`
 * Worker of it (for example with `resourceLimits`). If the worker dies, every call waiting on it and every
 * later call rejects with `EngineWorkerError` (its `cause` says why); a worker that fails to load rejects
 * this call. A call whose arguments or answer cannot be read on the other side rejects with
 * `UnreadableMessageError`. A worker that has not answered within `startTimeoutMs` (60 s by default) is
 * ended, and this call rejects with `EngineWorkerError`.
 * @example
 * const { engine, terminate } = await startEngineWorker({ storage: "node" });
 * const sessions = await engine.listAll((done, total) => console.log(done, total));
 * await terminate();
 */
export async function startEngineWorker(
	config: WorkerEngineConfig & { worker?: Worker | NodeWorkerLike; startTimeoutMs?: number },
): Promise<EngineWorker> {
	registerTransferHandlers();
	const { worker: given, startTimeoutMs = START_TIMEOUT_MS, ...engineConfig } = config;
	let connection: Connection;
	if (given) {
		connection = "addEventListener" in given ? connectWeb(given) : await connectNode(given);
	} else if (isNode) {
		const { Worker: NodeWorker }: typeof import("node:worker_threads") = await import(
			/* @vite-ignore */ nodeModules.threads
		);
		connection = await connectNode(new NodeWorker(nodeWorkerEntryUrl()));
	} else if ("Deno" in globalThis || "Bun" in globalThis) {
		connection = connectWeb(new Worker(workerEntryUrl(), { type: "module" }));
	} else {
		connection = connectWeb(await startBrowserWorker());
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
	// A worker that neither answers nor fails where this thread can see it (Deno has been seen to lose a
	// module's load error now and then) must not keep this call waiting for ever.
	const silence = setTimeout(() => {
		const waited = `no answer within ${startTimeoutMs} ms (it may have failed to load without saying so)`;
		lifeline.die(new EngineWorkerError(`the engine worker did not start: ${waited}`));
	}, startTimeoutMs);
	try {
		const deadThreads = knownDeadThreads();
		port = guardedEndpoint(await lifeline.guard(factory.createEngine({ ...engineConfig, deadThreads })), "caller");
	} catch (error) {
		ending = true;
		await connection.end();
		throw error;
	} finally {
		clearTimeout(silence);
	}
	// A factory that has no `lifeLock` (a host of an older version) rejects the call: then nothing is watched.
	const askLife = factory.lifeLock as unknown as () => Promise<string | undefined>;
	const life = await lifeline.guard(askLife()).catch(() => undefined);
	watchLife(life, () => {
		if (ending) return;
		lifeline.die(new EngineWorkerError("the engine worker stopped: it ended (terminated or crashed)"));
		port?.close();
	});
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

/**
 * The stock worker in a browser: the bundled browser worker next to this module, written as bundlers
 * expect to find a worker (Vite then bundles it and rewrites the URL; webpack and Parcel know the form). Where it is not
 * there (esbuild copies no worker files), the same worker from its source text (`worker-inline.ts`).
 */
async function startBrowserWorker(): Promise<Worker> {
	const policy = watchPolicy();
	try {
		// Written out in full: bundlers recognize `new Worker(new URL("<literal>", import.meta.url))` only.
		const first = await tryWorker(
			() => new Worker(new URL("./worker-entry.browser.js", import.meta.url), { type: "module" }),
		);
		if (first instanceof Worker) return first;
		let fallback: Worker | Event | Error | undefined;
		try {
			const { workerSource } = await import("./worker-inline.ts");
			if (workerSource !== undefined) fallback = await startFromText(workerSource);
		} catch (error) {
			fallback = error as Error; // its chunk missing after a deploy, say
		}
		if (fallback instanceof Worker) return fallback;
		// A refusal by the page's Content-Security-Policy arrives as an event of its own, after the failure.
		await new Promise((resolve) => setTimeout(resolve, 0));
		let reason = policy.refusals.length > 0 ? policy.describe() : await whyNotLoaded(first);
		if (fallback) reason += `; nor from its source text: ${describeFailure(fallback)}`;
		throw new EngineWorkerError(`the engine worker did not load: ${reason}`, { cause: first });
	} finally {
		policy.stop();
	}
}

/** A worker made by `make` once it says it is ready; else what went wrong (its error event, or a throw). */
async function tryWorker(make: () => Worker): Promise<Worker | Event | Error> {
	let worker: Worker;
	try {
		worker = make(); // throws at once where a policy (Trusted Types, a sandbox) forbids workers
	} catch (error) {
		return error as Error;
	}
	const failure = await loaded(worker);
	if (failure === undefined) return worker;
	worker.terminate();
	return failure;
}

/** The worker from its source text (a `blob:` module worker), or what went wrong. */
async function startFromText(source: string): Promise<Worker | Event | Error> {
	const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
	try {
		return await tryWorker(() => new Worker(url, { type: "module" }));
	} finally {
		URL.revokeObjectURL(url);
	}
}

/** The page's Content-Security-Policy refusals while workers are started (a refused worker says nothing). */
function watchPolicy(): { refusals: SecurityPolicyViolationEvent[]; describe(): string; stop(): void } {
	const refusals: SecurityPolicyViolationEvent[] = [];
	const listen = (event: Event) => refusals.push(event as SecurityPolicyViolationEvent);
	globalThis.addEventListener?.("securitypolicyviolation", listen);
	return {
		refusals,
		describe: () =>
			refusals
				.map(
					(event) =>
						`the page's Content-Security-Policy refused ${event.blockedURI || "it"} (${event.effectiveDirective}; the engine worker needs worker-src 'self', or blob: where no bundler copied the worker)`,
				)
				.join("; "),
		stop: () => globalThis.removeEventListener?.("securitypolicyviolation", listen),
	};
}

/** Where the browser worker is before a bundler moves it (not a literal: bundlers must not copy it again). */
const BROWSER_WORKER = "./worker-entry.browser.js";

/** Undefined once `worker` says it is ready; its error event if it fails to load first. */
function loaded(worker: Worker): Promise<Event | undefined> {
	return new Promise((resolve) => {
		const settle = (outcome: Event | undefined) => {
			worker.removeEventListener("message", onMessage);
			worker.removeEventListener("error", onError);
			resolve(outcome);
		};
		const onMessage = (event: MessageEvent) => {
			if (event.data === WORKER_READY) settle(undefined);
		};
		const onError = (event: Event) => {
			event.preventDefault();
			settle(event);
		};
		worker.addEventListener("message", onMessage);
		worker.addEventListener("error", onError);
	});
}

/**
 * Why the package's worker did not load, in words: the module's own error when the browser reports one (a
 * syntax error, a missing export), else what fetching it where the package keeps it gives (browsers report a
 * failed fetch of a worker without any detail; a bundler may have moved it, and then says why itself).
 */
async function whyNotLoaded(failure: Event | Error): Promise<string> {
	const { error, message } = failure as Partial<ErrorEvent>;
	if (!(failure instanceof Event) || error || message) return describeFailure(failure);
	const url = new URL(BROWSER_WORKER, import.meta.url);
	try {
		const response = await fetch(url);
		if (!response.ok) return `fetching ${url.href} gave HTTP ${response.status} ${response.statusText}`.trim();
		const type = response.headers.get("content-type") ?? "";
		if (!/javascript|ecmascript/.test(type)) {
			return `${url.href} answered with ${type || "no content type"}, not JavaScript (is the file there, or is that a fallback page?)`;
		}
		return `${url.href} was fetched but did not start; the browser's console has the details`;
	} catch (error) {
		return `${url.href} could not be fetched: ${describe(error)}`;
	}
}

function describeFailure(failure: Event | Error): string {
	return failure instanceof Event ? describeEvent(failure) : describe(failure);
}

/** A worker's error event in words (an `ErrorEvent` where the runtime gives one, with where it happened). */
function describeEvent(event: Event): string {
	const { error, message, filename, lineno } = event as Partial<ErrorEvent>;
	const where = filename ? ` (${filename}:${lineno})` : "";
	if (error) return `${describe(error)}${where}`;
	return message ? `${message}${where}` : "worker error";
}

/**
 * Call `ended` once the worker holding the Web Lock `name` is gone: a browser sends no event when a worker
 * is terminated by a call that is not ours, and an engine worker holds that lock for life.
 */
function watchLife(name: string | undefined, ended: () => void): void {
	const locks = (globalThis.navigator as Navigator | undefined)?.locks;
	if (name === undefined || !locks) return;
	void locks.request(name, ended);
}

function describe(reason: unknown): string {
	return reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason);
}
