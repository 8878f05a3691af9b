/**
 * The client's view of the remote engine: the engine's methods, with appends and branch moves issued in
 * the same tick sent as one batch, and every call guarded by the worker's lifeline.
 * @module
 */
import * as Comlink from "comlink";
import type { Engine } from "../src/engine.ts";
import { type FlatTreeNode, unflattenTree } from "../src/flat-tree.ts";
import { MessageRuns, messageJson } from "./message-runs.ts";
import type { Lifeline } from "./worker-lifeline.ts";
import {
	BATCHABLE_METHODS,
	type BatchCall,
	ENGINE_METHODS,
	errorFromData,
	type HostedEngine,
	isBatchFailure,
	linkingSignals,
} from "./worker-wire.ts";

/** Calls (messages counted one by one) per `runBatch` message at most. */
const BATCH_SIZE = 500;

const engineMethods: ReadonlySet<string> = new Set(ENGINE_METHODS);

/**
 * The remote engine, with appends and branch moves issued in the same tick sent as one message
 * (`runBatch`): one round trip and one write for a burst, instead of one each. Any other call first sends
 * the pending batch, so calls reach the engine in the order they were made. Messages travel as JSON text
 * in one transferred buffer per batch (`appendEncodedMessages`, see message-runs.ts), so a message that
 * cannot be written fails its own call, here, and the worker neither rebuilds the message nor encodes it
 * again.
 */
export function batching(remote: Comlink.Remote<HostedEngine>, lifeline: Lifeline): Comlink.Remote<Engine> {
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
			let answer: Promise<unknown>;
			const links: (() => void)[] = [];
			try {
				answer = linkingSignals(links, () => lifeline.guard((call as (...a: unknown[]) => Promise<unknown>)(...args)));
			} catch (error) {
				// An argument that could not be sent: a rejection, like any other failure of the call.
				answer = Promise.reject(error);
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
	}) as unknown as Comlink.Remote<Engine>;
}
