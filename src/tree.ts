/**
 * The in-memory index of one session: every operation of pi's `SessionManager` that needs no I/O.
 * Appends are O(1), `getChildren` O(children), `getBranch` and context O(path length), the name O(1).
 * Malformed input never hangs or throws: tree-load.ts says how each case is resolved and reported.
 *
 * `SessionTree` is the one public face; its parts are module-internal: tree-index.ts (entries, nodes, leaf,
 * labels and name, undo of the last append), tree-load.ts (indexing records, with diagnostics),
 * tree-append.ts (the header and entries it writes, and the checks of appends) and tree-labels.ts
 * (resolving labels and names, and carrying labels into a fork).
 * @module
 */
import { contextEntriesOfPath, contextOfPath, projectionOfPath, systemMessagesOfPath } from "./context.ts";
import {
	type ContextWalk,
	contextEntriesOfWalk,
	contextOfWalk,
	projectionOfWalk,
	walkContext,
} from "./context-walk.ts";
import type {
	AgentMessage,
	ContextEditEntry,
	ContextEditReplacement,
	CustomEntry,
	CustomMessageEntry,
	FileEntry,
	ImageContent,
	LabelEntry,
	ModelChangeEntry,
	SessionContext,
	SessionEntry,
	SessionHeader,
	SessionInfoEntry,
	SessionMessageEntry,
	SessionProjection,
	SessionTreeNode,
	StoredMessage,
	TextContent,
	ThinkingLevelChangeEntry,
	Usage,
} from "./entries.ts";
import type { EntryBodies } from "./entry-bodies.ts";
import { EntryNotFoundError, EntryNotLoadedError, InvalidContextEditError } from "./errors.ts";
import { createEntryId } from "./ids.ts";
import type { Diagnostic } from "./jsonl.ts";
import {
	assertObjectMessage,
	branchSummaryEntry,
	compactionEntry,
	contextEditReplacement,
	type EntryBase,
	type NewSessionOptions,
	newSessionHeader,
	type SessionTreeOptions,
	timestampClock,
	usageEntry,
} from "./tree-append.ts";
import { childCountOf, childrenOf, type IndexNode, TreeIndex } from "./tree-index.ts";
import { forkOfBranch, normalizeSessionName, type ResolvedLabel } from "./tree-labels.ts";
import { headerOfRecords, type RecordLocation, TreeLoader } from "./tree-load.ts";

export type { NewSessionOptions, RecordLocation, ResolvedLabel, SessionTreeOptions };
export { assertObjectMessage, EntryNotFoundError, EntryNotLoadedError, InvalidContextEditError, normalizeSessionName };

/**
 * A session tree bound to no storage.
 * @example
 * const tree = SessionTree.create({ cwd: "/project" });
 * const first = tree.appendMessage({ role: "user", content: "hi", timestamp: Date.now() });
 * tree.appendLabelChange(first, "start");
 * console.log(tree.buildSessionContext().messages.length); // 1
 *
 * A tree read lazily from a file (`load: "lazy"`) holds the structure of its big entries only: its reads
 * that hand out such an entry throw `EntryNotLoadedError` unless a read of its session decoded it just now.
 */
