/**
 * From a path of the tree to what the model sees. Each step is its own function (path, settings,
 * the entries that produce messages, the messages of one entry) and `buildSessionContext` composes them.
 * @module
 */
import type {
	AgentMessage,
	CompactionEntry,
	ModelRef,
	SessionContext,
	SessionEntry,
	StoredMessage,
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
		// As many steps as entries means a repeat is possible (a cycle): from then on, stop at the first one.
		if (reversed.length >= byId.size) {
			seen ??= new Set(reversed);
			if (seen.has(current)) break;
			seen.add(current);
		}
		reversed.push(current);
	}
	return reversed.reverse();
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
		else if (entry.type === "message" && entry.message.role === "assistant") {
			model = { provider: entry.message.provider, modelId: entry.message.model };
		}
	}
	return { thinkingLevel, model };
}

function latestCompactionIndex(path: readonly SessionEntry[]): number {
	for (let i = path.length - 1; i >= 0; i--) if (path[i]?.type === "compaction") return i;
	return -1;
}

/**
 * The entries of a path whose messages reach the model, in order. With a compaction on the path the
 * latest one comes first, then the entries from its `firstKeptEntryId` up to it, then those after it;
 * entries before the first kept entry never appear.
 * @example
 * const contextEntries = buildContextEntries(buildSessionPath(entries, leafId));
 */
export function buildContextEntries(path: readonly SessionEntry[]): SessionEntry[] {
	const compactionIndex = latestCompactionIndex(path);
	if (compactionIndex < 0) return path.filter(producesMessage);
	const compaction = path[compactionIndex] as CompactionEntry;
	const kept = path.slice(0, compactionIndex);
	const firstKept = kept.findIndex((entry) => entry.id === compaction.firstKeptEntryId);
	return [
		compaction,
		...(firstKept < 0 ? [] : kept.slice(firstKept).filter(producesMessage)),
		...path.slice(compactionIndex + 1).filter(producesMessage),
	];
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

/** Entry kinds that produce a message when they are not the leading compaction. */
function producesMessage(entry: SessionEntry): boolean {
	return (
		entry.type === "message" || entry.type === "custom_message" || (entry.type === "branch_summary" && !!entry.summary)
	);
}

function epochMillis(isoTimestamp: string): number {
	return new Date(isoTimestamp).getTime();
}

/** Old files may hold `content: null`; the model expects a list. */
function withContentList(message: StoredMessage | AgentMessage): AgentMessage {
	return "content" in message && message.content === null ? ({ ...message, content: [] } as AgentMessage) : message;
}

/**
 * The messages one entry contributes to the context (zero or one). Entry kinds that are not messages
 * (settings, labels, names, extension state) contribute none.
 * @example
 * const messages = buildContextEntries(path).flatMap(sessionEntryToContextMessages);
 */
export function sessionEntryToContextMessages(entry: SessionEntry): AgentMessage[] {
	switch (entry.type) {
		case "message":
			return [withContentList(entry.message)];
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
		case "compaction":
			return [
				{
					role: "compactionSummary",
					summary: entry.summary,
					tokensBefore: entry.tokensBefore,
					timestamp: epochMillis(entry.timestamp),
				},
			];
		default:
			return [];
	}
}

/** The context of a path that is already built. */
export function contextOfPath(path: readonly SessionEntry[]): SessionContext {
	const messages = buildContextEntries(path).flatMap(sessionEntryToContextMessages);
	return { messages, ...getSessionContextSettings(path) };
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
