import { describe, expect, it } from "vitest";
import {
	buildSessionPath,
	CURRENT_SESSION_VERSION,
	EntryNotFoundError,
	type FileEntry,
	flattenTree,
	type SessionEntry,
	SessionFormatError,
	SessionTree,
	unflattenTree,
} from "../src/index.ts";
import { smallUsage } from "./support/messages.ts";

const user = (content: string) => ({ role: "user" as const, content, timestamp: 1 });
const header = { type: "session", version: 3, id: "s", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" } as const;
const entry = (id: unknown, parentId: unknown, timestamp = "2025-01-01T00:00:00.000Z"): SessionEntry =>
	({ type: "custom", customType: "x", id, parentId, timestamp }) as SessionEntry;
const fixedClock = () => {
	let t = Date.parse("2025-01-01T00:00:00.000Z");
	return () => new Date(t++);
};

describe("creating and appending", () => {
	it("creates a v3 header with a UUIDv7 session id", () => {
		const tree = SessionTree.create({ cwd: "/p", parentSession: "/a.jsonl" });
		expect(tree.getHeader()).toMatchObject({
			type: "session",
			version: CURRENT_SESSION_VERSION,
			cwd: "/p",
			parentSession: "/a.jsonl",
		});
		expect(tree.getSessionId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
		expect(SessionTree.create({ cwd: "/p", id: "fixed" }).getSessionId()).toBe("fixed");
	});

	it("appends each kind as a child of the leaf with an 8-hex id, in pi's field order", () => {
		const tree = SessionTree.create({ cwd: "/p", now: fixedClock() });
		const ids = [
			tree.appendMessage(user("hi")),
			tree.appendThinkingLevelChange("high"),
			tree.appendModelChange("openai", "gpt"),
			tree.appendCompaction("sum", "x", 10, { files: [] }, true),
			tree.appendCustomEntry("ext", { n: 1 }),
			tree.appendCustomMessageEntry("ext", "text", false, { d: 1 }),
			tree.appendSessionInfo("name"),
			tree.appendUsage("cache_warm", "anthropic", "claude", smallUsage, "warm"),
			tree.appendUsage("cache_warm", "anthropic", "claude", smallUsage),
		];
		ids.push(tree.appendContextEdit(ids[0] as string, { content: "edited" }));
		ids.push(tree.branchWithSummary(ids[0] as string, "left", undefined, false, smallUsage));
		ids.push(tree.appendLabelChange(ids[0] as string, "first"));
		const entries = tree.getEntries();
		expect(ids.every((id) => /^[0-9a-f]{8}$/.test(id))).toBe(true);
		expect(new Set(ids).size).toBe(ids.length);
		// The branch summary is a child of the first entry; everything else of the entry before it.
		const parents = [null, ...ids.slice(0, -1)];
		parents[parents.length - 2] = ids[0] as string;
		expect(entries.map((e) => e.parentId)).toEqual(parents);
		expect(tree.getLeafId()).toBe(ids[ids.length - 1]);
		expect(entries.map((e) => Object.keys(e))).toEqual([
			["type", "id", "parentId", "timestamp", "message"],
			["type", "id", "parentId", "timestamp", "thinkingLevel"],
			["type", "id", "parentId", "timestamp", "provider", "modelId"],
			[
				"type",
				"id",
				"parentId",
				"timestamp",
				"summary",
				"firstKeptEntryId",
				"tokensBefore",
				"details",
				"usage",
				"fromHook",
			],
			["type", "customType", "data", "id", "parentId", "timestamp"],
			["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"],
			["type", "id", "parentId", "timestamp", "name"],
			["type", "id", "parentId", "timestamp", "kind", "provider", "model", "usage", "note"],
			["type", "id", "parentId", "timestamp", "kind", "provider", "model", "usage"],
			["type", "id", "parentId", "timestamp", "targetId", "replacement"],
			["type", "id", "parentId", "timestamp", "fromId", "summary", "details", "usage", "fromHook"],
			["type", "id", "parentId", "timestamp", "targetId", "label"],
		]);
		expect(entries[0]?.timestamp).toBe("2025-01-01T00:00:00.001Z");
	});

	it("tells appends to onAppend, not loaded entries", () => {
		const seen: string[] = [];
		const tree = SessionTree.create({ cwd: "/p", onAppend: (e) => seen.push(e.id) });
		tree.addEntry(entry("aaaaaaaa", null));
		const id = tree.appendMessage(user("x"));
		expect(seen).toEqual([id]);
	});

	it("an append that onAppend refuses leaves the tree as it was (leaf, labels, name too)", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		const b = tree.appendMessage(user("b"));
		tree.setOnAppend(() => {
			throw new Error("refused");
		});
		const before = { entries: tree.getEntries(), leaf: tree.getLeafId(), tree: tree.getTree() };
		expect(() => tree.branchWithSummary(a, "summary")).toThrow("refused");
		expect(() => tree.appendLabelChange(a, "l")).toThrow("refused");
		expect(() => tree.appendSessionInfo("name")).toThrow("refused");
		expect({ entries: tree.getEntries(), leaf: tree.getLeafId(), tree: tree.getTree() }).toEqual(before);
		expect([tree.getLabel(a), tree.getSessionName(), tree.getLeafId()]).toEqual([undefined, undefined, b]);
		tree.setOnAppend(undefined);
		expect(tree.getEntry(tree.appendMessage(user("c")))?.parentId).toBe(b);
	});
});

describe("moving the leaf", () => {
	it("branch moves only the leaf; the next append is a sibling branch", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		const b = tree.appendMessage(user("b"));
		tree.branch(a);
		const c = tree.appendMessage(user("c"));
		expect(tree.getChildren(a).map((e) => e.id)).toEqual([b, c]);
		expect(tree.getBranch().map((e) => e.id)).toEqual([a, c]);
		expect(tree.size).toBe(3);
	});

	it("resetLeaf makes the next entry a new root", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		tree.resetLeaf();
		expect(tree.getLeafId()).toBeNull();
		expect(tree.buildSessionContext().messages).toEqual([]);
		const b = tree.appendMessage(user("b"));
		expect(tree.getRoots().map((e) => e.id)).toEqual([a, b]);
		expect(tree.getTree().map((n) => n.entry.id)).toEqual([a, b]);
	});

	it("branchWithSummary records the leaf being left as fromId (or root) and moves the leaf", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		const b = tree.appendMessage(user("b"));
		const s = tree.branchWithSummary(a, "left b");
		expect(tree.getEntry(s)).toMatchObject({ type: "branch_summary", parentId: a, fromId: b, summary: "left b" });
		tree.resetLeaf();
		const r = tree.branchWithSummary(null, "from nowhere");
		expect(tree.getEntry(r)).toMatchObject({ parentId: null, fromId: "root" });
		expect(tree.getLeafId()).toBe(r);
	});

	it.each([
		["branch", (t: SessionTree) => t.branch("nope")],
		["branchWithSummary", (t: SessionTree) => t.branchWithSummary("nope", "s")],
		["appendLabelChange", (t: SessionTree) => t.appendLabelChange("nope", "l")],
		["forkEntries", (t: SessionTree) => t.forkEntries("nope")],
	])("%s on an unknown id throws EntryNotFoundError and changes nothing", (_name, act) => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		expect(() => act(tree)).toThrow(EntryNotFoundError);
		expect([tree.getLeafId(), tree.size]).toEqual([a, 1]);
	});
});

