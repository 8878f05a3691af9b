/**
 * What both sides of the engine worker share: how functions, `AbortSignal`s and errors cross Comlink,
 * the names of the engine's methods, and the shape of a batch. Values here come only from tiny modules,
 * so the client (the UI thread's side) never loads the engine to speak to it.
 * @module
 */
import * as Comlink from "comlink";
import { APPEND_METHODS, type AppendMethod } from "../src/append-methods.ts";
import type { Engine } from "../src/engine.ts";
import { type ErrorData, errorToData } from "../src/error-data.ts";
import {
	EntryNotFoundError,
	EntryNotLoadedError,
	HeaderTooLongError,
	InvalidArgumentError,
	InvalidContextEditError,
	InvalidSessionPathError,
	PathOutsideRootError,
	SessionClosedError,
	SessionFileChangedError,
	SessionFormatError,
	SessionLimitError,
	SessionLockedError,
	SessionNotFoundError,
	SessionReadOnlyError,
	StorageError,
	UnknownSessionError,
	UnreadableMessageError,
} from "../src/errors.ts";
import type { ReadLimits } from "../src/load.ts";
import type { Durability } from "../src/session.ts";

/** The engine's methods other than the appends (which are `APPEND_METHODS`). */
const OTHER_METHODS = [
	"sessionDirFor",
	"list",
	"listAll",
	"findById",
	"findMostRecent",
	"create",
	"open",
	"continueRecent",
	"inMemory",
	"forkFrom",
	"importSessionFile",
	"exportSessionFile",
	"summary",
	"branch",
	"resetLeaf",
	"getEntry",
	"getChildren",
	"getBranch",
	"getLabel",
	"getTree",
	"getFlatTree",
	"getOutline",
	"getContext",
	"getDiagnostics",
	"createBranchedSession",
	"flush",
	"close",
	"closeAll",
	"openHandles",
] as const;

type ListedMethod = AppendMethod | (typeof OTHER_METHODS)[number];

/** The engine's public methods, by name: what the client's proxy forwards (checked against `Engine` below). */
export const ENGINE_METHODS: readonly ListedMethod[] = [...APPEND_METHODS, ...OTHER_METHODS];

type EngineMethod = { [K in keyof Engine]: Engine[K] extends (...args: never[]) => unknown ? K : never }[keyof Engine];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
/** Fails to compile when a method is added to or removed from `Engine` but not from `ENGINE_METHODS`. */
export type EngineMethodsListed = Holds<Same<ListedMethod, EngineMethod>>;

/** Engine methods that change a session and can travel in one batch (`runBatch`). */
export const BATCHABLE_METHODS: readonly string[] = [...APPEND_METHODS, "branch", "resetLeaf"];

/**
 * One call of a batch: a batchable method's name and its arguments; or `appendEncodedMessages` with
 * `[handle, start, ends, roles]`: `appendMessage` of each message whose JSON text (UTF-8) is in the batch's
 * `encoded` buffer, the first from byte `start` to `ends[0]`, the next from there to `ends[1]`, and so on,
 * with its role. Each message has its own result.
 */
export interface BatchCall {
	method: string;
	args: unknown[];
}

/** A call of a batch that failed, and why. */
export interface BatchFailure {
	error: ErrorData;
}

/**
 * The outcome of one call of a batch: its value (an entry's id, or `undefined` for a branch move), or a
 * `BatchFailure`. Plain values, not an object each: a burst's results cross back to the caller's thread.
 */
export type BatchResult = string | undefined | BatchFailure;

/** Whether a batch's result is a failure. */
export function isBatchFailure(result: BatchResult): result is BatchFailure {
	return typeof result === "object" && result !== null;
}

/** What the worker's engine answers: the engine's methods, and batches of changes. */
export type HostedEngine = Pick<Engine, EngineMethod> & {
	/**
	 * Run batchable calls in order, as if issued back to back, each with its own outcome; a batch whose
	 * shape is wrong is refused whole, before any call is applied. The worker takes `encoded` over.
	 */
	runBatch(calls: BatchCall[], encoded?: Uint8Array): Promise<BatchResult[]>;
};

