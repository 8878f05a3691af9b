import { describe, expect, it } from "vitest";
import { createEntryId, type IdSet } from "../src/ids.ts";
import { createSessionId } from "../src/index.ts";

/** An id set that says every id it is asked about is taken, the first `collisions` times; it keeps the ids asked. */
function takenAtFirst(collisions: number): IdSet & { asked: string[] } {
	const asked: string[] = [];
	return { asked, has: (id) => asked.push(id) <= collisions };
}

describe("ids", () => {
	it("entry ids are 8 hex characters, spread over the whole space", () => {
		// Drawn as a session draws them: each against the ids already taken, so none repeats. (Drawn each
		// against an empty set, two of 4,000 random 32-bit ids are the same about once in 500 runs.)
		const taken = new Set<string>();
		const ids = Array.from({ length: 4000 }, () => {
			const id = createEntryId(taken);
			taken.add(id);
			return id;
		});
		for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}$/);
		expect(taken.size).toBe(ids.length);
		// Every hex digit shows up in the first position (a zero-padding or range bug would skew it).
		expect(new Set(ids.map((id) => id[0])).size).toBe(16);
	});

	it("a colliding entry id is drawn again", () => {
		const taken = takenAtFirst(1);
		const id = createEntryId(taken);
		expect(taken.asked).toHaveLength(2);
		expect(id).toBe(taken.asked[1]);
		expect(id).not.toBe(taken.asked[0]);
	});

	it("after 100 collisions a whole UUID is used", () => {
		const taken = takenAtFirst(Number.POSITIVE_INFINITY);
		expect(createEntryId(taken)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
		expect(taken.asked).toHaveLength(100);
	});

	it("session ids are UUIDv7 and sort by creation time", () => {
		const ids = Array.from({ length: 50 }, createSessionId);
		for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
		expect([...ids].sort()).toEqual(ids);
		expect(new Set(ids).size).toBe(ids.length);
	});
});
