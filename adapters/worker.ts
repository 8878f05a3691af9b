/**
 * The engine in a worker behind a Comlink proxy, on every runtime: a browser or Deno or Bun module
 * `Worker`, or Node's `worker_threads`. Parsing and file work then never block the thread that draws a
 * UI or serves requests, and the caller's code is the same as in-process: `Remote<Engine>` has the
 * engine's methods, and callbacks and `AbortSignal`s may be passed as they are (they cross as proxies).
 * @example
 * import { startEngineWorker } from "pi-session-tree/worker";
 * const { engine, terminate } = await startEngineWorker({ storage: "memory" });
 * const { handle } = await engine.create({ cwd: "/project" });
 * await engine.appendMessage(handle, { role: "user", content: "hi", timestamp: Date.now() });
 * await terminate();
 * @module
 */
import * as Comlink from "comlink";
import { BATCHABLE_METHODS, type BatchCall, Engine, isBatchFailure, UnknownSessionError } from "../src/engine.ts";
import { type ErrorData, errorToData } from "../src/error-data.ts";
import { type FlatTreeNode, unflattenTree } from "../src/flat-tree.ts";
import { SessionFormatError } from "../src/jsonl.ts";
import { HeaderTooLongError } from "../src/load.ts";
import { SessionLockedError } from "../src/lock.ts";
import { InvalidSessionPathError } from "../src/paths.ts";
import { type Durability, SessionClosedError, SessionNotFoundError, SessionReadOnlyError } from "../src/session.ts";
import { type Storage, StorageError } from "../src/storage.ts";
import { EntryNotFoundError, InvalidContextEditError } from "../src/tree.ts";
import { MessageRuns, messageJson } from "./message-runs.ts";
import { createMemoryStorage } from "./zenfs.ts";

/** Which storage the worker's engine uses; it is created inside the worker. */
export interface WorkerEngineConfig {
	/** `"node"`: the local file system (Node, Bun, Deno); `"memory"`: ZenFS in memory. */
	storage: "node" | "memory";
	/** pi's agent directory; default: `$PI_CODING_AGENT_DIR` or `~/.pi/agent` for `"node"`, `/pi/agent` otherwise. */
	agentDir?: string;
	/** Default durability of sessions (default `"group"`: pipelined appends share one write and one fsync). */
	durability?: Durability;
}

/** What the worker exposes. */
export interface EngineFactory {
	createEngine(config: WorkerEngineConfig): Promise<Engine>;
}

type ProxyHandler = Comlink.TransferHandler<object, MessagePort>;

/**
 * Let plain functions and `AbortSignal`s cross Comlink like any other argument: functions become
 * proxies, signals become a port that aborts the other side's signal. Call on both sides (the client
 * and the worker entry do).
 */
export function registerTransferHandlers(): void {
	registerErrorHandler();
	const proxyHandler = Comlink.transferHandlers.get("proxy") as ProxyHandler;
	Comlink.transferHandlers.set("function", {
		canHandle: (value: unknown): value is (...args: unknown[]) => unknown => typeof value === "function",
		serialize: (fn: (...args: unknown[]) => unknown) => proxyHandler.serialize(Comlink.proxy(fn)),
		deserialize: (port: MessagePort) => proxyHandler.deserialize(port),
	} as Comlink.TransferHandler<unknown, MessagePort>);
	Comlink.transferHandlers.set("abort-signal", {
		canHandle: (value: unknown): value is AbortSignal =>
			typeof AbortSignal !== "undefined" && value instanceof AbortSignal,
		serialize(signal: AbortSignal): [WireSignal, Transferable[]] {
			const { port1, port2 } = new MessageChannel();
			// Already aborted: say so in the message itself, so the other side starts out aborted.
			if (signal.aborted) return [{ port: port2, aborted: reasonToWire(signal.reason) }, [port2]];
			const onAbort = () => {
				port1.postMessage(reasonToWire(signal.reason));
				port1.close();
			};
			signal.addEventListener("abort", onAbort, { once: true });
			// The call this signal goes with unlinks it when it settles: a long-lived signal passed to many
			// calls must not collect a listener and a port for each.
			callLinks?.push(() => {
				signal.removeEventListener("abort", onAbort);
				port1.close();
			});
			return [{ port: port2 }, [port2]];
		},
		deserialize({ port, aborted }: WireSignal): AbortSignal {
			const controller = new AbortController();
			if (aborted !== undefined) {
				controller.abort(reasonFromWire(aborted));
				port.close();
			} else {
				port.onmessage = (event) => {
					controller.abort(reasonFromWire(event.data as WireReason));
					port.close();
				};
				// Node: an open port must not keep the worker alive on its own.
				(port as { unref?: () => void }).unref?.();
			}
			return controller.signal;
		},
	} as Comlink.TransferHandler<unknown, WireSignal>);
}

