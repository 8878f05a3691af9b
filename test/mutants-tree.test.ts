/**
 * Rules of tree.ts, tree-index.ts and tree-append.ts that the other tests leave unguarded (mutation testing
 * found them): reads of ids the tree does not hold, the structure reads of a lazily read tree, undoing an
 * append, the order of children with damaged timestamps, and the checks that refuse an append.
 */
import { describe, expect, it } from "vitest";
import { EntryBodies } from "../src/entry-bodies.ts";
import {
	EntryNotLoadedError,
	type FileEntry,
	InvalidArgumentError,
	InvalidContextEditError,
	type SessionEntry,
	SessionTree,
} from "../src/index.ts";
import { assertObjectMessage } from "../src/tree-append.ts";

const user = (content: string) => ({ role: "user" as const, content, timestamp: 1 });
const header = { type: "session", version: 3, id: "s", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" } as const;
const custom = (id: string, parentId: string | null, timestamp: unknown): SessionEntry =>
	({ type: "custom", customType: "x", id, parentId, timestamp }) as unknown as SessionEntry;
const childIdsInTree = (tree: SessionTree): string[] => tree.getTree()[0]?.children.map((n) => n.entry.id) ?? [];

/** A tree whose two messages are deferred to lines of a file, as a lazy open leaves big entries. */
function lazyTree(): { tree: SessionTree; first: string; second: string } {
	const tree = SessionTree.create({ cwd: "/p" }, new EntryBodies("/s.jsonl"));
	const first = tree.appendMessage(user("one"));
	const second = tree.appendMessage(user("two"));
	tree.bodies?.defer(tree.structureOf(first) as SessionEntry, { offset: 100, length: 50, line: 2 });
	tree.bodies?.defer(tree.structureOf(second) as SessionEntry, { offset: 151, length: 50, line: 3 });
	return { tree, first, second };
}
/** The whole entry a decode of `structure`'s line would give (a copy without the deferral mark). */
const decoded = (structure: SessionEntry): SessionEntry => JSON.parse(JSON.stringify(structure));

describe("tree.ts: reads of ids and ranges", () => {
	it("getParentId is null for a root and undefined for an id not in the tree", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const root = tree.appendMessage(user("a"));
		const child = tree.appendMessage(user("b"));
		expect(tree.getParentId(root)).toBeNull();
		expect(tree.getParentId(child)).toBe(root);
		expect(tree.getParentId("missing0")).toBeUndefined();
	});

	it("an unknown id has no children and no structure, and is no error", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		tree.appendMessage(user("a"));
		expect(tree.getChildren("missing0")).toEqual([]);
		expect(tree.structureOfChildren("missing0")).toEqual([]);
		expect(tree.structureOf("missing0")).toBeUndefined();
	});

	it("structureBetween gives the entries [start, end) in file order, not all of them", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		tree.appendMessage(user("a"));
		const b = tree.appendMessage(user("b"));
		tree.appendMessage(user("c"));
		expect(tree.structureBetween(1, 2).map((e) => e.id)).toEqual([b]);
		expect(tree.structureBetween(1, 2)).toEqual(tree.entriesBetween(1, 2));
	});

	it("the path to a given leaf is found even when the current leaf was reset", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		const b = tree.appendMessage(user("b"));
		tree.resetLeaf();
		expect(tree.structureOfPath(b).map((e) => e.id)).toEqual([a, b]);
		expect(tree.structureOfPath()).toEqual([]); // the reset leaf itself: no path
		expect(tree.structureOfPath(null)).toEqual([]);
		// A lazily read tree builds its context from that path.
		const lazy = SessionTree.create({ cwd: "/p" }, new EntryBodies("/s.jsonl"));
		const c = lazy.appendMessage(user("c"));
		lazy.resetLeaf();
		expect(lazy.buildSessionContext(c).messages).toEqual([user("c")]);
		expect(lazy.buildContextEntries(c).map((e) => e.id)).toEqual([c]);
	});
});

describe("tree.ts: adoptWhole (decoded entries of a lazily read tree)", () => {
	it("keeps reading from the file while any entry is still deferred", () => {
		const { tree, first, second } = lazyTree();
		const structure = tree.structureOf(first) as SessionEntry;
		tree.adoptWhole(new Map([[structure, decoded(structure)]]));
		expect(tree.getEntry(first)).toEqual(decoded(structure));
		expect(tree.bodies).toBeDefined();
		expect(() => tree.getEntry(second)).toThrow(EntryNotLoadedError);
	});

	it("becomes a whole tree once no entry is deferred", () => {
		const { tree, first, second } = lazyTree();
		const loaded = new Map(
			[first, second].map((id) => {
				const structure = tree.structureOf(id) as SessionEntry;
				return [structure, decoded(structure)] as const;
			}),
		);
		tree.adoptWhole(loaded);
		expect(tree.bodies).toBeUndefined();
		expect(tree.getEntries().map((e) => e.id)).toEqual([first, second]);
	});

	it("is a no-op for a tree that is whole", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		const entry = tree.getEntry(a) as SessionEntry;
		const other = { ...entry, message: user("not adopted") } as SessionEntry;
		tree.adoptWhole(new Map([[entry, other]]));
		expect(tree.getEntry(a)).toBe(entry);
		expect(tree.getEntries()).toEqual([entry]);
	});
});

