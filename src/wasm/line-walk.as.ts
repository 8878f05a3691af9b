// The walk of `src/line-structure.ts` in AssemblyScript, compiled to WebAssembly by
// `npm run build:wasm` into `src/line-walk-wasm-module.ts`. It does the byte work of a lazy open: it proves
// that a line is one whole JSON object (strings skipped from quote to unescaped quote sixty-four bytes at a
// time, brackets matched, only JSON punctuation between strings) and says where the values of the
// structural keys are. The host (`src/line-walk-wasm.ts`) writes the key tables, copies each line to INPUT,
// and decodes the few values from the spans this leaves in the slots. Every rule here mirrors one of
// the JavaScript walk in `src/line-structure.ts`; a test runs both on the same lines.

// Slots, one per structural key: kind (i32) at SLOTS, span start at SLOTS + 64, end at SLOTS + 128.
const SLOTS: usize = 0;
const STARTS: usize = 64;
const ENDS: usize = 128;
const MAX_SLOTS: i32 = 16;
// Key table written by the host: [top count][message count], then per key [length][flags][bytes].
const KEYS: usize = 256;
// 256 bytes written by the host: 1 where a byte may stand between strings.
const BETWEEN: usize = 768;
// The brackets open at each depth.
const STACK: usize = 1024;
const MAX_DEPTH: i32 = 64512;
// Where the host copies the line (64 bytes of slack after it: the string search reads whole windows).
const INPUT: usize = 65536;

/** A key whose value, when an object, is entered: its keys are matched against the message keys. */
const ENTERED: u8 = 1;
/** A key whose value, when an object, is taken as a value (`{}`). */
const OBJECT_VALUE: u8 = 2;

const KIND_STRING: i32 = 1; // a string without escapes: its text is the span inside the quotes
const KIND_ESCAPED: i32 = 2; // a string with an escape: the span includes the quotes
const KIND_SCALAR: i32 = 3; // a number, true, false or null (or what looks like one)
const KIND_OBJECT: i32 = 4; // an object (entered or taken as a value)

@inline function isWhitespace(byte: u32): bool {
	return byte == 0x20 || byte == 0x09 || byte == 0x0d;
}

@inline function setSlot(slot: i32, kind: i32, start: usize, end: usize): void {
	const at = <usize>(slot << 2);
	store<i32>(SLOTS + at, kind);
	store<i32>(STARTS + at, <i32>(start - INPUT));
	store<i32>(ENDS + at, <i32>(end - INPUT));
}

/** Where key `index` of the table begins (its length byte). */
function keyAt(index: i32): usize {
	let at: usize = KEYS + 2;
	for (let k = 0; k < index; k++) at += 2 + <usize>load<u8>(at);
	return at;
}

/** The slot of the key `[start, end)` among `count` keys from `first`, or -1. */
function keySlot(start: usize, end: usize, first: i32, count: i32): i32 {
	const length = <u32>(end - start);
	let at = keyAt(first);
	for (let index = first; index < first + count; index++) {
		const keyLength = <u32>load<u8>(at);
		if (keyLength == length && memory.compare(at + 2, start, length) == 0) return index;
		at += 2 + <usize>keyLength;
	}
	return -1;
}

function hasBackslash(start: usize, end: usize): bool {
	for (let at = start; at < end; at++) if (load<u8>(at) == 0x5c) return true;
	return false;
}

/** The bits of a 64-byte window's bytes equal to `byte`, bit k for the byte at `at + k`. */
@inline function bitsOf(at: usize, byte: v128): u64 {
	return (
		<u64>i8x16.bitmask(i8x16.eq(v128.load(at), byte)) |
		(<u64>i8x16.bitmask(i8x16.eq(v128.load(at, 16), byte)) << 16) |
		(<u64>i8x16.bitmask(i8x16.eq(v128.load(at, 32), byte)) << 32) |
		(<u64>i8x16.bitmask(i8x16.eq(v128.load(at, 48), byte)) << 48)
	);
}

const EVEN_BITS: u64 = 0x5555555555555555;

/** Whether the byte after the last window's last byte is escaped (its odd run of backslashes ran to the end). */
let escapeCarried: u64 = 0;

/**
 * The bytes of a window that a backslash escapes, given its backslashes: all at once, without visiting
 * them. A run of backslashes escapes the byte after it when the run is odd; a run starting at an even bit
 * is odd when it ends at an odd one, and adding the run's start bit to the run carries exactly past its
 * end, so the sum tells every run's parity together (runs starting at odd bits are flipped first, so that
 * one rule serves both). The run still open at the window's end is carried into the next window.
 */
@inline function escapedBits(backslashes: u64): u64 {
	const carried = escapeCarried;
	const starting = backslashes & ~carried;
	const followsBackslash = (starting << 1) | carried;
	const oddStarts = starting & ~EVEN_BITS & ~followsBackslash;
	const sum = oddStarts + starting;
	escapeCarried = sum < starting ? 1 : 0; // the addition overflowed: the run goes on into the next window
	return (EVEN_BITS ^ (sum << 1)) & followsBackslash;
}