/** Unlinks of the signals serialised for the call being made now (see `batching`'s direct calls). */
let callLinks: (() => void)[] | undefined;

/** An abort reason on the wire: an error as data, or any other value as it is (or as text). */
type WireReason = { error: ErrorData } | { value: unknown };

function reasonToWire(reason: unknown): WireReason {
	if (reason instanceof Error) return { error: errorToData(reason) };
	try {
		return { value: structuredClone(reason) };
	} catch {
		return { value: Object.prototype.toString.call(reason) };
	}
}

function reasonFromWire(wire: WireReason): unknown {
	return "error" in wire ? errorFromData(wire.error) : wire.value;
}

/** An AbortSignal on the wire: a port that will carry the abort, or the reason it was aborted already. */
interface WireSignal {
	port: MessagePort;
	aborted?: WireReason;
}

/** A thrown value on the wire: an error as data, or anything else as it is. */
type WireThrown = { isError: true; value: ErrorData } | { isError: false; value: unknown };

/**
 * Errors thrown in the worker arrive as instances of the same classes, with their own fields (Comlink's
 * default keeps only name, message and stack, in a plain `Error`).
 */
function registerErrorHandler(): void {
	const comlinkThrow = Comlink.transferHandlers.get("throw") as Comlink.TransferHandler<unknown, unknown>;
	Comlink.transferHandlers.set("throw", {
		canHandle: comlinkThrow.canHandle,
		serialize: ({ value }: { value: unknown }): [WireThrown, Transferable[]] => [
			value instanceof Error ? { isError: true, value: errorToData(value) } : { isError: false, value },
			[],
		],
		deserialize: (thrown: WireThrown): never => {
			throw thrown.isError ? errorFromData(thrown.value) : thrown.value;
		},
	} as Comlink.TransferHandler<unknown, WireThrown>);
}

/** The classes errors are rebuilt as, by name; any other name gives an `Error` with that name. */
const ERROR_CLASSES: Record<string, new (...args: never[]) => Error> = {
	EntryNotFoundError,
	HeaderTooLongError,
	InvalidContextEditError,
	InvalidSessionPathError,
	SessionFormatError,
	SessionLockedError,
	SessionClosedError,
	SessionNotFoundError,
	SessionReadOnlyError,
	StorageError,
	UnknownSessionError,
	TypeError,
	RangeError,
	SyntaxError,
};

/**
 * An error rebuilt from its data: an instance of its class (made without running the class's
 * constructor, whose arguments differ from class to class) with its message, stack and fields.
 * A `DOMException` (an aborted signal's `AbortError` or `TimeoutError`) is rebuilt as one.
 */
export function errorFromData(data: ErrorData): Error {
	if ((data.domException || data.name === "AbortError") && typeof DOMException !== "undefined") {
		return new DOMException(data.message, data.name);
	}
	const errorClass = Object.hasOwn(ERROR_CLASSES, data.name) ? (ERROR_CLASSES[data.name] as typeof Error) : Error;
	const error = Reflect.construct(Error, [data.message], errorClass) as Error;
	Object.assign(error, data.fields);
	// Our classes set `name` as a field, in the constructor that was skipped.
	if (error.name !== data.name) error.name = data.name;
	if (data.stack !== undefined) error.stack = data.stack;
	if (data.cause !== undefined) error.cause = errorFromData(data.cause);
	return error;
}

const isNode =
	typeof process !== "undefined" && !!process.versions?.node && !("Bun" in globalThis) && !("Deno" in globalThis);