describe("tree-index.ts: retractLast (undo of the last append)", () => {
	it("refuses when nothing was appended, with its own error", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		expect(() => tree.retractLastAppend()).toThrow("internal error: only the last appended entry can be retracted");
		const loaded = SessionTree.fromRecords([header, custom("aaaaaaaa", null, header.timestamp)] as FileEntry[]);
		expect(() => loaded.retractLastAppend()).toThrow(/only the last appended entry/);
		expect(loaded.getEntries().map((e) => e.id)).toEqual(["aaaaaaaa"]);
	});

	it("refuses when an entry was indexed after the append, and leaves the tree as it was", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const appended = tree.appendMessage(user("a"));
		// A root, so the appended entry has no child: only the file order tells it is no longer last.
		tree.addEntry(custom("bbbbbbbb", null, header.timestamp));
		expect(() => tree.retractLastAppend()).toThrow(/only the last appended entry/);
		expect(tree.getEntries().map((e) => e.id)).toEqual([appended, "bbbbbbbb"]);
		expect(tree.getRoots().map((e) => e.id)).toEqual([appended, "bbbbbbbb"]);
		expect(tree.getEntry(appended)).toBeDefined();
	});
});

describe("tree-index.ts: children as a list through the nodes", () => {
	/** A root with `count` children, appended in turn (the leaf moved back to the root before each). */
	function rootWithChildren(count: number): { tree: SessionTree; root: string; children: string[] } {
		const tree = SessionTree.create({ cwd: "/p" });
		const root = tree.appendMessage(user("root"));
		const children: string[] = [];
		for (let index = 0; index < count; index++) {
			tree.branch(root);
			children.push(tree.appendMessage(user(`child ${index}`)));
		}
		return { tree, root, children };
	}
	const childCounts = (tree: SessionTree): Map<string, number> => {
		const counts = new Map<string, number>();
		tree.forEachIndexed((entry, _parent, count) => counts.set(entry.id, count));
		return counts;
	};

	it("counts and gives the children in append order: none, one, three", () => {
		for (const count of [0, 1, 3]) {
			const { tree, root, children } = rootWithChildren(count);
			expect(tree.getChildren(root).map((e) => e.id)).toEqual(children);
			expect(childCounts(tree).get(root)).toBe(count);
			for (const child of children) expect(childCounts(tree).get(child)).toBe(0);
		}
	});

	it("takes back the last child appended, whichever it is, and appends after it again", () => {
		for (const count of [1, 2, 3]) {
			const { tree, root, children } = rootWithChildren(count);
			tree.retractLastAppend();
			const kept = children.slice(0, -1);
			expect(tree.getChildren(root).map((e) => e.id)).toEqual(kept);
			expect(childCounts(tree).get(root)).toBe(kept.length);
			tree.branch(root);
			const again = tree.appendMessage(user("again"));
			expect(tree.getChildren(root).map((e) => e.id)).toEqual([...kept, again]);
		}
	});
});

describe("tree-index.ts: getTree orders children by timestamp", () => {
	it("orders numeric timestamps (a damaged file's) by their value", () => {
		const tree = SessionTree.fromRecords([
			header,
			custom("root0000", null, 1000),
			custom("late0000", "root0000", 3000),
			custom("early000", "root0000", 2000),
		] as FileEntry[]);
		expect(childIdsInTree(tree)).toEqual(["early000", "late0000"]);
	});

	it("a timestamp that is no string or number orders as no time, not as the epoch", () => {
		// Date would read null as 0, which would move that child first; as NaN it compares as neither.
		const tree = SessionTree.fromRecords([
			header,
			custom("root0000", null, "2025-01-01T00:00:00.000Z"),
			custom("dated000", "root0000", "2025-01-02T00:00:00.000Z"),
			custom("null0000", "root0000", null),
		] as FileEntry[]);
		expect(childIdsInTree(tree)).toEqual(["dated000", "null0000"]);
	});
});

describe("tree-append.ts: a message that is not an object is refused, saying what it would be written as", () => {
	it.each([
		[null, "null"],
		[[user("a")], "an array"],
		["text", "string"],
		[7, "number"],
	])("%j is refused as %s", (message, what) => {
		const tree = SessionTree.create({ cwd: "/p" });
		const append = () => tree.appendMessage(message as never);
		expect(append).toThrow(InvalidArgumentError);
		expect(append).toThrow(`cannot append a message that is not an object (it would be written as ${what})`);
		expect(tree.size).toBe(0);
	});

	it("judges what JSON.stringify makes of the message (its toJSON result)", () => {
		expect(() => assertObjectMessage({ role: "user" }, null)).toThrow("(it would be written as null)");
		expect(() => assertObjectMessage({ role: "user" }, [])).toThrow("(it would be written as an array)");
		expect(() => assertObjectMessage([], { role: "user" })).not.toThrow();
	});
});

describe("tree-append.ts: appendContextEdit checks", () => {
	it("refuses a replacement that is no object, even one carrying string content", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		// A function is written as nothing at all by JSON.stringify, whatever properties it has.
		const replacement = Object.assign(() => undefined, { content: "edited" });
		expect(() => tree.appendContextEdit(a, replacement as never)).toThrow(InvalidArgumentError);
		expect(tree.size).toBe(1);
	});

	it("a message entry without its message (a damaged file) is no edit target, and no crash", () => {
		const tree = SessionTree.fromRecords([
			header,
			{ type: "message", id: "aaaaaaaa", parentId: null, timestamp: header.timestamp },
		] as FileEntry[]);
		const edit = () => tree.appendContextEdit("aaaaaaaa", { content: "x" });
		expect(edit).toThrow(InvalidContextEditError);
		expect(edit).toThrow("Entry aaaaaaaa does not contribute editable model content");
	});

	it("only a message entry's role makes it editable: a `message` field on another kind does not", () => {
		const tree = SessionTree.fromRecords([
			header,
			{ ...custom("aaaaaaaa", null, header.timestamp), message: user("looks like one") },
		] as FileEntry[]);
		expect(() => tree.appendContextEdit("aaaaaaaa", { content: "x" })).toThrow(InvalidContextEditError);
		expect(tree.size).toBe(1);
	});
});
