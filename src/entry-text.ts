/**
 * Session entries and context messages in words, for people: the kind of an entry, a preview of what it
 * says, the text of a message (what a navigator, a terminal or an export shows; not what pi sends the model).
 *
 * Every function here is total: it takes whatever a session file's line can hold (any field missing or of
 * any JSON type, names such as `constructor` or `__proto__` as values) and gives a string, never throws.
 * @module
 */
import type { OutlineNode } from "./engine-views.ts";
import type { AgentMessage, SessionEntry } from "./entries.ts";

/** Entry kinds as a person reads them (a Map: a type such as "constructor" is no key of it). */
const KINDS: ReadonlyMap<string, string> = new Map([
	["thinking_level_change", "thinking"],
	["model_change", "model"],
	["compaction", "compaction"],
	["branch_summary", "branch summary"],
	["usage", "usage"],
	["context_edit", "context edit"],
	["custom", "custom"],
	["custom_message", "custom msg"],
	["label", "label"],
	["session_info", "name"],
]);

const ROLES: ReadonlyMap<string, string> = new Map([
	["toolResult", "tool result"],
	["bashExecution", "bash"],
]);

/**
 * A field's value as text: a string as it is, a number or boolean written out, anything else (missing,
 * null, an object, an array) empty. Never calls a value's own `toString`.
 * @example
 * fieldText("gpt-5"); // "gpt-5"
 * fieldText(7); // "7"
 * fieldText({ toString: 1 }); // ""
 */
export function fieldText(value: unknown): string {
	if (typeof value === "string") return value;
	if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
	return "";
}

/** A field of a value that may be anything: `undefined` unless `value` is an object that has it. */
function field(value: unknown, name: string): unknown {
	return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

/** The fields' texts that are not empty, joined. */
function joined(values: readonly unknown[], separator: string): string {
	return values
		.map(fieldText)
		.filter((text) => text !== "")
		.join(separator);
}

/** JSON text of a value, or "" when it has none (`undefined`, a function) or cannot be written (a cycle, a bigint). */
function jsonText(value: unknown): string {
	try {
		return JSON.stringify(value) ?? "";
	} catch {
		return "";
	}
}

/** A label's text as the tree reads labels: one that is set may be of any type; an object one as its JSON. */
export function labelText(label: unknown): string {
	return fieldText(label) || jsonText(label);
}

/** What kind of entry an outline node (or an entry with its role) is: "user", "assistant", "compaction", … */
export function entryKind(node: Pick<OutlineNode, "type" | "role">): string {
	const type = fieldText(field(node, "type"));
	if (type === "message") {
		const role = fieldText(field(node, "role"));
		return role === "" ? "message" : (ROLES.get(role) ?? role);
	}
	if (type === "") return "entry";
	return KINDS.get(type) ?? type;
}

/** The text of one block of message content (text, thinking, a tool call, an image); "" for anything else. */
function blockText(block: unknown): string {
	switch (field(block, "type")) {
		case "text":
			return fieldText(field(block, "text"));
		case "thinking":
			return `[thinking] ${fieldText(field(block, "thinking"))}`;
		case "toolCall":
			return `→ ${fieldText(field(block, "name"))}(${jsonText(field(block, "arguments") ?? {})})`;
		case "image":
			return "[image]";
		default:
			return "";
	}
}

/** Text of message content: a string, or blocks (text, thinking, tool calls, images). */
function contentText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	const texts: string[] = [];
	for (const block of content) {
		const text = blockText(block);
		if (text !== "") texts.push(text);
	}
	return texts.join("\n");
}

/** The text of one context message. */
export function messageText(message: AgentMessage): string {
	const part = (name: string) => field(message, name);
	switch (part("role")) {
		case "branchSummary":
		case "compactionSummary":
			return fieldText(part("summary"));
		case "bashExecution":
			return `$ ${fieldText(part("command"))}\n${fieldText(part("output"))}`;
		case "toolResult":
			return `${fieldText(part("toolName"))}${part("isError") ? " (error)" : ""}: ${contentText(part("content"))}`;
		case "assistant": {
			const text = contentText(part("content"));
			const error = fieldText(part("errorMessage"));
			return error ? `${text}\n[${fieldText(part("stopReason"))}: ${error}]` : text;
		}
		default:
			return contentText(part("content"));
	}
}

/** What an entry says, for its row in the tree. */
export function entryPreview(entry: SessionEntry): string {
	const part = (name: string) => field(entry, name);
	switch (part("type")) {
		case "message":
			return messageText(part("message") as AgentMessage);
		case "compaction":
		case "branch_summary":
			return fieldText(part("summary"));
		case "label": {
			// As the tree reads it: a label that is set (truthy) of any type; an object one as its JSON.
			const label = part("label");
			const target = fieldText(part("targetId")) || "?";
			return label ? `“${labelText(label)}” on ${target}` : `label cleared on ${target}`;
		}
		case "model_change":
			return joined([part("provider"), part("modelId")], "/");
		case "thinking_level_change":
			return fieldText(part("thinkingLevel"));
		case "session_info":
			return fieldText(part("name"));
		case "custom":
		case "custom_message":
			return fieldText(part("customType"));
		case "usage":
			return joined([part("kind"), part("model")], " ");
		default:
			return "";
	}
}
