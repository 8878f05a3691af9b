// The byte scans of `src/listing-json-scan.ts` in AssemblyScript, compiled to WebAssembly by
// `npm run build:wasm` into `src/listing-scan-wasm-module.ts`: `plainEntry` is `isPlainEntryJson` and
// `messageFields` is `messageFields`, rule for rule, over a line the host has copied to INPUT. They are
// here because a listing validates every byte of every session (most of them in strings, with a quote or
// a backslash every few bytes), and JavaScript pays for each token of the walk; a test holds the two
// implementations to the same answers on random lines. No static data: it would sit where INPUT is.

// The containers open at each depth, one byte each.
const STACK: usize = 0;
const MAX_DEPTH: i32 = 512;
// What `messageFields` found: i32 fields (see the host, `src/listing-scan-wasm.ts`), then the text blocks.
const OUT: usize = 1024;
const BLOCKS: usize = OUT + 32;
// Where the host copies the line (16 bytes of slack after it: the string search reads whole vectors).
const INPUT: usize = 65536;
const MAX_BLOCKS: i32 = <i32>((INPUT - BLOCKS) / 12);

// Containers.
const OBJECT: u8 = 1;
const ARRAY: u8 = 2;
const MESSAGE_OBJECT: u8 = 3;
const CONTENT_ARRAY: u8 = 4;
const BLOCK_OBJECT: u8 = 5;

// What the walk expects next.
const VALUE: i32 = 0;
const FIRST_KEY: i32 = 1;
const KEY: i32 = 2;
const FIRST_ELEMENT: i32 = 3;
const AFTER_VALUE: i32 = 4;

// What the value about to be read is (`messageFields`); also the bits of `seen`.
const OTHER_VALUE: i32 = 0;
const ENTRY_TIMESTAMP: i32 = 1;
const MESSAGE_VALUE: i32 = 2;
const ROLE_VALUE: i32 = 3;
const CONTENT_VALUE: i32 = 4;
const TIMESTAMP_VALUE: i32 = 5;
const BLOCK_TYPE: i32 = 6;
const BLOCK_TEXT: i32 = 7;
const BLOCK_VALUE: i32 = 8;

/** Set by `stringEnd`: whether the string it skipped had an escape. */
let hadEscape: bool = false;

@inline function isWhitespace(byte: u32): bool {
	return byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d;
}

@inline function isDigit(byte: u32): bool {
	return byte - 0x30 < 10;
}

@inline function skipWhitespace(at: usize, end: usize): usize {
	while (at < end && isWhitespace(<u32>load<u8>(at))) at++;
	return at;
}

// Words compared as little-endian loads.
@inline function isType(start: usize, end: usize): bool {
	return end - start == 4 && load<u32>(start) == 0x65707974;
}
@inline function isMessage(start: usize, end: usize): bool {
	return end - start == 7 && load<u32>(start) == 0x7373656d && load<u16>(start + 4) == 0x6761 && load<u8>(start + 6) == 0x65;
}
@inline function isRole(start: usize, end: usize): bool {
	return end - start == 4 && load<u32>(start) == 0x656c6f72;
}
@inline function isTimestamp(start: usize, end: usize): bool {
	return end - start == 9 && load<u32>(start) == 0x656d6974 && load<u32>(start + 4) == 0x6d617473 && load<u8>(start + 8) == 0x70;
}
@inline function isContent(start: usize, end: usize): bool {
	return end - start == 7 && load<u32>(start) == 0x746e6f63 && load<u16>(start + 4) == 0x6e65 && load<u8>(start + 6) == 0x74;
}
@inline function isText(start: usize, end: usize): bool {
	return end - start == 4 && load<u32>(start) == 0x74786574;
}

/**
 * The address just after the string whose body starts at `from`, or 0 when no valid string ends before
 * `end`: no control character, every backslash one of JSON's escapes (`\u` with four hex digits); bytes of
 * invalid UTF-8 are no reason to refuse (`JSON.parse` reads them as U+FFFD). Sixteen bytes at a time. Tool
 * output has a quote or a backslash every ten bytes or so, so a block's escapes are judged at once: each
 * backslash escapes the byte after it, which must be one of JSON's escape letters, and the first quote not
 * escaped ends the string. A block with two backslashes in a row or a `\u` is taken byte by byte.
 */