describe("labels and names", () => {
	it("resolves the latest label with its timestamp; empty or undefined clears", () => {
		const tree = SessionTree.create({ cwd: "/p", now: fixedClock() });
		const a = tree.appendMessage(user("a"));
		tree.appendLabelChange(a, "one");
		const second = tree.appendLabelChange(a, "two");
		expect(tree.getLabel(a)).toBe("two");
		expect(tree.getTree()[0]).toMatchObject({ label: "two", labelTimestamp: tree.getEntry(second)?.timestamp });
		tree.appendLabelChange(a, "");
		expect(tree.getLabel(a)).toBeUndefined();
		tree.appendLabelChange(a, "three");
		tree.appendLabelChange(a, undefined);
		expect(tree.getLabel(a)).toBeUndefined();
		expect(tree.getTree()[0]).toMatchObject({ label: undefined, labelTimestamp: undefined }); // keys kept, as in pi
	});

	it.each([
		["plain", "Refactor", "Refactor"],
		["trimmed", "  Refactor  ", "Refactor"],
		["empty clears", "", undefined],
		["spaces clear", "   ", undefined],
		[
			"each run of line breaks becomes one space (pi 1.6)",
			"Line one\n  line two\r\nthree",
			"Line one   line two three",
		],
		["a name that is not a string is none", 42 as unknown as string, undefined],
	])("session name: %s", (_name, input, expected) => {
		const tree = SessionTree.create({ cwd: "/p" });
		tree.appendSessionInfo("earlier");
		tree.appendSessionInfo(input);
		expect(tree.getSessionName()).toBe(expected);
	});

	it("reads names from loaded session_info entries the same way", () => {
		const tree = SessionTree.fromRecords([
			header,
			{ type: "session_info", id: "aaaaaaaa", parentId: null, timestamp: "t", name: " a\nb " },
		] as FileEntry[]);
		expect(tree.getSessionName()).toBe("a b");
	});
});

