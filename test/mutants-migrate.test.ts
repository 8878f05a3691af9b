import { describe, expect, it } from "vitest";
import type { CompactionEntry, FileEntry, LabelEntry, SessionEntry } from "../src/entries.ts";
import { SessionFormatError } from "../src/errors.ts";
import { seededEntryIds } from "../src/ids.ts";
import { excerptOf } from "../src/jsonl.ts";
import { migrateToCurrentVersion, migrateV1ToV2, migrateV2ToV3, sessionVersion } from "../src/migrate.ts";
import { SessionTree } from "../src/tree.ts";
import { forkOfBranch } from "../src/tree-labels.ts";

const T = "2025-01-01T00:00:00.000Z";
const v1Header = { type: "session", id: "s1", timestamp: T, cwd: "/p" };
const v3Header = { type: "session", version: 3, id: "s3", timestamp: T, cwd: "/p" };
const userMessage = (content: string) => ({ role: "user", content, timestamp: 1 });
/** A v1 message record: no id, no parentId. */
const v1Message = (n: number) => ({ type: "message", timestamp: `t${n}`, message: userMessage(`m${n}`) });

/** Deterministic ids for assertions. */
const counter = () => {
	let n = 0;
	return () => `id${++n}`.padStart(8, "0");
};

describe("migrate.ts", () => {
	it("a header whose version is null declares none: the file is v1, as one without a version", () => {
		expect(sessionVersion([{ ...v1Header, version: null } as unknown as FileEntry])).toBe(1);
		const result = migrateToCurrentVersion([{ ...v1Header, version: null }, v1Message(1)] as unknown as FileEntry[]);
		expect(result).toMatchObject({ fromVersion: 1, changed: true });
		expect((result.entries[1] as SessionEntry).id).toMatch(/^[0-9a-f]{8}$/);
	});

	it("v1 → v2 turns only a compaction's firstKeptEntryIndex into an id: another kind keeps such a field as it is", () => {
		const odd = { type: "custom", customType: "x", timestamp: "t2", firstKeptEntryIndex: 1 };
		const { entries, warnings } = migrateV1ToV2([v1Header, v1Message(1), odd] as unknown as FileEntry[], counter());
		expect(warnings).toEqual([]);
		expect(entries[2]).toEqual({ ...odd, id: "00000id2", parentId: "00000id1" });
	});

	it("v1 → v2 chains a compaction without a numeric firstKeptEntryIndex as it is, with no warning", () => {
		const compaction = (extra: object) => ({
			type: "compaction",
			timestamp: "t2",
			summary: "s",
			tokensBefore: 1,
			...extra,
		});
		for (const extra of [{}, { firstKeptEntryIndex: "1" }]) {
			const records = [v1Header, v1Message(1), compaction(extra)] as unknown as FileEntry[];
			const { entries, warnings } = migrateV1ToV2(records, counter());
			expect(warnings).toEqual([]);
			expect(entries[2]).toEqual({ ...compaction(extra), id: "00000id2", parentId: "00000id1" });
		}
	});

	it("the warning for a compaction that keeps from no entry names its record, the index and why", () => {
		const warningFor = (index: number) => {
			const compaction = {
				type: "compaction",
				timestamp: "t2",
				summary: "s",
				firstKeptEntryIndex: index,
				tokensBefore: 1,
			};
			const records = [v1Header, v1Message(1), compaction, v1Message(3)] as unknown as FileEntry[];
			return migrateV1ToV2(records, counter()).warnings;
		};
		expect(warningFor(3)).toEqual(["compaction at record 2 keeps from record 3, which is a later record"]);
		expect(warningFor(99)).toEqual(["compaction at record 2 keeps from record 99, which is a later record"]);
		expect(warningFor(0)).toEqual(["compaction at record 2 keeps from record 0, which is not an entry"]);
		expect(warningFor(-1)).toEqual(["compaction at record 2 keeps from record -1, which is not an entry"]);
	});

	it("v2 → v3 renames the role of message entries only: another kind's `message` field is not a message", () => {
		const odd = {
			type: "custom",
			customType: "x",
			id: "b",
			parentId: "a",
			timestamp: T,
			message: { role: "hookMessage" },
		};
		const records = [{ ...v3Header, version: 2 }, odd] as unknown as FileEntry[];
		const migrated = migrateV2ToV3(records);
		expect(migrated[1]).toBe(odd);
		expect(odd.message.role).toBe("hookMessage");
	});

	it("v2 → v3 passes a message entry whose message is null or missing (a damaged file) as it is", () => {
		const damaged = [
			{ type: "message", id: "a", parentId: null, timestamp: T, message: null },
			{ type: "message", id: "b", parentId: "a", timestamp: T },
		];
		const migrated = migrateV2ToV3([{ ...v3Header, version: 2 }, ...damaged] as unknown as FileEntry[]);
		expect(migrated.slice(1)).toEqual(damaged);
		expect(migrated[1]).toBe(damaged[0]);
	});

	it("records without a header are named by ids of the empty seed, the same on every migration", () => {
		const records = [v1Message(1), v1Message(2)] as unknown as FileEntry[];
		const next = seededEntryIds("");
		const taken = new Set<string>();
		const expected = records.map(() => {
			const id = next(taken);
			taken.add(id);
			return id;
		});
		const { entries, fromVersion } = migrateToCurrentVersion(records);
		expect(fromVersion).toBe(1);
		expect(entries.map((entry) => (entry as SessionEntry).id)).toEqual(expected);
		expect(entries[1]).toMatchObject({ parentId: expected[0] });
	});

	it("current records come back unchanged: a v3 file is not migrated again, nor one from a newer version", () => {
		// A role of hookMessage in a v3 file is what the file says; only a v2 file's is renamed.
		const hook = { type: "message", id: "a", parentId: null, timestamp: T, message: { role: "hookMessage" } };
		for (const version of [3, 4]) {
			const records = [{ ...v3Header, version }, hook] as unknown as FileEntry[];
			const result = migrateToCurrentVersion(records);
			expect(result).toMatchObject({ changed: false, fromVersion: version, warnings: [] });
			expect(result.entries).toEqual([{ ...v3Header, version }, hook]);
			expect(hook.message.role).toBe("hookMessage");
		}
	});
});

