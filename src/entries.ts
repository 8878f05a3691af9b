/**
 * Record types of a pi session file: the header, the nine entry kinds and the messages they carry.
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
	| UserMessage
	| AssistantMessage
	| ToolResultMessage
	| BashExecutionMessage
	| CustomMessage
	| BranchSummaryMessage
	| CompactionSummaryMessage;

/** Messages that may be stored in a `message` entry (summaries have entry kinds of their own). */
export type StoredMessage = UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage;

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
	firstKeptEntryId: string;
	tokensBefore: number;
	details?: T;
	fromHook?: boolean;
}
export interface BranchSummaryEntry<T = unknown> extends SessionEntryBase {
	type: "branch_summary";
	fromId: string;
	summary: string;
	details?: T;
	fromHook?: boolean;
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

/** The nine known entry kinds. */
export type KnownSessionEntry =
	| SessionMessageEntry
	| ThinkingLevelChangeEntry
	| ModelChangeEntry
	| CompactionEntry
	| BranchSummaryEntry
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
