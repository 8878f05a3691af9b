/**
 * decodeUtf8 gives what `TextDecoder("utf-8", { ignoreBOM: true })` gives, whichever decoder it uses here
 * (on Node, Buffer's utf8Slice): on random bytes (invalid sequences, surrogates, overlong forms, a BOM),
 * for any range of them.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeUtf8, UTF8_DECODER } from "../src/utf8-decode.ts";

const reference = new TextDecoder("utf-8", { ignoreBOM: true });
/** Bytes that make UTF-8's hard cases: lead bytes of every length, continuations, surrogates, overlongs, a BOM. */
const byte = fc.oneof(
	fc.integer({ min: 0, max: 255 }),
	fc.constantFrom(0xef, 0xbb, 0xbf, 0xed, 0xa0, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xe0, 0xf0, 0xf4, 0xf5, 0x90, 0x8f),
);

describe("decodeUtf8", () => {
	it("uses Buffer's utf8Slice on Node", () => {
		expect(UTF8_DECODER).toBe("utf8Slice");
	});

	it("decodes any bytes, any range of them, as TextDecoder does", () => {
		fc.assert(
			fc.property(fc.array(byte, { maxLength: 80 }), fc.nat(), fc.nat(), (list, a, b) => {
				const bytes = Uint8Array.from(list);
				const start = bytes.length === 0 ? 0 : a % (bytes.length + 1);
				const end = start + (b % (bytes.length - start + 1));
				expect(decodeUtf8(bytes, start, end)).toBe(reference.decode(bytes.subarray(start, end)));
				expect(decodeUtf8(bytes)).toBe(reference.decode(bytes));
			}),
			{ numRuns: 20_000 },
		);
	});

	it("keeps a BOM and decodes text of every plane", () => {
		const text = "\ufeffa é € 😀 \u0000 end";
		const bytes = new TextEncoder().encode(text);
		expect(decodeUtf8(bytes)).toBe(text);
		expect(decodeUtf8(bytes, 3)).toBe(text.slice(1));
	});
});