describe("tree-load.ts", () => {
	const custom = (id: unknown, parentId: unknown) =>
		({ type: "custom", customType: "x", id, parentId, timestamp: T }) as SessionEntry;

	it("records that do not start with a header are refused with a SessionFormatError naming file, line, offset and excerpt", () => {
		const first = custom("aaaaaaaa", null);
		const refusal = (records: FileEntry[], options: Parameters<typeof SessionTree.fromRecords>[1]) => {
			try {
				SessionTree.fromRecords(records, options);
			} catch (error) {
				expect(error).toBeInstanceOf(SessionFormatError);
				return error as SessionFormatError;
			}
			throw new Error("not refused");
		};
		const located = refusal([first], { file: "/s.jsonl", locations: [{ line: 7, byteOffset: 123 }] });
		expect(located.message).toBe(
			`/s.jsonl:7: first record is not a session header (${JSON.stringify(excerptOf(JSON.stringify(first)))})`,
		);
		expect([located.file, located.line, located.byteOffset]).toEqual(["/s.jsonl", 7, 123]);
		// Without a location for the first record, it is line 1 at byte 0.
		for (const locations of [undefined, []]) {
			const unlocated = refusal([first], { file: "/s.jsonl", locations });
			expect([unlocated.line, unlocated.byteOffset]).toEqual([1, 0]);
		}
		// No records at all: nothing to excerpt.
		const empty = refusal([], {});
		expect([empty.message, empty.excerpt]).toEqual(['<session>:1: first record is not a session header ("")', ""]);
	});

	it("an empty id is no id: the entry is kept but not indexed", () => {
		const tree = SessionTree.fromRecords([v3Header, custom("", null), custom("bbbbbbbb", "")] as FileEntry[]);
		expect(tree.diagnostics.map((d) => d.reason)).toEqual(["missing-id", "missing-parent"]);
		expect(tree.getEntries()).toHaveLength(2);
		expect(tree.getEntry("")).toBeUndefined();
		expect(tree.getRoots().map((e) => e.id)).toEqual(["bbbbbbbb"]);
	});

	it("every entry whose parent comes only later is reported as forward-parent, however many wait for it", () => {
		const tree = SessionTree.fromRecords([
			v3Header,
			custom("aaaaaaaa", "cccccccc"),
			custom("bbbbbbbb", "cccccccc"),
			custom("cccccccc", null),
		] as FileEntry[]);
		expect(tree.diagnostics.map((d) => [d.reason, d.line])).toEqual([
			["forward-parent", 2],
			["forward-parent", 3],
		]);
		expect(tree.diagnostics[1]?.message).toBe(
			"parent cccccccc appears only later in the file (a cycle or reordered lines); treated as a root",
		);
	});

	it("an entry added without a location is placed by its position, with no byte offset (-1)", () => {
		const tree = SessionTree.fromRecords([v3Header, custom("aaaaaaaa", null)] as FileEntry[]);
		const diagnostic = tree.addEntry(custom("bbbbbbbb", "gone0000"));
		expect(diagnostic).toMatchObject({ reason: "missing-parent", line: 3, byteOffset: -1 });
		expect(diagnostic?.excerpt).toBe(excerptOf(JSON.stringify(custom("bbbbbbbb", "gone0000"))));
	});
});

