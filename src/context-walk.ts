/**
 * The context of a leaf found by walking parent links back from the leaf, for a tree that holds its
 * entries whole: it reads the entries after the latest compaction, the range that compaction keeps, and
 * further back only as far as the settings need (the last thinking level change and the last model), so
 * a deep leaf costs its context, not its depth. The answer is `contextOfPath`'s on the same path (pi
 * 1.6's rules, see context.ts); the walk only chooses which entries it reads.
 * @module
 */
import { projectContextEntry, sessionEntryToContextMessages } from "./context.ts";
import type {
	AgentMessage,
	CompactionEntry,
	ContextEditEntry,
	ModelRef,
	ProjectedSessionEntry,
	SessionContext,
	SessionEntry,
	SessionProjection,
} from "./entries.ts";

/** A node of a tree as the walk needs it: its entry, its parent, and its depth (0 for a root). */
export interface WalkNode {
	readonly entry: SessionEntry;
	readonly parent: WalkNode | null;
	readonly depth: number;
}

/** What the walk from a leaf found. */
export interface ContextWalk {
	/** The latest compaction on the path, which leads the context, if any. */
	compaction: CompactionEntry | undefined;
	/** The other entries in context, newest first (the range the compaction keeps, then those after it). */
	newestFirst: SessionEntry[];
	/** The latest context edit of each target among the entries in context; `undefined` when there is none. */
	edits: Map<string, ContextEditEntry> | undefined;
	thinkingLevel: string;
	model: ModelRef | null;
}

/**
 * The settings at the end of a path, read newest first: the first thinking level change and the first model
 * change or assistant message seen are the path's last. A change without a level (a damaged file) still
 * sets it, to `undefined`, as in pi; a message that is null or missing is skipped (pi throws on it).
 */
class SettingsFromEnd {
	thinkingFound = false;
	thinkingLevel: string | undefined;
	/** `undefined` until found. */
	model: ModelRef | undefined;

	get complete(): boolean {
		return this.thinkingFound && this.model !== undefined;
	}

	see(entry: SessionEntry): void {
		if (entry.type === "message") {
			if (this.model === undefined) {
				const message = entry.message;
				if (message?.role === "assistant") this.model = { provider: message.provider, modelId: message.model };
			}
		} else if (entry.type === "thinking_level_change") {
			if (!this.thinkingFound) {
				this.thinkingFound = true;
				this.thinkingLevel = entry.thinkingLevel;
			}
		} else if (entry.type === "model_change") {
			this.model ??= { provider: entry.provider, modelId: entry.modelId };
		}
	}
}

/**
 * Walk back from `leaf` (`null`: the empty path). `nodeOf` finds a node by id; it bounds the search for a
 * compaction's first kept entry (whose depth says how far back it is, and which is on the path only if
 * the walk arrives at that very node).
 */
