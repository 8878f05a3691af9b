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
import { contextOfPath } from "./context.ts";
import {
	type AgentMessage,
	type BranchSummaryEntry,
	type CompactionEntry,
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
	type SessionTreeNode,
	type StoredMessage,
	type TextContent,
	type ThinkingLevelChangeEntry,
} from "./entries.ts";
import { createEntryId, createSessionId } from "./ids.ts";
import { type Diagnostic, type DiagnosticReason, excerptOf, SessionFormatError } from "./jsonl.ts";

/** Thrown when an operation names an entry that the session does not have. */
export class EntryNotFoundError extends Error {
	override name = "EntryNotFoundError";
	readonly entryId: string;
	constructor(entryId: string) {
		super(`Entry ${entryId} not found`);
		this.entryId = entryId;
	}
}

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

/** Session names are one-line titles: surrounding space trimmed, line breaks flattened, empty means none. */
export function normalizeSessionName(name: string | undefined): string | undefined {
	return name?.replace(/\s*[\r\n]+\s*/g, " ").trim() || undefined;
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

	/** The model context at `leafId` (default: the current leaf). */
	buildSessionContext(leafId?: string | null): SessionContext {
		if (leafId === null || (leafId === undefined && !this.#leaf)) return contextOfPath([]);
		return contextOfPath(this.getBranch(leafId));
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

	appendMessage(message: StoredMessage | AgentMessage): string {
		return this.#append<SessionMessageEntry>({ type: "message", ...this.#base(), message });
	}

	appendThinkingLevelChange(thinkingLevel: string): string {
		return this.#append<ThinkingLevelChangeEntry>({ type: "thinking_level_change", ...this.#base(), thinkingLevel });
	}

	appendModelChange(provider: string, modelId: string): string {
		return this.#append<ModelChangeEntry>({ type: "model_change", ...this.#base(), provider, modelId });
	}

	appendCompaction<T = unknown>(
		summary: string,
		firstKeptEntryId: string,
		tokensBefore: number,
		details?: T,
		fromHook?: boolean,
	): string {
		const base = this.#base();
		return this.#append<CompactionEntry<T>>({
			type: "compaction",
			...base,
			summary,
			firstKeptEntryId,
			tokensBefore,
			details,
			fromHook,
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
	branchWithSummary(branchFromId: string | null, summary: string, details?: unknown, fromHook?: boolean): string {
		const target = branchFromId === null ? null : this.#requireNode(branchFromId);
		const fromId = this.#leaf?.entry.id ?? "root";
		const entry: BranchSummaryEntry = {
			type: "branch_summary",
			...this.#base(target),
			fromId,
			summary,
			details,
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
		// An entry whose parent was a dropped label is re-linked to the entry before it, so the fork
		// stays one chain (pi 0.73.1 leaves it pointing at the dropped label, which makes it an orphan).
		const path = this.getBranch(leafId)
			.filter((entry) => entry.type !== "label")
			.map((entry, index, kept) => {
				const parentId = kept[index - 1]?.id ?? null;
				return entry.parentId === parentId ? entry : { ...entry, parentId };
			});
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
		this.#entries.push(entry);
		this.#link(entry, parent);
		return entry.id;
	}

	#requireNode(id: string): Node {
		const node = this.#nodes.get(id);
		if (!node) throw new EntryNotFoundError(id);
		return node;
	}
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
