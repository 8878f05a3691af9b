/**
 * The engine's cheap views of a session's tree: the outline of a navigator, and pages of a model context.
 * @module
 */
import type { AgentMessage, ModelRef } from "./entries.ts";
import type { SessionTree } from "./tree.ts";

/** One entry of the tree outline: enough to draw a navigator without cloning entries. */
export interface OutlineNode {
	id: string;
	parentId: string | null;
	type: string;
	/** The message role, for message entries. */
	role?: string;
	timestamp: string;
	label?: string;
	childCount: number;
}

/**
 * Which part of the outline: from `offset`, at most `limit` nodes (default all). A page that draws a long
 * session's navigator asks in pages, so that no one answer takes its thread long to receive.
 */
export interface OutlinePageRequest {
	offset?: number;
	limit?: number;
}

/** A slice of a leaf's model context. */
export interface ContextPage {
	messages: AgentMessage[];
	/** The id of the entry each message came from (a compaction gives its system message and summary). */
	entryIds: string[];
	/** Messages in the whole context. */
	total: number;
	offset: number;
	thinkingLevel: string;
	model: ModelRef | null;
}

/**
 * Which page of a context: of `leafId` (default: the current leaf), from `offset`, at most `limit`; or,
 * with `last`, the last `last` messages (the page a UI shows first; `offset` and `limit` are then ignored).
 * The answer's `offset` and `total` say where older pages start.
 */
export interface ContextPageRequest {
	leafId?: string | null;
	offset?: number;
	limit?: number;
	last?: number;
}

/**
 * Every entry of the tree as a flat outline node in file order. Parents are as the tree placed them (a
 * damaged file's re-rooted entries are roots), and an entry whose id was taken by an earlier one is left
 * out, as in `getTree`.
 */
export function outline(tree: SessionTree, page: OutlinePageRequest = {}): OutlineNode[] {
	const indexed = tree.getEntries().filter((entry) => tree.getEntry(entry.id) === entry);
	const offset = pageBound(page.offset ?? 0, "offset");
	const end = page.limit === undefined ? undefined : offset + pageBound(page.limit, "limit");
	return indexed.slice(offset, end).map((entry) => {
		const label = tree.getLabel(entry.id);
		const node: OutlineNode = {
			id: entry.id,
			parentId: tree.getParentId(entry.id) ?? null,
			type: entry.type,
			timestamp: entry.timestamp,
			childCount: tree.getChildren(entry.id).length,
		};
		if (entry.type === "message") node.role = entry.message?.role;
		if (label !== undefined) node.label = label;
		return node;
	});
}

/** A page bound as given by a caller: a whole number, at least 0 (NaN is refused). */
function pageBound(value: number, name: string): number {
	if (Number.isNaN(value)) throw new RangeError(`${name} is NaN`);
	return Math.max(0, Math.floor(value));
}

/** The messages `[offset, end)` a page request asks for, of a context of `total` messages. */
export function pageRange(page: ContextPageRequest, total: number): { offset: number; end: number } {
	if (page.last !== undefined) return { offset: Math.max(0, total - pageBound(page.last, "last")), end: total };
	const offset = Math.min(total, pageBound(page.offset ?? 0, "offset"));
	const end = page.limit === undefined ? total : Math.min(total, offset + pageBound(page.limit, "limit"));
	return { offset, end };
}

/** A page of the model context of `page.leafId` (default: the current leaf). */
export function contextPage(tree: SessionTree, page: ContextPageRequest): ContextPage {
	const context = tree.buildSessionProjection(page.leafId);
	const total = context.messages.length;
	const { offset, end } = pageRange(page, total);
	const entryIds = context.entries.flatMap(({ sourceEntry, messages }) => messages.map(() => sourceEntry.id));
	return {
		messages: context.messages.slice(offset, end),
		entryIds: entryIds.slice(offset, end),
		total,
		offset,
		thinkingLevel: context.thinkingLevel,
		model: context.model,
	};
}
