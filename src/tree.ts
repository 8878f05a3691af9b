/**
 * The in-memory index of one session: every operation of pi's `SessionManager` that needs no I/O.
 * Appends are O(1), `getChildren` O(children), `getBranch` and context O(path length), the name O(1).
 *
 * Malformed input never hangs or throws; each case is resolved by one deterministic rule and reported:
 * - an entry without a string `id` is kept in `getEntries()` but not indexed;
 * - a duplicate `id`: the first entry keeps it, the later one is kept but not indexed;
 * - a self-parent, a missing parent or a parent that appears only later in the file (which is what every
 *   `parentId` cycle needs) makes the entry a root. A parent therefore always precedes its child, so the
 *   index can hold no cycle.
 * @module
 */
import { contextEntriesOfPath, contextOfPath, projectionOfPath } from "./context.ts";
import {
	type AgentMessage,
	type BranchSummaryEntry,
	type CompactionEntry,
	type ContextEditEntry,
	type ContextEditReplacement,
	CURRENT_SESSION_VERSION,
	type CustomEntry,
	type CustomMessageEntry,
	type FileEntry,
	type ImageContent,
	isSessionHeader,
	type LabelEntry,
	type ModelChangeEntry,
	type SessionContext,
	type SessionEntry,
	type SessionHeader,
	type SessionInfoEntry,
	type SessionMessageEntry,
	type SessionProjection,
	type SessionTreeNode,
	type StoredMessage,
	type TextContent,
	type ThinkingLevelChangeEntry,
	type Usage,
	type UsageEntry,
} from "./entries.ts";
import { EntryNotFoundError, InvalidContextEditError } from "./errors.ts";
import { createEntryId, createSessionId } from "./ids.ts";
import { type Diagnostic, type DiagnosticReason, excerptOf, SessionFormatError } from "./jsonl.ts";
import { replaySystemMessages } from "./system-message.ts";

export { EntryNotFoundError, InvalidContextEditError };

/** Where a record came from, for diagnostics. */
export interface RecordLocation {
	line: number;
	byteOffset: number;
	excerpt?: string;
}

interface Node {
	entry: SessionEntry;
	parent: Node | null;
	children: Node[];
	depth: number;
}

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

/** A label as resolved from the latest label entry for its target. */
export interface ResolvedLabel {
	label: string;
	timestamp: string;
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

/**
 * Session names are one-line titles, as pi 1.6 writes them: each run of line breaks becomes one space,
 * surrounding space is trimmed, and an empty name (or one that is not a string) means none.
 */
export function normalizeSessionName(name: unknown): string | undefined {
	return typeof name === "string" ? name.replace(/[\r\n]+/g, " ").trim() || undefined : undefined;
}

/**
 * A session tree bound to no storage.
 * @example
 * const tree = SessionTree.create({ cwd: "/project" });
 * const first = tree.appendMessage({ role: "user", content: "hi", timestamp: Date.now() });
 * tree.appendLabelChange(first, "start");
 * console.log(tree.buildSessionContext().messages.length); // 1
 */
export class SessionTree {
	readonly #header: SessionHeader;
	readonly #entries: SessionEntry[] = [];
	readonly #nodes = new Map<string, Node>();
	readonly #roots: Node[] = [];
	readonly #labels = new Map<string, ResolvedLabel>();
	readonly #diagnostics: Diagnostic[] = [];
	/** Diagnostics of entries whose parent was not (yet) seen, by that parent id. */
	readonly #waitingForParent = new Map<string, Diagnostic[]>();
	readonly #timestamp: () => string;
	#onAppend: ((entry: SessionEntry) => void) | undefined;
	#leaf: Node | null = null;
	#name: string | undefined;
	/** What `retractLastAppend` puts back: the last appended entry, the leaf and name before it, and the labels before a label. */
	#lastAppended: SessionEntry | undefined;
	#leafBeforeAppend: Node | null = null;
	#nameBeforeAppend: string | undefined;
	#labelsBeforeAppend: [string, ResolvedLabel][] | undefined;

	constructor(header: SessionHeader, options: SessionTreeOptions = {}) {
		this.#header = header;
		const now = options.now;
		this.#timestamp = now ? () => now().toISOString() : isoNow;
		this.#onAppend = options.onAppend;
	}

