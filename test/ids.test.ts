import { afterEach, describe, expect, it, vi } from "vitest";
import { createEntryId, createSessionId } from "../src/index.ts";

afterEach(() => vi.restoreAllMocks());

/** Make crypto.randomUUID return these UUIDs in turn. */
function uuidsInTurn(...uuids: string[]): void {
	let next = 0;
	vi.spyOn(crypto, "randomUUID").mockImplementation(
		() => uuids[next++ % uuids.length] as `${string}-${string}-${string}-${string}-${string}`,
	);
}

describe("ids", () => {
	it("entry ids are the first 8 hex chars of a random UUID", () => {
		expect(createEntryId(new Set())).toMatch(/^[0-9a-f]{8}$/);
	});

	it("a colliding entry id is drawn again", () => {
		uuidsInTurn("deadbeef-0000-4000-8000-000000000000", "cafebabe-0000-4000-8000-000000000000");
		expect(createEntryId(new Set(["deadbeef"]))).toBe("cafebabe");
	});

	it("after 100 collisions a whole UUID is used", () => {
		uuidsInTurn("deadbeef-0000-4000-8000-000000000000");
		expect(createEntryId(new Set(["deadbeef"]))).toBe("deadbeef-0000-4000-8000-000000000000");
		expect(crypto.randomUUID).toHaveBeenCalledTimes(101);
	});

	it("session ids are UUIDv7 and sort by creation time", () => {
		const ids = Array.from({ length: 50 }, createSessionId);
		for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
		expect([...ids].sort()).toEqual(ids);
		expect(new Set(ids).size).toBe(ids.length);
	});
});