describe("unknown entry kinds", () => {
	it("are indexed like any entry, produce no context and keep every field", () => {
		const future = {
			type: "future_kind",
			id: "bbbbbbbb",
			parentId: "aaaaaaaa",
			timestamp: "t",
			payload: { deep: [1] },
		};
		const tree = SessionTree.fromRecords([header, entry("aaaaaaaa", null), future] as FileEntry[]);
		expect(tree.getEntry("bbbbbbbb")).toBe(future);
		expect(tree.getBranch().map((e) => e.id)).toEqual(["aaaaaaaa", "bbbbbbbb"]);
		expect(tree.buildSessionContext().messages).toEqual([]);
		expect(tree.diagnostics).toEqual([]);
		const child = tree.appendMessage(user("after"));
		expect(tree.getEntry(child)?.parentId).toBe("bbbbbbbb");
	});
});

describe("getTree", () => {
	it("orders children oldest first by timestamp, whatever the file order", () => {
		const tree = SessionTree.fromRecords([
			header,
			entry("root0000", null, "2025-01-01T00:00:00.000Z"),
			entry("late0000", "root0000", "2025-01-01T00:00:09.000Z"),
			entry("early000", "root0000", "2025-01-01T00:00:01.000Z"),
		] as FileEntry[]);
		expect(tree.getTree()[0]?.children.map((n) => n.entry.id)).toEqual(["early000", "late0000"]);
		expect(tree.getChildren("root0000").map((e) => e.id)).toEqual(["late0000", "early000"]);
	});

	it("handles a 200,000-deep chain without recursion", () => {
		const records: FileEntry[] = [header];
		for (let i = 0; i < 200_000; i++) records.push(entry(`e${i}`, i === 0 ? null : `e${i - 1}`));
		const tree = SessionTree.fromRecords(records);
		let depth = 0;
		for (let node = tree.getTree()[0]; node; node = node.children[0]) depth++;
		expect(depth).toBe(200_000);
		expect(tree.getBranch()).toHaveLength(200_000);
	});
});

