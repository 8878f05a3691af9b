/**
 * The engine's cheap views of a session's tree: the outline of a navigator, and pages of a model context.
 * @module
 */
import { contextMessageCount, contextMessagesAt } from "./context.ts";
import { contextEntriesOfWalk } from "./context-walk.ts";
import type { AgentMessage, ContextEditEntry, ModelRef, SessionEntry } from "./entries.ts";
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
	// The structure is enough: an outline never decodes a body.
	const offset = pageBound(page.offset ?? 0, "offset");
	const end = page.limit === undefined ? Number.POSITIVE_INFINITY : offset + pageBound(page.limit, "limit");
	const labels = tree.getLabels();
	const nodes: OutlineNode[] = [];
	let index = 0;
	tree.forEachIndexed((entry, parentId, childCount) => {
		if (index++ < offset || index > end) return;
		const node: OutlineNode = { id: entry.id, parentId, type: entry.type, timestamp: entry.timestamp, childCount };
		if (entry.type === "message") node.role = entry.message?.role;
		const label = labels.size > 0 ? labels.get(entry.id)?.label : undefined;
		if (label !== undefined) node.label = label;
		nodes.push(node);
	});
	return nodes;
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

/**
 * Which entries of a context a page takes: the context's entries (their structure), the latest edit of
 * each, the messages each contributes, and the range of entries `[first, last)` that holds the page's
 * messages `[offset, end)`. Only the structure is read, so a lazily read tree decodes nothing for it.
 */
/** What `planPage` finds: see there. */
export interface PagePlan {
	/** The settings at the leaf. */
	thinkingLevel: string;
	model: ModelRef | null;
	entries: SessionEntry[];
	edits: Map<string, ContextEditEntry>;
	total: number;
	offset: number;
	end: number;
	first: number;
	last: number;
	before: number;
}

export function planPage(tree: SessionTree, page: ContextPageRequest): PagePlan {
	// Read back from the leaf: a deep leaf's page costs its context, not the depth of the path.
	const walk = tree.contextWalk(page.leafId);
	const entries = contextEntriesOfWalk(walk);
	const edits = walk.edits ?? new Map<string, ContextEditEntry>();
	const counts = entries.map((entry, index) => contextMessageCount(entry, index, edits.get(entry.id)));
	const total = counts.reduce((sum, count) => sum + count, 0);
	const { offset, end } = pageRange(page, total);
	let first = 0;
	let before = 0; // messages of the entries before `first`
	while (first < entries.length && before + (counts[first] as number) <= offset) before += counts[first++] as number;
	let last = first;
	for (let position = before; last < entries.length && position < end; last++) position += counts[last] as number;
	const { thinkingLevel, model } = walk;
	return { thinkingLevel, model, entries, edits, total, offset, end, first, last, before };
}

/** The entries a page of the context needs whole: those holding its messages, and their edits. */
export function contextPageNeeds({ entries, edits, first, last }: PagePlan): SessionEntry[] {
	const needed = entries.slice(first, last);
	for (const entry of entries.slice(first, last)) {
		const edit = edits.get(entry.id);
		if (edit) needed.push(edit);
	}
	return needed;
}

/**
 * The page of the model context that `plan` (`planPage`) found, from the entries that hold its messages
 * alone (`contextPageNeeds`, decoded first in a lazily read tree), so the last page of a huge session is cheap.
 */
export function contextPage(tree: SessionTree, plan: PagePlan): ContextPage {
	const { thinkingLevel, model, entries, edits, total, offset, end, first, last, before } = plan;
	const messages: AgentMessage[] = [];
	const entryIds: string[] = [];
	let position = before;
	for (let index = first; index < last; index++) {
		const entry = tree.whole(entries[index] as SessionEntry);
		const edit = edits.get(entry.id);
		for (const message of contextMessagesAt(entry, index, edit && (tree.whole(edit) as ContextEditEntry))) {
			if (position >= offset && position < end) {
				messages.push(message);
				entryIds.push(entry.id);
			}
			position++;
		}
	}
	return { messages, entryIds, total, offset, thinkingLevel, model };
}
