/**
 * The worker client's side of messages sent as JSON bytes (see `src/encoded-message.ts`): each appended
 * message becomes its JSON text on the caller's thread, consecutive messages to one session go as one
 * `appendEncodedMessages` call, and a batch's texts travel as one buffer of UTF-8, transferred.
 * @module
 */
import type { BatchCall } from "../src/engine.ts";
import { unencodableEntryError } from "../src/session.ts";

/**
 * A message's JSON text. `undefined` for a value that is not written as a JSON object (it is sent as it
 * is); a `TypeError` like the engine's for one that cannot be written (a cycle, a BigInt).
 */
export function messageJson(message: unknown): string | undefined {
	if (typeof message !== "object" || message === null) return undefined;
	let json: unknown;
	try {
		json = JSON.stringify(message);
	} catch (error) {
		throw unencodableEntryError("message", error);
	}
	return typeof json === "string" && json.startsWith("{") ? json : undefined;
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
	return { bytes: bytes.subarray(0, at), ends };
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