function stringEnd(from: usize, end: usize): usize {
	const quote = i8x16.splat(0x22);
	const backslash = i8x16.splat(0x5c);
	const space = i8x16.splat(0x20);
	hadEscape = false;
	let at = from;
	while (at < end) {
		const bytes = v128.load(at);
		const left = end - at;
		const inside: u32 = left < 16 ? (<u32>1 << <u32>left) - 1 : 0xffff;
		let quotes = <u32>i8x16.bitmask(i8x16.eq(bytes, quote)) & inside;
		let backslashes = <u32>i8x16.bitmask(i8x16.eq(bytes, backslash)) & inside;
		let controls = <u32>i8x16.bitmask(i8x16.lt_u(bytes, space)) & inside;
		if (backslashes == 0) {
			const ends = quotes | controls;
			if (ends == 0) {
				at += 16;
				continue;
			}
			const first = ctz(ends);
			return (quotes & (<u32>1 << first)) != 0 ? at + <usize>first + 1 : 0;
		}
		const special = quotes | backslashes | controls;
		if ((backslashes & (backslashes << 1)) == 0) {
			// A backslash that is the block's last byte starts the next block, with the letter it escapes.
			let step: usize = 16;
			if ((backslashes & 0x8000) != 0) {
				step = 15;
				quotes &= 0x7fff;
				controls &= 0x7fff;
				backslashes &= 0x7fff;
			}
			const letters = backslashes << 1;
			if ((letters & <u32>i8x16.bitmask(i8x16.eq(bytes, i8x16.splat(0x75)))) == 0) {
				const valid = <u32>i8x16.bitmask(
					v128.or(
						v128.or(
							v128.or(i8x16.eq(bytes, quote), i8x16.eq(bytes, backslash)),
							v128.or(i8x16.eq(bytes, i8x16.splat(0x2f)), i8x16.eq(bytes, i8x16.splat(0x62))),
						),
						v128.or(
							v128.or(i8x16.eq(bytes, i8x16.splat(0x66)), i8x16.eq(bytes, i8x16.splat(0x6e))),
							v128.or(i8x16.eq(bytes, i8x16.splat(0x72)), i8x16.eq(bytes, i8x16.splat(0x74))),
						),
					),
				);
				// A letter that is no escape, or past the end (a backslash at the end), or a control character.
				const bad = (letters & ~valid) | (letters & ~inside) | controls;
				const ends = quotes & ~letters;
				const close: u32 = ends != 0 ? ctz(ends) : 32;
				if (close < (bad != 0 ? ctz(bad) : 32)) {
					if ((backslashes & ((<u32>1 << close) - 1)) != 0) hadEscape = true;
					return at + <usize>close + 1;
				}
				if (bad != 0) return 0;
				hadEscape = true;
				at += step;
				continue;
			}
		}
		at = escapesOneByOne(at, end, special);
		if (at < 16) return at == 1 ? 0 : stringClosedAt;
	}
	return 0;
}

/** Where `escapesOneByOne` found the string's end (when it answers 2). */
let stringClosedAt: usize = 0;

/**
 * The special bytes (`special`: quotes, backslashes, control characters) of the block at `at` in turn,
 * each escape's letter skipped: the address to go on from (past the block, or past an escape that reaches
 * into the next one), else 1 (the string is not valid) or 2 (it ends: `stringClosedAt`).
 */
function escapesOneByOne(at: usize, end: usize, special: u32): usize {
	while (special != 0) {
		const place = at + <usize>ctz(special);
		const byte = <u32>load<u8>(place);
		if (byte == 0x22) {
			stringClosedAt = place + 1;
			return 2;
		}
		if (byte != 0x5c || place + 1 >= end) return 1; // a control character, or a backslash at the end
		hadEscape = true;
		const letter = <u32>load<u8>(place + 1);
		let after = place + 2;
		if (letter == 0x75) {
			if (place + 6 > end) return 1;
			for (let k: usize = 2; k < 6; k++) {
				const digit = <u32>load<u8>(place + k);
				const lower = digit | 0x20;
				if (!(isDigit(digit) || (lower >= 0x61 && lower <= 0x66))) return 1;
			}
			after = place + 6;
		} else if (
			letter != 0x22 &&
			letter != 0x5c &&
			letter != 0x2f &&
			letter != 0x62 &&
			letter != 0x66 &&
			letter != 0x6e &&
			letter != 0x72 &&
			letter != 0x74
		) {
			return 1;
		}
		if (after >= at + 16) return after;
		special &= ~((<u32>1 << <u32>(after - at)) - 1);
	}
	return at + 16;
}