	/** Replace the `onAppend` hook (see `SessionTreeOptions`). */
	setOnAppend(hook: ((entry: SessionEntry) => void) | undefined): void {
		this.#onAppend = hook;
	}

	/** A new, empty v3 session. */
	static create(options: NewSessionOptions & SessionTreeOptions): SessionTree {
		const header: SessionHeader = {
			type: "session",
			version: CURRENT_SESSION_VERSION,
			id: options.id ?? createSessionId(),
			timestamp: (options.now?.() ?? new Date()).toISOString(),
			cwd: options.cwd,
			parentSession: options.parentSession,
		};
		return new SessionTree(header, options);
	}

	/**
	 * Index migrated records (header first). Problems are reported in `diagnostics`, never thrown,
	 * except a missing header, which makes the records no session at all.
	 */
	static fromRecords(
		records: readonly FileEntry[],
		options: SessionTreeOptions & { file?: string; locations?: readonly RecordLocation[] } = {},
	): SessionTree {
		const [header, ...entries] = records;
		if (!header || !isSessionHeader(header)) {
			const excerpt = header ? excerptOf(JSON.stringify(header)) : "";
			throw new SessionFormatError("first record is not a session header", {
				file: options.file,
				line: options.locations?.[0]?.line ?? 1,
				byteOffset: options.locations?.[0]?.byteOffset ?? 0,
				excerpt,
			});
		}
		const tree = new SessionTree(header, options);
		entries.forEach((entry, index) => {
			tree.addEntry(entry as SessionEntry, options.locations?.[index + 1]);
		});
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
		return [...this.#entries];
	}
	/** Entries `[start, end)` in file order, without copying the rest. */
	entriesBetween(start: number, end: number): SessionEntry[] {
		return this.#entries.slice(start, end);
	}
	/** Number of entries (header excluded). */
	get size(): number {
		return this.#entries.length;
	}
	/** pi's `getEntryCount`: the number of entries with an id of their own (duplicates and id-less ones not counted). */
	getEntryCount(): number {
		return this.#nodes.size;
	}
	/** Problems found while indexing, in the order they were found. */
	get diagnostics(): readonly Diagnostic[] {
		return this.#diagnostics;
	}
	getLeafId(): string | null {
		return this.#leaf?.entry.id ?? null;
	}
	getLeafEntry(): SessionEntry | undefined {
		return this.#leaf?.entry;
	}
	getEntry(id: string): SessionEntry | undefined {
		return this.#nodes.get(id)?.entry;
	}
	/**
	 * The parent of an entry as this tree placed it: `null` for a root, including an entry made a root
	 * because its parent was missing or came later in the file; `undefined` for an id not in the tree.
	 */
	getParentId(id: string): string | null | undefined {
		const node = this.#nodes.get(id);
		return node && (node.parent?.entry.id ?? null);
	}
	/** Direct children of an entry, in append order. */
	getChildren(parentId: string): SessionEntry[] {
		return this.#nodes.get(parentId)?.children.map((child) => child.entry) ?? [];
	}
	/** Root entries (entries with no parent, orphans included), in append order. */
	getRoots(): SessionEntry[] {
		return this.#roots.map((root) => root.entry);
	}
	getLabel(id: string): string | undefined {
		return this.#labels.get(id)?.label;
	}
	/** All labels that are set, by target id, in the order they were first set. */
	getLabels(): ReadonlyMap<string, ResolvedLabel> {
		return this.#labels;
	}
	/** Name from the latest `session_info` entry; an empty name clears it. */
	getSessionName(): string | undefined {
		return this.#name;
	}

	/** Entries from the root to `fromId` (default: the leaf). Empty when the id is unknown or the leaf is reset. */
	getBranch(fromId?: string): SessionEntry[] {
		const start = fromId === undefined ? this.#leaf : this.#nodes.get(fromId);
		if (!start) return [];
		const path = new Array<SessionEntry>(start.depth + 1);
		for (let node: Node | null = start; node; node = node.parent) path[node.depth] = node.entry;
		return path;
	}

	/** The path root → `leafId` (default: the current leaf; `null` or a reset leaf: none). */
	#pathTo(leafId: string | null | undefined): SessionEntry[] {
		return leafId === null || (leafId === undefined && !this.#leaf) ? [] : this.getBranch(leafId);
	}

	/** The model context at `leafId` (default: the current leaf). */
	buildSessionContext(leafId?: string | null): SessionContext {
		return contextOfPath(this.#pathTo(leafId));
	}

	/** The context at `leafId` (default: the current leaf) with the entry each message came from. */
	buildSessionProjection(leafId?: string | null): SessionProjection {
		return projectionOfPath(this.#pathTo(leafId));
	}

	/** The entries in context at `leafId` (default: the current leaf), every kind included. */
	buildContextEntries(leafId?: string | null): SessionEntry[] {
		return contextEntriesOfPath(this.#pathTo(leafId));
	}

	/**
	 * The whole tree: roots and children oldest first by timestamp, with resolved labels. Built
	 * iteratively, so deep sessions cannot overflow the stack.
	 */
	getTree(): SessionTreeNode[] {
		const out = new Map<Node, SessionTreeNode>();
		for (const node of this.#nodes.values()) {
			const resolved = this.#labels.get(node.entry.id);
			// Both label keys always there, `undefined` when unlabelled, as pi's nodes have them.
			out.set(node, { entry: node.entry, children: [], label: resolved?.label, labelTimestamp: resolved?.timestamp });
		}
		for (const [node, treeNode] of out) {
			if (node.parent) (out.get(node.parent) as SessionTreeNode).children.push(treeNode);
		}
		for (const treeNode of out.values()) sortOldestFirst(treeNode.children);
		return this.#roots.map((root) => out.get(root) as SessionTreeNode);
	}

	// Moving the leaf -------------------------------------------------------------------------------

	/** Move the leaf to an existing entry; the next append becomes its child. History is unchanged. */
	branch(entryId: string): void {
		this.#leaf = this.#requireNode(entryId);
	}

	/** Make the next append a new root. */
	resetLeaf(): void {
		this.#leaf = null;
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
		const system = replaySystemMessages(this.buildSessionProjection().messages);
		return this.#append<CompactionEntry<T>>({
			type: "compaction",
			...base,
			summary,
			firstKeptEntryId: firstKeptEntryId ?? base.id,
			tokensBefore,
			details,
			usage,
			fromHook,
			...(system ? { systemMessage: { ...system, timestamp: new Date(base.timestamp).getTime() } } : {}),
		});
	}

	/** Record model usage that is not an assistant message (it never reaches the context). */
	appendUsage(kind: string, provider: string, model: string, usage: Usage, note?: string): string {
		return this.#append<UsageEntry>({
			type: "usage",
			...this.#base(),
			kind,
			provider,
			model,
			usage,
			...(note ? { note } : {}),
		});
	}

