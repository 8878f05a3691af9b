/**
 * An entry as the exports show it: a title, a one-line preview, and blocks of prose, thinking, code
 * (tool calls' arguments, tool results, shell output) and notes. The Markdown export writes these
 * blocks as Markdown; the HTML export hands them to its page as data, which the page draws as text.
 * The words come from src/entry-text.ts (`entryKind`, `entryPreview`, `messageText`); this module
 * only splits messages into their parts. Like them it takes whatever an entry holds (a field missing or
 * of any type) and gives views whose every field is what its type says (strings are strings).
 * @module
 */
import { fieldText } from "../../src/entry-text.ts";
import { type AgentMessage, entryKind, entryPreview, messageText, type SessionEntry } from "../../src/index.ts";
import { oneLine } from "./terminal.ts";

export type ViewBlock =
	/** Prose as the message holds it (Markdown, usually). */
	| { kind: "text"; text: string }
	| { kind: "thinking"; text: string }
	/** Verbatim text: a tool call's arguments (`lang` "json"), a tool's result, a shell command's output. */
	| { kind: "code"; caption: string; text: string; lang?: string }
	/** A remark of the export's own about the entry (an image left out, an error, a hidden message). */
	| { kind: "note"; text: string };

/** How an entry is drawn: a message of someone, a summary, or a one-line change. */
export type ViewStyle = "user" | "assistant" | "tool" | "summary" | "line" | "other";

export interface EntryView {
	id: string;
	parentId: string | null;
	type: string;
	/** `entryKind`: "user", "assistant", "tool result", "compaction", "model", … */
	kind: string;
	timestamp: string;
	style: ViewStyle;
	/** One line: the kind with what qualifies it ("assistant · anthropic/claude-opus-4-5", "model: openai/gpt-5"). */
	title: string;
	/** A short one-line preview (the navigator's row). */
	preview: string;
	label?: string;
	blocks: ViewBlock[];
}

const PREVIEW_WIDTH = 120;

/** The text of message content (a string or blocks), as `messageText` reads it. */
function contentText(content: unknown): string {
	return messageText({ role: "user", content, timestamp: 0 } as AgentMessage);
}

type Part = { type?: unknown; text?: unknown; thinking?: unknown; mimeType?: unknown; name?: unknown; id?: unknown };

/** The parts of content that are objects (what a part can be read from). */
function partsOf(content: unknown): Part[] {
	return Array.isArray(content)
		? content.filter((part): part is Part => typeof part === "object" && part !== null)
		: [];
}

/** JSON text of a value, pretty-printed ("" when it has none). */
function prettyJson(value: unknown): string {
	try {
		return JSON.stringify(value, null, 2) ?? "";
	} catch {
		return "";
	}
}

/** Content of a user or custom message, or a context edit: prose, with images as notes. */
function contentBlocks(content: unknown): ViewBlock[] {
	if (!Array.isArray(content)) {
		const text = contentText(content);
		return text === "" ? [] : [{ kind: "text", text }];
	}
	return partsOf(content).flatMap((part): ViewBlock[] => {
		if (part.type === "image")
			return [{ kind: "note", text: `image (${fieldText(part.mimeType) || "unknown type"}) not shown` }];
		const text = contentText([part]);
		return text === "" ? [] : [{ kind: "text", text }];
	});
}

function assistantBlocks(message: Extract<AgentMessage, { role: "assistant" }>): ViewBlock[] {
	const blocks = partsOf(message.content).flatMap((part): ViewBlock[] => {
		if (part.type === "text") return [{ kind: "text", text: fieldText(part.text) }];
		if (part.type === "thinking") return [{ kind: "thinking", text: fieldText(part.thinking) }];
		if (part.type === "toolCall") {
			const args = (part as { arguments?: unknown }).arguments;
			const id = fieldText(part.id);
			return [
				{
					kind: "code",
					caption: `tool call ${fieldText(part.name) || "?"}${id ? ` (${id})` : ""}`,
					text: prettyJson(args ?? {}),
					lang: "json",
				},
			];
		}
		if (part.type === "image") return [{ kind: "note", text: "image not shown" }];
		return [];
	});
	const error = fieldText(message.errorMessage);
	if (error) blocks.push({ kind: "note", text: `${fieldText(message.stopReason)}: ${error}` });
	return blocks;
}

