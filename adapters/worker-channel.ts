/**
 * The engine's own channel, on which no call waits forever for a message that arrived but could not be
 * read. When a message cannot be deserialised (nested deeper than the receiving thread's stack allows),
 * all the receiver gets is a `messageerror` event (Node, Deno) or a message without data (Chromium),
 * neither naming the message; Comlink ignores both, so the call it belonged to would never settle. Here each side, right after posting a message that
 * might fail so (one that is not plain data), posts a small note naming it. A `messageerror` followed by
 * such a note is that message's, and its call rejects with `UnreadableMessageError`: on the caller's side
 * for an answer, and in the worker for a call's arguments (the worker answers the call with the error).
 * Plain answers (an id, a list of ids: most of them, and every batch of appends that succeeds) cost nothing.
 * @module
 */
import type { Endpoint } from "comlink";
import { UnreadableMessageError } from "../src/errors.ts";
import { thrownToWire } from "./worker-wire.ts";

/** The note after a message that might not arrive; it has no `id`, so Comlink would pass over it. */
interface Note {
	sent: string;
	method?: string;
}

/** A Comlink message, as far as it is read here. */
interface Message {
	id?: string;
	type?: string;
	name?: string;
	path?: string[];
	value?: unknown;
	argumentList?: { type: string; value: unknown }[];
}

type Listener = (event: MessageEvent) => void;

/**
 * Deno's MessagePort stops receiving after a `messageerror` (Deno 2.9: its receive loop returns): the
 * port is then moved to a new port object, by sending it to ourselves, which receives from where it was.
 */
const portStopsAfterMessageError = "Deno" in globalThis;

const isPrimitive = (value: unknown): boolean => typeof value !== "object" || value === null;

/** Whether a wire value surely deserialises: a primitive, or a list of primitives (`runBatch`'s ids). */
function plain(wire: { type?: string; value?: unknown }): boolean {
	if (wire.type !== "RAW") return false;
	const { value } = wire;
	return isPrimitive(value) || (Array.isArray(value) && value.every(isPrimitive));
}

function mayFailToArrive(message: Message): boolean {
	if (message.argumentList) return !message.argumentList.every(plain);
	return message.type === "RAW" || message.type === "HANDLER" ? !plain(message) : false;
}

/**
 * `port` as a Comlink endpoint for one side of the engine's channel: `"caller"` (it sends calls, the
 * client) or `"host"` (it answers them, the worker). `close` closes the port.
 */
export function guardedEndpoint(initial: MessagePort, side: "caller" | "host"): Endpoint & { close(): void } {
	let port = initial;
	const listeners = new Set<Listener>();
	/** The host's calls waiting for their answer, by id: the method, for the note. */
	const methods = new Map<string, string>();
	let lost = false;
	/** Messages to post once the port is moved (see `portStopsAfterMessageError`). */
	let held: [Message | Note, Transferable[]][] | undefined;
	let closed = false;

	const post = (message: Message | Note, transfer: Transferable[] = []) => {
		if (held) held.push([message, transfer]);
		else port.postMessage(message, transfer);
	};
	/** Settle call `id` with `error`: here, through Comlink's own listener (caller), or by answering it (host). */
	const fail = (id: string, error: Error) => {
		if (side === "caller") {
			const data: Message = { id, type: "HANDLER", name: "throw", value: { isError: false, value: error } };
			for (const listener of listeners) listener({ data } as MessageEvent);
		} else {
			post({ id, type: "HANDLER", name: "throw", value: thrownToWire(error) });
		}
	};
	const onLost = ({ sent, method }: Note) => {
		fail(sent, new UnreadableMessageError(method, side === "caller" ? "answer" : "arguments"));
	};
	const onMessage = (event: MessageEvent) => {
		const data = event.data as (Message & Partial<Note>) | null | undefined;
		if (data === null || data === undefined) {
			// Chromium delivers a message it cannot deserialise as one with no data (Comlink never sends one).
			lost = true;
			return;
		}
		if (typeof data.sent === "string" && data.id === undefined) {
			// A note: the message just before it arrived unread if a messageerror came in between.
			if (lost) onLost(data as Note);
			lost = false;
			return;
		}
		lost = false;
		if (side === "host" && data.id !== undefined && data.path) methods.set(data.id, data.path.join("."));
		for (const listener of listeners) listener(event);
	};
	const onMessageError = () => {
		lost = true;
		if (portStopsAfterMessageError) move();
	};
	const listen = (target: MessagePort) => {
		target.addEventListener("message", onMessage);
		target.addEventListener("messageerror", onMessageError);
	};
	const move = () => {
		const { port1, port2 } = new MessageChannel();
		held = [];
		port2.onmessage = (event) => {
			port = event.data as MessagePort;
			port1.close();
			port2.close();
			const waiting = held ?? [];
			held = undefined;
			if (closed) {
				port.close();
				return;
			}
			listen(port);
			port.start();
			for (const [message, transfer] of waiting) {
				try {
					port.postMessage(message, transfer);
				} catch (error) {
					// What posting it at once would have thrown: its call fails, as it would have then.
					if ("id" in message && message.id !== undefined) fail(message.id, error as Error);
				}
			}
		};
		port1.postMessage(port, [port]);
	};

	// Started by Comlink (`start`), once its own listener is here.
	listen(port);
	return {
		postMessage(message: Message, transfer?: Transferable[]) {
			post(message, transfer);
			const { id } = message;
			if (id === undefined) return;
			let method: string | undefined;
			if (side === "host") {
				method = methods.get(id);
				methods.delete(id);
			} else method = message.path?.join(".");
			// Posted only once the message itself went: one that could not be sent rejected its call already.
			if (mayFailToArrive(message)) post({ sent: id, method });
		},
		addEventListener(_type: string, listener: EventListenerOrEventListenerObject) {
			listeners.add(listener as Listener);
		},
		removeEventListener(_type: string, listener: EventListenerOrEventListenerObject) {
			listeners.delete(listener as Listener);
		},
		start: () => {
			if (!held) port.start();
		},
		close: () => {
			closed = true;
			port.close();
		},
	};
}
