/**
 * Comparing a line's bytes with a word's, for the scans that read a line without decoding it (listing's,
 * and a lazy open's).
 * @module
 */

/** Whether the bytes from `at` (up to `end`) start with `word`. */
export function startsWithWord(bytes: Uint8Array, at: number, end: number, word: Uint8Array): boolean {
	if (end - at < word.length) return false;
	for (let k = 0; k < word.length; k++) if (bytes[at + k] !== word[k]) return false;
	return true;
}

/** Whether bytes `[start, end)` are exactly `word`. */
export function isWord(bytes: Uint8Array, start: number, end: number, word: Uint8Array): boolean {
	return end - start === word.length && startsWithWord(bytes, start, end, word);
}