/**
 * The closing quote of a string whose text starts at `from`: the next quote not escaped, or 0. Sixty-four
 * bytes at a time: the window's quotes and backslashes as bit masks, the escaped bytes computed from them
 * at once (`escapedBits`), the first quote left is the one.
 */
function closingQuote(from: usize, end: usize): usize {
	const quote = i8x16.splat(0x22);
	const backslash = i8x16.splat(0x5c);
	escapeCarried = 0;
	for (let at = from; at < end; at += 64) {
		const quotes = bitsOf(at, quote);
		const backslashes = bitsOf(at, backslash);
		const unescaped = backslashes == 0 && escapeCarried == 0 ? quotes : quotes & ~escapedBits(backslashes);
		if (unescaped != 0) {
			const close = at + <usize>ctz(unescaped);
			return close < end ? close : 0;
		}
	}
	return 0;
}

/** A value that is not a string, from its gap `[from, to)` after the colon; nothing when the gap is empty. */
function takeScalar(slot: i32, from: usize, to: usize): void {
	let start = from;
	while (start < to && (load<u8>(start) == 0x3a || isWhitespace(load<u8>(start)))) start++;
	if (start < to) setSlot(slot, KIND_SCALAR, start, to);
}

/**
 * Walk the line of `length` bytes at INPUT: 1 when it is one whole JSON object (the slots then hold the
 * structural values), 0 when it is not, -1 when it nests deeper than `maxDepth` (at most MAX_DEPTH, what
 * this walk keeps track of).
 */
export function walk(length: i32, maxDepth: i32): i32 {
	const depthLimit = maxDepth < MAX_DEPTH ? maxDepth : MAX_DEPTH;
	const end = INPUT + <usize>length;
	const topCount = <i32>load<u8>(KEYS);
	const messageCount = <i32>load<u8>(KEYS + 1);
	for (let slot = 0; slot < MAX_SLOTS; slot++) store<i32>(SLOTS + (<usize>slot << 2), 0);
	let at = INPUT;
	while (at < end && isWhitespace(load<u8>(at))) at++;
	if (at >= end || load<u8>(at) != 0x7b) return 0;
	let depth: i32 = 0;
	let messageDepth: i32 = -1;
	let pending: i32 = -1;
	let last: u32 = 0;
	while (true) {
		// The gap between strings: brackets, and the values of pending keys that are not strings.
		let k = at;
		for (; k < end; k++) {
			const byte = <u32>load<u8>(k);
			if (byte == 0x22) break;
			if (load<u8>(BETWEEN + byte) == 0) return 0;
			if (!isWhitespace(byte)) last = byte;
			if (byte == 0x7b || byte == 0x5b) {
				if (pending >= 0) {
					const flags = pending < topCount ? load<u8>(keyAt(pending) + 1) : 0;
					if (byte == 0x7b && flags == ENTERED) {
						for (let slot = topCount; slot < topCount + messageCount; slot++)
							store<i32>(SLOTS + (<usize>slot << 2), 0);
						setSlot(pending, KIND_OBJECT, k, k + 1);
						messageDepth = depth + 1;
					} else if (byte == 0x7b && flags == OBJECT_VALUE) setSlot(pending, KIND_OBJECT, k, k + 1);
					else return 0;
					pending = -1;
				}
				if (depth >= depthLimit) return -1;
				store<u8>(STACK + <usize>depth, <u8>byte);
				depth++;
			} else if (byte == 0x7d || byte == 0x5d) {
				// A closing bracket must close the last one opened, of its own kind.
				if (depth == 0 || <u32>load<u8>(STACK + <usize>(depth - 1)) != byte - 2) return 0;
				if (pending >= 0) takeScalar(pending, at, k);
				pending = -1;
				if (depth == messageDepth) messageDepth = -1;
				depth--;
				if (depth == 0) {
					// The object closes: only whitespace may follow.
					let rest = k + 1;
					while (rest < end && isWhitespace(load<u8>(rest))) rest++;
					return rest == end ? 1 : 0;
				}
			} else if (byte == 0x2c && pending >= 0) {
				takeScalar(pending, at, k);
				pending = -1;
			}
		}
		if (k >= end) return 0; // the line ends with a bracket open
		const open = k;
		if (last != 0x3a && last != 0x2c && last != 0x7b && last != 0x5b) return 0;
		const close = closingQuote(open + 1, end);
		if (close == 0) return 0; // the line ends inside a string
		let next = close + 1;
		while (next < end && isWhitespace(load<u8>(next))) next++;
		if (next < end && load<u8>(next) == 0x3a) {
			// A key: of the entry (depth 1) or of its message. One written with an escape is left to a full parse.
			if ((depth == 1 || depth == messageDepth) && hasBackslash(open + 1, close)) return 0;
			if (depth == 1) pending = keySlot(open + 1, close, 0, topCount);
			else if (depth == messageDepth) pending = keySlot(open + 1, close, topCount, messageCount);
			else pending = -1;
			at = next + 1;
			last = 0x3a;
		} else {
			if (pending >= 0) {
				const escaped = hasBackslash(open + 1, close);
				if (escaped) setSlot(pending, KIND_ESCAPED, open, close + 1);
				else setSlot(pending, KIND_STRING, open + 1, close);
				pending = -1;
			}
			at = close + 1;
			last = 0x22;
		}
	}
}
