/**
 * Values by entry id, for the tree's millions of nodes: what the tree asks of a `Map` (get, has, size, the
 * values in the order they were added), with one lookup to add a value unless its id is taken, where a
 * `Map` needs two (`has`, then `set`). pi's ids are 8 lowercase hex characters, and such an id is its own
 * 32-bit number: those are kept in one open-addressing table of typed arrays (no object per id, half the
 * memory of a `Map`); any other id (a whole UUID after collisions, a damaged file's) in a `Map` beside it.
 * On this kind of machine a lookup in a big table is a cache miss: a lazy open of 591,677 entries took
 * 2.5–3.0 s with a `Map`, 2.2–2.3 s with this table (fresh processes taking turns). It doubles at three
 * quarters full, not half: 591,677 ids then take 2^20 slots, not 2^21 (8 MB less and one rehash fewer;
 * median 2.64 s against 2.92 s, peak RSS 290 MB against 309 MB, 7 runs each taking turns).
 * @module
 */

/** The fewest slots of the table (a power of two); it doubles when three quarters full. */
const MIN_SLOTS = 1 << 10;
/** In `#positions`: a free slot (a position is stored plus one). */
const FREE = 0;

/** The number of an id of 8 lowercase hex characters, or -1 for any other id (kept in the `Map` then). */
export function hexKey(id: string): number {
	if (id.length !== 8) return -1;
	let key = 0;
	for (let index = 0; index < 8; index++) {
		const code = id.charCodeAt(index);
		// 0-9, then a-f; anything else (upper case too: "DEADBEEF" is another id than "deadbeef") is no key.
		const digit = code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : -1;
		if (digit < 0) return -1;
		key = (key << 4) | digit;
	}
	return key >>> 0;
}

export class NodeTable<T> {
	/** The values in the order they were added; a value's position is its index here. */
	readonly #values: T[] = [];
	/** Per slot: the key, and the position of its value plus one (`FREE`: no key there). */
	#keys = new Uint32Array(MIN_SLOTS);
	#positions = new Int32Array(MIN_SLOTS);
	/** log2 of the number of slots: the hash keeps this many high bits. */
	#bits = Math.log2(MIN_SLOTS);
	#keyed = 0;
	/** Ids that are not 8 lowercase hex characters, with their positions. */
	readonly #others = new Map<string, number>();

	get size(): number {
		return this.#values.length;
	}

	get(id: string): T | undefined {
		const position = this.#positionOf(id);
		return position < 0 ? undefined : this.#values[position];
	}

	has(id: string): boolean {
		return this.#positionOf(id) >= 0;
	}

	/** Add `value` under `id`, unless the id is taken: then nothing changes and the value there is returned. */
	addIfAbsent(id: string, value: T): T | undefined {
		const key = hexKey(id);
		if (key < 0) {
			const position = this.#others.get(id);
			if (position !== undefined) return this.#values[position];
			this.#others.set(id, this.#values.length);
		} else {
			let slot = this.#slotOf(key);
			const position = this.#positions[slot] as number;
			if (position !== FREE) return this.#values[position - 1];
			// Doubled only to insert (a rehash places the keys anew: the one added last must be placed after it).
			if ((this.#keyed + 1) * 4 > this.#positions.length * 3) {
				this.#grow();
				slot = this.#slotOf(key);
			}
			this.#keys[slot] = key;
			this.#positions[slot] = this.#values.length + 1;
			this.#keyed++;
		}
		this.#values.push(value);
		return undefined;
	}

	/**
	 * Remove `id`, which must be the one added last (the tree only ever takes back its last append). Its
	 * slot is simply freed: every other key was placed before it, so no other key's probe passes through it.
	 */
	deleteLast(id: string): void {
		const last = this.#values.length - 1;
		const key = hexKey(id);
		if (key < 0) {
			if (this.#others.get(id) !== last) throw new Error("internal error: only the id added last can be deleted");
			this.#others.delete(id);
		} else {
			const slot = this.#slotOf(key);
			if (this.#positions[slot] !== last + 1) throw new Error("internal error: only the id added last can be deleted");
			this.#positions[slot] = FREE;
			this.#keyed--;
		}
		this.#values.pop();
	}

	/** The values in the order they were added. */
	values(): IterableIterator<T> {
		return this.#values.values();
	}

	#positionOf(id: string): number {
		// A caller without types may ask for anything (an entry of a damaged file has no id): no string, no value.
		if (typeof id !== "string") return -1;
		const key = hexKey(id);
		if (key < 0) return this.#others.get(id) ?? -1;
		return (this.#positions[this.#slotOf(key)] as number) - 1;
	}

	/** The slot of `key`, or the free slot where it would go (linear probing from its hash). */
	#slotOf(key: number): number {
		const keys = this.#keys;
		const positions = this.#positions;
		const mask = positions.length - 1;
		// Fibonacci hashing: the high bits of the product spread any pattern in the ids (seeded ones too).
		let slot = Math.imul(key, 0x9e3779b1) >>> (32 - this.#bits);
		while (positions[slot] !== FREE && keys[slot] !== key) slot = (slot + 1) & mask;
		return slot;
	}

	#grow(): void {
		const keys = this.#keys;
		const positions = this.#positions;
		this.#bits++;
		this.#keys = new Uint32Array(positions.length * 2);
		this.#positions = new Int32Array(positions.length * 2);
		for (let slot = 0; slot < positions.length; slot++) {
			const position = positions[slot] as number;
			if (position === FREE) continue;
			const to = this.#slotOf(keys[slot] as number);
			this.#keys[to] = keys[slot] as number;
			this.#positions[to] = position;
		}
	}
}
