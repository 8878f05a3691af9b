/**
 * Session entries and context messages in words, for people: the kind of an entry, a preview of what it
 * says, the text of a message (what a navigator, a terminal or an export shows; not what pi sends the model).
 * @module
 */
import type { OutlineNode } from "./engine-views.ts";
import type { AgentMessage, SessionEntry } from "./entries.ts";

/** Entry kinds as a person reads them. */
const KINDS: Record<string, string> = {
	thinking_level_change: "thinking",
	model_change: "model",
	compaction: "compaction",
	branch_summary: "branch summary",
	usage: "usage",
	context_edit: "context edit",
	custom: "custom",
	custom_message: "custom msg",
	label: "label",
	session_info: "name",
};

const ROLES: Record<string, string> = { toolResult: "tool result", bashExecution: "bash" };

/** What kind of entry an outline node (or an entry with its role) is: "user", "assistant", "compaction", … */
export function entryKind(node: Pick<OutlineNode, "type" | "role">): string {
	if (node.type === "message") return node.role ? (ROLES[node.role] ?? node.role) : "message";
	return KINDS[node.type] ?? node.type;
}

type Block = { type?: string; text?: string; thinking?: string; name?: string; arguments?: unknown };

/** Text of message content: a string, or blocks (text, thinking, tool calls, images). */
function contentText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return (content as Block[])
		.map((block) => {
			if (block?.type === "text") return block.text ?? "";
			if (block?.type === "thinking") return `[thinking] ${block.thinking ?? ""}`;
			if (block?.type === "toolCall") return `→ ${block.name}(${JSON.stringify(block.arguments ?? {})})`;
			if (block?.type === "image") return "[image]";
			return "";
		})
		.filter((text) => text !== "")
		.join("\n");
}

/** The text of one context message. */
export function messageText(message: AgentMessage): string {
	switch (message.role) {
		case "branchSummary":
		case "compactionSummary":
			return message.summary;
		case "bashExecution":
			return `$ ${message.command}\n${message.output}`;
		case "toolResult":
			return `${message.toolName}${message.isError ? " (error)" : ""}: ${contentText(message.content)}`;
		case "assistant": {
			const text = contentText(message.content);
			return message.errorMessage ? `${text}\n[${message.stopReason}: ${message.errorMessage}]` : text;
		}
		default:
			return contentText((message as { content?: unknown }).content);
	}
}

/** What an entry says, for its row in the tree. */
export function entryPreview(entry: SessionEntry): string {
	switch (entry.type) {
		case "message":
			return entry.message && typeof entry.message === "object" ? messageText(entry.message) : "";
		case "compaction":
		case "branch_summary":
			return entry.summary;
		case "label":
			return entry.label ? `“${entry.label}” on ${entry.targetId}` : `label cleared on ${entry.targetId}`;
		case "model_change":
			return `${entry.provider}/${entry.modelId}`;
		case "thinking_level_change":
			return entry.thinkingLevel;
		case "session_info":
			return entry.name ?? "";
		case "custom":
		case "custom_message":
			return entry.customType;
		case "usage":
			return `${entry.kind} ${entry.model}`;
		default:
			return "";
	}
}
