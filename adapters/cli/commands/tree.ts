/**
 * `tree`: a session's tree as an indented outline. Linear runs stay at one depth and branches indent
 * (as pi's own tree view draws them); the current leaf, labels, compactions, branch summaries, context
 * edits and names are marked; a long run of ordinary entries collapses to its ends and a count (`--full`
 * shows every one). Built from the structure of a lazy open: only the rows shown are decoded, so a 1 GB
 * session draws in seconds. `--json`: `{ sessionId, path, leafId, nodes }`, nodes as the outline gives them.
 * @module
 */
import { labelText } from "../../../src/entry-text.ts";
import { entryKind, entryPreview, type OutlineNode, type SessionEntry, type SessionTree } from "../../../src/index.ts";
import { withSession } from "../read-session.ts";
import type { RunContext } from "../run-context.ts";
import { type Colors, oneLine } from "../terminal.ts";

export interface TreeOptions {
	full: boolean;
	json: boolean;
}

/** Ordinary entries in a run longer than this collapse: the first and last `RUN_ENDS` stay. */
const COLLAPSE_LONGER_THAN = 6;
const RUN_ENDS = 2;

const MARKED_TYPES = new Set(["compaction", "branch_summary", "context_edit", "session_info", "label"]);

/** A row of the drawing: an entry, or the count of entries a collapsed run hides. */
export type TreeRow =
	| { kind: "entry"; node: OutlineNode; prefix: string; onPath: boolean }
	| { kind: "hidden"; count: number; prefix: string; onPath: boolean };

/**
 * What the drawing walks: the roots, the children of a node in pi's order (oldest first by timestamp,
 * stable), and the ids of the path from the root to the leaf, by depth (so a node is on it when the
 * path holds its id at its depth: no set of a huge path's ids).
 */
export interface TreeShape {
	roots: readonly OutlineNode[];
	childrenOf(id: string): readonly OutlineNode[];
	path: readonly string[];
}

/** A node's time for ordering siblings (a timestamp that is no string or number orders as NaN: left in place). */
const timeOf = (node: OutlineNode) => {
	const time: unknown = node.timestamp;
	return typeof time === "string" || typeof time === "number" ? new Date(time).getTime() : Number.NaN;
};

function oldestFirst(nodes: OutlineNode[]): OutlineNode[] {
	if (nodes.length > 1) nodes.sort((a, b) => timeOf(a) - timeOf(b));
	return nodes;
}

/** The shape of a flat outline (file order, parents first) and a leaf. */
export function shapeOfOutline(nodes: readonly OutlineNode[], leafId: string | null): TreeShape {
	const byId = new Map(nodes.map((node) => [node.id, node]));
	const children = new Map<string, OutlineNode[]>();
	for (const node of nodes) {
		if (node.parentId === null) continue;
		const siblings = children.get(node.parentId);
		if (siblings) siblings.push(node);
		else children.set(node.parentId, [node]);
	}
	for (const siblings of children.values()) oldestFirst(siblings);
	const path: string[] = [];
	for (
		let at = leafId === null ? undefined : byId.get(leafId);
		at;
		at = at.parentId === null ? undefined : byId.get(at.parentId)
	)
		path.push(at.id);
	return {
		roots: oldestFirst(nodes.filter((node) => node.parentId === null)),
		childrenOf: (id) => children.get(id) ?? [],
		path: path.reverse(),
	};
}

/**
 * The shape of a session's tree, read from its structure as the walk asks (nothing is built for the
 * entries it passes but their outline nodes).
 */
export function shapeOfTree(tree: SessionTree): TreeShape {
	const labels = tree.getLabels();
	const nodeOf = (entry: SessionEntry, parentId: string | null): OutlineNode => {
		const node: OutlineNode = {
			id: entry.id,
			parentId,
			type: entry.type,
			timestamp: entry.timestamp,
			childCount: tree.structureOfChildren(entry.id).length,
		};
		if (entry.type === "message") node.role = entry.message?.role;
		const label = labels.size > 0 ? labels.get(entry.id)?.label : undefined;
		if (label !== undefined) node.label = label;
		return node;
	};
	return {
		roots: oldestFirst(tree.structureOfRoots().map((entry) => nodeOf(entry, null))),
		childrenOf: (id) => oldestFirst(tree.structureOfChildren(id).map((entry) => nodeOf(entry, id))),
		path: tree.structureOfPath().map((entry) => entry.id),
	};
}

/**
 * The rows of the drawing, top to bottom. Iterative (a path may hold millions of entries): each frame is
 * a chain of single children, drawn at one depth, ending at a branch point (its children become frames)
 * or at a leaf.
 */