describe("forkEntries (createBranchedSession)", () => {
	it("copies the root → leaf path without labels, then re-adds the labels that apply to it", () => {
		const tree = SessionTree.create({ cwd: "/p", now: fixedClock() });
		const a = tree.appendMessage(user("a"));
		const offPath = tree.appendMessage(user("x"));
		tree.branch(a);
		tree.appendLabelChange(offPath, "elsewhere");
		const labelA = tree.appendLabelChange(a, "start");
		const b = tree.appendMessage(user("b"));
		const fork = tree.forkEntries(b);
		expect(fork.map((e) => e.type)).toEqual(["message", "message", "label"]);
		expect(fork[1]).toMatchObject({ id: b, parentId: a }); // re-linked past the dropped label entries
		expect(fork[2]).toMatchObject({
			parentId: b,
			targetId: a,
			label: "start",
			timestamp: tree.getEntry(labelA)?.timestamp,
		});
		expect(tree.getEntry(b)?.parentId).toBe(labelA); // the source is untouched
	});
});

describe("malformed trees are handled deterministically and reported", () => {
	const load = (...entries: SessionEntry[]) => SessionTree.fromRecords([header, ...entries] as FileEntry[]);

	it.each([
		{
			name: "a self-parent becomes a root",
			entries: [entry("aaaaaaaa", "aaaaaaaa")],
			roots: ["aaaaaaaa"],
			reasons: ["self-parent"],
		},
		{
			name: "a missing parent makes an orphan root",
			entries: [entry("aaaaaaaa", null), entry("bbbbbbbb", "gone0000")],
			roots: ["aaaaaaaa", "bbbbbbbb"],
			reasons: ["missing-parent"],
		},
		{
			name: "a two-entry cycle: the entry whose parent comes later becomes a root",
			entries: [entry("aaaaaaaa", "bbbbbbbb"), entry("bbbbbbbb", "aaaaaaaa")],
			roots: ["aaaaaaaa"],
			reasons: ["forward-parent"],
		},
		{
			name: "a three-entry cycle",
			entries: [entry("aaaaaaaa", "cccccccc"), entry("bbbbbbbb", "aaaaaaaa"), entry("cccccccc", "bbbbbbbb")],
			roots: ["aaaaaaaa"],
			reasons: ["forward-parent"],
		},
		{
			name: "duplicate ids: the first keeps the id, the later one is kept but not indexed",
			entries: [entry("aaaaaaaa", null), entry("aaaaaaaa", null), entry("bbbbbbbb", "aaaaaaaa")],
			roots: ["aaaaaaaa"],
			reasons: ["duplicate-id"],
		},
		{
			name: "an entry without an id is kept but not indexed",
			entries: [entry(undefined, null), entry("bbbbbbbb", null)],
			roots: ["bbbbbbbb"],
			reasons: ["missing-id"],
		},
		{
			name: "a parentId that is not a string or null",
			entries: [entry("aaaaaaaa", 42)],
			roots: ["aaaaaaaa"],
			reasons: ["missing-parent"],
		},
	])("$name", ({ entries, roots, reasons }) => {
		const tree = load(...entries);
		expect(tree.getRoots().map((e) => e.id)).toEqual(roots);
		expect(tree.diagnostics.map((d) => d.reason)).toEqual(reasons);
		expect(tree.diagnostics.every((d) => d.line >= 2 && d.excerpt.length > 0 && d.message.length > 0)).toBe(true);
		expect(tree.getEntries()).toHaveLength(entries.length);
		// Every indexed entry is reachable from a root, and every walk ends.
		const reachable = new Set<string>();
		const stack = tree.getTree();
		for (let node = stack.pop(); node; node = stack.pop()) {
			reachable.add(node.entry.id);
			stack.push(...node.children);
		}
		const rootEntries = new Set(tree.getRoots());
		for (const id of reachable) expect(rootEntries.has(tree.getBranch(id)[0] as SessionEntry)).toBe(true);
		expect(reachable.size).toBe(new Set(entries.map((e) => e.id).filter((id) => typeof id === "string")).size);
		expect(tree.buildSessionContext()).toBeDefined();
		// Asked by the id it does not have (a caller without types), an entry not indexed is not found.
		for (const { id } of entries.filter((e) => typeof e.id !== "string")) {
			expect([tree.getEntry(id), tree.getParentId(id), tree.getChildren(id)]).toEqual([undefined, undefined, []]);
		}
	});

	it("the cycle diagnostic names the line", () => {
		const tree = SessionTree.fromRecords(
			[header, entry("aaaaaaaa", "bbbbbbbb"), entry("bbbbbbbb", "aaaaaaaa")] as FileEntry[],
			{
				locations: [
					{ line: 1, byteOffset: 0 },
					{ line: 2, byteOffset: 90 },
					{ line: 3, byteOffset: 200 },
				],
			},
		);
		expect(tree.diagnostics[0]).toMatchObject({ reason: "forward-parent", line: 2, byteOffset: 90 });
	});

	it("buildSessionPath on raw entries with a cycle ends instead of hanging", () => {
		const entries = [entry("aaaaaaaa", "bbbbbbbb"), entry("bbbbbbbb", "aaaaaaaa")];
		expect(buildSessionPath(entries, "bbbbbbbb").map((e) => e.id)).toEqual(["aaaaaaaa", "bbbbbbbb"]);
		expect(buildSessionPath(entries, "aaaaaaaa").map((e) => e.id)).toEqual(["bbbbbbbb", "aaaaaaaa"]);
		// Entries off the cycle count towards the steps walked: the path still holds each entry once.
		const beside = [...entries, entry("cccccccc", null), entry("dddddddd", "cccccccc")];
		expect(buildSessionPath(beside, "aaaaaaaa").map((e) => e.id)).toEqual(["bbbbbbbb", "aaaaaaaa"]);
		expect(buildSessionPath(beside, "bbbbbbbb").map((e) => e.id)).toEqual(["aaaaaaaa", "bbbbbbbb"]);
	});

	it("refuses records without a session header, naming the line", () => {
		expect(() => SessionTree.fromRecords([entry("aaaaaaaa", null)] as FileEntry[], { file: "x.jsonl" })).toThrow(
			SessionFormatError,
		);
		expect(() => SessionTree.fromRecords([], { file: "x.jsonl" })).toThrow(/x\.jsonl:1/);
	});
});

