/**
 * Invariants that must hold after any sequence of appends, branches, labels and compactions.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	buildContextEntries,
	encodeEntry,
	type FileEntry,
	parseSessionText,
	type SessionEntry,
	SessionTree,
} from "../src/index.ts";
import { applyOps, opsArbitrary } from "./support/ops.ts";

function build(ops: Parameters<typeof applyOps>[1]): SessionTree {
	const tree = SessionTree.create({ cwd: "/project" });
	applyOps(tree, ops);
	return tree;
}

describe("tree invariants under random operations", () => {
	it("every entry is reachable from a root, exactly once", () => {
		fc.assert(
			fc.property(opsArbitrary, (ops) => {
				const tree = build(ops);
				const seen: string[] = [];
				const stack = tree.getTree();
				for (let node = stack.pop(); node; node = stack.pop()) {
					seen.push(node.entry.id);
					stack.push(...node.children);
				}
				expect(seen.sort()).toEqual(
					tree
						.getEntries()
						.map((e) => e.id)
						.sort(),
				);
				expect(tree.diagnostics).toEqual([]);
			}),
		);
	});

	it("the leaf path starts at a root, follows parentIds and ends at the leaf", () => {
		fc.assert(
			fc.property(opsArbitrary, (ops) => {
				const tree = build(ops);
				const path = tree.getBranch();
				if (tree.getLeafId() === null) {
					expect(path).toEqual([]);
					return;
				}
				expect(path[0]?.parentId).toBeNull();
				path.forEach((entry, index) => {
					if (index > 0) expect(entry.parentId).toBe(path[index - 1]?.id);
				});
				expect(path[path.length - 1]?.id).toBe(tree.getLeafId());
			}),
		);
	});

	it("children lists agree with parentIds", () => {
		fc.assert(
			fc.property(opsArbitrary, (ops) => {
				const tree = build(ops);
				for (const entry of tree.getEntries()) {
					for (const child of tree.getChildren(entry.id)) expect(child.parentId).toBe(entry.id);
				}
				const childCount = tree.getEntries().reduce((sum, e) => sum + tree.getChildren(e.id).length, 0);
				expect(childCount + tree.getRoots().length).toBe(tree.size);
			}),
		);
	});

	it("context never includes entries before the latest compaction's first kept entry", () => {
		fc.assert(
			fc.property(opsArbitrary, (ops) => {
				const tree = build(ops);
				for (const leaf of tree.getEntries()) {
					const path = tree.getBranch(leaf.id);
					const compactionIndex = path.findLastIndex((e) => e.type === "compaction");
					const included = buildContextEntries(path);
					if (compactionIndex < 0) continue;
					const compaction = path[compactionIndex] as SessionEntry & { firstKeptEntryId: string };
					const firstKept = path.findIndex((e) => e.id === compaction.firstKeptEntryId);
					const allowedFrom = firstKept >= 0 && firstKept < compactionIndex ? firstKept : compactionIndex;
					expect(included[0]).toBe(compaction);
					for (const entry of included.slice(1)) expect(path.indexOf(entry)).toBeGreaterThanOrEqual(allowedFrom);
					expect(tree.buildSessionContext(leaf.id).messages[0]).toMatchObject({ role: "compactionSummary" });
				}
			}),
		);
	});

	it("encode → parse → index is the identity", () => {
		fc.assert(
			fc.property(opsArbitrary, (ops) => {
				const tree = build(ops);
				const records: FileEntry[] = [tree.getHeader(), ...tree.getEntries()];
				const text = records.map(encodeEntry).join("");
				const parsed = parseSessionText(text);
				expect(parsed.diagnostics).toEqual([]);
				expect(parsed.entries).toEqual(JSON.parse(JSON.stringify(records)));
				const reloaded = SessionTree.fromRecords(parsed.entries);
				expect(reloaded.getLeafId()).toBe(tree.getEntries().at(-1)?.id ?? null);
				expect(parsed.entries.map(encodeEntry).join("")).toBe(text);
				expect(JSON.stringify(reloaded.getTree())).toBe(JSON.stringify(tree.getTree()));
				expect(reloaded.getSessionName()).toBe(tree.getSessionName());
			}),
		);
	});
});
