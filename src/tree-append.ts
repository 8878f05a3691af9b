/**
 * What `SessionTree` writes: a new session's header and the entries its `append*` methods make, with
 * their fields in pi's order (that order is the JSONL), the timestamp clock, and the checks that refuse
 * an append before anything is made.
 * @module
 */
import {
	type BranchSummaryEntry,
	type CompactionEntry,
	type ContextEditReplacement,
	CURRENT_SESSION_VERSION,
	type SessionEntry,
	type SessionHeader,
	type Usage,
	type UsageEntry,
} from "./entries.ts";
import { InvalidArgumentError, InvalidContextEditError } from "./errors.ts";
import { createSessionId } from "./ids.ts";
import { replaySystemMessages } from "./system-message.ts";
import type { TreeIndex } from "./tree-index.ts";

export interface NewSessionOptions {
	cwd: string;
	/** Session id; a UUIDv7 when absent. */
	id?: string;
	parentSession?: string;
}

export interface SessionTreeOptions {
	/** Clock for header and entry timestamps (tests pin it). */
	now?: () => Date;
	/**
	 * Called with every entry an `append*` method makes (not with loaded entries), before the entry is
	 * added: if it throws, the append is refused and the tree is left as it was.
	 */
	onAppend?: (entry: SessionEntry) => void;
}

/** The fields every new entry starts with. */
export interface EntryBase {
	id: string;
	parentId: string | null;
	timestamp: string;
}

/** The header of a new, empty v3 session. */
export function newSessionHeader(options: NewSessionOptions & SessionTreeOptions): SessionHeader {
	return {
		type: "session",
		version: CURRENT_SESSION_VERSION,
		id: options.id ?? createSessionId(),
		timestamp: (options.now?.() ?? new Date()).toISOString(),
		cwd: options.cwd,
		parentSession: options.parentSession,
	};
}

let lastMillis = Number.NaN;
let lastIso = "";
/** The current time as an ISO string; formatted once per millisecond, since appends come in bursts. */
function isoNow(): string {
	const millis = Date.now();
	if (millis !== lastMillis) {
		lastMillis = millis;
		lastIso = new Date(millis).toISOString();
	}
	return lastIso;
}

/** The entry timestamp clock: `now` when given (tests pin it), else the cached wall clock. */
export function timestampClock(now: (() => Date) | undefined): () => string {
	return now ? () => now().toISOString() : isoNow;
}

/**
 * Throws a `TypeError` unless a message is an object (pi would write anything; no reader could use it).
 * `asWritten` is what `JSON.stringify` makes of it at the top, where that is known (its `toJSON` result).
 */
export function assertObjectMessage(message: unknown, asWritten: unknown = message): void {
	if (typeof asWritten === "object" && asWritten !== null && !Array.isArray(asWritten)) return;
	const what = asWritten === null ? "null" : Array.isArray(asWritten) ? "an array" : typeof asWritten;
	throw new InvalidArgumentError(`cannot append a message that is not an object (it would be written as ${what})`);
}

/**
 * The replacement a context edit of `targetId` stores, after the checks `appendContextEdit` documents, in
 * its order: the replacement's shape, then the target's existence, place and kind.
 */
export function contextEditReplacement(
	index: TreeIndex,
	targetId: string,
	replacement: ContextEditReplacement | null,
): ContextEditReplacement | null {
	const content = (replacement as { content?: unknown } | null)?.content;
	if (
		replacement !== null &&
		(typeof replacement !== "object" || (typeof content !== "string" && !Array.isArray(content)))
	) {
		throw new InvalidArgumentError("Context edit replacement must be null or contain string/array content");
	}
	const target = index.require(targetId);
	if (!index.isOnBranch(target)) throw new InvalidContextEditError(targetId, "is not on the active branch");
	const entry = target.entry;
	const role = entry.type === "message" ? entry.message?.role : entry.type === "custom_message" ? "custom" : undefined;
	const editable = entry.type === "custom_message" || role === "user" || role === "assistant" || role === "toolResult";
	if (!editable) throw new InvalidContextEditError(targetId, "does not contribute editable model content");
	const asBlocks = (role === "assistant" || role === "toolResult") && typeof content === "string";
	return asBlocks ? { content: [{ type: "text", text: content }] } : replacement;
}

/**
 * A compaction (see `SessionTree.appendCompaction`), its `systemMessage` replayed from `context` (the
 * messages in context before it) and stamped with the compaction's own time.
 */
export function compactionEntry<T>(
	base: EntryBase,
	context: readonly unknown[],
	summary: string,
	firstKeptEntryId: string | null | undefined,
	tokensBefore: number,
	details: T | undefined,
	fromHook: boolean | undefined,
	usage: Usage | undefined,
): CompactionEntry<T> {
	const system = replaySystemMessages(context);
	return {
		type: "compaction",
		...base,
		summary,
		firstKeptEntryId: firstKeptEntryId ?? base.id,
		tokensBefore,
		details,
		usage,
		fromHook,
		...(system ? { systemMessage: { ...system, timestamp: new Date(base.timestamp).getTime() } } : {}),
	};
}

/** A usage entry; `note` is written only when there is one. */
export function usageEntry(
	base: EntryBase,
	kind: string,
	provider: string,
	model: string,
	usage: Usage,
	note: string | undefined,
): UsageEntry {
	return { type: "usage", ...base, kind, provider, model, usage, ...(note ? { note } : {}) };
}

/** A branch summary; `fromId` is the leaf being left, or `"root"`. */
export function branchSummaryEntry(
	base: EntryBase,
	fromId: string,
	summary: string,
	details: unknown,
	fromHook: boolean | undefined,
	usage: Usage | undefined,
): BranchSummaryEntry {
	return { type: "branch_summary", ...base, fromId, summary, details, usage, fromHook };
}