	/**
	 * Replace (or with `null` remove) an entry's content in the context of this branch from here on; the
	 * entry itself never changes. The target must be on the active branch and be a user, assistant or
	 * tool-result message or a custom message entry; a string becomes one text block for assistant and
	 * tool-result targets.
	 */
	appendContextEdit(targetId: string, replacement: ContextEditReplacement | null): string {
		const content = (replacement as { content?: unknown } | null)?.content;
		if (
			replacement !== null &&
			(typeof replacement !== "object" || (typeof content !== "string" && !Array.isArray(content)))
		) {
			throw new TypeError("Context edit replacement must be null or contain string/array content");
		}
		const target = this.#requireNode(targetId);
		let onBranch = false;
		for (let node = this.#leaf; node && !onBranch; node = node.parent) onBranch = node === target;
		if (!onBranch) throw new InvalidContextEditError(targetId, "is not on the active branch");
		const entry = target.entry;
		const role =
			entry.type === "message" ? entry.message?.role : entry.type === "custom_message" ? "custom" : undefined;
		const editable =
			entry.type === "custom_message" || role === "user" || role === "assistant" || role === "toolResult";
		if (!editable) throw new InvalidContextEditError(targetId, "does not contribute editable model content");
		const asBlocks = (role === "assistant" || role === "toolResult") && typeof content === "string";
		return this.#append<ContextEditEntry>({
			type: "context_edit",
			...this.#base(),
			targetId,
			replacement: asBlocks ? { content: [{ type: "text", text: content }] } : replacement,
		});
	}

