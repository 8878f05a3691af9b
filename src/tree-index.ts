/**
 * The index behind `SessionTree`: entries in file order, nodes by id with parents, children and depth,
 * the roots, the leaf, and what label and `session_info` entries resolve to. It links entries and undoes
 * the last append; it decides nothing about malformed input (see tree-load.ts) and builds no entries.
 * @module
 */
import type { SessionEntry, SessionTreeNode } from "./entries.ts";
import { EntryNotFoundError } from "./errors.ts";
import { NodeTable } from "./node-table.ts";
import { applyLabel, normalizeSessionName, type ResolvedLabel } from "./tree-labels.ts";

/**
 * One indexed entry. `depth` (0 for a root) sizes a branch before walking it. Its children, in append
 * order, are a list through the nodes themselves (the first, the last, each one's next): most nodes of a
 * session have one child, and an array for it cost two objects a node (56 bytes; 33 MB of a lazy open of
 * 591,677 entries), where these fields cost 16 bytes more.
 */
export interface IndexNode {
	entry: SessionEntry;
	parent: IndexNode | null;
	firstChild: IndexNode | null;
	lastChild: IndexNode | null;
	nextSibling: IndexNode | null;
	depth: number;
}

/** The children of `node`, in append order. */
export function childrenOf(node: IndexNode): IndexNode[] {
	const children: IndexNode[] = [];
	for (let child = node.firstChild; child; child = child.nextSibling) children.push(child);
	return children;
}

/** How many children `node` has. */
export function childCountOf(node: IndexNode): number {
	let count = 0;
	for (let child = node.firstChild; child; child = child.nextSibling) count++;
	return count;
}

/**
 * Plain fields, read and written directly by `SessionTree` and the loader: this class is internal, and the
 * append and load paths stay free of accessors.
 */
export class TreeIndex {
	readonly entries: SessionEntry[] = [];
	readonly nodes: NodeTable<IndexNode> = new NodeTable();
	readonly roots: IndexNode[] = [];
	readonly labels: Map<string, ResolvedLabel> = new Map();
	leaf: IndexNode | null = null;
	name: string | undefined;
	/** What `retractLast` puts back: the last appended entry, the leaf and name before it, and the labels before a label. */
	#lastAppended: SessionEntry | undefined;
	#leafBeforeAppend: IndexNode | null = null;
	#nameBeforeAppend: string | undefined;
	#labelsBeforeAppend: [string, ResolvedLabel][] | undefined;

	/**
	 * A node for `entry` (already in `entries`), indexed by its id, not linked yet (see `attach`);
	 * `undefined`, and nothing changes, when an earlier entry has the id. One lookup does both.
	 */
	claim(entry: SessionEntry): IndexNode | undefined {
		const node: IndexNode = { entry, parent: null, firstChild: null, lastChild: null, nextSibling: null, depth: 0 };
		return this.nodes.addIfAbsent(entry.id, node) === undefined ? node : undefined;
	}

	/** Index an entry (already in `entries`, its id not taken) under `parent`; it becomes the leaf. */
	link(entry: SessionEntry, parent: IndexNode | null): void {
		const node = this.claim(entry);
		if (!node) throw new Error(`internal error: id ${entry.id} is already indexed`);
		this.attach(node, parent);
	}

	/** Link a claimed node under `parent`; it becomes the leaf. */
	attach(node: IndexNode, parent: IndexNode | null): void {
		node.parent = parent;
		node.depth = parent ? parent.depth + 1 : 0;
		const entry = node.entry;
		if (parent) {
			if (parent.lastChild) parent.lastChild.nextSibling = node;
			else parent.firstChild = node;
			parent.lastChild = node;
		} else this.roots.push(node);
		this.leaf = node;
		if (entry.type === "label") applyLabel(this.labels, entry);
		else if (entry.type === "session_info") this.name = normalizeSessionName(entry.name);
	}

