/**
 * Record types of a pi session file: the header, the eleven entry kinds and the messages they carry.
 * Structural copies of pi's shapes (no dependency on pi's packages). Every record keeps unknown
 * fields: they are plain parsed JSON objects and are written back exactly as read.
 * @module
 */

/** The session format version this package writes. */
export const CURRENT_SESSION_VERSION = 3;

/** Line 1 of a session file. `version` is absent in v1 files. */
export interface SessionHeader {
	type: "session";
	version?: number;
	id: string;
	timestamp: string;
	cwd: string;
	parentSession?: string;
	[field: string]: unknown;
}

export interface TextContent {
	type: "text";
	text: string;
	[field: string]: unknown;
}
export interface ImageContent {
	type: "image";
	data: string;
	mimeType: string;
	[field: string]: unknown;
}
export interface ThinkingContent {
	type: "thinking";
	thinking: string;
	[field: string]: unknown;
}
export interface ToolCall {
	type: "toolCall";
	id: string;
	name: string;
	arguments: Record<string, unknown>;
	[field: string]: unknown;
}

export interface Usage {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	totalTokens: number;
	cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

/** A tool as a system message declares it to the model. */
export interface ToolDeclaration {
	name: string;
	description?: string;
	parameters?: unknown;
	[field: string]: unknown;
}

/**
 * The prompt and tool loadout at one point of the conversation (pi 1.6). The first one declares them;
 * later ones add `content`, patch `sections` by name (`null` removes one) and add or remove tools.
 */
export interface SystemMessage {
	role: "system";
	content: string | TextContent[];
	sections?: Record<string, string | null>;
	toolsAdded?: ToolDeclaration[];
	toolsRemoved?: { name: string; [field: string]: unknown }[];
	timestamp: number;
	[field: string]: unknown;
}

export interface UserMessage {
	role: "user";
	content: string | (TextContent | ImageContent)[];
	timestamp: number;
	[field: string]: unknown;
}
export interface AssistantMessage {
	role: "assistant";
	content: (TextContent | ThinkingContent | ToolCall)[];
	api: string;
	provider: string;
	model: string;
	usage: Usage;
	stopReason: "stop" | "length" | "toolUse" | "error" | "aborted";
	errorMessage?: string;
	/** The thinking level requested for this response (pi 1.6); it does not change the session's level. */
	thinkingLevel?: string;
	timestamp: number;
	[field: string]: unknown;
}
export interface ToolResultMessage {
	role: "toolResult";
	toolCallId: string;
	toolName: string;
	content: (TextContent | ImageContent)[];
	details?: unknown;
	isError: boolean;
	timestamp: number;
	[field: string]: unknown;
}
export interface BashExecutionMessage {
	role: "bashExecution";
	command: string;
	output: string;
	exitCode: number | undefined;
	cancelled: boolean;
	truncated: boolean;
	fullOutputPath?: string;
	excludeFromContext?: boolean;
	timestamp: number;
	[field: string]: unknown;
}
export interface CustomMessage {
	role: "custom";
	customType: string;
	content: string | (TextContent | ImageContent)[];
	display: boolean;
	details?: unknown;
	timestamp: number;
	[field: string]: unknown;
}
export interface BranchSummaryMessage {
	role: "branchSummary";
	summary: string;
	fromId: string;
	timestamp: number;
}
export interface CompactionSummaryMessage {
	role: "compactionSummary";
	summary: string;
	tokensBefore: number;
	timestamp: number;
}

/** Every message a session context can contain (pi's `AgentMessage`). */
export type AgentMessage =
	| SystemMessage
	| UserMessage
	| AssistantMessage
	| ToolResultMessage
	| BashExecutionMessage
	| CustomMessage
	| BranchSummaryMessage
	| CompactionSummaryMessage;

/** Messages that may be stored in a `message` entry (summaries have entry kinds of their own). */
export type StoredMessage =
	| SystemMessage
	| UserMessage
	| AssistantMessage
	| ToolResultMessage
	| BashExecutionMessage
	| CustomMessage;

export interface SessionEntryBase {
	type: string;
	id: string;
	parentId: string | null;
	timestamp: string;
	[field: string]: unknown;
}
export interface SessionMessageEntry extends SessionEntryBase {
	type: "message";
	message: AgentMessage;
}
export interface ThinkingLevelChangeEntry extends SessionEntryBase {
	type: "thinking_level_change";
	thinkingLevel: string;
}
export interface ModelChangeEntry extends SessionEntryBase {
	type: "model_change";
	provider: string;
	modelId: string;
}
export interface CompactionEntry<T = unknown> extends SessionEntryBase {
	type: "compaction";
	summary: string;
	/** The first entry kept from before the compaction; the compaction's own id keeps none. */
	firstKeptEntryId: string;
	tokensBefore: number;
	details?: T;
	/** What generating the summary cost (pi 1.6). */
	usage?: Usage;
	fromHook?: boolean;
	/** The prompt and tools replayed up to the compaction (pi 1.6); it leads the compacted context. */
	systemMessage?: SystemMessage;
}
export interface BranchSummaryEntry<T = unknown> extends SessionEntryBase {
	type: "branch_summary";
	fromId: string;
	summary: string;
	details?: T;
	/** What generating the summary cost (pi 1.6). */
	usage?: Usage;
	fromHook?: boolean;
}
/** Model usage that is not an assistant message (cache warming, say); never part of the context (pi 1.6). */
export interface UsageEntry extends SessionEntryBase {
	type: "usage";
	/** What the usage was for; unknown kinds are ordinary usage. */
	kind: string;
	provider: string;
	model: string;
	usage: Usage;
	note?: string;
}
/** The content a context edit puts in place of its target's. */
export interface ContextEditReplacement {
	content: string | (TextContent | ImageContent | ThinkingContent | ToolCall)[];
	[field: string]: unknown;
}
/**
 * Replaces (or with `null` removes) an earlier entry's content in the model context of the branch it is
 * on; the target itself never changes (pi 1.6).
 */
export interface ContextEditEntry extends SessionEntryBase {
	type: "context_edit";
	targetId: string;
	replacement: ContextEditReplacement | null;
}
/** Extension state; never part of the model context. */
export interface CustomEntry<T = unknown> extends SessionEntryBase {
	type: "custom";
	customType: string;
	data?: T;
}
/** Extension message that does take part in the model context. */
export interface CustomMessageEntry<T = unknown> extends SessionEntryBase {
	type: "custom_message";
	customType: string;
	content: string | (TextContent | ImageContent)[];
	details?: T;
	display: boolean;
}
export interface LabelEntry extends SessionEntryBase {
	type: "label";
	targetId: string;
	label: string | undefined;
}
export interface SessionInfoEntry extends SessionEntryBase {
	type: "session_info";
	name?: string;
}
/** An entry whose `type` this package does not know; it is kept and written back untouched. */
export interface UnknownEntry extends SessionEntryBase {}

/** The eleven known entry kinds. */
export type KnownSessionEntry =
	| SessionMessageEntry
	| ThinkingLevelChangeEntry
	| ModelChangeEntry
	| CompactionEntry
	| BranchSummaryEntry
	| UsageEntry
	| ContextEditEntry
	| CustomEntry
	| CustomMessageEntry
	| LabelEntry
	| SessionInfoEntry;

/** Any entry of the tree (known kinds are narrowed by `type`). */
export type SessionEntry = KnownSessionEntry;

/** Any line of a session file, header included. */
export type FileEntry = SessionHeader | SessionEntry;

/** The model selection in effect at a point of the tree. */
export interface ModelRef {
	provider: string;
	modelId: string;
}

/** What is sent to the model for one leaf (pi's `SessionContext`). */
export interface SessionContext {
	messages: AgentMessage[];
	thinkingLevel: string;
	model: ModelRef | null;
}

/** One entry of the context and the messages it contributes (pi's `ProjectedSessionEntry`). */
export interface ProjectedSessionEntry {
	sourceEntry: SessionEntry;
	messages: AgentMessage[];
}

/** The context with the entry each message came from (pi's `SessionProjection`). */
export interface SessionProjection extends SessionContext {
	entries: ProjectedSessionEntry[];
}

/** One node of `getTree()`: an entry, its children oldest first, and its resolved label. */
export interface SessionTreeNode {
	entry: SessionEntry;
	children: SessionTreeNode[];
	label?: string;
	labelTimestamp?: string;
}

/** True for the header record. */
export function isSessionHeader(record: { type?: unknown }): record is SessionHeader {
	return record.type === "session";
}