async function createStorage(config: WorkerEngineConfig): Promise<{ storage: Storage; agentDir: string }> {
	if (config.storage === "node") {
		// Loaded only where it is asked for: browsers have no node:fs.
		const node = await import("./node.ts");
		return { storage: node.createNodeStorage(), agentDir: config.agentDir ?? node.agentDir() };
	}
	return { storage: await createMemoryStorage(), agentDir: config.agentDir ?? "/pi/agent" };
}

/** The object a worker exposes: it builds the engine inside the worker and hands back a proxy. */
export const engineFactory: EngineFactory = {
	async createEngine(config: WorkerEngineConfig): Promise<Engine> {
		const { storage, agentDir } = await createStorage(config);
		// No copies inside the engine: what it returns is copied on its way to the other thread anyway.
		const engine = new Engine({ storage, agentDir, durability: config.durability ?? "group", copyResults: false });
		return Comlink.proxy(engine);
	},
};

/** Expose the engine factory on this worker's endpoint (the worker entry calls this). */
export async function exposeEngineFactory(): Promise<void> {
	registerTransferHandlers();
	if (isNode) {
		const { parentPort } = await import("node:worker_threads");
		const { default: nodeEndpoint } = await import("comlink/dist/esm/node-adapter.mjs");
		Comlink.expose(engineFactory, nodeEndpoint(parentPort as never));
	} else {
		Comlink.expose(engineFactory, globalThis as unknown as Comlink.Endpoint);
	}
}

/** The engine in a worker, and how to end it. */
export interface EngineWorker {
	engine: Comlink.Remote<Engine>;
	/** Close every session (writing what is pending, releasing locks), then end the worker. */
	terminate(): Promise<void>;
}

/** The worker is gone: it failed to load, crashed, ran out of memory or was terminated. */
export class EngineWorkerError extends Error {
	override name = "EngineWorkerError";
}

/**
 * Calls waiting on the worker. Comlink never settles a call whose worker died, so every call is guarded:
 * when the worker dies, the calls still waiting, and every later call, reject with the reason.
 */
class Lifeline {
	readonly #waiting = new Set<(error: EngineWorkerError) => void>();
	#death: EngineWorkerError | undefined;

