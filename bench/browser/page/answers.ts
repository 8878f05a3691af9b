/**
 * Whole answers of the browser benchmark, computed the same way in the page (main.ts) and in Node
 * (bench/browser.ts, from `SessionTree`): a digest of everything an open holds, and the lines appends
 * added to a file with what each implementation draws afresh (ids, times) told apart from the rest. No
 * DOM and no Node here: both import it.
 * @module
 */
import type { AgentMessage, SessionTreeNode } from "../../../src/index.ts";

/** The timestamp of the page's first appended message, less one (each append takes the next millisecond). */
const CLOCK = Date.UTC(2030, 0, 1);

/** The page's `i`th appended message (counted from the page's start): a message of the list, its own time. */
export function appendedMessage(messages: readonly AgentMessage[], i: number): AgentMessage {
	return { ...messages[i % messages.length], timestamp: CLOCK + i + 1 } as AgentMessage;
}

const hex = (digest: ArrayBuffer): string =>
	Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");

/** Bytes hashed at a time by `digestLines`. */
const CHUNK_BYTES = 1 << 20;

/**
 * SHA-256 (Web Crypto: the page's and Node's alike) of the lines, each ended by a newline, about a megabyte
 * at a time. Each line is encoded into one buffer: encoding a string of many lines joined took 2.4 s for
 * 100 MB in Chromium (0.8 s in Node).
 */
async function digestLines(lines: Iterable<string>): Promise<string> {
	const encoder = new TextEncoder();
	const parts: string[] = [];
	let buffer = new Uint8Array(CHUNK_BYTES);
	let used = 0;
	const flush = async () => {
		// Web Crypto copies what it hashes when called: the buffer is free again at once.
		parts.push(hex(await crypto.subtle.digest("SHA-256", buffer.subarray(0, used))));
		used = 0;
	};
	for (const line of lines) {
		const text = `${line}\n`;
		const most = text.length * 3; // UTF-8 bytes of a UTF-16 code unit, at most
		if (used + most > buffer.length) {
			await flush();
			if (most > buffer.length) buffer = new Uint8Array(most);
		}
		used += encoder.encodeInto(text, buffer.subarray(used)).written;
	}
	await flush();
	return hex(await crypto.subtle.digest("SHA-256", encoder.encode(parts.join(""))));
}

/**
 * The whole of an opened session: its header, leaf and name, then `getTree()` in pre-order, every node's
 * entry (as JSON), label, label time and number of children (so the shape too).
 */
export function wholeDigest(
	header: unknown,
	leafId: string | null,
	name: string | undefined,
	roots: readonly SessionTreeNode[],
): Promise<string> {
	function* lines(): Generator<string> {
		yield JSON.stringify([header, leafId, name ?? null]);
		const stack = [...roots].reverse();
		for (let node = stack.pop(); node; node = stack.pop()) {
			yield `${JSON.stringify(node.entry)} ${JSON.stringify([node.label ?? null, node.labelTimestamp ?? null])} ${node.children.length}`;
			for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as SessionTreeNode);
		}
	}
	return digestLines(lines());
}

/**
 * Appended lines (without their newlines) as they must be whatever wrote them: each as `JSON.stringify`
 * writes its record; the ids numbered in order (a parent appended before by its number, any other kept)
 * and the entry's time by its shape (digits masked: every implementation takes the time of the append).
 * A string says what is wrong instead.
 */
export function normalisedAppends(lines: readonly string[]): string[] | string {
	const numbers = new Map<string, string>();
	const out: string[] = [];
	for (const [at, line] of lines.entries()) {
		let record: { id: string; parentId: string | null; timestamp: string };
		try {
			record = JSON.parse(line);
		} catch {
			return `appended line ${at + 1} is no JSON: ${line.slice(0, 120)}`;
		}
		if (JSON.stringify(record) !== line) return `appended line ${at + 1} is not as JSON.stringify writes it`;
		numbers.set(record.id, `#${numbers.size}`);
		const parentId = record.parentId === null ? null : (numbers.get(record.parentId) ?? record.parentId);
		const timestamp = String(record.timestamp).replace(/\d/g, "0");
		out.push(JSON.stringify({ ...record, id: numbers.get(record.id), parentId, timestamp }));
	}
	return out;
}
