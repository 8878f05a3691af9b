/**
 * The tree as rows to draw, one per entry, depth first, the shorter branches of a fork first (a short
 * side branch then sits right under its branch point; the long line the session went on with follows
 * it, instead of coming 60,000 rows further down). A row is indented only where the tree forks, so a
 * linear run stays in one column however long. Built in typed arrays indexed by outline position, without
 * recursion (a session's tree is as deep as the session is long): laying out 60,000 entries takes 10–30
 * milliseconds and leaves little for the garbage collector.
 */
import type { OutlineNode } from "pi-session-tree";

export interface TreeLayout {
	/** The outline as the engine gave it (file order). */
	nodes: readonly OutlineNode[];
	/** Row → outline index. */
	order: Int32Array;
	/** Row → forks on the way from the root (its indent). */
	indent: Int32Array;
	/** Row → 1 when it starts one of several branches of its parent. */
	branchStart: Uint8Array;
	/** Outline index → row. */
	rowOf: Int32Array;
	/** Outline index → its parent's outline index, -1 for a root. */
	parent: Int32Array;
	/** Entry id → outline index. */
	indexOf: Map<string, number>;
	branchPoints: number;
	compactions: number;
	branchSummaries: number;
}

/** Entries laid out between two pauses: each stretch is a short task for the page. */
const STRETCH = 10_000;

/**
 * Lay out an outline (file order, as `engine.getOutline` gives it). `pause` is awaited between stretches
 * of work (the app passes "until the next task", so the page draws frames while a long session is laid out).
 */
export async function layoutTree(
	nodes: readonly OutlineNode[],
	pause: () => Promise<void> = async () => undefined,
): Promise<TreeLayout> {
	const n = nodes.length;
	const indexOf = new Map<string, number>();
	for (let i = 0; i < n; i++) {
		indexOf.set((nodes[i] as OutlineNode).id, i);
		if (i % STRETCH === STRETCH - 1) await pause();
	}
	const parent = new Int32Array(n).fill(-1);
	const childCount = new Int32Array(n);
	let branchPoints = 0;
	let compactions = 0;
	let branchSummaries = 0;
	for (let i = 0; i < n; i++) {
		if (i % STRETCH === STRETCH - 1) await pause();
		const node = nodes[i] as OutlineNode;
		const p = node.parentId === null ? undefined : indexOf.get(node.parentId);
		if (p !== undefined && p !== i) {
			parent[i] = p;
			childCount[p] = (childCount[p] as number) + 1;
		}
		if (node.childCount > 1) branchPoints++;
		if (node.type === "compaction") compactions++;
		if (node.type === "branch_summary") branchSummaries++;
	}
	await pause();
	const { start, children, roots } = childLists(parent, childCount);
	const size = subtreeSizes(roots, start, children);
	await pause();
	const bySize = (a: number, b: number) => (size[a] as number) - (size[b] as number) || a - b; // ties: file order
	for (let p = 0; p < n; p++) {
		if ((childCount[p] as number) > 1) children.subarray(start[p], start[p + 1]).sort(bySize);
	}
	roots.sort(bySize);
	await pause();
	const rows = depthFirst(roots, start, children, n);
	return { nodes, ...rows, parent, indexOf, branchPoints, compactions, branchSummaries };
}

/** Each entry's children as one slice of `children` (from `start[p]` to `start[p + 1]`), in file order; the roots. */
function childLists(parent: Int32Array, childCount: Int32Array) {
	const n = parent.length;
	const start = new Int32Array(n + 1);
	for (let p = 0; p < n; p++) start[p + 1] = (start[p] as number) + (childCount[p] as number);
	const children = new Int32Array(start[n] as number);
	const filled = start.slice(0, n);
	const roots: number[] = [];
	for (let i = 0; i < n; i++) {
		const p = parent[i] as number;
		if (p < 0) roots.push(i);
		else children[(filled[p] as number)++] = i;
	}
	return { start, children, roots: Int32Array.from(roots) };
}

/** Entries in each subtree, the entry itself included: counted from the leaves up, in reverse preorder. */
function subtreeSizes(roots: Int32Array, start: Int32Array, children: Int32Array): Int32Array {
	const n = start.length - 1;
	const order = new Int32Array(n);
	const stack = new Int32Array(n);
	let count = 0;
	let top = 0;
	for (const root of roots) stack[top++] = root;
	while (top > 0) {
		const node = stack[--top] as number;
		order[count++] = node;
		for (let c = start[node] as number; c < (start[node + 1] as number); c++) stack[top++] = children[c] as number;
	}
	const size = new Int32Array(n).fill(1);
	for (let k = count - 1; k >= 0; k--) {
		const node = order[k] as number;
		for (let c = start[node] as number; c < (start[node + 1] as number); c++) {
			size[node] = (size[node] as number) + (size[children[c] as number] as number);
		}
	}
	return size;
}

/** The rows: depth first, children in their (sorted) order, indented one more under a fork. */
function depthFirst(roots: Int32Array, start: Int32Array, children: Int32Array, n: number) {
	const order = new Int32Array(n);
	const indent = new Int32Array(n);
	const branchStart = new Uint8Array(n);
	const rowOf = new Int32Array(n).fill(-1);
	// The stack holds an entry, its indent and whether it starts a branch; children go on last first.
	const stackNode = new Int32Array(n);
	const stackIndent = new Int32Array(n);
	const stackBranch = new Uint8Array(n);
	let top = 0;
	const push = (from: number, to: number, list: Int32Array, depth: number) => {
		const forked = to - from > 1 ? 1 : 0;
		for (let c = to - 1; c >= from; c--) {
			stackNode[top] = list[c] as number;
			stackIndent[top] = depth + forked;
			stackBranch[top++] = forked;
		}
	};
	push(0, roots.length, roots, -1);
	let row = 0;
	while (top > 0) {
		const node = stackNode[--top] as number;
		order[row] = node;
		indent[row] = Math.max(0, stackIndent[top] as number);
		branchStart[row] = stackBranch[top] as number;
		rowOf[node] = row;
		push(start[node] as number, start[node + 1] as number, children, indent[row] as number);
		row++;
	}
	// Every entry is reached from a root (the engine's tree has no cycles); the slices only make sure.
	return {
		order: order.subarray(0, row),
		indent: indent.subarray(0, row),
		branchStart: branchStart.subarray(0, row),
		rowOf,
	};
}

/** Outline indices from `leafId` up to its root (the branch whose context the model gets), as flags. */
export function pathTo(layout: TreeLayout, leafId: string | null): Uint8Array {
	const onPath = new Uint8Array(layout.nodes.length);
	let i = leafId === null ? undefined : layout.indexOf.get(leafId);
	for (; i !== undefined && i >= 0 && !onPath[i]; i = layout.parent[i]) onPath[i] = 1;
	return onPath;
}
