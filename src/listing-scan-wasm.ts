/**
 * The host of the listing's line scan compiled to WebAssembly (`src/wasm/listing-scan.as.ts`): it copies a
 * line into the module's memory and runs `isPlainEntryJson` or `messageFields` there, reading back what
 * the module found. Where WebAssembly cannot run, `createWasmListingScan` gives `undefined` and the
 * JavaScript scans of `src/listing-json-scan.ts` do the work.
 * @module
 */
import type { MessageFields, StringSpan } from "./listing-json-scan.ts";
import { LISTING_SCAN_WASM_BASE64 } from "./listing-scan-wasm-module.ts";
import { instantiateWasm } from "./wasm-instance.ts";

/** The layout the module keeps (see its source). */
const OUT = 1024;
const BLOCKS = OUT + 32;
const INPUT = 65536;
const PAGE = 65536;
/** Read past a line's end by the vector search (its bytes are masked off). */
const SLACK = 16;
/** Longer lines are left to the JavaScript scans, so the module's memory (which never shrinks) stays small. */
const MAX_LINE_BYTES = 8 << 20;

interface ScanExports {
	memory: WebAssembly.Memory;
	plainEntry(length: number): number;
	messageFields(length: number): number;
}

export interface WasmListingScan {
	/** `isPlainEntryJson(bytes, start, end)`, or `undefined` when this scan cannot say (the JavaScript one must). */
	isPlainEntryJson(bytes: Uint8Array, start: number, end: number): boolean | undefined;
	/** `messageFields(bytes, start, end)`, or `undefined` when this scan cannot say. */
	messageFields(bytes: Uint8Array, start: number, end: number): MessageFields | null | undefined;
}

/** A scan, or `undefined` where WebAssembly cannot run. */
export function createWasmListingScan(): WasmListingScan | undefined {
	const exports = instantiateWasm<ScanExports>(LISTING_SCAN_WASM_BASE64);
	if (!exports) return undefined;
	const { memory } = exports;
	let bytesView = new Uint8Array(memory.buffer);
	let out = new Int32Array(memory.buffer, OUT, (INPUT - OUT) >> 2);

	/** Copy the line in; false when it is too long for the module or no memory can be had. */
	function load(bytes: Uint8Array, start: number, end: number): boolean {
		const length = end - start;
		if (length > MAX_LINE_BYTES) return false;
		const needed = INPUT + length + SLACK;
		if (needed > memory.buffer.byteLength) {
			try {
				memory.grow(Math.ceil((needed - memory.buffer.byteLength) / PAGE));
			} catch {
				return false;
			}
			bytesView = new Uint8Array(memory.buffer);
			out = new Int32Array(memory.buffer, OUT, (INPUT - OUT) >> 2);
		}
		bytesView.set(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end), INPUT);
		return true;
	}

	/** The span at `index` of `out` (three numbers), moved to the line's place in its bytes. */
	function spanAt(index: number, start: number): StringSpan | null {
		const spanStart = out[index] as number;
		if (spanStart < 0) return null;
		return { start: spanStart + start, end: (out[index + 1] as number) + start, escaped: out[index + 2] === 1 };
	}

	return {
		isPlainEntryJson(bytes, start, end) {
			return load(bytes, start, end) ? exports.plainEntry(end - start) === 1 : undefined;
		},
		messageFields(bytes, start, end) {
			if (!load(bytes, start, end)) return undefined;
			const found = exports.messageFields(end - start);
			if (found !== 1) return found === 0 ? null : undefined;
			const entryTimestamp = spanAt(0, start) as StringSpan;
			const timestampStart = out[3] as number;
			const timestamp: [number, number] | null =
				timestampStart < 0 ? null : [timestampStart + start, (out[4] as number) + start];
			const blocksAt = (BLOCKS - OUT) >> 2;
			let content: MessageFields["content"];
			if (out[5] === 1) {
				const count = out[6] as number;
				content = [];
				for (let k = 0; k < count; k++) content.push(spanAt(blocksAt + k * 3, start));
			} else content = spanAt(blocksAt, start) as StringSpan;
			return { entryTimestamp, timestamp, content };
		},
	};
}
