/**
 * mulberry32: a small seeded generator, so a run (a generated session, a crash test's kills) can be
 * repeated from its seed. Shared by the tests and the benchmarks.
 * @module
 */

/** Uniform 32-bit unsigned integers from `seed`. */
export function seededUint32(seed: number): () => number {
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return (t ^ (t >>> 14)) >>> 0;
	};
}

/** Uniform fractions in [0, 1) from `seed`. */
export function seededRandom(seed: number): () => number {
	const next = seededUint32(seed);
	return () => next() / 4294967296;
}