/** The address just after the number at `at`, or 0. */
function numberEnd(at: usize, end: usize): usize {
	if (at < end && load<u8>(at) == 0x2d) at++;
	if (at < end && load<u8>(at) == 0x30) at++;
	else if (at < end && isDigit(<u32>load<u8>(at))) {
		while (at < end && isDigit(<u32>load<u8>(at))) at++;
	} else return 0;
	if (at < end && load<u8>(at) == 0x2e) {
		at++;
		if (at >= end || !isDigit(<u32>load<u8>(at))) return 0;
		while (at < end && isDigit(<u32>load<u8>(at))) at++;
	}
	if (at < end && (<u32>load<u8>(at) | 0x20) == 0x65) {
		at++;
		if (at < end && (load<u8>(at) == 0x2b || load<u8>(at) == 0x2d)) at++;
		if (at >= end || !isDigit(<u32>load<u8>(at))) return 0;
		while (at < end && isDigit(<u32>load<u8>(at))) at++;
	}
	return at;
}

/** The address just after the literal or number at `at`, or 0 (the bytes after a literal are the caller's to judge). */
function scalarEnd(at: usize, end: usize): usize {
	const byte = <u32>load<u8>(at);
	if (byte == 0x74) return end - at >= 4 && load<u32>(at) == 0x65757274 ? at + 4 : 0;
	if (byte == 0x66) return end - at >= 5 && load<u32>(at) == 0x736c6166 && load<u8>(at + 4) == 0x65 ? at + 5 : 0;
	if (byte == 0x6e) return end - at >= 4 && load<u32>(at) == 0x6c6c756e ? at + 4 : 0;
	return numberEnd(at, end);
}

/**
 * `isPlainEntryJson` of the `length` bytes at INPUT: 1 when they are one JSON object with exactly one
 * `type` key, at most one `message` key, at most one `role` key in the message object, and no escaped key
 * at those levels; else 0.
 */
export function plainEntry(length: i32): i32 {
	const end = INPUT + <usize>length;
	let depth: i32 = 0;
	let container: u8 = 0;
	let state = VALUE;
	let types = 0;
	let messages = 0;
	let roles = 0;
	let messageKey = false;
	let at = skipWhitespace(INPUT, end);
	if (at >= end || load<u8>(at) != 0x7b) return 0;
	while (true) {
		at = skipWhitespace(at, end);
		if (at >= end) return 0;
		const byte = <u32>load<u8>(at);
		if (state == FIRST_KEY || state == KEY) {
			if (state != FIRST_KEY || byte != 0x7d) {
				if (byte != 0x22) return 0;
				const keyStart = at + 1;
				at = stringEnd(keyStart, end);
				if (at == 0) return 0;
				if (depth == 1 || container == MESSAGE_OBJECT) {
					if (hadEscape) return 0;
					const keyEnd = at - 1;
					if (depth == 1 && isType(keyStart, keyEnd)) types++;
					else if (depth == 1 && isMessage(keyStart, keyEnd)) {
						messages++;
						messageKey = true;
					} else if (depth == 2 && isRole(keyStart, keyEnd)) roles++;
				}
				at = skipWhitespace(at, end);
				if (at >= end || load<u8>(at) != 0x3a) return 0;
				at++;
				state = VALUE;
				continue;
			}
		} else if (state == AFTER_VALUE) {
			if (byte == 0x2c) {
				at++;
				state = container == ARRAY ? VALUE : KEY;
				continue;
			}
			if (byte != (container == ARRAY ? 0x5d : 0x7d)) return 0;
		} else if (state == FIRST_ELEMENT && byte == 0x5d) {
			// An empty array.
		} else if (byte == 0x7b || byte == 0x5b) {
			if (depth >= MAX_DEPTH) return 0;
			container = byte == 0x5b ? ARRAY : messageKey && depth == 1 ? MESSAGE_OBJECT : OBJECT;
			depth++;
			store<u8>(STACK + <usize>depth, container);
			state = byte == 0x5b ? FIRST_ELEMENT : FIRST_KEY;
			messageKey = false;
			at++;
			continue;
		} else {
			at = byte == 0x22 ? stringEnd(at + 1, end) : scalarEnd(at, end);
			if (at == 0) return 0;
			messageKey = false;
			state = AFTER_VALUE;
			continue;
		}
		// Close the innermost container.
		at++;
		state = AFTER_VALUE;
		depth--;
		if (depth == 0) {
			at = skipWhitespace(at, end);
			return at == end && types == 1 && messages <= 1 && roles <= 1 ? 1 : 0;
		}
		container = load<u8>(STACK + <usize>depth);
	}
}

