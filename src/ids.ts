/**
 * Identifiers: 8-hex-character entry ids (collision-checked, as pi makes them) and UUIDv7 session ids.
 * @module
 */
import { v4 as uuidv4, v7 as uuidv7 } from "uuid";

/** Anything that can say whether an id is already used. */
export interface IdSet {
	has(id: string): boolean;
}

/**
 * A fresh entry id: 8 random hex characters (as pi's, the first 8 of a random UUID), retried on collision.
 * After 100 collisions (a nearly full id space) a whole UUID is used, as pi does.
 * @example
 * const id = createEntryId(new Set(["deadbeef"]));
 */
export function createEntryId(taken: IdSet): string {
	for (let attempt = 0; attempt < 100; attempt++) {
		// 32 random bits as 8 hex digits: what a random UUID's first 8 characters are, made cheaply.
		const bits = randomUint32();
		const id = `${HEX[bits >>> 24]}${HEX[(bits >>> 16) & 255]}${HEX[(bits >>> 8) & 255]}${HEX[bits & 255]}`;
		if (!taken.has(id)) return id;
	}
	return randomUuid();
}

/**
 * Entry ids made from `seed` instead of chance: the n-th id asked for is always the same 8 hex characters
 * (FNV-1a of the seed and a counter), skipping ids already taken. A v1 file's entries have no ids; made
 * this way from its header, every read of the file gives them the same ones (and so does migrating it).
 * @example
 * const next = seededEntryIds("session-id");
 * next(new Set()) === seededEntryIds("session-id")(new Set()); // true
 */
export function seededEntryIds(seed: string): (taken: IdSet) => string {
	let counter = 0;
	return (taken) => {
		for (;;) {
			let hash = 0x811c9dc5;
			const text = `${seed}\u0000${counter++}`;
			for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
			const id = (hash >>> 0).toString(16).padStart(8, "0");
			if (!taken.has(id)) return id;
		}
	};
}

/**
 * A random UUID (v4). Not `crypto.randomUUID`, which exists only in secure contexts: a page served over
 * plain http from another machine (`vite --host`, opened on a phone) must still start.
 */
export function randomUuid(): string {
	return uuidv4();
}

/** Each byte's two hex digits (formatting by table is about twice as fast as `toString(16)`). */
const HEX: readonly string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** Random numbers drawn a block at a time: one `getRandomValues` call per 256 ids. */
const randomPool = new Uint32Array(256);
let randomNext = randomPool.length;

function randomUint32(): number {
	if (randomNext === randomPool.length) {
		crypto.getRandomValues(randomPool);
		randomNext = 0;
	}
	return randomPool[randomNext++] as number;
}

/**
 * A fresh session id: a UUIDv7, so ids sort by creation time.
 * @example
 * const sessionId = createSessionId();
 */
export function createSessionId(): string {
	return uuidv7();
}
