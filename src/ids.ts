/**
 * Identifiers: 8-hex-character entry ids (collision-checked, as pi makes them) and UUIDv7 session ids.
 * @module
 */
import { v7 as uuidv7 } from "uuid";

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
		const id = randomUint32().toString(16).padStart(8, "0");
		if (!taken.has(id)) return id;
	}
	return crypto.randomUUID();
}

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