export function treeRows(shape: TreeShape, full: boolean): TreeRow[] {
	const { path } = shape;
	const leafId = path.length > 0 ? path[path.length - 1] : undefined;
	const isMarked = (node: OutlineNode) =>
		node.id === leafId || node.label !== undefined || node.childCount !== 1 || MARKED_TYPES.has(node.type);
	const rows: TreeRow[] = [];
	type Frame = { start: OutlineNode; depth: number; first: string; rest: string };
	const frames: Frame[] = [];
	const pushChildren = (list: readonly OutlineNode[], depth: number, rest: string) => {
		for (let index = list.length - 1; index >= 0; index--) {
			const last = index === list.length - 1;
			frames.push({
				start: list[index] as OutlineNode,
				depth,
				first: `${rest}${last ? "└─ " : "├─ "}`,
				rest: `${rest}${last ? "   " : "│  "}`,
			});
		}
	};
	if (shape.roots.length > 1) pushChildren(shape.roots, 0, "");
	else if (shape.roots[0]) frames.push({ start: shape.roots[0], depth: 0, first: "", rest: "" });
	for (let frame = frames.pop(); frame; frame = frames.pop()) {
		const { depth, rest } = frame;
		const onPath = (node: OutlineNode, index: number) => path[depth + index] === node.id;
		const chain: OutlineNode[] = [];
		let branches: readonly OutlineNode[] = [];
		for (let at: OutlineNode | undefined = frame.start; at; ) {
			chain.push(at);
			branches = shape.childrenOf(at.id);
			at = branches.length === 1 ? branches[0] : undefined;
		}
		// A run of ordinary entries, by their indices in the chain.
		let runStart = -1;
		const flush = (runEnd: number) => {
			if (runStart < 0) return;
			const length = runEnd - runStart;
			const collapse = !full && length > COLLAPSE_LONGER_THAN;
			for (let index = runStart; index < runEnd; index++) {
				if (collapse && index === runStart + RUN_ENDS) {
					rows.push({
						kind: "hidden",
						count: length - 2 * RUN_ENDS,
						prefix: rest,
						onPath: onPath(chain[index] as OutlineNode, index),
					});
					index = runEnd - RUN_ENDS - 1;
					continue;
				}
				const node = chain[index] as OutlineNode;
				rows.push({ kind: "entry", node, prefix: rest, onPath: onPath(node, index) });
			}
			runStart = -1;
		};
		for (let index = 0; index < chain.length; index++) {
			const node = chain[index] as OutlineNode;
			// The chain's first row carries the branch's connector; the rest hang below it.
			if (index === 0) rows.push({ kind: "entry", node, prefix: frame.first, onPath: onPath(node, index) });
			else if (isMarked(node) || index === chain.length - 1) {
				flush(index);
				rows.push({ kind: "entry", node, prefix: rest, onPath: onPath(node, index) });
			} else if (runStart < 0) runStart = index;
		}
		flush(chain.length);
		if (branches.length > 1) pushChildren(branches, depth + chain.length, rest);
	}
	return rows;
}

function rowText(
	row: TreeRow,
	entry: SessionEntry | undefined,
	leafId: string | null,
	color: Colors,
	width: number,
): string {
	const pathMark = row.onPath ? color.green("•") : color.dim("·");
	if (row.kind === "hidden") return `${row.prefix}${pathMark} ${color.dim(`… ${row.count} more entries`)}`;
	const { node } = row;
	const kind = entryKind(node);
	const marks: string[] = [];
	if (node.label !== undefined) marks.push(color.yellow(`[${labelText(node.label)}]`));
	if (node.id === leafId) marks.push(color.green(color.bold("← leaf")));
	const special = MARKED_TYPES.has(node.type) ? color.magenta(kind) : kind;
	const preview = entry ? oneLine(entryPreview(entry), Math.max(20, width - row.prefix.length - 30)) : "";
	return [`${row.prefix}${pathMark} ${color.cyan(node.id)} ${special}`, preview && color.dim(preview), ...marks]
		.filter((part) => part !== "")
		.join(" ");
}

export async function treeCommand(context: RunContext, name: string, options: TreeOptions): Promise<void> {
	await withSession(context, name, async (session) => {
		const leafId = session.tree.getLeafId();
		const { output } = context;
		if (options.json) {
			const nodes = session.outline();
			output.json({ sessionId: session.header.id, path: session.path, leafId, nodes });
			return;
		}
		const rows = treeRows(shapeOfTree(session.tree), options.full);
		const shownIds = rows.flatMap((row) => (row.kind === "entry" ? [row.node.id] : []));
		const entries = new Map<string, SessionEntry>();
		// Decoded a page at a time: a full drawing of a huge session never holds every body at once.
		const PAGE = 2000;
		const width = process.stdout.columns ?? 120;
		const { color } = output;
		const name = session.tree.getSessionName();
		output.line(
			color.bold(
				`${name ?? session.header.id}  ${color.dim(`${session.cwd} · ${session.tree.getEntryCount()} entries · ${session.path}`)}`,
			),
		);
		for (let start = 0, shown = 0; start < rows.length; start += PAGE) {
			const page = rows.slice(start, start + PAGE);
			const ids = shownIds.slice(shown, shown + page.filter((row) => row.kind === "entry").length);
			shown += ids.length;
			entries.clear();
			(await session.getEntriesById(ids)).forEach((entry, index) => {
				if (entry) entries.set(ids[index] as string, entry);
			});
			for (const row of page) {
				output.line(rowText(row, row.kind === "entry" ? entries.get(row.node.id) : undefined, leafId, color, width));
			}
		}
	});
}
