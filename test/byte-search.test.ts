import fc from "fast-check";
import { expect, it } from "vitest";
import { BYTE_SEARCH, indexOfByte } from "../src/byte-search.ts";

it("uses Node's memchr on Node", () => {
	expect(BYTE_SEARCH).toBe("memchr");
});

it("finds what a byte-by-byte search finds, from any start, in views at any offset", () => {
	fc.assert(
		fc.property(
			fc.uint8Array({ maxLength: 300 }),
			fc.nat({ max: 40 }),
			fc.nat({ max: 340 }),
			fc.constantFrom(0x0a, 0x22, 0, 255),
			(bytes, offset, from, byte) => {
				const view = bytes.subarray(Math.min(offset, bytes.length));
				let expected = -1;
				for (let i = from; i < view.length; i++) {
					if (view[i] === byte) {
						expected = i;
						break;
					}
				}
				expect(indexOfByte(view, byte, from)).toBe(expected);
			},
		),
		{ numRuns: 500 },
	);
});
