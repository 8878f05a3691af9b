/**
 * From a path of the tree to what the model sees, by pi 1.6's rules. Each step is its own function (the
 * path, its settings, the entries in context, the messages of one entry, context edits) and
 * `buildSessionProjection` / `buildSessionContext` compose them.
 * @module
 */
import type {
	AgentMessage,
	CompactionEntry,
	ContextEditEntry,
	ModelRef,
	ProjectedSessionEntry,
	SessionContext,
	SessionEntry,
	SessionProjection,
	TextContent,
} from "./entries.ts";

/** Index entries by id (first occurrence wins, as in the tree). */
export function indexEntries(entries: readonly SessionEntry[]): Map<string, SessionEntry> {
	const byId = new Map<string, SessionEntry>();
	for (const entry of entries) if (!byId.has(entry.id)) byId.set(entry.id, entry);
	return byId;
}

/**
 * The path root → leaf. `leafId === null` means "before the first entry" (empty path); an absent or
 * unknown leaf means the last entry. O(path length); a `parentId` cycle ends the walk instead of hanging.
 * @example
 * const path = buildSessionPath(entries, leafId);
 */
export function buildSessionPath(
	entries: readonly SessionEntry[],
	leafId?: string | null,
	byId: ReadonlyMap<string, SessionEntry> = indexEntries(entries),
): SessionEntry[] {
	if (leafId === null) return [];
	const leaf = (leafId === undefined ? undefined : byId.get(leafId)) ?? entries[entries.length - 1];
	const reversed: SessionEntry[] = [];
	let seen: Set<SessionEntry> | undefined;
	for (let current = leaf; current; current = current.parentId ? byId.get(current.parentId) : undefined) {
		// As many steps as entries means a repeat is possible (a cycle, which may have begun earlier when
		// entries off the cycle make up the count): from then on, the path ends before the first repeat.
		if (reversed.length >= byId.size) {
			if (!seen) {
				seen = new Set();
				const repeat = firstRepeat(reversed, seen);
				if (repeat >= 0) {
					reversed.length = repeat;
					break;
				}
			}
			if (seen.has(current)) break;
			seen.add(current);
		}
		reversed.push(current);
	}
	return reversed.reverse();
}

/** The index of the first entry of `list` seen before it (-1: none), with the entries before it added to `seen`. */
function firstRepeat(list: readonly SessionEntry[], seen: Set<SessionEntry>): number {
	for (const [index, entry] of list.entries()) {
		if (seen.has(entry)) return index;
		seen.add(entry);
	}
	return -1;
}

/** Thinking level and model in effect at the end of a path. */
export interface SessionContextSettings {
	thinkingLevel: string;
	model: ModelRef | null;
}

/**
 * The settings at the end of a path: the last thinking level change (default `"off"`) and the last
 * model change or assistant message.
 * @example
 * const { thinkingLevel, model } = getSessionContextSettings(path);
 */
export function getSessionContextSettings(path: readonly SessionEntry[]): SessionContextSettings {
	let thinkingLevel = "off";
	let model: ModelRef | null = null;
	for (const entry of path) {
		if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
		else if (entry.type === "model_change") model = { provider: entry.provider, modelId: entry.modelId };
		// A message that is null or missing (a damaged file) is skipped; pi throws on it.
		else if (entry.type === "message" && entry.message?.role === "assistant") {
			model = { provider: entry.message.provider, modelId: entry.message.model };
		}
	}
	return { thinkingLevel, model };
}

function latestCompactionIndex(path: readonly SessionEntry[]): number {
	for (let i = path.length - 1; i >= 0; i--) if (path[i]?.type === "compaction") return i;
	return -1;
}

function isSystemMessageEntry(entry: SessionEntry): boolean {
	return entry.type === "message" && entry.message?.role === "system";
}

/**
 * The entries of a path that make up the context, in order (pi 1.6's rule). With a compaction on the path
 * the latest one comes first, then the entries from its `firstKeptEntryId` up to it except system messages
 * (the compaction carries the prompt in force), then every entry after it. Entries of every kind are
 * kept, so a view can show them; only some of them produce messages.
 * @example
 * const shown = contextEntriesOfPath(tree.getBranch());
 */
export function contextEntriesOfPath(path: readonly SessionEntry[]): SessionEntry[] {
	const compactionIndex = latestCompactionIndex(path);
	if (compactionIndex < 0) return [...path];
	const compaction = path[compactionIndex] as CompactionEntry;
	// Searched back from the compaction (ids on a path are unique): a long path before it is not copied.
	let firstKept = compactionIndex - 1;
	while (firstKept >= 0 && (path[firstKept] as SessionEntry).id !== compaction.firstKeptEntryId) firstKept--;
	const kept =
		firstKept < 0 ? [] : path.slice(firstKept, compactionIndex).filter((entry) => !isSystemMessageEntry(entry));
	return [compaction, ...kept, ...path.slice(compactionIndex + 1)];
}