/** Which storage the worker's engine uses (made inside the worker), and how. */
export interface WorkerEngineConfig {
	/**
	 * The name of one of the worker's storage factories. The stock worker entry has `"node"`, the local
	 * file system (Node, Bun, Deno), `"memory"`, ZenFS in memory, and `"opfs"`, the browser's
	 * origin-private file system.
	 */
	storage: string;
	/** pi's agent directory; default: the factory's (the stock ones: `$PI_CODING_AGENT_DIR` or `~/.pi/agent`; `/pi/agent`). */
	agentDir?: string;
	/**
	 * The sessions root: the engine refuses any path outside it (`EngineOptions.root`). Default: the
	 * factory's (the stock `"node"` storage: the agent directory; the others confine paths themselves).
	 */
	root?: string;
	/** Default durability of sessions (default `"group"`: pipelined appends share one write and one fsync). */
	durability?: Durability;
	/** Limits of the session files the engine reads (`EngineOptions.limits`); default: the factory's. */
	limits?: ReadLimits;
	/** Keep the listing catalog in memory between listings (`EngineOptions.keepListingCatalogInMemory`; default true). */
	keepListingCatalogInMemory?: boolean;
	/**
	 * Threads of this process known to have died (set by `startEngineWorker`): lock files their engines
	 * left are stale, so the new worker takes them over instead of refusing those sessions.
	 */
	deadThreads?: number[];
}

/** What a worker exposes on its endpoint: `createEngine` answers with the port its engine is served on. */
export interface EngineFactory {
	createEngine(config: WorkerEngineConfig): Promise<MessagePort>;
	/**
	 * The name of a Web Lock the worker holds for as long as it lives (undefined without Web Locks): a
	 * client waiting for it learns when the worker ends, even by a `terminate()` that sends no event.
	 */
	lifeLock?(): Promise<string | undefined>;
}

type ProxyHandler = Comlink.TransferHandler<object, MessagePort>;

/**
 * Let plain functions and `AbortSignal`s cross Comlink like any other argument: functions become
 * proxies, signals become a port that aborts the other side's signal. Errors cross as instances of their
 * classes. Call on both sides (the client and the worker host do).
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

/** Unlinks of the signals serialised for the call being made now (see `linkingSignals`). */
let callLinks: (() => void)[] | undefined;

/**
 * `send()`, collecting into `links` how to unlink the `AbortSignal`s it serialises (arguments are
 * serialised during the call itself), for the caller to run once the call settles.
 */
export function linkingSignals<T>(links: (() => void)[], send: () => T): T {
	callLinks = links;
	try {
		return send();
	} finally {
		callLinks = undefined;
	}
}

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
export type WireThrown = { isError: true; value: ErrorData } | { isError: false; value: unknown };

/**
 * Errors thrown in the worker arrive as instances of the same classes, with their own fields (Comlink's
 * default keeps only name, message and stack, in a plain `Error`).
 */
function registerErrorHandler(): void {
	const comlinkThrow = Comlink.transferHandlers.get("throw") as Comlink.TransferHandler<unknown, unknown>;
	Comlink.transferHandlers.set("throw", {
		canHandle: comlinkThrow.canHandle,
		serialize: ({ value }: { value: unknown }): [WireThrown, Transferable[]] => [thrownToWire(value), []],
		deserialize: (thrown: WireThrown): never => {
			throw thrown.isError ? errorFromData(thrown.value) : thrown.value;
		},
	} as Comlink.TransferHandler<unknown, WireThrown>);
}

/** A thrown value as it crosses. */
export function thrownToWire(value: unknown): WireThrown {
	return value instanceof Error ? { isError: true, value: errorToData(value) } : { isError: false, value };
}

/** The classes errors are rebuilt as, by name; any other name gives an `Error` with that name. */
const ERROR_CLASSES: Record<string, new (...args: never[]) => Error> = {
	EntryNotFoundError,
	EntryNotLoadedError,
	HeaderTooLongError,
	InvalidArgumentError,
	InvalidContextEditError,
	InvalidSessionPathError,
	PathOutsideRootError,
	SessionFileChangedError,
	SessionFormatError,
	SessionLimitError,
	SessionLockedError,
	SessionClosedError,
	SessionNotFoundError,
	SessionReadOnlyError,
	StorageError,
	UnknownSessionError,
	UnreadableMessageError,
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

/**
 * What a worker posts once its module has loaded and it serves engines (a web worker's `exposeEngine`): the
 * client tells a worker that failed to load from one that died later, and says why.
 */
export const WORKER_READY = "pi-session-tree:worker-ready";

/**
 * Node's modules, imported by specifiers bundlers do not follow: a browser build of the client or of a
 * worker entry must not pull them in (they are never reached there).
 */
export const nodeModules = { threads: "node:worker_threads", comlinkAdapter: "comlink/dist/esm/node-adapter.mjs" };

/** Node (not Bun or Deno, which also have `process`): its workers are `worker_threads`. */
export const isNode: boolean =
	typeof process !== "undefined" && !!process.versions?.node && !("Bun" in globalThis) && !("Deno" in globalThis);
