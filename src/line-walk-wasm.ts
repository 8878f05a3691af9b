/**
 * The host of the line walk compiled to WebAssembly (`src/wasm/line-walk.as.ts`): it writes the walk's
 * key tables once, copies each line into the module's memory and reads back, per structural key, the
 * kind and span of its value. The walk is the same as the JavaScript one in `src/line-structure.ts`
 * (a test runs both on the same lines); it is there because it reads sixty-four bytes at a time where
 * JavaScript calls the runtime's byte search once per quote, and tool output has a quote or a backslash
 * every few bytes. Where WebAssembly cannot run (a page whose policy forbids compiling it) this is
 * `undefined` and the JavaScript walk does the work.
 * @module
 */
import { LINE_WALK_WASM_BASE64 } from "./line-walk-wasm-module.ts";
import { instantiateWasm } from "./wasm-instance.ts";

/** The layout the module keeps (see its source). */
const KINDS = 0;
const STARTS = 64;
const ENDS = 128;
const KEYS = 256;
const BETWEEN = 768;
const INPUT = 65536;
const PAGE = 65536;
/** Read past a line's end by the string search, a window of 64 bytes at a time (its bytes are masked off). */
const SLACK = 64;
/**
 * Longer lines are left to the JavaScript walk, so the module's memory (which never shrinks) stays
 * small: such lines are mostly one long string, where the runtime's byte search is as fast.
 */
export const WASM_WALK_MAX_LINE_BYTES: number = 8 << 20;

/** The kinds of value the walk reports for a structural key (0: the key is absent). */
/** A string without escapes: the span is its text, inside the quotes. */
export const VALUE_STRING = 1;
/** A string with an escape: the span includes the quotes. */
export const VALUE_ESCAPED = 2;
/** A number, `true`, `false` or `null` (or what the walk took for one). */
export const VALUE_SCALAR = 3;
/** An object: the entry's message (entered) or a replacement (taken as `{}`). */
export const VALUE_OBJECT = 4;

/** How a key's object value is read: not at all (the line is left to the JavaScript walk), entered, or taken. */
export type ObjectValue = "none" | "entered" | "taken";
const OBJECT_FLAGS: Record<ObjectValue, number> = { none: 0, entered: 1, taken: 2 };

export interface WalkTables {
	/** The entry's structural keys, each with how an object value of it is read. */
	topKeys: readonly { key: Uint8Array; object: ObjectValue }[];
	/** The structural keys of the entered object. */
	messageKeys: readonly Uint8Array[];
	/** 1 for each byte that may stand between strings. */
	between: Uint8Array;
}

/** The result of walking one line: its value spans by slot (top keys, then message keys), offsets into the line. */
export interface WalkedSpans {
	kinds: Int32Array;
	starts: Int32Array;
	ends: Int32Array;
}

interface WalkExports {
	memory: WebAssembly.Memory;
	walk(length: number, maxDepth: number): number;
}

/** The deepest nesting the module keeps track of (its bracket stack). */
const MODULE_MAX_DEPTH = 64512;

export interface WasmLineWalk {
	/**
	 * Walk `bytes`: the spans when it is one whole JSON object nested at most `maxDepth` levels, `false`
	 * when it is not, `undefined` when this walk cannot say (the line is too long for it, or nests deeper
	 * than `maxDepth` or than it keeps track of) and the JavaScript one must.
	 */
	walk(bytes: Uint8Array, maxDepth?: number): WalkedSpans | false | undefined;
}

/** A walk over `tables`, or `undefined` where WebAssembly cannot run. */
export function createWasmLineWalk(tables: WalkTables): WasmLineWalk | undefined {
	const exports = instantiateWasm<WalkExports>(LINE_WALK_WASM_BASE64);
	if (!exports) return undefined;
	const { memory } = exports;
	let bytes = new Uint8Array(memory.buffer);
	const keyCount = tables.topKeys.length + tables.messageKeys.length;
	let at = KEYS + 2;
	bytes[KEYS] = tables.topKeys.length;
	bytes[KEYS + 1] = tables.messageKeys.length;
	const keys = [...tables.topKeys, ...tables.messageKeys.map((key) => ({ key, object: "none" as const }))];
	for (const { key, object } of keys) {
		bytes[at] = key.length;
		bytes[at + 1] = OBJECT_FLAGS[object];
		bytes.set(key, at + 2);
		at += 2 + key.length;
	}
	if (at > BETWEEN || keyCount > 16) throw new Error("the line walk's key tables do not fit its layout");
	bytes.set(tables.between, BETWEEN);
	let spans = viewsOf(memory, keyCount);
	return {
		walk(line, maxDepth = MODULE_MAX_DEPTH) {
			if (line.length > WASM_WALK_MAX_LINE_BYTES) return undefined;
			const needed = INPUT + line.length + SLACK;
			if (needed > memory.buffer.byteLength) {
				try {
					memory.grow(Math.ceil((needed - memory.buffer.byteLength) / PAGE));
				} catch {
					return undefined; // no memory to be had: the JavaScript walk takes the line
				}
				bytes = new Uint8Array(memory.buffer);
				spans = viewsOf(memory, keyCount);
			}
			bytes.set(line, INPUT);
			const result = exports.walk(line.length, Math.min(maxDepth, MODULE_MAX_DEPTH));
			return result === 1 ? spans : result === 0 ? false : undefined;
		},
	};
}

function viewsOf(memory: WebAssembly.Memory, count: number): WalkedSpans {
	return {
		kinds: new Int32Array(memory.buffer, KINDS, count),
		starts: new Int32Array(memory.buffer, STARTS, count),
		ends: new Int32Array(memory.buffer, ENDS, count),
	};
}