/**
 * pi's `buildContextEntries`: the entries in context for a leaf (default: the last entry; `null`: none).
 * @example
 * const entries = buildContextEntries(tree.getEntries(), tree.getLeafId());
 */
export function buildContextEntries(
	entries: readonly SessionEntry[],
	leafId?: string | null,
	byId?: ReadonlyMap<string, SessionEntry>,
): SessionEntry[] {
	return contextEntriesOfPath(buildSessionPath(entries, leafId, byId));
}

/**
 * pi's `getLatestCompactionEntry`: the last compaction entry of a list, or `null`.
 * @example
 * const compaction = getLatestCompactionEntry(tree.getBranch());
 */
export function getLatestCompactionEntry(entries: readonly SessionEntry[]): CompactionEntry | null {
	const index = latestCompactionIndex(entries);
	return index < 0 ? null : (entries[index] as CompactionEntry);
}

function epochMillis(isoTimestamp: string): number {
	return new Date(isoTimestamp).getTime();
}

/**
 * The messages one entry contributes to the context, as pi 1.6 makes them: a message entry its message
 * (a missing `content` becomes `""` for system and `[]` for user, assistant and tool-result messages), a
 * custom message entry a `custom` message, a branch summary with text a `branchSummary`, a compaction its
 * `systemMessage` (if any) and a `compactionSummary`. Other kinds contribute none.
 * @example
 * const messages = buildContextEntries(entries, leafId).flatMap(sessionEntryToContextMessages);
 */
export function sessionEntryToContextMessages(entry: SessionEntry): AgentMessage[] {
	switch (entry.type) {
		case "message": {
			const message = entry.message;
			// Only a damaged file has no message here; pi throws on it, we leave it out.
			if (message === null || message === undefined) return [];
			const content = (message as { content?: unknown }).content;
			if (content === null || content === undefined) {
				if (message.role === "system") return [{ ...message, content: "" }];
				if (message.role === "user" || message.role === "assistant" || message.role === "toolResult") {
					return [{ ...message, content: [] }];
				}
			}
			return [message];
		}
		case "custom_message":
			return [
				{
					role: "custom",
					customType: entry.customType,
					content: entry.content ?? [],
					display: entry.display,
					details: entry.details,
					timestamp: epochMillis(entry.timestamp),
				},
			];
		case "branch_summary":
			return entry.summary
				? [
						{
							role: "branchSummary",
							summary: entry.summary,
							fromId: entry.fromId,
							timestamp: epochMillis(entry.timestamp),
						},
					]
				: [];
		case "compaction": {
			const summary: AgentMessage = {
				role: "compactionSummary",
				summary: entry.summary,
				tokensBefore: entry.tokensBefore,
				timestamp: epochMillis(entry.timestamp),
			};
			return entry.systemMessage ? [entry.systemMessage, summary] : [summary];
		}
		default:
			return [];
	}
}

/** Roles whose content a context edit replaces; other messages of an edited entry stay as they are. */
const EDITABLE_ROLES: ReadonlySet<string> = new Set(["user", "assistant", "toolResult", "custom"]);

/**
 * pi's `projectContextEntry`: the messages of one entry with a context edit applied. A `null` replacement
 * removes them; otherwise the replacement's content takes the place of theirs, a string becoming one text
 * block for assistant and tool-result messages (which need a list).
 * @example
 * const messages = projectContextEntry(entry, latestEditOf.get(entry.id));
 */
export function projectContextEntry(entry: SessionEntry, edit: ContextEditEntry | undefined): AgentMessage[] {
	const messages = sessionEntryToContextMessages(entry);
	if (!edit) return messages;
	const replacement = edit.replacement;
	if (replacement === null) return [];
	return messages.map((message) => {
		if (!EDITABLE_ROLES.has(message.role)) return message;
		const content = replacement.content;
		const asBlocks = (message.role === "assistant" || message.role === "toolResult") && typeof content === "string";
		const text: TextContent[] | undefined = asBlocks ? [{ type: "text", text: content }] : undefined;
		return { ...message, content: text ?? content } as AgentMessage;
	});
}

/**
 * The latest context edit of each target among `entries`. An edit without a replacement (only a damaged
 * file has one; pi throws on it) is no edit.
 */
