/**
 * `tree`: a session's tree as an indented outline. Linear runs stay at one depth and branches indent
 * (as pi's own tree view draws them); the current leaf, labels, compactions, branch summaries, context
 * edits and names are marked; a long run of ordinary entries collapses to its ends and a count (`--full`
 * shows every one). Built from the structure of a lazy open: only the rows shown are decoded, so a 1 GB
 * session draws in seconds. `--json`: `{ sessionId, path, leafId, nodes }`, nodes as the outline gives them.
 * @module
 */
import { entryKind, entryPreview, type OutlineNode, type SessionEntry } from "../../../src/index.ts";
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

/** Children in pi's order: oldest first by timestamp (stable). */
function childrenByParent(nodes: readonly OutlineNode[]): {
	roots: OutlineNode[];
	children: Map<string, OutlineNode[]>;
} {
	const children = new Map<string, OutlineNode[]>();
	const roots: OutlineNode[] = [];
	for (const node of nodes) {
		if (node.parentId === null) roots.push(node);
		else {
			const siblings = children.get(node.parentId);
			if (siblings) siblings.push(node);
			else children.set(node.parentId, [node]);
		}
	}
	const time = (node: OutlineNode) => new Date(node.timestamp).getTime();
	for (const siblings of children.values()) if (siblings.length > 1) siblings.sort((a, b) => time(a) - time(b));
	return { roots, children };
}

/** The ids from the leaf up to its root. */
function pathIds(nodes: readonly OutlineNode[], leafId: string | null): Set<string> {
	const parents = new Map(nodes.map((node) => [node.id, node.parentId]));
	const path = new Set<string>();
	for (let at = leafId; at !== null && at !== undefined && !path.has(at); at = parents.get(at) ?? null) path.add(at);
	return path;
}

/**
 * The rows of the drawing, top to bottom. Iterative (a path may hold millions of entries): each frame is
 * a chain of single children, drawn at one depth, ending at a branch point (its children become frames)
 * or at a leaf.
 */
export function treeRows(nodes: readonly OutlineNode[], leafId: string | null, full: boolean): TreeRow[] {
	const { roots, children } = childrenByParent(nodes);
	const onPath = pathIds(nodes, leafId);
	const isMarked = (node: OutlineNode) =>
		node.id === leafId || node.label !== undefined || node.childCount !== 1 || MARKED_TYPES.has(node.type);
	const rows: TreeRow[] = [];
	type Frame = { start: OutlineNode; first: string; rest: string };
	const frames: Frame[] = [];
	const pushChildren = (list: readonly OutlineNode[], rest: string) => {
		for (let index = list.length - 1; index >= 0; index--) {
			const last = index === list.length - 1;
			frames.push({
				start: list[index] as OutlineNode,
				first: `${rest}${last ? "└─ " : "├─ "}`,
				rest: `${rest}${last ? "   " : "│  "}`,
			});
		}
	};
	if (roots.length > 1) pushChildren(roots, "");
	else if (roots[0]) frames.push({ start: roots[0], first: "", rest: "" });
	for (let frame = frames.pop(); frame; frame = frames.pop()) {
		const chain: OutlineNode[] = [];
		for (let at: OutlineNode | undefined = frame.start; at; ) {
			chain.push(at);
			const next: OutlineNode[] | undefined = children.get(at.id);
			at = next?.length === 1 ? next[0] : undefined;
		}
		let run: OutlineNode[] = [];
		const flush = () => {
			const collapse = !full && run.length > COLLAPSE_LONGER_THAN;
			const shown = collapse ? [...run.slice(0, RUN_ENDS), undefined, ...run.slice(-RUN_ENDS)] : run;
			for (const node of shown) {
				const prefix = frame.rest;
				if (node) rows.push({ kind: "entry", node, prefix, onPath: onPath.has(node.id) });
				else {
					const hidden = run.length - 2 * RUN_ENDS;
					rows.push({ kind: "hidden", count: hidden, prefix, onPath: onPath.has((run[RUN_ENDS] as OutlineNode).id) });
				}
			}
			run = [];
		};
		chain.forEach((node, index) => {
			// The chain's first row carries the branch's connector; the rest hang below it.
			if (index === 0) {
				rows.push({ kind: "entry", node, prefix: frame.first, onPath: onPath.has(node.id) });
				return;
			}
			if (isMarked(node) || index === chain.length - 1) {
				flush();
				rows.push({ kind: "entry", node, prefix: frame.rest, onPath: onPath.has(node.id) });
			} else run.push(node);
		});
		flush();
		const last = chain[chain.length - 1] as OutlineNode;
		const branches = children.get(last.id);
		if (branches && branches.length > 1) pushChildren(branches, frame.rest);
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
	if (node.label !== undefined) marks.push(color.yellow(`[${node.label}]`));
	if (node.id === leafId) marks.push(color.green(color.bold("← leaf")));
	const special = MARKED_TYPES.has(node.type) ? color.magenta(kind) : kind;
	const preview = entry ? oneLine(entryPreview(entry), Math.max(20, width - row.prefix.length - 30)) : "";
	return [`${row.prefix}${pathMark} ${color.cyan(node.id)} ${special}`, preview && color.dim(preview), ...marks]
		.filter((part) => part !== "")
		.join(" ");
}

export async function treeCommand(context: RunContext, name: string, options: TreeOptions): Promise<void> {
	await withSession(context, name, async (session) => {
		const nodes = session.outline();
		const leafId = session.tree.getLeafId();
		const { output } = context;
		if (options.json) {
			output.line(JSON.stringify({ sessionId: session.header.id, path: session.path, leafId, nodes }, null, 2));
			return;
		}
		const rows = treeRows(nodes, leafId, options.full);
		const shownIds = rows.flatMap((row) => (row.kind === "entry" ? [row.node.id] : []));
		const entries = new Map<string, SessionEntry>();
		// Decoded a page at a time: a full drawing of a huge session never holds every body at once.
		const PAGE = 2000;
		const width = process.stdout.columns ?? 120;
		const { color } = output;
		const name = session.tree.getSessionName();
		output.line(
			color.bold(
				`${name ?? session.header.id}  ${color.dim(`${session.cwd} · ${nodes.length} entries · ${session.path}`)}`,
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