export function walkContext(leaf: WalkNode | null, nodeOf: (id: string) => WalkNode | undefined): ContextWalk {
	const newestFirst: SessionEntry[] = [];
	const settings = new SettingsFromEnd();
	let compactionNode: WalkNode | undefined;
	let node = leaf;
	// The entries after the latest compaction.
	for (; node !== null; node = node.parent) {
		const entry = node.entry;
		if (entry.type === "compaction") {
			compactionNode = node;
			break;
		}
		newestFirst.push(entry);
		settings.see(entry);
	}
	let compaction: CompactionEntry | undefined;
	if (compactionNode) {
		compaction = compactionNode.entry as CompactionEntry;
		const after = newestFirst.length;
		const firstKeptId = compaction.firstKeptEntryId;
		const firstKept = typeof firstKeptId === "string" ? nodeOf(firstKeptId) : undefined;
		// The range it keeps: from the compaction's parent back to its first kept entry, system messages left out
		// (the compaction carries the prompt in force). Its own id, an id later on the path or on no path keeps none.
		node = compactionNode.parent;
		if (firstKept && firstKept.depth < compactionNode.depth) {
			let last: WalkNode | undefined;
			for (; node !== null && node.depth >= firstKept.depth; node = node.parent) {
				last = node;
				const entry = node.entry;
				if (!(entry.type === "message" && entry.message?.role === "system")) newestFirst.push(entry);
				settings.see(entry);
			}
			// Arrived at another entry of its depth: the first kept entry is on another branch.
			if (last !== firstKept) newestFirst.length = after;
		}
	}
	// Further back only for settings still unknown.
	for (; node !== null && !settings.complete; node = node.parent) settings.see(node.entry);
	let edits: Map<string, ContextEditEntry> | undefined;
	// Newest first, so the first edit of a target is its latest. One without a replacement (a damaged file) is none.
	for (const entry of newestFirst) {
		if (entry.type === "context_edit" && entry.replacement !== undefined) {
			edits ??= new Map();
			if (!edits.has(entry.targetId)) edits.set(entry.targetId, entry);
		}
	}
	const thinkingLevel = settings.thinkingFound ? (settings.thinkingLevel as string) : "off";
	return { compaction, newestFirst, edits, thinkingLevel, model: settings.model ?? null };
}

/** Push the messages `entry` contributes to the context (`leads`: it is the compaction that leads it). */
function pushMessages(
	out: AgentMessage[],
	entry: SessionEntry,
	leads: boolean,
	edit: ContextEditEntry | undefined,
): void {
	if (edit) {
		if (!(entry.type === "compaction" && !leads))
			for (const message of projectContextEntry(entry, edit)) out.push(message);
		return;
	}
	if (entry.type === "message") {
		const message = entry.message;
		// The usual case, without the array `sessionEntryToContextMessages` makes: the message as it is.
		if (message !== null && message !== undefined) {
			const content = (message as { content?: unknown }).content;
			if (content !== null && content !== undefined) {
				out.push(message);
				return;
			}
		}
	} else if (entry.type === "compaction" && !leads) return; // an older compaction kept in range contributes none
	for (const message of sessionEntryToContextMessages(entry)) out.push(message);
}

/** The entries in context, in order: the leading compaction, then the rest oldest first. */
export function contextEntriesOfWalk({ compaction, newestFirst }: ContextWalk): SessionEntry[] {
	const entries: SessionEntry[] = compaction ? [compaction] : [];
	for (let i = newestFirst.length - 1; i >= 0; i--) entries.push(newestFirst[i] as SessionEntry);
	return entries;
}

/** The context that `walk` found (`contextOfPath` of the same path). */
export function contextOfWalk(walk: ContextWalk): SessionContext {
	const { compaction, newestFirst, edits } = walk;
	const messages: AgentMessage[] = [];
	if (compaction) pushMessages(messages, compaction, true, edits?.get(compaction.id));
	for (let i = newestFirst.length - 1; i >= 0; i--) {
		const entry = newestFirst[i] as SessionEntry;
		pushMessages(messages, entry, false, edits?.get(entry.id));
	}
	return { messages, thinkingLevel: walk.thinkingLevel, model: walk.model };
}

/** The projection that `walk` found (`projectionOfPath` of the same path). */
export function projectionOfWalk(walk: ContextWalk): SessionProjection {
	const { compaction, newestFirst, edits } = walk;
	const entries: ProjectedSessionEntry[] = [];
	const messages: AgentMessage[] = [];
	const add = (sourceEntry: SessionEntry, leads: boolean): void => {
		const own: AgentMessage[] = [];
		pushMessages(own, sourceEntry, leads, edits?.get(sourceEntry.id));
		entries.push({ sourceEntry, messages: own });
		for (const message of own) messages.push(message);
	};
	if (compaction) add(compaction, true);
	for (let i = newestFirst.length - 1; i >= 0; i--) add(newestFirst[i] as SessionEntry, false);
	return { entries, messages, thinkingLevel: walk.thinkingLevel, model: walk.model };
}