describe("retractLastAppend (a write that failed)", () => {
	it("puts back the leaf, the labels in their order, and the name, as before the append", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		const b = tree.appendMessage(user("b"));
		tree.appendLabelChange(a, "first");
		tree.appendLabelChange(b, "second");
		tree.appendSessionInfo("named");
		tree.branch(a);
		const before = { entries: tree.getEntries(), labels: [...tree.getLabels()], leaf: tree.getLeafId() };
		for (const append of [
			() => tree.appendLabelChange(a, undefined), // clears "first": restoring must keep it first
			() => tree.appendSessionInfo("renamed"),
			() => tree.branchWithSummary(b, "moved the leaf"),
			() => tree.appendMessage(user("c")),
		]) {
			append();
			tree.retractLastAppend();
			expect([tree.getEntries(), [...tree.getLabels()], tree.getLeafId()]).toEqual([
				before.entries,
				before.labels,
				before.leaf,
			]);
			expect(tree.getSessionName()).toBe("named");
			expect(tree.getChildren(a).map((entry) => entry.id)).toEqual([b]);
		}
		expect(() => tree.retractLastAppend()).toThrow(/only the last appended entry/);
	});
});

describe("flattenTree / unflattenTree", () => {
	it("round-trip a branching tree with labels and several roots, each node after its parent", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		const b = tree.appendMessage(user("b"));
		tree.branch(a);
		tree.appendMessage(user("c"));
		tree.appendLabelChange(b, "bee");
		tree.resetLeaf();
		tree.appendMessage(user("second root"));
		const roots = tree.getTree();
		const flat = flattenTree(roots);
		expect(flat.length).toBe(tree.size);
		expect(flat.every((node, index) => node.parent < index)).toBe(true);
		expect(unflattenTree(flat)).toStrictEqual(roots);
		expect(unflattenTree([])).toEqual([]);
	});
});