	appendCustomEntry(customType: string, data?: unknown): string {
		return this.#append<CustomEntry>({ type: "custom", customType, data, ...this.#base() });
	}

	/** Set the session name (trimmed, line breaks flattened); an empty name clears it. */
	appendSessionInfo(name: string): string {
		return this.#append<SessionInfoEntry>({
			type: "session_info",
			...this.#base(),
			name: normalizeSessionName(name) ?? "",
		});
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
		this.#requireNode(targetId);
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
		const target = branchFromId === null ? null : this.#requireNode(branchFromId);
		const fromId = this.#leaf?.entry.id ?? "root";
		const entry: BranchSummaryEntry = {
			type: "branch_summary",
			...this.#base(target),
			fromId,
			summary,
			details,
			usage,
			fromHook,
		};
		return this.#append(entry, target);
	}

	/**
	 * The entries of a fork that ends at `leafId` (pi's `createBranchedSession`): the root → leaf path
	 * without label entries, then one label entry for each label that still applies to that path,
	 * chained after it and carrying the label's own timestamp. The source entries are not changed.
	 */
	forkEntries(leafId: string): SessionEntry[] {
		this.#requireNode(leafId);
		// An entry whose parent was a dropped label is re-linked to the entry before it, so the fork stays
		// one chain; a compaction that kept from a dropped label keeps from the entry after it (as pi 1.6).
		const labelsBefore: string[] = [];
		const keptFrom = new Map<string, string>();
		const path: SessionEntry[] = [];
		for (const entry of this.getBranch(leafId)) {
			if (entry.type === "label") {
				labelsBefore.push(entry.id);
				continue;
			}
			for (const labelId of labelsBefore.splice(0)) keptFrom.set(labelId, entry.id);
			const parentId = path[path.length - 1]?.id ?? null;
			const firstKept = entry.type === "compaction" ? keptFrom.get(entry.firstKeptEntryId) : undefined;
			if (firstKept !== undefined) path.push({ ...entry, parentId, firstKeptEntryId: firstKept } as CompactionEntry);
			else path.push(entry.parentId === parentId ? entry : { ...entry, parentId });
		}
		const onPath = new Set(path.map((entry) => entry.id));
		const labels: LabelEntry[] = [];
		let parentId = path[path.length - 1]?.id ?? null;
		for (const [targetId, { label, timestamp }] of this.#labels) {
			if (!onPath.has(targetId)) continue;
			const id = createEntryId(onPath);
			onPath.add(id);
			labels.push({ type: "label", id, parentId, timestamp, targetId, label });
			parentId = id;
		}
		return [...path, ...labels];
	}

	// Indexing --------------------------------------------------------------------------------------

	/**
	 * Index an existing entry (as read from a file) without changing it. Returns the diagnostic when
	 * the entry is malformed; the entry is kept either way.
	 */
	addEntry(entry: SessionEntry, location?: RecordLocation): Diagnostic | undefined {
		const index = this.#entries.length;
		this.#entries.push(entry);
		const where = location ?? { line: index + 2, byteOffset: -1 };
		const report = (reason: DiagnosticReason, message: string): Diagnostic => {
			const diagnostic: Diagnostic = {
				reason,
				line: where.line,
				byteOffset: where.byteOffset,
				excerpt: where.excerpt ?? excerptOf(JSON.stringify(entry)),
				message,
			};
			this.#diagnostics.push(diagnostic);
			return diagnostic;
		};

		const { id, parentId } = entry;
		if (typeof id !== "string" || id === "") return report("missing-id", "entry has no id; kept but not indexed");
		if (this.#nodes.has(id)) {
			return report("duplicate-id", `id ${id} is already used by an earlier entry; kept but not indexed`);
		}
		let diagnostic: Diagnostic | undefined;
		let parent: Node | null = null;
		if (parentId === id) {
			diagnostic = report("self-parent", `entry ${id} is its own parent; treated as a root`);
		} else if (typeof parentId === "string") {
			parent = this.#nodes.get(parentId) ?? null;
			if (!parent) {
				diagnostic = report("missing-parent", `parent ${parentId} of ${id} not found before it; treated as a root`);
				const waiting = this.#waitingForParent.get(parentId);
				if (waiting) waiting.push(diagnostic);
				else this.#waitingForParent.set(parentId, [diagnostic]);
			}
		} else if (parentId !== null) {
			diagnostic = report("missing-parent", `entry ${id} has no valid parentId; treated as a root`);
		}
		for (const waiting of this.#waitingForParent.get(id) ?? []) {
			waiting.reason = "forward-parent";
			waiting.message = `parent ${id} appears only later in the file (a cycle or reordered lines); treated as a root`;
		}
		this.#waitingForParent.delete(id);

		this.#link(entry, parent);
		return diagnostic;
	}

	#link(entry: SessionEntry, parent: Node | null): void {
		const node: Node = { entry, parent, children: [], depth: parent ? parent.depth + 1 : 0 };
		this.#nodes.set(entry.id, node);
		if (parent) parent.children.push(node);
		else this.#roots.push(node);
		this.#leaf = node;
		if (entry.type === "label") this.#applyLabel(entry);
		else if (entry.type === "session_info") this.#name = normalizeSessionName(entry.name);
	}

	#applyLabel(entry: LabelEntry): void {
		if (entry.label) this.#labels.set(entry.targetId, { label: entry.label, timestamp: entry.timestamp });
		else this.#labels.delete(entry.targetId);
	}

	#base(parent: Node | null = this.#leaf): { id: string; parentId: string | null; timestamp: string } {
		return {
			id: createEntryId(this.#nodes),
			parentId: parent?.entry.id ?? null,
			timestamp: this.#timestamp(),
		};
	}

	/** Add an entry made by an `append*` method under `parent` (the leaf unless given); it becomes the leaf. */
	#append<E extends SessionEntry>(entry: E, parent: Node | null = this.#leaf): string {
		this.#onAppend?.(entry);
		this.#lastAppended = entry;
		this.#leafBeforeAppend = this.#leaf;
		this.#nameBeforeAppend = this.#name;
		this.#labelsBeforeAppend = entry.type === "label" ? [...this.#labels] : undefined;
		this.#entries.push(entry);
		this.#link(entry, parent);
		return entry.id;
	}

	/**
	 * Undo the last `append*`, whose write failed, so that no later entry is made a child of an entry the
	 * file does not have (pi rolls back the same way). Only the very last entry, if an `append*` made it.
	 */
	retractLastAppend(): void {
		const last = this.#lastAppended;
		const node = last && this.#nodes.get(last.id);
		if (!last || !node || this.#entries[this.#entries.length - 1] !== last || node.children.length > 0) {
			throw new Error("internal error: only the last appended entry can be retracted");
		}
		this.#lastAppended = undefined;
		this.#entries.pop();
		this.#nodes.delete(last.id);
		(node.parent ? node.parent.children : this.#roots).pop();
		this.#leaf = this.#leafBeforeAppend;
		this.#name = this.#nameBeforeAppend;
		if (this.#labelsBeforeAppend) {
			this.#labels.clear();
			for (const [target, label] of this.#labelsBeforeAppend) this.#labels.set(target, label);
		}
	}

	#requireNode(id: string): Node {
		const node = this.#nodes.get(id);
		if (!node) throw new EntryNotFoundError(id);
		return node;
	}
}

/**
 * Throws a `TypeError` unless a message is an object (pi would write anything; no reader could use it).
 * `asWritten` is what `JSON.stringify` makes of it at the top, where that is known (its `toJSON` result).
 */
export function assertObjectMessage(message: unknown, asWritten: unknown = message): void {
	if (typeof asWritten === "object" && asWritten !== null && !Array.isArray(asWritten)) return;
	const what = asWritten === null ? "null" : Array.isArray(asWritten) ? "an array" : typeof asWritten;
	throw new TypeError(`cannot append a message that is not an object (it would be written as ${what})`);
}

/** Stable sort by timestamp, skipped when already in order (the usual case for append-only files). */
function sortOldestFirst(nodes: SessionTreeNode[]): void {
	if (nodes.length < 2) return;
	const time = (node: SessionTreeNode): number => new Date(node.entry.timestamp).getTime();
	let sorted = true;
	for (let i = 1; i < nodes.length && sorted; i++)
		sorted = !(time(nodes[i - 1] as SessionTreeNode) > time(nodes[i] as SessionTreeNode));
	if (!sorted) nodes.sort((a, b) => time(a) - time(b));
}
