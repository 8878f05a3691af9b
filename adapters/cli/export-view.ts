/**
 * An entry as the exports show it: a title, a one-line preview, and blocks of prose, thinking, code
 * (tool calls' arguments, tool results, shell output) and notes. The Markdown export writes these
 * blocks as Markdown; the HTML export hands them to its page as data, which the page draws as text.
 * The words come from src/entry-text.ts (`entryKind`, `entryPreview`, `messageText`); this module
 * only splits messages into their parts.
 * @module
 */
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

type Part = { type?: string; text?: string; thinking?: string; mimeType?: string; name?: string; id?: string };

/** Content of a user or custom message, or a context edit: prose, with images as notes. */
function contentBlocks(content: unknown): ViewBlock[] {
	if (!Array.isArray(content)) {
		const text = contentText(content);
		return text === "" ? [] : [{ kind: "text", text }];
	}
	return (content as Part[]).flatMap((part): ViewBlock[] => {
		if (part?.type === "image") return [{ kind: "note", text: `image (${part.mimeType ?? "unknown type"}) not shown` }];
		const text = contentText([part]);
		return text === "" ? [] : [{ kind: "text", text }];
	});
}

function assistantBlocks(message: Extract<AgentMessage, { role: "assistant" }>): ViewBlock[] {
	const parts = Array.isArray(message.content) ? (message.content as Part[]) : [];
	const blocks = parts.flatMap((part): ViewBlock[] => {
		if (part?.type === "text") return [{ kind: "text", text: part.text ?? "" }];
		if (part?.type === "thinking") return [{ kind: "thinking", text: part.thinking ?? "" }];
		if (part?.type === "toolCall") {
			const args = (part as { arguments?: unknown }).arguments;
			return [
				{
					kind: "code",
					caption: `tool call ${part.name ?? "?"}${part.id ? ` (${part.id})` : ""}`,
					text: JSON.stringify(args ?? {}, null, 2),
					lang: "json",
				},
			];
		}
		if (part?.type === "image") return [{ kind: "note", text: "image not shown" }];
		return [];
	});
	if (message.errorMessage) blocks.push({ kind: "note", text: `${message.stopReason}: ${message.errorMessage}` });
	return blocks;
}

function messageView(message: AgentMessage): Pick<EntryView, "style" | "title" | "blocks"> {
	switch (message.role) {
		case "user":
			return { style: "user", title: "user", blocks: contentBlocks(message.content) };
		case "assistant": {
			const model = [message.provider, message.model].filter(Boolean).join("/");
			return {
				style: "assistant",
				title: model ? `assistant · ${model}` : "assistant",
				blocks: assistantBlocks(message),
			};
		}
		case "toolResult": {
			const images = (Array.isArray(message.content) ? message.content : []).filter((part) => part?.type === "image");
			const text = contentText(
				Array.isArray(message.content) ? message.content.filter((part) => part?.type !== "image") : message.content,
			);
			const blocks: ViewBlock[] = [{ kind: "code", caption: message.isError ? "error" : "output", text }];
			for (const image of images) blocks.push({ kind: "note", text: `image (${image.mimeType}) not shown` });
			return {
				style: "tool",
				title: `tool result · ${message.toolName}${message.isError ? " (error)" : ""}`,
				blocks,
			};
		}
		case "bashExecution": {
			const status = [
				message.exitCode !== undefined && message.exitCode !== 0 ? `exit code ${message.exitCode}` : "",
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
			return { style: "other", title: `custom message · ${message.customType}`, blocks };
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
			for (const [name, value] of Object.entries(message.sections ?? {})) {
				blocks.push(
					value === null
						? { kind: "note", text: `section ${name} removed` }
						: { kind: "code", caption: `section ${name}`, text: value },
				);
			}
			const added = (message.toolsAdded ?? []).map((tool) => tool.name);
			const removed = (message.toolsRemoved ?? []).map((tool) => tool.name);
			if (added.length > 0) blocks.push({ kind: "note", text: `tools added: ${added.join(", ")}` });
			if (removed.length > 0) blocks.push({ kind: "note", text: `tools removed: ${removed.join(", ")}` });
			return { style: "other", title: "system", blocks };
		}
		default:
			return {
				style: "other",
				title: entryKind({ type: "message", role: (message as { role?: string }).role }),
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
			const blocks: ViewBlock[] = [{ kind: "text", text: entry.summary }];
			if (entry.systemMessage) blocks.push({ kind: "note", text: "carries a system message" });
			return {
				style: "summary",
				title: `compaction · ${entry.tokensBefore} tokens before · keeps from ${entry.firstKeptEntryId}`,
				blocks,
			};
		}
		case "branch_summary":
			return {
				style: "summary",
				title: `branch summary · of the branch left at ${entry.fromId}`,
				blocks: [{ kind: "text", text: entry.summary }],
			};
		case "custom_message": {
			const blocks = contentBlocks(entry.content);
			if (entry.display === false) blocks.push({ kind: "note", text: "not displayed to the user" });
			return { style: "other", title: `custom message · ${entry.customType}`, blocks };
		}
		case "context_edit":
			return {
				style: "line",
				title: `context edit: ${entry.targetId} ${entry.replacement === null ? "dropped from" : "replaced in"} the context`,
				blocks: entry.replacement ? contentBlocks(entry.replacement.content) : [],
			};
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
				title: (entry as { type: string }).type,
				blocks: [{ kind: "code", caption: "entry", text: JSON.stringify(entry, null, 2), lang: "json" }],
			};
	}
}

/** The view of one entry; `label` is the label resolved for it (the tree's `getLabel`). */
export function entryView(entry: SessionEntry, label: string | undefined): EntryView {
	const role =
		entry.type === "message" && entry.message && typeof entry.message === "object"
			? (entry.message as { role?: string }).role
			: undefined;
	const view: EntryView = {
		id: entry.id,
		parentId: entry.parentId,
		type: entry.type,
		kind: entryKind({ type: entry.type, role }),
		timestamp: entry.timestamp,
		...bodyOf(entry),
		preview: oneLine(entryPreview(entry), PREVIEW_WIDTH),
	};
	if (label !== undefined) view.label = label;
	return view;
}
