import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hexKey, NodeTable } from "../src/node-table.ts";
import { TreeIndex } from "../src/tree-index.ts";
import { propertyRuns } from "./support/runs.ts";

/** Ids as sessions have them: mostly 8 lowercase hex characters, some that only look close, some anything. */
const idArbitrary = fc.oneof(
	{ weight: 6, arbitrary: fc.stringMatching(/^[0-9a-f]{8}$/) },
	// A small pool, so that ids repeat.
	{ weight: 3, arbitrary: fc.constantFrom("00000000", "ffffffff", "deadbeef", "0000000a", "a0000000") },
	{ weight: 1, arbitrary: fc.constantFrom("DEADBEEF", "deadbeeg", "deadbee", "deadbeef0", "", "__proto__") },
	{ weight: 1, arbitrary: fc.uuid() },
	{ weight: 1, arbitrary: fc.string({ maxLength: 9 }) },
);

type Op = { add: string } | { deleteLast: true };
const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
	{ weight: 8, arbitrary: idArbitrary.map((add) => ({ add })) },
	{ weight: 1, arbitrary: fc.constant({ deleteLast: true as const }) },
);

describe("NodeTable", () => {
	it("answers as a Map does: add unless taken, take back the last, get, has, size, values in order", () => {
		fc.assert(
			fc.property(
				fc.array(opArbitrary, { maxLength: 300 }),
				fc.array(idArbitrary, { maxLength: 20 }),
				(ops, probes) => {
					const table = new NodeTable<{ id: string; n: number }>();
					const model = new Map<string, { id: string; n: number }>();
					const added: string[] = [];
					ops.forEach((op, n) => {
						if ("add" in op) {
							const value = { id: op.add, n };
							const there = model.get(op.add);
							expect(table.addIfAbsent(op.add, value)).toBe(there);
							if (!there) {
								model.set(op.add, value);
								added.push(op.add);
							}
						} else {
							const last = added.pop();
							if (last === undefined) return;
							table.deleteLast(last);
							model.delete(last);
						}
					});
					expect(table.size).toBe(model.size);
					expect([...table.values()]).toEqual([...model.values()]);
					for (const id of [...probes, ...added]) {
						expect(table.get(id)).toBe(model.get(id));
						expect(table.has(id)).toBe(model.has(id));
					}
				},
			),
			{ numRuns: propertyRuns(300) },
		);
	});

	it("holds a quarter of a million ids through its growth, each found, none invented", () => {
		const table = new NodeTable<number>();
		// Sequential and seeded-looking keys alike: the hash must spread both.
		const ids = Array.from({ length: 1 << 18 }, (_, n) =>
			(n % 2 === 0 ? n : Math.imul(n, 2654435761) >>> 0).toString(16).padStart(8, "0"),
		);
		const unique = [...new Set(ids)];
		// Counted, not asserted one by one: a quarter of a million expect() calls take seconds.
		let refused = 0;
		for (const [n, id] of unique.entries()) if (table.addIfAbsent(id, n) !== undefined) refused++;
		expect(refused).toBe(0);
		expect(table.size).toBe(unique.length);
		let misplaced = 0;
		for (const [n, id] of unique.entries()) if (table.get(id) !== n || !table.has(id)) misplaced++;
		expect(misplaced).toBe(0);
		expect(table.addIfAbsent(unique[12345] as string, -1)).toBe(12345);
		const taken = new Set(unique);
		const absent = Array.from({ length: 1000 }, (_, n) => (0xf0000000 + n * 7919).toString(16)).filter(
			(id) => !taken.has(id),
		);
		expect(absent.length).toBeGreaterThan(900);
		for (const id of absent) expect(table.get(id)).toBeUndefined();
		// Taking back the last, then adding it again, leaves it found at the end.
		const last = unique[unique.length - 1] as string;
		table.deleteLast(last);
		expect(table.has(last)).toBe(false);
		expect(table.addIfAbsent(last, 7)).toBeUndefined();
		expect(table.get(last)).toBe(7);
	});

	it("keys only ids of 8 lowercase hex characters, each by its own number", () => {
		expect(hexKey("00000000")).toBe(0);
		expect(hexKey("deadbeef")).toBe(0xdeadbeef);
		expect(hexKey("ffffffff")).toBe(0xffffffff);
		expect(hexKey("01234567")).toBe(0x01234567);
		expect(hexKey("89abcdef")).toBe(0x89abcdef);
		expect(hexKey("0000000a")).toBe(10);
		expect(hexKey("a0000000")).toBe(0xa0000000);
		// Every digit and letter at every position, against the number's own hex.
		for (let n = 0; n < 4096; n++) {
			const key = (Math.imul(n, 2654435761) ^ n) >>> 0;
			expect(hexKey(key.toString(16).padStart(8, "0"))).toBe(key);
		}
		for (const other of [
			"DEADBEEF",
			"deadbeeG",
			"deadbee",
			"deadbeef0",
			"",
			"dead beef",
			"/0000000",
			":0000000",
			"`0000000",
			"g0000000",
			"-1234567",
			"+1234567",
		])
			expect(hexKey(other), other).toBe(-1);
	});

	it("takes back the id added last whatever its number, 0 included", () => {
		for (const id of ["00000000", "00000001", "ffffffff", "not-hex"]) {
			const table = new NodeTable<string>();
			table.addIfAbsent("12345678", "first");
			table.addIfAbsent(id, "last");
			table.deleteLast(id);
			expect([table.size, table.has(id), table.get("12345678")], id).toEqual([1, false, "first"]);
		}
	});

	it("takes back the id added last even when an id already taken was offered at the table's doubling point", () => {
		// Offering a taken id must not double the table: a doubling places every key anew, in slot order, and
		// the one added last can then stand where a key placed after it probed past, so freeing its slot loses
		// that key. Ids chosen by their hash (the table's multiplier inverted) to make it so: A and K share a
		// home at the end of the 2,048-slot table (K wraps to slot 0), L, added last, is home at 0 (slot 1);
		// doubled, K then L are placed first, and A wraps from the last slot over L's.
		let inverse = 0x9e3779b1;
		for (let step = 0; step < 5; step++) inverse = Math.imul(inverse, 2 - Math.imul(0x9e3779b1, inverse));
		const idHashing = (hash: number) => (Math.imul(hash, inverse) >>> 0).toString(16).padStart(8, "0");
		const fillers = Array.from({ length: 1021 }, (_, n) => idHashing((200 + n) << 21));
		const [a, k, l] = [idHashing(0xfff00000), idHashing(0xfff00001), idHashing(5)] as [string, string, string];
		const table = new NodeTable<string>();
		for (const id of [...fillers.slice(0, 600), a, k, ...fillers.slice(600), l]) table.addIfAbsent(id, id);
		expect(table.addIfAbsent(a, "again")).toBe(a);
		table.deleteLast(l);
		expect([table.get(a), table.get(k), table.has(l), table.size]).toEqual([a, k, false, 1023]);
		expect(fillers.filter((id) => table.get(id) !== id)).toEqual([]);
	});

	it("finds nothing under what is not a string (an entry of a damaged file has no id), as a Map does", () => {
		const table = new NodeTable<number>();
		table.addIfAbsent("00000001", 1);
		table.addIfAbsent("not-hex", 2);
		for (const other of [undefined, null, 1, {}, ["00000001"]] as unknown as string[]) {
			expect([table.get(other), table.has(other)], String(other)).toEqual([undefined, false]);
		}
	});

	it("refuses to delete an id that was not added last", () => {
		const table = new NodeTable<number>();
		table.addIfAbsent("00000001", 1);
		table.addIfAbsent("not-hex", 2);
		expect(() => table.deleteLast("00000001")).toThrow(/only the id added last/);
		table.deleteLast("not-hex");
		expect(() => table.deleteLast("not-hex")).toThrow(/only the id added last/);
		table.deleteLast("00000001");
		expect(table.size).toBe(0);
	});
});

describe("TreeIndex", () => {
	it("refuses to link an entry whose id is already indexed (the tree's appends draw ids not taken)", () => {
		const index = new TreeIndex();
		const entry = { type: "custom", customType: "x", id: "0000abcd", parentId: null, timestamp: "t" } as never;
		index.entries.push(entry);
		index.link(entry, null);
		expect(() => index.link(entry, null)).toThrow("internal error: id 0000abcd is already indexed");
		expect(index.nodes.size).toBe(1);
	});
});
