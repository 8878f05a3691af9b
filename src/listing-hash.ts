/**
 * A fast non-cryptographic hash of bytes (cyrb53's mixing), for telling that bytes are the ones seen
 * before: a catalog's content, and the bytes before the end a catalog row read up to.
 * @module
 */

/** 53 bits of hash of `bytes`, as 14 hex digits. */
export function hashBytes(bytes: Uint8Array): string {
	let h1 = 0xdeadbeef ^ bytes.length;
	let h2 = 0x41c6ce57 ^ bytes.length;
	for (let i = 0; i < bytes.length; i++) {
		const byte = bytes[i] as number;
		h1 = Math.imul(h1 ^ byte, 2654435761);
		h2 = Math.imul(h2 ^ byte, 1597334677);
	}
	h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
	h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
	return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}