	/** Add a new entry under `parent`, remembering what `retractLast` needs (in fields: no object per append). */
	append(entry: SessionEntry, parent: IndexNode | null): void {
		this.#lastAppended = entry;
		this.#leafBeforeAppend = this.leaf;
		this.#nameBeforeAppend = this.name;
		this.#labelsBeforeAppend = entry.type === "label" ? [...this.labels] : undefined;
		this.entries.push(entry);
		this.link(entry, parent);
	}

	/** Undo the last `append`, if it made the very last entry and nothing was linked under it since. */
	retractLast(): void {
		const last = this.#lastAppended;
		const node = last && this.nodes.get(last.id);
		if (!last || !node || this.entries[this.entries.length - 1] !== last || node.firstChild) {
			throw new Error("internal error: only the last appended entry can be retracted");
		}
		this.#lastAppended = undefined;
		this.entries.pop();
		this.nodes.deleteLast(last.id);
		const parent = node.parent;
		if (!parent) this.roots.pop();
		else if (parent.firstChild === node) {
			parent.firstChild = null;
			parent.lastChild = null;
		} else {
			// It is the last child (appended last): the one before it becomes the last.
			let before = parent.firstChild as IndexNode;
			while (before.nextSibling !== node) before = before.nextSibling as IndexNode;
			before.nextSibling = null;
			parent.lastChild = before;
		}
		this.leaf = this.#leafBeforeAppend;
		this.name = this.#nameBeforeAppend;
		if (this.#labelsBeforeAppend) {
			// Cleared and refilled, not replaced: `getLabels()` hands out this very map.
			this.labels.clear();
			for (const [target, label] of this.#labelsBeforeAppend) this.labels.set(target, label);
		}
	}

	require(id: string): IndexNode {
		const node = this.nodes.get(id);
		if (!node) throw new EntryNotFoundError(id);
		return node;
	}

	/** Entries from the root to `node`, filled by depth so the walk up needs no reverse. */
	path(node: IndexNode): SessionEntry[] {
		const path = new Array<SessionEntry>(node.depth + 1);
		for (let at: IndexNode | null = node; at; at = at.parent) path[at.depth] = at.entry;
		return path;
	}

	/** Whether `node` is the leaf or one of its ancestors. */
	isOnBranch(node: IndexNode): boolean {
		for (let at = this.leaf; at; at = at.parent) if (at === node) return true;
		return false;
	}

	/**
	 * The whole tree: roots and children oldest first by timestamp, with resolved labels, each entry as
	 * `whole` gives it. Built iteratively, so deep sessions cannot overflow the stack.
	 */
	tree(whole: (entry: SessionEntry) => SessionEntry): SessionTreeNode[] {
		const out = new Map<IndexNode, SessionTreeNode>();
		for (const node of this.nodes.values()) {
			const resolved = this.labels.get(node.entry.id);
			// Both label keys always there, `undefined` when unlabelled, as pi's nodes have them.
			const entry = whole(node.entry);
			out.set(node, { entry, children: [], label: resolved?.label, labelTimestamp: resolved?.timestamp });
		}
		for (const [node, treeNode] of out) {
			if (node.parent) (out.get(node.parent) as SessionTreeNode).children.push(treeNode);
		}
		for (const treeNode of out.values()) sortOldestFirst(treeNode.children);
		return this.roots.map((root) => out.get(root) as SessionTreeNode);
	}
}

/** Stable sort by timestamp, skipped when already in order (the usual case for append-only files). */
function sortOldestFirst(nodes: SessionTreeNode[]): void {
	if (nodes.length < 2) return;
	// A timestamp that is no string or number (a damaged file's) orders as NaN, where Date would throw.
	const time = (node: SessionTreeNode): number => {
		const value: unknown = node.entry.timestamp;
		return typeof value === "string" || typeof value === "number" ? new Date(value).getTime() : Number.NaN;
	};
	let sorted = true;
	for (let i = 1; i < nodes.length && sorted; i++)
		sorted = !(time(nodes[i - 1] as SessionTreeNode) > time(nodes[i] as SessionTreeNode));
	if (!sorted) nodes.sort((a, b) => time(a) - time(b));
}
