import { describe, expect, it } from "vitest";
import { type FileEntry, migrateSessionEntries, migrateToCurrentVersion } from "../src/index.ts";
import { migrateV1ToV2, migrateV2ToV3, sessionVersion } from "../src/migrate.ts";

const v1: FileEntry[] = [
	{ type: "session", id: "s1", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p", provider: "x" },
	{ type: "message", timestamp: "t1", message: { role: "user", content: "a", timestamp: 1 } },
	{
		type: "message",
		timestamp: "t2",
		message: { role: "hookMessage", customType: "h", content: "b", display: true, timestamp: 2 },
	},
	{ type: "thinking_level_change", timestamp: "t3", thinkingLevel: "high" },
	{ type: "compaction", timestamp: "t4", summary: "s", firstKeptEntryIndex: 2, tokensBefore: 9 },
] as unknown as FileEntry[];

/** Deterministic ids for assertions. */
const counter = () => {
	let n = 0;
	return () => `id${++n}`.padStart(8, "0");
};

describe("migrations", () => {
	it("v1 → v2 chains entries and resolves compaction indices (header counts as record 0)", () => {
		const { entries, warnings } = migrateV1ToV2(v1, counter());
		expect(warnings).toEqual([]);
		expect(entries.map((e) => [e.type, (e as { id?: string }).id, (e as { parentId?: unknown }).parentId])).toEqual([
			["session", "s1", undefined],
			["message", "00000id1", null],
			["message", "00000id2", "00000id1"],
			["thinking_level_change", "00000id3", "00000id2"],
			["compaction", "00000id4", "00000id3"],
		]);
		expect(entries[4]).toEqual({
			type: "compaction",
			timestamp: "t4",
			summary: "s",
			tokensBefore: 9,
			id: "00000id4",
			parentId: "00000id3",
			firstKeptEntryId: "00000id2",
		});
		expect(entries[0]).toMatchObject({ version: 2, provider: "x" });
	});

	it("a compaction keeps from itself or an earlier entry only, as pi 1.6.0: a later one, the header or none is no first kept entry", () => {
		const header = { type: "session", id: "s1", timestamp: "t0", cwd: "/" };
		const message = (n: number) => ({ type: "message", timestamp: `t${n}`, message: { role: "user", content: "m" } });
		const keptFrom = (index: number) => {
			const compaction = {
				type: "compaction",
				timestamp: "t2",
				summary: "s",
				firstKeptEntryIndex: index,
				tokensBefore: 1,
			};
			const { entries, warnings } = migrateV1ToV2([header, message(1), compaction, message(3)] as never, counter());
			return [(entries[2] as { firstKeptEntryId?: string }).firstKeptEntryId, warnings.length];
		};
		expect([1, 2, 3, 0, 4, -1].map(keptFrom)).toEqual([
			["00000id1", 0],
			["00000id2", 0],
			[undefined, 1],
			[undefined, 1],
			[undefined, 1],
			[undefined, 1],
		]);
	});

	it("keeps pi's field order: new fields go last", () => {
		const { entries } = migrateV1ToV2(v1, counter());
		expect(Object.keys(entries[1] as object)).toEqual(["type", "timestamp", "message", "id", "parentId"]);
		expect(Object.keys(entries[0] as object)).toEqual(["type", "id", "timestamp", "cwd", "provider", "version"]);
	});

	it.each([
		["the header", 0],
		["past the end", 99],
		["a negative index", -1],
	])("warns when a compaction keeps from %s", (_name, index) => {
		const records = [...v1.slice(0, 4), { ...v1[4], firstKeptEntryIndex: index }] as FileEntry[];
		const { entries, warnings } = migrateV1ToV2(records, counter());
		expect(warnings).toHaveLength(1);
		expect(entries[4]).not.toHaveProperty("firstKeptEntryId");
		expect(entries[4]).not.toHaveProperty("firstKeptEntryIndex");
	});

	it("v1 entries get the same ids on every read, made from the header, distinct within the file", () => {
		const v1 = (id: string): FileEntry[] => [
			{ type: "session", id, timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" } as FileEntry,
			...(Array.from({ length: 500 }, (_, index) => ({
				type: "message",
				timestamp: "2025-01-01T00:00:00.000Z",
				message: { role: "user", content: `m${index}`, timestamp: 0 },
			})) as unknown as FileEntry[]),
		];
		const ids = (records: FileEntry[]) =>
			migrateToCurrentVersion(records)
				.entries.slice(1)
				.map((e) => (e as { id: string }).id);
		const first = ids(v1("a"));
		expect(ids(v1("a"))).toEqual(first);
		expect(new Set(first).size).toBe(500);
		for (const id of first) expect(id).toMatch(/^[0-9a-f]{8}$/);
		const other = ids(v1("b"));
		expect(other.filter((id, index) => id === first[index])).toEqual([]);
	});

	it("v2 → v3 renames hookMessage to custom and nothing else", () => {
		const v2 = migrateV1ToV2(v1, counter()).entries;
		const v3 = migrateV2ToV3(v2);
		expect((v3[2] as { message: { role: string } }).message.role).toBe("custom");
		expect(v3[1]).toBe(v2[1]);
		expect(v3[0]).toMatchObject({ version: 3 });
	});

	it("is pure: the input is not changed", () => {
		const before = JSON.stringify(v1);
		migrateToCurrentVersion(v1);
		expect(JSON.stringify(v1)).toBe(before);
	});

	it("is idempotent and reports whether anything changed", () => {
		const first = migrateToCurrentVersion(v1);
		expect(first).toMatchObject({ changed: true, fromVersion: 1 });
		const second = migrateToCurrentVersion(first.entries);
		expect(second).toMatchObject({ changed: false, fromVersion: 3 });
		expect(second.entries).toEqual(first.entries);
	});

	it("migrates v2 files without touching ids", () => {
		const v2 = migrateV1ToV2(v1, counter()).entries;
		const { entries, changed, fromVersion } = migrateToCurrentVersion(v2);
		expect([changed, fromVersion]).toEqual([true, 2]);
		expect(entries.map((e) => (e as { id: string }).id)).toEqual(v2.map((e) => (e as { id: string }).id));
	});

	it("reads the version from the header", () => {
		expect(sessionVersion(v1)).toBe(1);
		expect(sessionVersion([{ ...v1[0], version: 3 } as FileEntry])).toBe(3);
		expect(sessionVersion([])).toBe(1);
	});

	it("migrateSessionEntries migrates in place like pi's and returns whether it changed", () => {
		const records = structuredClone(v1);
		expect(migrateSessionEntries(records)).toBe(true);
		expect(records).toHaveLength(5);
		expect(records[0]).toMatchObject({ version: 3 });
		expect(records.slice(1).every((e) => typeof (e as { id?: unknown }).id === "string")).toBe(true);
		expect(migrateSessionEntries(records)).toBe(false);
	});
});
