/**
 * Comparing two readings of one session whose ids differ (pi's and ours each draw ids when migrating v1):
 * the id-bearing fields of an entry rewritten through a map, and a tree as ids, labels and children.
 * @module
 */
import type { SessionTreeNode } from "../../src/index.ts";

/** `value` (an entry) with every id-bearing field rewritten through `map`. */
export function mapIds<T>(value: T, map: (id: string) => string): T {
	const entry = { ...(value as Record<string, unknown>) };
	for (const key of ["id", "parentId", "targetId", "firstKeptEntryId"]) {
		if (typeof entry[key] === "string") entry[key] = map(entry[key] as string);
	}
	return entry as T;
}

/** What `getTree` shows of `nodes`: ids (through `map`), labels and children. */
export function treeShape(nodes: readonly SessionTreeNode[], map: (id: string) => string = (id) => id): unknown[] {
	return nodes.map((node) => ({ id: map(node.entry.id), label: node.label, children: treeShape(node.children, map) }));
}