export function latestEdits(entries: readonly SessionEntry[]): Map<string, ContextEditEntry> {
	const edits = new Map<string, ContextEditEntry>();
	for (const entry of entries) {
		if (entry.type === "context_edit" && entry.replacement !== undefined) edits.set(entry.targetId, entry);
	}
	return edits;
}

/** The messages the entry at `index` of a path's context entries contributes, `edit` applied. */
export function contextMessagesAt(
	entry: SessionEntry,
	index: number,
	edit: ContextEditEntry | undefined,
): AgentMessage[] {
	// An older compaction kept in the newest one's range contributes none.
	return entry.type === "compaction" && index > 0 ? [] : projectContextEntry(entry, edit);
}

/**
 * How many messages `contextMessagesAt` gives, without making them (a page of a long context counts every
 * entry's messages to find where it starts).
 */
export function contextMessageCount(entry: SessionEntry, index: number, edit: ContextEditEntry | undefined): number {
	if (edit?.replacement === null) return 0;
	switch (entry.type) {
		case "message":
			return entry.message === null || entry.message === undefined ? 0 : 1;
		case "custom_message":
			return 1;
		case "branch_summary":
			return entry.summary ? 1 : 0;
		case "compaction":
			return index > 0 ? 0 : entry.systemMessage ? 2 : 1;
		default:
			return 0;
	}
}

/**
 * The projection of a path that is already built: the entries in context, each with the messages it
 * contributes after context edits, and the settings at its end. `whole` gives the whole entry of each
 * entry in context (a lazily read tree's path holds the structure of deferred entries: enough for the
 * choice of entries and the settings, which it reads).
 */
export function projectionOfPath(
	path: readonly SessionEntry[],
	whole?: (entry: SessionEntry) => SessionEntry,
): SessionProjection {
	const inContext = contextEntriesOfPath(path);
	const contextEntries = whole ? inContext.map(whole) : inContext;
	const edits = latestEdits(contextEntries);
	const entries = contextEntries.map(
		(sourceEntry, index): ProjectedSessionEntry => ({
			sourceEntry,
			messages: contextMessagesAt(sourceEntry, index, edits.get(sourceEntry.id)),
		}),
	);
	return { entries, messages: entries.flatMap((entry) => entry.messages), ...getSessionContextSettings(path) };
}

/** The context of a path that is already built (`whole` as for `projectionOfPath`). */
export function contextOfPath(
	path: readonly SessionEntry[],
	whole?: (entry: SessionEntry) => SessionEntry,
): SessionContext {
	// As `projectionOfPath`'s messages, without an object and a list for each entry in context.
	const inContext = contextEntriesOfPath(path);
	const contextEntries = whole ? inContext.map(whole) : inContext;
	const edits = latestEdits(contextEntries);
	const messages: AgentMessage[] = [];
	contextEntries.forEach((entry, index) => {
		for (const message of contextMessagesAt(entry, index, edits.get(entry.id))) messages.push(message);
	});
	return { messages, ...getSessionContextSettings(path) };
}

/**
 * The system messages in the context of a path, in order: those of system message entries and of the
 * leading compaction, less those a context edit removes (a `null` replacement; other edits leave system
 * messages as they are). Neither kind is ever deferred, and an edit's structure says whether it removes,
 * so a lazily read path's structure gives them.
 */
export function systemMessagesOfPath(path: readonly SessionEntry[]): AgentMessage[] {
	const entries = contextEntriesOfPath(path);
	const edits = latestEdits(entries);
	return entries
		.filter((entry, index) => (entry.type === "compaction" && index === 0) || isSystemMessageEntry(entry))
		.flatMap((entry) =>
			contextMessagesAt(entry, 0, edits.get(entry.id)).filter((message) => message.role === "system"),
		);
}

/**
 * pi's `buildSessionProjection`: the context for a leaf (default: the last entry) with the entry each
 * message came from.
 * @example
 * for (const { sourceEntry, messages } of buildSessionProjection(entries, leafId).entries) show(sourceEntry, messages);
 */
export function buildSessionProjection(
	entries: readonly SessionEntry[],
	leafId?: string | null,
	byId?: ReadonlyMap<string, SessionEntry>,
): SessionProjection {
	return projectionOfPath(buildSessionPath(entries, leafId, byId));
}

/**
 * pi's `buildSessionContext`: the messages, thinking level and model for a leaf (default: the last entry).
 * @example
 * const { messages, model, thinkingLevel } = buildSessionContext(entries, leafId);
 */
export function buildSessionContext(
	entries: readonly SessionEntry[],
	leafId?: string | null,
	byId?: ReadonlyMap<string, SessionEntry>,
): SessionContext {
	return contextOfPath(buildSessionPath(entries, leafId, byId));
}
