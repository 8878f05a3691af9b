/**
 * A fast non-cryptographic hash of bytes (cyrb53's mixing), for telling that bytes are the ones seen
 * before: a catalog's content, and the bytes before the end a catalog row read up to.
 * @module
 */

/**
 * 53 bits of hash of `bytes`, as 14 hex digits, mixing four bytes at a time (little-endian words), so
 * that the texts of a listing catalog (megabytes) are checked in a few milliseconds.
 */
export function hashText(bytes: Uint8Array): string {
	let h1 = 0x9e3779b9 ^ bytes.length;
	let h2 = 0x7f4a7c15 ^ bytes.length;
	// The same value at any alignment: bytes that do not start on a word boundary are copied to one.
	if (bytes.byteOffset % 4 !== 0) bytes = bytes.slice();
	const words = bytes.length >>> 2;
	if (words > 0) {
		const view = new Int32Array(bytes.buffer, bytes.byteOffset, words);
		for (let i = 0; i < words; i++) {
			const word = view[i] as number;
			h1 = Math.imul(h1 ^ word, 2654435761);
			h2 = Math.imul(h2 ^ word, 1597334677);
		}
	}
	for (let i = words * 4; i < bytes.length; i++) {
		const byte = bytes[i] as number;
		h1 = Math.imul(h1 ^ byte, 2654435761);
		h2 = Math.imul(h2 ^ byte, 1597334677);
	}
	h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
	h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
	return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}
