/**
 * `getTree`'s nested nodes as a flat list and back, both without recursion. A nested tree of a long
 * session is as deep as the session is long: copying it (`structuredClone`) or sending it to another
 * thread recurses once per level and overflows the stack, so trees are copied and sent flat.
 * @module
 */
import type { SessionTreeNode } from "./entries.ts";

/** One node of a flat tree: its node without children, and where its parent is in the list (-1: a root). */
export interface FlatTreeNode {
	entry: SessionTreeNode["entry"];
	label: string | undefined;
	labelTimestamp: string | undefined;
	parent: number;
}

/**
 * The nodes in depth-first order, each after its parent, siblings in their order.
 * @example
 * const flat = flattenTree(tree.getTree());
 */
export function flattenTree(roots: readonly SessionTreeNode[]): FlatTreeNode[] {
	const flat: FlatTreeNode[] = [];
	const stack: { node: SessionTreeNode; parent: number }[] = [];
	for (let i = roots.length - 1; i >= 0; i--) stack.push({ node: roots[i] as SessionTreeNode, parent: -1 });
	for (let next = stack.pop(); next; next = stack.pop()) {
		const { node, parent } = next;
		const index = flat.push({ entry: node.entry, label: node.label, labelTimestamp: node.labelTimestamp, parent }) - 1;
		for (let i = node.children.length - 1; i >= 0; i--)
			stack.push({ node: node.children[i] as SessionTreeNode, parent: index });
	}
	return flat;
}

/**
 * The nested roots of a flat tree (see `flattenTree`): `unflattenTree(flattenTree(roots))` equals `roots`.
 * @example
 * const roots = unflattenTree(await engine.getFlatTree(handle));
 */
export function unflattenTree(flat: readonly FlatTreeNode[]): SessionTreeNode[] {
	const nodes = flat.map(
		(node): SessionTreeNode => ({
			entry: node.entry,
			children: [],
			label: node.label,
			labelTimestamp: node.labelTimestamp,
		}),
	);
	const roots: SessionTreeNode[] = [];
	flat.forEach((node, index) => {
		const parent = node.parent < 0 ? undefined : nodes[node.parent];
		(parent ? parent.children : roots).push(nodes[index] as SessionTreeNode);
	});
	return roots;
}