	/** `promise`, unless the worker dies first. */
	guard<T>(promise: Promise<T>): Promise<T> {
		if (this.#death) return Promise.reject(this.#death);
		return new Promise<T>((resolve, reject) => {
			this.#waiting.add(reject);
			promise.then(resolve, reject).finally(() => this.#waiting.delete(reject));
		});
	}

	get death(): EngineWorkerError | undefined {
		return this.#death;
	}

	/** Record the death (the first one counts) and reject every waiting call. */
	die(death: EngineWorkerError): void {
		if (this.#death) return;
		this.#death = death;
		for (const reject of this.#waiting) reject(death);
		this.#waiting.clear();
	}
}

const engineMethods = new Set(Object.getOwnPropertyNames(Engine.prototype));
/** Calls (messages counted one by one) per `runBatch` message at most. */
const BATCH_SIZE = 500;

/**
 * The remote engine, with appends and branch moves issued in the same tick sent as one message
 * (`runBatch`): one round trip and one write for a burst, instead of one each. Any other call first sends
 * the pending batch, so calls reach the engine in the order they were made. Messages travel as JSON text
 * in one transferred buffer per batch (`appendEncodedMessages`, see message-runs.ts), so a message that
 * cannot be written fails its own call, here, and the worker neither rebuilds the message nor encodes it
 * again.
 */
function batching(remote: Comlink.Remote<Engine>, lifeline: Lifeline): Comlink.Remote<Engine> {
	type Settle = { resolve(value: unknown): void; reject(error: unknown): void };
	let calls: BatchCall[] = [];
	let settlers: Settle[] = [];
	const messages = new MessageRuns();
	const send = () => {
		if (calls.length === 0) return;
		const batch = settlers;
		const encoded = messages.take();
		const sent = encoded ? remote.runBatch(calls, Comlink.transfer(encoded, [encoded.buffer])) : remote.runBatch(calls);
		lifeline.guard(sent).then(
			(results) => {
				results.forEach((result, index) => {
					const call = batch[index] as Settle;
					if (!isBatchFailure(result)) call.resolve(result);
					else {
						try {
							call.reject(errorFromData(result.error));
						} catch (error) {
							call.reject(error);
						}
					}
				});
			},
			(error: unknown) => {
				for (const call of batch) call.reject(error);
			},
		);
		calls = [];
		settlers = [];
	};
	const batched = (method: string) => {
		return (...args: unknown[]) =>
			new Promise((resolve, reject) => {
				if (lifeline.death) throw lifeline.death;
				const message = method === "appendMessage" ? messageJson(args[1]) : undefined;
				if (calls.length === 0) queueMicrotask(send);
				if (message === undefined) calls.push({ method, args });
				else if ("json" in message) messages.add(calls, args[0], message.json, (args[1] as { role?: unknown }).role);
				else calls.push({ method, args: [args[0], message.value] });
				settlers.push({ resolve, reject });
				// A long burst goes out in parts, so the worker starts on one while the next is copied.
				if (settlers.length >= BATCH_SIZE) send();
			});
	};
	const direct = (method: string) => {
		return (...args: unknown[]) => {
			if (lifeline.death) return Promise.reject(lifeline.death);
			send();
			const call = (remote as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method];
			// Arguments are serialised during the call itself: collect the signals' links made meanwhile.
			const links: (() => void)[] = [];
			callLinks = links;
			let answer: Promise<unknown>;
			try {
				answer = lifeline.guard((call as (...a: unknown[]) => Promise<unknown>)(...args));
			} catch (error) {
				// An argument that could not be sent: a rejection, like any other failure of the call.
				answer = Promise.reject(error);
			} finally {
				callLinks = undefined;
			}
			if (links.length > 0) {
				const unlink = () => {
					for (const link of links) link();
				};
				answer.then(unlink, unlink);
			}
			return answer;
		};
	};
	// One wrapper per method, made on first use.
	const wrappers = new Map<string, (...args: unknown[]) => unknown>();
	return new Proxy(remote, {
		get(target, property, receiver) {
			if (typeof property !== "string" || !engineMethods.has(property)) return Reflect.get(target, property, receiver);
			let wrapper = wrappers.get(property);
			if (!wrapper) {
				wrapper = BATCHABLE_METHODS.includes(property) ? batched(property) : direct(property);
				if (property === "getTree") {
					// A nested tree as deep as a long session cannot cross: it travels flat and is nested here.
					const flat = direct("getFlatTree");
					wrapper = async (...args: unknown[]) => unflattenTree((await flat(...args)) as FlatTreeNode[]);
				}
				wrappers.set(property, wrapper);
			}
			return wrapper;
		},
	});
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
			worker.on("error", listener);
			worker.on("exit", (code: number) => listener(`exited with code ${code}`));
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
 * Start the engine in a new worker and return its proxy. Pass `worker` to use a Worker you made yourself:
 * a module `Worker` of `pi-session-tree/worker-entry` (for example with your bundler's
 * `new Worker(new URL(...))` pattern), or on Node a `worker_threads` Worker of it (for example with
 * `resourceLimits`). If the worker dies, every call waiting on it and every later call rejects with
 * `EngineWorkerError` (its `cause` says why); a worker that fails to load rejects this call.
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
	connection.onDeath((reason) => {
		if (ending) return;
		lifeline.die(new EngineWorkerError(`the engine worker stopped: ${describe(reason)}`, { cause: reason }));
		void connection.end();
	});
	const factory = Comlink.wrap<EngineFactory>(connection.endpoint);
	let remote: Comlink.Remote<Engine>;
	try {
		remote = (await lifeline.guard(factory.createEngine(engineConfig))) as unknown as Comlink.Remote<Engine>;
	} catch (error) {
		ending = true;
		await connection.end();
		throw error;
	}
	const engine = batching(remote, lifeline);
	const terminate = async () => {
		try {
			if (!lifeline.death) await engine.closeAll();
		} finally {
			ending = true;
			lifeline.die(new EngineWorkerError("the engine worker was terminated"));
			remote[Comlink.releaseProxy]();
			factory[Comlink.releaseProxy]();
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
