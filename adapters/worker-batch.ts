/**
 * The worker's side of batches (`runBatch`): the client sends appends and branch moves issued in one tick
 * as one message, and they are applied here in order, each with its own outcome, sharing the writes.
 * @module
 */
import { type Engine, type SessionHandle, sessionOfHandle } from "../src/engine.ts";
import { errorToData } from "../src/error-data.ts";
import { InvalidArgumentError } from "../src/errors.ts";
import type { Session } from "../src/session.ts";
import type { SessionTree } from "../src/tree.ts";
import { BATCHABLE_METHODS, type BatchCall, type BatchResult } from "./worker-wire.ts";

/** The outcomes of a batch's calls in order; a change's outcome is final once its write is done. */
class BatchOutcomes {
	readonly #results: BatchResult[] = [];
	/** Indices of the changes waiting for each write; a burst shares a few writes. */
	readonly #waiting = new Map<Promise<void>, number[]>();

	done(value: string | undefined, written?: Promise<void>): void {
		if (written) {
			const indices = this.#waiting.get(written);
			if (indices) indices.push(this.#results.length);
			else this.#waiting.set(written, [this.#results.length]);
		}
		this.#results.push(value);
	}

	failed(error: unknown): void {
		this.#results.push({ error: errorToData(error) });
	}

	/** The results, once every write they wait for is done; a failed write fails its changes. */
	async settle(): Promise<BatchResult[]> {
		for (const [written, indices] of this.#waiting) {
			try {
				await written;
			} catch (error) {
				for (const index of indices) this.#results[index] = { error: errorToData(error) };
			}
		}
		return this.#results;
	}
}

/** `[handle, start, ends, roles]` of an `appendEncodedMessages` call (see `BatchCall`). */
type EncodedRun = [SessionHandle, number, number[], (string | undefined)[]];

/**
 * Throws an `InvalidArgumentError` (a `TypeError`) unless every call has a shape the client makes: a
 * batchable method (or `appendEncodedMessages` with one role per message) and a list of arguments. Checked
 * before anything is applied: a batch that cannot give each call its own outcome is refused whole, never
 * half applied.
 */
function assertShape(calls: unknown): asserts calls is BatchCall[] {
	if (!Array.isArray(calls)) throw new InvalidArgumentError("runBatch takes a list of calls");
	for (const [index, call] of calls.entries()) {
		const { method, args } = (call ?? {}) as Partial<BatchCall>;
		if (typeof method !== "string" || !Array.isArray(args)) {
			throw new InvalidArgumentError(`runBatch: call ${index} is not { method, args }`);
		}
		if (method === "appendEncodedMessages") {
			const [, , ends, roles] = args;
			if (!Array.isArray(ends) || !Array.isArray(roles) || ends.length !== roles.length) {
				throw new InvalidArgumentError(
					"appendEncodedMessages takes [handle, start, ends, roles], with as many roles as ends",
				);
			}
		} else if (!BATCHABLE_METHODS.includes(method)) {
			throw new InvalidArgumentError(`runBatch: ${method} cannot be batched`);
		}
	}
}

/**
 * Run batchable calls (appends, branch moves) in order, as if issued back to back, and report each
 * outcome. Messages come as `appendEncodedMessages` runs whose JSON text is in `encoded` (see
 * `BatchCall`), each message with its own outcome. The engine takes `encoded` over: it keeps views of it.
 * A batch whose shape is wrong is refused (an `InvalidArgumentError`) before any call is applied.
 */
export async function runBatch(engine: Engine, calls: BatchCall[], encoded?: Uint8Array): Promise<BatchResult[]> {
	assertShape(calls);
	const outcomes = new BatchOutcomes();
	for (const call of calls) {
		if (call.method === "appendEncodedMessages") {
			appendEncodedMessages(engine, call.args as EncodedRun, encoded, outcomes);
			continue;
		}
		try {
			const { value, written } = applyChange(engine, call);
			outcomes.done(value, written);
		} catch (error) {
			outcomes.failed(error);
		}
	}
	return outcomes.settle();
}

/** One batchable call, applied now; `written` (if any) resolves when it is on storage. */
function applyChange(
	engine: Engine,
	{ method, args }: BatchCall,
): { value: string | undefined; written?: Promise<void> } {
	const [handle, ...rest] = args as [SessionHandle, ...unknown[]];
	const session = sessionOfHandle(engine, handle);
	if (method === "branch") {
		session.branch(rest[0] as string);
		return { value: undefined };
	}
	if (method === "resetLeaf") {
		session.resetLeaf();
		return { value: undefined };
	}
	const { id, written } = session.change((tree) =>
		(tree[method as keyof SessionTree] as (...a: unknown[]) => string).apply(tree, rest),
	);
	return { value: id, written };
}

/** The messages of one `appendEncodedMessages` call, each appended on its own (see `BatchCall`). */
function appendEncodedMessages(
	engine: Engine,
	[handle, start, ends, roles]: EncodedRun,
	encoded: Uint8Array | undefined,
	outcomes: BatchOutcomes,
): void {
	let session: Session;
	let bytes: Uint8Array;
	try {
		session = sessionOfHandle(engine, handle);
		const last = ends[ends.length - 1] ?? start;
		if (!encoded || !Number.isInteger(start) || start < 0 || !(last >= start && last <= encoded.length)) {
			throw new InvalidArgumentError("appendEncodedMessages: the byte ranges do not fit the batch's buffer");
		}
		// A run that shares the buffer with others gets its own copy: a session keeps its messages' bytes
		// until it is read, and must not keep other sessions' bytes with them.
		bytes = start === 0 && last === encoded.length ? encoded : encoded.slice(start, last);
	} catch (error) {
		for (let index = 0; index < ends.length; index++) outcomes.failed(error);
		return;
	}
	let from = start;
	for (let index = 0; index < ends.length; index++) {
		const to = ends[index] as number;
		try {
			if (!(to >= from && from >= start && to - start <= bytes.length)) {
				throw new InvalidArgumentError("appendEncodedMessages: a byte range is out of order");
			}
			const json = bytes.subarray(from - start, to - start);
			const { id, written } = session.changeEncodedMessage(roles[index], json);
			outcomes.done(id, written);
		} catch (error) {
			outcomes.failed(error);
		}
		from = to;
	}
}