function messageView(message: AgentMessage): Pick<EntryView, "style" | "title" | "blocks"> {
	switch (message.role) {
		case "user":
			return { style: "user", title: "user", blocks: contentBlocks(message.content) };
		case "assistant": {
			const model = [fieldText(message.provider), fieldText(message.model)].filter(Boolean).join("/");
			return {
				style: "assistant",
				title: model ? `assistant · ${model}` : "assistant",
				blocks: assistantBlocks(message),
			};
		}
		case "toolResult": {
			const images = partsOf(message.content).filter((part) => part.type === "image");
			const text = contentText(
				Array.isArray(message.content)
					? message.content.filter((part) => (part as Part | null)?.type !== "image")
					: message.content,
			);
			const blocks: ViewBlock[] = [{ kind: "code", caption: message.isError ? "error" : "output", text }];
			for (const image of images)
				blocks.push({ kind: "note", text: `image (${fieldText(image.mimeType) || "unknown type"}) not shown` });
			return {
				style: "tool",
				title: `tool result · ${fieldText(message.toolName)}${message.isError ? " (error)" : ""}`,
				blocks,
			};
		}
		case "bashExecution": {
			const status = [
				message.exitCode !== undefined && message.exitCode !== 0 ? `exit code ${fieldText(message.exitCode)}` : "",
				message.cancelled ? "cancelled" : "",
				message.truncated ? "output truncated" : "",
				message.excludeFromContext ? "not sent to the model" : "",
			].filter(Boolean);
			const blocks: ViewBlock[] = [{ kind: "code", caption: "shell", text: messageText(message) }];
			if (status.length > 0) blocks.push({ kind: "note", text: status.join(", ") });
			return { style: "tool", title: "bash", blocks };
		}
		case "custom": {
			const blocks = contentBlocks(message.content);
			if (message.display === false) blocks.push({ kind: "note", text: "not displayed to the user" });
			return { style: "other", title: `custom message · ${fieldText(message.customType)}`, blocks };
		}
		case "branchSummary":
		case "compactionSummary":
			return {
				style: "summary",
				title: message.role === "branchSummary" ? "branch summary message" : "compaction summary message",
				blocks: [{ kind: "text", text: messageText(message) }],
			};
		case "system": {
			const blocks = contentBlocks(message.content);
			const sections: unknown = message.sections;
			const named = typeof sections === "object" && sections !== null && !Array.isArray(sections) ? sections : {};
			for (const [name, value] of Object.entries(named)) {
				blocks.push(
					value === null
						? { kind: "note", text: `section ${name} removed` }
						: { kind: "code", caption: `section ${name}`, text: fieldText(value) },
				);
			}
			const toolNames = (tools: unknown) =>
				partsOf(tools)
					.map((tool) => fieldText(tool.name))
					.filter(Boolean);
			const added = toolNames(message.toolsAdded);
			const removed = toolNames(message.toolsRemoved);
			if (added.length > 0) blocks.push({ kind: "note", text: `tools added: ${added.join(", ")}` });
			if (removed.length > 0) blocks.push({ kind: "note", text: `tools removed: ${removed.join(", ")}` });
			return { style: "other", title: "system", blocks };
		}
		default:
			return {
				style: "other",
				title: entryKind({ type: "message", role: fieldText((message as { role?: unknown }).role) }),
				blocks: [],
			};
	}
}

function bodyOf(entry: SessionEntry): Pick<EntryView, "style" | "title" | "blocks"> {
	const kind = entryKind({ type: entry.type, role: undefined });
	switch (entry.type) {
		case "message":
			return entry.message && typeof entry.message === "object"
				? messageView(entry.message)
				: { style: "other", title: "message", blocks: [{ kind: "note", text: "a message entry without a message" }] };
		case "compaction": {
			const blocks: ViewBlock[] = [{ kind: "text", text: fieldText(entry.summary) }];
			if (entry.systemMessage) blocks.push({ kind: "note", text: "carries a system message" });
			const tokens = fieldText(entry.tokensBefore);
			const kept = fieldText(entry.firstKeptEntryId);
			return {
				style: "summary",
				title: `compaction${tokens ? ` · ${tokens} tokens before` : ""}${kept ? ` · keeps from ${kept}` : ""}`,
				blocks,
			};
		}
		case "branch_summary":
			return {
				style: "summary",
				title: `branch summary · of the branch left at ${fieldText(entry.fromId) || "?"}`,
				blocks: [{ kind: "text", text: fieldText(entry.summary) }],
			};
		case "custom_message": {
			const blocks = contentBlocks(entry.content);
			if (entry.display === false) blocks.push({ kind: "note", text: "not displayed to the user" });
			return { style: "other", title: `custom message · ${fieldText(entry.customType)}`, blocks };
		}
		case "context_edit": {
			const replacement: unknown = entry.replacement;
			return {
				style: "line",
				title: `context edit: ${fieldText(entry.targetId) || "?"} ${replacement === null ? "dropped from" : "replaced in"} the context`,
				blocks:
					typeof replacement === "object" && replacement !== null
						? contentBlocks((replacement as { content?: unknown }).content)
						: [],
			};
		}
		case "model_change":
		case "thinking_level_change":
		case "label":
		case "session_info":
		case "usage":
		case "custom":
			return { style: "line", title: `${kind}: ${entryPreview(entry)}`, blocks: [] };
		default:
			return {
				style: "other",
				title: kind,
				blocks: [{ kind: "code", caption: "entry", text: prettyJson(entry), lang: "json" }],
			};
	}
}

/** The view of one entry; `label` is the label resolved for it (the tree's `getLabel`). */
export function entryView(entry: SessionEntry, label: string | undefined): EntryView {
	const role =
		entry.type === "message" && entry.message && typeof entry.message === "object"
			? fieldText((entry.message as { role?: unknown }).role)
			: undefined;
	const parentId: unknown = entry.parentId;
	const view: EntryView = {
		id: fieldText(entry.id),
		parentId: typeof parentId === "string" ? parentId : null,
		type: fieldText(entry.type),
		kind: entryKind({ type: entry.type, role }),
		timestamp: fieldText(entry.timestamp),
		...bodyOf(entry),
		preview: oneLine(entryPreview(entry), PREVIEW_WIDTH),
	};
	// The tree keeps any truthy label; a view's label is text.
	const labelText: unknown = label;
	if (labelText !== undefined) view.label = fieldText(labelText) || prettyJson(labelText);
	return view;
}