@inline function putSpan(to: usize, start: usize, end: usize, escaped: bool): void {
	store<i32>(to, <i32>(start - INPUT));
	store<i32>(to + 4, <i32>(end - INPUT));
	store<i32>(to + 8, escaped ? 1 : 0);
}

/**
 * `messageFields` of the `length` bytes at INPUT: 1 with the fields in OUT (offsets into the line): the
 * entry's `timestamp` span [0..2], the message's numeric `timestamp` [3, 4] (-1 when none), whether the
 * content is blocks [5], their count [6], then from BLOCKS a span per text block (start -1: a block
 * without text) or the content string's one span. 0 where `messageFields` gives `null`; -1 when the line
 * has more text blocks than OUT holds (the JavaScript scan takes it).
 */
export function messageFields(length: i32): i32 {
	const end = INPUT + <usize>length;
	let depth: i32 = 0;
	let container: u8 = 0;
	let state = VALUE;
	let next = OTHER_VALUE;
	let seen: u32 = 0;
	let entryTimestamp: usize = 0;
	let timestampStart: i32 = -1;
	let timestampEnd: i32 = -1;
	let hasContentString = false;
	let blockCount: i32 = -1;
	let blockIsText = false;
	let blockTextStart: usize = 0;
	let blockTextEnd: usize = 0;
	let blockTextEscaped = false;
	let at = skipWhitespace(INPUT, end);
	if (at >= end || load<u8>(at) != 0x7b) return 0;
	while (true) {
		at = skipWhitespace(at, end);
		if (at >= end) return 0;
		const byte = <u32>load<u8>(at);
		if (state == FIRST_KEY || state == KEY) {
			if (state != FIRST_KEY || byte != 0x7d) {
				if (byte != 0x22) return 0;
				const keyStart = at + 1;
				at = stringEnd(keyStart, end);
				if (at == 0) return 0;
				next = OTHER_VALUE;
				if (depth == 1 || container == MESSAGE_OBJECT || container == BLOCK_OBJECT) {
					if (hadEscape) return 0;
					const keyEnd = at - 1;
					if (depth == 1) {
						if (isType(keyStart, keyEnd)) next = BLOCK_VALUE; // counted only
						else if (isMessage(keyStart, keyEnd)) next = MESSAGE_VALUE;
						else if (isTimestamp(keyStart, keyEnd)) next = ENTRY_TIMESTAMP;
					} else if (container == MESSAGE_OBJECT) {
						if (isRole(keyStart, keyEnd)) next = ROLE_VALUE;
						else if (isContent(keyStart, keyEnd)) next = CONTENT_VALUE;
						else if (isTimestamp(keyStart, keyEnd)) next = TIMESTAMP_VALUE;
					} else if (isType(keyStart, keyEnd)) next = BLOCK_TYPE;
					else if (isText(keyStart, keyEnd)) next = BLOCK_TEXT;
					if (next != OTHER_VALUE) {
						// The entry's `type` and the blocks' keys are counted per object.
						const bit = <u32>1 << <u32>(depth == 1 && next == BLOCK_VALUE ? 0 : next);
						if ((seen & bit) != 0) return 0;
						seen |= bit;
					}
				}
				at = skipWhitespace(at, end);
				if (at >= end || load<u8>(at) != 0x3a) return 0;
				at++;
				state = VALUE;
				continue;
			}
		} else if (state == AFTER_VALUE) {
			const isArray = container == ARRAY || container == CONTENT_ARRAY;
			if (byte == 0x2c) {
				at++;
				state = isArray ? VALUE : KEY;
				continue;
			}
			if (byte != (isArray ? 0x5d : 0x7d)) return 0;
		} else if (state == FIRST_ELEMENT && byte == 0x5d) {
			// An empty array.
		} else if (byte == 0x7b || byte == 0x5b) {
			if (depth >= MAX_DEPTH) return 0;
			if (container == CONTENT_ARRAY) {
				if (byte != 0x7b) return 0;
				container = BLOCK_OBJECT;
				seen &= ~((<u32>1 << <u32>BLOCK_TYPE) | (<u32>1 << <u32>BLOCK_TEXT));
				blockIsText = false;
				blockTextStart = 0;
			} else if (next == MESSAGE_VALUE) {
				if (byte != 0x7b) return 0;
				container = MESSAGE_OBJECT;
			} else if (next == CONTENT_VALUE) {
				if (byte != 0x5b) return 0;
				container = CONTENT_ARRAY;
				blockCount = 0;
			} else if (next != OTHER_VALUE && next != BLOCK_VALUE) {
				return 0; // a timestamp, role, block type or text that is an object or array
			} else container = byte == 0x5b ? ARRAY : OBJECT;
			depth++;
			store<u8>(STACK + <usize>depth, container);
			state = byte == 0x5b ? FIRST_ELEMENT : FIRST_KEY;
			next = OTHER_VALUE;
			at++;
			continue;
		} else {
			if (container == CONTENT_ARRAY) return 0; // a block that is no object
			const valueStart = at;
			const isString = byte == 0x22;
			at = isString ? stringEnd(at + 1, end) : scalarEnd(at, end);
			if (at == 0) return 0;
			const escaped = isString && hadEscape;
			if (next == ENTRY_TIMESTAMP) {
				if (!isString) return 0;
				putSpan(OUT, valueStart, at, escaped);
				entryTimestamp = valueStart;
			} else if (next == MESSAGE_VALUE || next == ROLE_VALUE) {
				if (!isString || next == MESSAGE_VALUE) return 0;
			} else if (next == CONTENT_VALUE) {
				if (!isString) return 0;
				putSpan(BLOCKS, valueStart, at, escaped);
				hasContentString = true;
			} else if (next == TIMESTAMP_VALUE) {
				const isNumber = byte == 0x2d || isDigit(byte);
				timestampStart = isNumber ? <i32>(valueStart - INPUT) : -1;
				timestampEnd = isNumber ? <i32>(at - INPUT) : -1;
				if (!isNumber && !isString && byte != 0x6e) return 0; // true or false: parsed instead
			} else if (next == BLOCK_TYPE) {
				blockIsText = isString && at - valueStart == 6 && load<u32>(valueStart + 1) == 0x74786574;
				if (escaped) return 0;
			} else if (next == BLOCK_TEXT) {
				if (!isString) return 0;
				blockTextStart = valueStart;
				blockTextEnd = at;
				blockTextEscaped = escaped;
			}
			next = OTHER_VALUE;
			state = AFTER_VALUE;
			continue;
		}
		// Close the innermost container.
		at++;
		state = AFTER_VALUE;
		if (container == BLOCK_OBJECT && blockIsText) {
			if (blockCount >= MAX_BLOCKS) return -1;
			const to = BLOCKS + <usize>blockCount * 12;
			if (blockTextStart == 0) store<i32>(to, -1);
			else putSpan(to, blockTextStart, blockTextEnd, blockTextEscaped);
			blockCount++;
		}
		depth--;
		if (depth == 0) {
			at = skipWhitespace(at, end);
			const bits = (<u32>1 << <u32>ROLE_VALUE) | 1;
			if (at != end || entryTimestamp == 0 || (seen & bits) != bits) return 0;
			if (blockCount < 0 && !hasContentString) return 0;
			store<i32>(OUT + 12, timestampStart);
			store<i32>(OUT + 16, timestampEnd);
			store<i32>(OUT + 20, blockCount >= 0 ? 1 : 0);
			store<i32>(OUT + 24, blockCount);
			return 1;
		}
		container = load<u8>(STACK + <usize>depth);
	}
}
