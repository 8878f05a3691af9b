/**
 * Replaying a conversation's system messages (pi 1.6) into the one system message that holds the prompt
 * and tools in effect at its end. A compaction stores this replay as its `systemMessage`.
 * @module
 */
import type { SystemMessage, TextContent, ToolDeclaration } from "./entries.ts";

/** The text of a system message's content: a string, or its text blocks joined by line breaks. */
function contentText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.filter((block): block is TextContent => (block as { type?: unknown } | null)?.type === "text")
		.map((block) => block.text)
		.join("\n");
}

function isSystemMessage(message: unknown): message is SystemMessage {
	return (message as { role?: unknown } | null)?.role === "system";
}

function asList<T>(value: unknown): T[] {
	return Array.isArray(value) ? (value as T[]) : [];
}

/**
 * The prompt and tools after every system message of `messages`, in order: contents are joined by blank
 * lines, sections are patched by name (`null` removes one; a patched section keeps its place), tools are
 * removed then added by name. Other messages are ignored. `undefined` when there is no system message with
 * a timestamp and no tool. Its timestamp is the first system message's.
 * @example
 * const current = replaySystemMessages(tree.buildSessionContext().messages);
 */
export function replaySystemMessages(messages: readonly unknown[]): SystemMessage | undefined {
	const contents: string[] = [];
	const sections = new Map<string, string>();
	const tools = new Map<string, ToolDeclaration>();
	let timestamp: number | undefined;
	for (const message of messages) {
		if (!isSystemMessage(message)) continue;
		timestamp ??= message.timestamp;
		const text = contentText(message.content);
		if (text.length > 0) contents.push(text);
		const patches = message.sections;
		for (const [name, value] of Object.entries(typeof patches === "object" && patches !== null ? patches : {})) {
			if (value === null) sections.delete(name);
			else sections.set(name, value);
		}
		for (const tool of asList<{ name: string }>(message.toolsRemoved)) tools.delete(tool?.name);
		for (const tool of asList<ToolDeclaration>(message.toolsAdded)) tools.set(tool?.name, tool);
	}
	if (timestamp === undefined && tools.size === 0) return undefined;
	return {
		role: "system",
		content: contents.join("\n\n"),
		...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
		...(tools.size > 0 ? { toolsAdded: [...tools.values()] } : {}),
		timestamp: timestamp ?? 0,
	};
}
