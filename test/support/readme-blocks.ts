/**
 * The fenced code blocks of a Markdown text (README.md), each with the hidden prelude before it: read by
 * test/readme.test.ts (Node) and test/e2e/readme-browser.test.ts (Chromium).
 * @module
 */

export interface Block {
	/** 1-based line of the opening fence. */
	line: number;
	/** The info string's words: language first, then flags such as `no-run`. */
	info: string[];
	code: string;
	/** TypeScript from a `<!-- prelude: … -->` comment right before the block, or "". */
	prelude: string;
}

/** The fenced blocks of a Markdown text, with the prelude comment before each, if any. */
export function fencedBlocks(markdown: string): Block[] {
	const lines = markdown.split("\n");
	const blocks: Block[] = [];
	for (let i = 0; i < lines.length; i++) {
		const open = /^(`{3,}|~{3,})(.*)$/.exec(lines[i] as string);
		if (!open) continue;
		const fence = open[1] as string;
		const start = i;
		const code: string[] = [];
		for (i++; i < lines.length && !(lines[i] as string).startsWith(fence); i++) code.push(lines[i] as string);
		if (i === lines.length) throw new Error(`README.md:${start + 1}: the code block is never closed`);
		blocks.push({
			line: start + 1,
			info: (open[2] as string).trim().split(/\s+/).filter(Boolean),
			code: code.join("\n"),
			prelude: preludeBefore(lines, start),
		});
	}
	return blocks;
}

function preludeBefore(lines: string[], fence: number): string {
	let end = fence - 1;
	while (end >= 0 && (lines[end] as string).trim() === "") end--;
	if (end < 0 || (lines[end] as string).trim() !== "-->") return "";
	let start = end - 1;
	while (start >= 0 && !(lines[start] as string).startsWith("<!--")) start--;
	if (start < 0 || !/^<!--\s*prelude:/.test(lines[start] as string)) return "";
	return lines.slice(start + 1, end).join("\n");
}