describe("tree-labels.ts", () => {
	const message = (id: string, parentId: string | null) =>
		({ type: "message", id, parentId, timestamp: T, message: userMessage(id) }) as SessionEntry;
	const label = (id: string, parentId: string, targetId: string): LabelEntry => ({
		type: "label",
		id,
		parentId,
		timestamp: T,
		targetId,
		label: "x",
	});
	const compaction = (id: string, parentId: string, firstKeptEntryId: string): CompactionEntry => ({
		type: "compaction",
		id,
		parentId,
		timestamp: T,
		summary: "s",
		firstKeptEntryId,
		tokensBefore: 1,
	});

	it("a fork's compaction that kept from a dropped label keeps from the entry after it", () => {
		const branch = [message("m1", null), label("l1", "m1", "m1"), message("m2", "l1"), compaction("c1", "m2", "l1")];
		const forked = forkOfBranch(branch, new Map());
		expect(forked.map((e) => [e.id, e.parentId])).toEqual([
			["m1", null],
			["m2", "m1"],
			["c1", "m2"],
		]);
		expect(forked[2]).toEqual({ ...branch[3], firstKeptEntryId: "m2" });
		expect((branch[3] as CompactionEntry).firstKeptEntryId).toBe("l1");
	});

	it("a fork re-points a compaction's firstKeptEntryId only from a dropped label, not from an entry kept or an id of none", () => {
		// No label counts as dropped before the branch's first entry, whatever the id: the last one is the
		// text StrykerJS puts into an empty array literal (the list of labels dropped starts empty).
		for (const keptFrom of ["m1", "gone0000", "", "Stryker was here"]) {
			const branch = [message("m1", null), message("m2", "m1"), compaction("c1", "m2", keptFrom)];
			const forked = forkOfBranch(branch, new Map());
			expect(forked).toEqual(branch);
			expect(forked[2]).toBe(branch[2]);
		}
	});

	it("a fork re-points no field of another kind: only a compaction keeps from an entry", () => {
		const odd = { type: "custom", customType: "x", id: "e1", parentId: "m2", timestamp: T, firstKeptEntryId: "l1" };
		const branch = [message("m1", null), label("l1", "m1", "m1"), message("m2", "l1"), odd as SessionEntry];
		const forked = forkOfBranch(branch, new Map());
		expect(forked[2]).toBe(odd);
	});

	it("a fork of a branch of label entries only is empty", () => {
		// A label appended after the leaf was reset is a root: its branch holds no other entry.
		const tree = SessionTree.create({ cwd: "/p" });
		const m1 = tree.appendMessage({ role: "user", content: "m1", timestamp: 1 });
		tree.resetLeaf();
		const labelId = tree.appendLabelChange(m1, "start");
		expect(tree.getBranch(labelId).map((e) => e.type)).toEqual(["label"]);
		expect(tree.forkEntries(labelId)).toEqual([]);
	});

	it("a fork hands on the entries whose parent stays as they are, not copies", () => {
		// Copies of millions of entries would double the memory, and a lazily read entry's decoded body is
		// cached under the entry itself.
		const branch = [message("m1", null), message("m2", "m1"), label("l1", "m2", "m1"), message("m3", "l1")];
		const forked = forkOfBranch(branch, new Map());
		expect(forked[0]).toBe(branch[0]);
		expect(forked[1]).toBe(branch[1]);
		expect(forked[2]).not.toBe(branch[3]);
		expect(forked[2]).toEqual({ ...branch[3], parentId: "m2" });
	});
});