export class SessionTree {
	readonly #header: SessionHeader;
	readonly #index = new TreeIndex();
	readonly #loader = new TreeLoader(this.#index);
	readonly #timestamp: () => string;
	#onAppend: ((entry: SessionEntry) => void) | undefined;
	#bodies: EntryBodies | undefined;
	/** The whole entry of an indexed one (itself, unless its body was deferred). */
	readonly #whole = (entry: SessionEntry): SessionEntry => (this.#bodies ? this.#bodies.whole(entry) : entry);
	/** `entries` (an array of its own, made by the caller) with each deferred one whole; as it is in a whole tree. */
	#wholeOf(entries: SessionEntry[]): SessionEntry[] {
		return this.#bodies ? entries.map(this.#whole) : entries;
	}

	/** `bodies`: where the deferred entries of a lazily read tree are decoded from (internal to the package). */
	constructor(header: SessionHeader, options: SessionTreeOptions = {}, bodies?: EntryBodies) {
		this.#header = header;
		this.#timestamp = timestampClock(options.now);
		this.#onAppend = options.onAppend;
		this.#bodies = bodies;
	}

	/** Replace the `onAppend` hook (see `SessionTreeOptions`). */
	setOnAppend(hook: ((entry: SessionEntry) => void) | undefined): void {
		this.#onAppend = hook;
	}

	/** A new, empty v3 session. */
	static create(options: NewSessionOptions & SessionTreeOptions, bodies?: EntryBodies): SessionTree {
		return new SessionTree(newSessionHeader(options), options, bodies);
	}

	/**
	 * Index migrated records (header first). Problems are reported in `diagnostics`, never thrown,
	 * except a missing header, which makes the records no session at all.
	 */
	static fromRecords(
		records: readonly FileEntry[],
		options: SessionTreeOptions & { file?: string; locations?: readonly RecordLocation[] } = {},
	): SessionTree {
		const tree = new SessionTree(headerOfRecords(records, options), options);
		const loader = tree.#loader;
		// Indexed in place: no copy of the records, which may be millions.
		for (let i = 1; i < records.length; i++) loader.add(records[i] as SessionEntry, options.locations?.[i]);
		return tree;
	}

	// Reading ---------------------------------------------------------------------------------------

	getHeader(): SessionHeader {
		return this.#header;
	}
	getSessionId(): string {
		return this.#header.id;
	}
	getCwd(): string {
		return this.#header.cwd;
	}
	/** Every entry in file order, including those that could not be indexed. */
	getEntries(): SessionEntry[] {
		return this.#wholeOf([...this.#index.entries]);
	}
	/** Entries `[start, end)` in file order, without copying the rest. */
	entriesBetween(start: number, end: number): SessionEntry[] {
		return this.#wholeOf(this.#index.entries.slice(start, end));
	}
	/** Number of entries (header excluded). */
	get size(): number {
		return this.#index.entries.length;
	}
	/** pi's `getEntryCount`: the number of entries with an id of their own (duplicates and id-less ones not counted). */
	getEntryCount(): number {
		return this.#index.nodes.size;
	}
	/** Problems found while indexing, in the order they were found. */
	get diagnostics(): readonly Diagnostic[] {
		return this.#loader.diagnostics;
	}
	getLeafId(): string | null {
		return this.#index.leaf?.entry.id ?? null;
	}
	getLeafEntry(): SessionEntry | undefined {
		const leaf = this.#index.leaf;
		return leaf ? this.#whole(leaf.entry) : undefined;
	}
	getEntry(id: string): SessionEntry | undefined {
		const node = this.#index.nodes.get(id);
		return node && this.#whole(node.entry);
	}
	/**
	 * The parent of an entry as this tree placed it: `null` for a root, including an entry made a root
	 * because its parent was missing or came later in the file; `undefined` for an id not in the tree.
	 */
	getParentId(id: string): string | null | undefined {
		const node = this.#index.nodes.get(id);
		return node && (node.parent?.entry.id ?? null);
	}
	/** Direct children of an entry, in append order. */
	getChildren(parentId: string): SessionEntry[] {
		return this.#wholeOf(this.structureOfChildren(parentId));
	}
	/** Root entries (entries with no parent, orphans included), in append order. */
	getRoots(): SessionEntry[] {
		return this.#wholeOf(this.structureOfRoots());
	}
	getLabel(id: string): string | undefined {
		return this.#index.labels.get(id)?.label;
	}
	/** All labels that are set, by target id, in the order they were first set. */
	getLabels(): ReadonlyMap<string, ResolvedLabel> {
		return this.#index.labels;
	}
	/** Name from the latest `session_info` entry; an empty name clears it. */
	getSessionName(): string | undefined {
		return this.#index.name;
	}

	/** Entries from the root to `fromId` (default: the leaf). Empty when the id is unknown or the leaf is reset. */
	getBranch(fromId?: string): SessionEntry[] {
		return this.#wholeOf(this.structureOfBranch(fromId));
	}

	/** The model context at `leafId` (default: the current leaf). */
	buildSessionContext(leafId?: string | null): SessionContext {
		if (this.#bodies) return contextOfPath(this.structureOfPath(leafId), this.#whole);
		return contextOfWalk(this.contextWalk(leafId));
	}

	/** The context at `leafId` (default: the current leaf) with the entry each message came from. */
	buildSessionProjection(leafId?: string | null): SessionProjection {
		if (this.#bodies) return projectionOfPath(this.structureOfPath(leafId), this.#whole);
		return projectionOfWalk(this.contextWalk(leafId));
	}

	/** The entries in context at `leafId` (default: the current leaf), every kind included. */
	buildContextEntries(leafId?: string | null): SessionEntry[] {
		if (this.#bodies) return this.#wholeOf(contextEntriesOfPath(this.structureOfPath(leafId)));
		return contextEntriesOfWalk(this.contextWalk(leafId));
	}

	/**
	 * The context at `leafId` read back from the leaf (context-walk.ts), the path never built: as
	 * `structureOfPath`, `null`, a reset leaf or an unknown id is the empty path. It reads the entries as the
	 * tree holds them (of a lazily read tree, their structure, which is all the walk looks at), so the whole
	 * context is built from it only for a whole tree; a lazy one plans pages with it (engine-views.ts).
	 */
	contextWalk(leafId?: string | null): ContextWalk {
		const nodes = this.#index.nodes;
		const leaf = leafId === null ? null : leafId === undefined ? this.#index.leaf : (nodes.get(leafId) ?? null);
		return walkContext(leaf, (id) => nodes.get(id));
	}

	/**
	 * The whole tree: roots and children oldest first by timestamp, with resolved labels. Built
	 * iteratively, so deep sessions cannot overflow the stack.
	 */
	getTree(): SessionTreeNode[] {
		return this.#index.tree(this.#whole);
	}

	// The structure (internal to the package) -------------------------------------------------------
	// What the tree indexed, whole or, in a lazily read tree, the structure of a deferred entry (its kind,
	// ids, time and role only). For the package's own rules and the session's asynchronous reads, which
	// decode what they hand out; never hand these out as entries.

	/** Where the deferred entries of a lazily read tree are decoded from; `undefined` for a whole tree. */
	get bodies(): EntryBodies | undefined {
		return this.#bodies;
	}
	/** The whole entry of an indexed one (see `EntryNotLoadedError`). */
	whole(entry: SessionEntry): SessionEntry {
		return this.#whole(entry);
	}
	/**
	 * Hold the decoded entries of `loaded` (structure → whole) in place of their structures; once none is
	 * deferred, the tree is whole and reads nothing from a file.
	 */
	adoptWhole(loaded: ReadonlyMap<SessionEntry, SessionEntry>): void {
		const bodies = this.#bodies;
		if (!bodies) return;
		const index = this.#index;
		index.entries.forEach((entry, position) => {
			const whole = loaded.get(entry);
			if (whole) index.entries[position] = whole;
		});
		for (const node of index.nodes.values()) node.entry = loaded.get(node.entry) ?? node.entry;
		if (index.entries.some((entry) => bodies.isDeferred(entry))) return;
		this.#bodies = undefined;
	}
	structureOf(id: string): SessionEntry | undefined {
		return this.#index.nodes.get(id)?.entry;
	}
	structureBetween(start: number, end: number): SessionEntry[] {
		return this.#index.entries.slice(start, end);
	}
	/**
	 * Each indexed entry's structure, its parent's id and its number of children, in file order (an entry
	 * whose id an earlier one took is not indexed): an outline's nodes, without a lookup per entry.
	 */
	forEachIndexed(visit: (entry: SessionEntry, parentId: string | null, childCount: number) => void): void {
		for (const node of this.#index.nodes.values())
			visit(node.entry, node.parent ? node.parent.entry.id : null, childCountOf(node));
	}
	structureOfRoots(): SessionEntry[] {
		return this.#index.roots.map((root) => root.entry);
	}
	structureOfChildren(parentId: string): SessionEntry[] {
		const node = this.#index.nodes.get(parentId);
		return node ? childrenOf(node).map((child) => child.entry) : [];
	}
	/** Root → `fromId` (default: the leaf); empty when the id is unknown or the leaf is reset. */
	structureOfBranch(fromId?: string): SessionEntry[] {
		const start = fromId === undefined ? this.#index.leaf : this.#index.nodes.get(fromId);
		return start ? this.#index.path(start) : [];
	}
	/** The path root → `leafId` (default: the current leaf; `null` or a reset leaf: none). */
	structureOfPath(leafId?: string | null): SessionEntry[] {
		return leafId === null || (leafId === undefined && !this.#index.leaf) ? [] : this.structureOfBranch(leafId);
	}

	// Moving the leaf -------------------------------------------------------------------------------

	/** Move the leaf to an existing entry; the next append becomes its child. History is unchanged. */
	branch(entryId: string): void {
		this.#index.leaf = this.#index.require(entryId);
	}

	/** Make the next append a new root. */
	resetLeaf(): void {
		this.#index.leaf = null;
	}

	// Appending -------------------------------------------------------------------------------------

	/** Append a message; one that is not an object (pi would write it, and no reader could use it) is refused. */
	appendMessage(message: StoredMessage | AgentMessage): string {
		assertObjectMessage(message);
		return this.#append<SessionMessageEntry>({ type: "message", ...this.#base(), message });
	}

	appendThinkingLevelChange(thinkingLevel: string): string {
		return this.#append<ThinkingLevelChangeEntry>({ type: "thinking_level_change", ...this.#base(), thinkingLevel });
	}

	appendModelChange(provider: string, modelId: string): string {
		return this.#append<ModelChangeEntry>({ type: "model_change", ...this.#base(), provider, modelId });
	}

	/**
	 * Record a compaction. It keeps the entries from `firstKeptEntryId` on; `null` (or none) keeps none,
	 * stored as the compaction's own id. As pi 1.6 it carries the prompt and tools replayed from the
	 * context so far as its `systemMessage`, which leads the compacted context.
	 */
	appendCompaction<T = unknown>(
		summary: string,
		firstKeptEntryId: string | null | undefined,
		tokensBefore: number,
		details?: T,
		fromHook?: boolean,
		usage?: Usage,
	): string {
		const base = this.#base();
		// Only the system messages in context matter (they are replayed), and those are never deferred.
		const context = systemMessagesOfPath(this.structureOfPath());
		return this.#append(
			compactionEntry(base, context, summary, firstKeptEntryId, tokensBefore, details, fromHook, usage),
		);
	}

	/** Record model usage that is not an assistant message (it never reaches the context). */
	appendUsage(kind: string, provider: string, model: string, usage: Usage, note?: string): string {
		return this.#append(usageEntry(this.#base(), kind, provider, model, usage, note));
	}

	/**
	 * Replace (or with `null` remove) an entry's content in the context of this branch from here on; the
	 * entry itself never changes. The target must be on the active branch and be a user, assistant or
	 * tool-result message or a custom message entry; a string becomes one text block for assistant and
	 * tool-result targets.
	 */
	appendContextEdit(targetId: string, replacement: ContextEditReplacement | null): string {
		const stored = contextEditReplacement(this.#index, targetId, replacement);
		return this.#append<ContextEditEntry>({ type: "context_edit", ...this.#base(), targetId, replacement: stored });
	}

	appendCustomEntry(customType: string, data?: unknown): string {
		return this.#append<CustomEntry>({ type: "custom", customType, data, ...this.#base() });
	}

	/** Set the session name (trimmed, line breaks flattened); an empty name clears it. */
	appendSessionInfo(name: string): string {
		const title = normalizeSessionName(name) ?? "";
		return this.#append<SessionInfoEntry>({ type: "session_info", ...this.#base(), name: title });
	}

	appendCustomMessageEntry<T = unknown>(
		customType: string,
		content: string | (TextContent | ImageContent)[],
		display: boolean,
		details?: T,
	): string {
		return this.#append<CustomMessageEntry<T>>({
			type: "custom_message",
			customType,
			content,
			display,
			details,
			...this.#base(),
		});
	}

	/** Set (or, with `undefined` or `""`, clear) the label of an existing entry. */
	appendLabelChange(targetId: string, label: string | undefined): string {
		this.#index.require(targetId);
		return this.#append<LabelEntry>({ type: "label", ...this.#base(), targetId, label });
	}

	/**
	 * Move the leaf to `branchFromId` (or before the first entry with `null`) and record a summary of
	 * the branch being left; `fromId` is the leaf being left, or `"root"` when there was none.
	 */
	branchWithSummary(
		branchFromId: string | null,
		summary: string,
		details?: unknown,
		fromHook?: boolean,
		usage?: Usage,
	): string {
		const target = branchFromId === null ? null : this.#index.require(branchFromId);
		const fromId = this.#index.leaf?.entry.id ?? "root";
		return this.#append(branchSummaryEntry(this.#base(target), fromId, summary, details, fromHook, usage), target);
	}

	/**
	 * The entries of a fork that ends at `leafId` (pi's `createBranchedSession`): the root → leaf path
	 * without label entries, then one label entry for each label that still applies to that path,
	 * chained after it and carrying the label's own timestamp. The source entries are not changed.
	 */
	forkEntries(leafId: string): SessionEntry[] {
		// A deferred entry copied with another parent stays deferred to the same line (see entry-bodies.ts).
		return forkOfBranch(this.#index.path(this.#index.require(leafId)), this.#index.labels);
	}

	// Indexing --------------------------------------------------------------------------------------

	/**
	 * Index an existing entry (as read from a file) without changing it. Returns the diagnostic when
	 * the entry is malformed; the entry is kept either way.
	 */
	addEntry(entry: SessionEntry, location?: RecordLocation): Diagnostic | undefined {
		return this.#loader.add(entry, location);
	}

	#base(parent: IndexNode | null = this.#index.leaf): EntryBase {
		return {
			id: createEntryId(this.#index.nodes),
			parentId: parent?.entry.id ?? null,
			timestamp: this.#timestamp(),
		};
	}

	/** Add an entry made by an `append*` method under `parent` (the leaf unless given); it becomes the leaf. */
	#append<E extends SessionEntry>(entry: E, parent: IndexNode | null = this.#index.leaf): string {
		this.#onAppend?.(entry);
		this.#index.append(entry, parent);
		return entry.id;
	}

	/**
	 * Undo the last `append*`, whose write failed, so that no later entry is made a child of an entry the
	 * file does not have (pi rolls back the same way). Only the very last entry, if an `append*` made it.
	 */
	retractLastAppend(): void {
		this.#index.retractLast();
	}
}
