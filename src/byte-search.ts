/**
 * Finding a byte far ahead (the next line feed of a chunk). `Uint8Array#indexOf` reads a byte at a time in
 * V8 (about 0.6 ns a byte here), while Node's `Buffer#indexOf` is `memchr` (about 0.1 ns a byte) and takes
 * any `Uint8Array`: on Node the line splitters use it. Bun's own `indexOf` is as fast already, and Deno's
 * `Buffer` is a slower polyfill, so elsewhere it stays `Uint8Array#indexOf`.
 * @module
 */

import { nodeBufferPrototype } from "./runtime.ts";

type IndexOf = (this: Uint8Array, byte: number, from?: number) => number;

function memchrIndexOf(): IndexOf | undefined {
	return nodeBufferPrototype<{ indexOf: IndexOf }>()?.indexOf;
}

const fastIndexOf: IndexOf = memchrIndexOf() ?? Uint8Array.prototype.indexOf;

/** The index of the first `byte` in `bytes` from `from` on, or -1. For searches that go far: a call costs more than a step. */
export function indexOfByte(bytes: Uint8Array, byte: number, from = 0): number {
	return fastIndexOf.call(bytes, byte, from);
}

/** Which search `indexOfByte` uses here (for tests). */
export const BYTE_SEARCH: "memchr" | "typed-array" =
	fastIndexOf === Uint8Array.prototype.indexOf ? "typed-array" : "memchr";
