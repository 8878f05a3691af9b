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
 * A fresh entry id: the first 8 hex characters of a random UUID, retried on collision.
 * After 100 collisions (a nearly full id space) a whole UUID is used, as pi does.
 * @example
 * const id = createEntryId(new Set(["deadbeef"]));
 */
export function createEntryId(taken: IdSet): string {
	for (let attempt = 0; attempt < 100; attempt++) {
		const id = crypto.randomUUID().slice(0, 8);
		if (!taken.has(id)) return id;
	}
	return crypto.randomUUID();
}

/**
 * A fresh session id: a UUIDv7, so ids sort by creation time.
 * @example
 * const sessionId = createSessionId();
 */
export function createSessionId(): string {
	return uuidv7();
}
