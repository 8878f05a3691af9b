/**
 * The worker client's side of messages sent as JSON bytes (see `Session.changeEncodedMessage`): each appended
 * message becomes its JSON text on the caller's thread, consecutive messages to one session go as one
 * `appendEncodedMessages` call, and a batch's texts travel as one buffer of UTF-8, transferred.
 * @module
 */
import { unencodableEntryError } from "../src/errors.ts";
import type { BatchCall } from "./worker-wire.ts";

/**
 * A message as it will be written: `{ json }`, its JSON text, when that is an object's (the usual case);
 * otherwise `{ value }`, what its JSON stands for (a `toJSON` that gives a string, a function that gives
 * nothing), which then crosses by structured clone and is written the same. A `TypeError` like the
 * engine's for a message that cannot be written (a cycle, a BigInt).
 */
export function messageJson(message: unknown): { json: string } | { value: unknown } {
	let json: string | undefined;
	try {
		json = JSON.stringify(message) as string | undefined;
	} catch (error) {
		throw unencodableEntryError("message", error);
	}
	if (json === undefined) return { value: undefined };
	return json.startsWith("{") ? { json } : { value: JSON.parse(json) };
}

const textEncoder = new TextEncoder();

/** The UTF-8 bytes of `texts` one after another, and where each ends. */
export function encodeTexts(texts: readonly string[], chars: number): { bytes: Uint8Array; ends: number[] } {
	let bytes = new Uint8Array(chars + (chars >> 2) + 64);
	const ends: number[] = [];
	let at = 0;
	for (const text of texts) {
		// Room for the worst case (3 bytes per UTF-16 unit), so each text is encoded in one go.
		if (bytes.length - at < text.length * 3) {
			const grown = new Uint8Array(Math.max(bytes.length * 2, at + text.length * 3));
			grown.set(bytes.subarray(0, at));
			bytes = grown;
		}
		at += textEncoder.encodeInto(text, bytes.subarray(at)).written;
		ends.push(at);
	}
	// Exactly the bytes used: the worker keeps this buffer while it keeps any of these messages.
	return { bytes: at === bytes.length ? bytes : bytes.slice(0, at), ends };
}

interface Run {
	/** `appendEncodedMessages` with `[handle, start, ends, roles]`; `start` and `ends` are set by `take`. */
	call: BatchCall;
	handle: unknown;
	roles: (string | undefined)[];
}

/** The messages of the batch being gathered, as runs of calls and their texts. */
export class MessageRuns {
	#runs: Run[] = [];
	#texts: string[] = [];
	#chars = 0;

	/** Add a message to `calls`: to the run that ends them if it is to the same session, or as a new run. */
	add(calls: BatchCall[], handle: unknown, json: string, role: unknown): void {
		let run = this.#runs[this.#runs.length - 1];
		if (!run || run.handle !== handle || calls[calls.length - 1] !== run.call) {
			run = { call: { method: "appendEncodedMessages", args: [handle, 0, [], []] }, handle, roles: [] };
			run.call.args[3] = run.roles;
			this.#runs.push(run);
			calls.push(run.call);
		}
		run.roles.push(typeof role === "string" ? role : undefined);
		this.#texts.push(json);
		this.#chars += json.length;
	}

	/** Every text added, as one buffer, with each run's byte ranges filled in; then start afresh. */
	take(): Uint8Array | undefined {
		if (this.#texts.length === 0) return undefined;
		const { bytes, ends } = encodeTexts(this.#texts, this.#chars);
		let first = 0;
		for (const { call, roles } of this.#runs) {
			call.args[1] = first === 0 ? 0 : ends[first - 1];
			call.args[2] = ends.slice(first, first + roles.length);
			first += roles.length;
		}
		this.#runs = [];
		this.#texts = [];
		this.#chars = 0;
		return bytes;
	}
}
