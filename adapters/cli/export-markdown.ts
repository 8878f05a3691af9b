/**
 * A session's branch (root → leaf) as one Markdown document. What it holds and why:
 * - A title (the session's name, else the branch's first user message, else its id), then a list of
 *   facts: id, working directory, created, file, leaf, entries on the branch, the session it was forked from.
 * - Every entry of the branch in order. Messages get a heading (their kind and what qualifies it: the
 *   model, the tool) and a line with id, time, label and whether it is the current leaf; their prose is
 *   written as the Markdown it usually is; thinking is a quoted block; tool calls (arguments as JSON),
 *   tool results and shell output are fenced code blocks. Compactions and branch summaries are quoted
 *   notes; model, thinking-level, label, name, usage and custom entries are one line each.
 * - Session text cannot break the document's structure or smuggle markup into a renderer: every fence
 *   is longer than any run of backticks in what it holds; a fence that a message opens and never closes
 *   is closed at the message's end; outside fenced code, `<` before a tag-like character becomes `&lt;`
 *   (raw HTML is shown, never rendered), in the message's code spans too (a span is cut there, the `<`
 *   between its pieces as text: what a renderer reads as a span depends on more than the line, so only
 *   leaving no raw `<` at all is safe); one-line values (titles, labels, names) have Markdown's
 *   punctuation escaped, and ids and paths are code spans with delimiters longer than any backtick run.
 *   Links in prose stay links (as in the message); a renderer's own URL policy applies to them.
 * @module
 */
import type { EntryView, ViewBlock } from "./export-view.ts";

export interface MarkdownDocument {
	title: string;
	facts: [name: string, value: string][];
	entries: EntryView[];
	leafId: string | null;
}

/** The longest run of `char` in `text`. */
function longestRun(text: string, char: string): number {
	let longest = 0;
	let run = 0;
	for (const c of text) {
		run = c === char ? run + 1 : 0;
		if (run > longest) longest = run;
	}
	return longest;
}

/** A fenced code block whose fence no line of `text` can close. */
export function fenced(text: string, lang = ""): string {
	const fence = "`".repeat(Math.max(3, longestRun(text, "`") + 1));
	const body = text.endsWith("\n") ? text : `${text}\n`;
	return `${fence}${lang}\n${body}${fence}`;
}

/** An inline code span that holds `text` whole, whatever backticks it has. */
export function codeSpan(text: string): string {
	const flat = text.replace(/[\r\n]+/g, " ");
	const ticks = "`".repeat(longestRun(flat, "`") + 1);
	const pad = flat.startsWith("`") || flat.endsWith("`") || flat.startsWith(" ") ? " " : "";
	return `${ticks}${pad}${flat}${pad}${ticks}`;
}

/** One line of plain text, with every character Markdown could read as markup escaped. */
export function plainInline(text: string): string {
	return text
		.replace(/\s+/g, " ")
		.trim()
		.replace(/[\\`*_[\]<#|~&]/g, (c) => (c === "<" ? "&lt;" : c === "&" ? "&amp;" : `\\${c}`));
}

/** Whether `<` at `at` would open an HTML tag, comment, declaration or autolink. */
function tagLike(text: string, at: number): boolean {
	return text[at] === "<" && /[A-Za-z/!?]/.test(text[at + 1] ?? "");
}

/** The length of the run of `char` starting at `at`. */
function runAt(text: string, at: number, char: string): number {
	let end = at;
	while (text[end] === char) end++;
	return end - at;
}

/**
 * A code span of the message, written back so that no tag-like `<` is left in it: the span is cut at
 * each such `<`, which goes between the pieces as `&lt;` (text). The pieces show what the span showed.
 */
function inertCodeSpan(run: string, content: string): string {
	// What the span shows: one space stripped from each end when both ends have one (CommonMark).
	const strip = content.length > 1 && content.startsWith(" ") && content.endsWith(" ") && /[^ ]/.test(content);
	const shown = strip ? content.slice(1, -1) : content;
	if (!/<[A-Za-z/!?]/.test(shown)) return `${run}${content}${run}`;
	return shown
		.split(/<(?=[A-Za-z/!?])/)
		.map((piece) => (piece.trim() === "" ? piece : codeSpan(piece)))
		.join("&lt;");
}

/**
 * A line outside code blocks, read as CommonMark reads its inline code: a backslash escapes the
 * character after it (an escaped backtick is text and opens no span, the rest of its run still can;
 * `\\` is an escaped backslash), and a run of backticks opens a code span when a run of the same length
 * closes it later on the line (inside a span a backslash is text). Outside code spans `<` before a
 * tag-like character becomes `&lt;`; inside them too, since a renderer may see a span differently (one
 * opened on an earlier line of the paragraph, a link destination taking its backtick, a table cell
 * boundary): no session text on the line can open a tag, whatever a renderer makes of its backticks.
 */
function proseLine(line: string): string {
	let out = "";
	let at = 0;
	while (at < line.length) {
		const c = line[at] as string;
		if (c === "\\") {
			const slashes = runAt(line, at, "\\");
			const next = line[at + slashes];
			at += slashes;
			if (slashes % 2 === 0 || next === undefined) {
				out += "\\".repeat(slashes);
			} else if (next === "`") {
				// An escaped backtick: text.
				out += `${"\\".repeat(slashes)}\``;
				at += 1;
			} else if (tagLike(line, at)) {
				// `\<` shows `<`, as `&lt;` does.
				out += `${"\\".repeat(slashes - 1)}&lt;`;
				at += 1;
			} else {
				out += "\\".repeat(slashes);
			}
			continue;
		}
		if (c === "`") {
			const length = runAt(line, at, "`");
			let close = at + length;
			for (; close < line.length; close++) {
				if (line[close] !== "`") continue;
				const other = runAt(line, close, "`");
				if (other === length) break;
				close += other - 1;
			}
			if (close >= line.length) {
				out += "`".repeat(length);
				at += length;
				continue;
			}
			out += inertCodeSpan("`".repeat(length), line.slice(at + length, close));
			at = close + length;
			continue;
		}
		out += tagLike(line, at) ? "&lt;" : c;
		at += 1;
	}
	return out;
}

/**
 * Message prose as Markdown that stays inside its place: fenced code passes through as it is, a fence
 * left open is closed, and raw HTML outside fenced code is neutralized.
 */
export function safeProse(text: string): string {
	const lines = text.replace(/\r\n?/g, "\n").split("\n");
	let open: { char: string; length: number } | undefined;
	const out = lines.map((line) => {
		const fence = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
		if (open) {
			const run = fence?.[1];
			if (run && run[0] === open.char && run.length >= open.length && (fence[2] ?? "").trim() === "") open = undefined;
			return line;
		}
		const run = fence?.[1];
		// A backtick fence's info string cannot hold a backtick (that line is prose).
		if (run && !(run[0] === "`" && (fence[2] ?? "").includes("`"))) {
			open = { char: run[0] as string, length: run.length };
			return line;
		}
		return proseLine(line);
	});
	if (open) out.push(open.char.repeat(open.length));
	return out.join("\n");
}

function quoted(text: string): string {
	return text
		.split("\n")
		.map((line) => (line === "" ? ">" : `> ${line}`))
		.join("\n");
}

function blockMarkdown(block: ViewBlock): string {
	switch (block.kind) {
		case "text":
			return safeProse(block.text);
		case "thinking":
			return quoted(`**Thinking**\n\n${safeProse(block.text)}`);
		case "code":
			return `**${plainInline(block.caption)}**\n\n${fenced(block.text, block.lang)}`;
		case "note":
			return `*${plainInline(block.text)}*`;
	}
}

function metaLine(view: EntryView, leafId: string | null): string {
	const parts = [codeSpan(view.id), plainInline(view.timestamp)];
	if (view.label !== undefined) parts.push(`label **${plainInline(view.label)}**`);
	if (view.id === leafId) parts.push("**the current leaf**");
	return parts.join(" · ");
}

function entryMarkdown(view: EntryView, leafId: string | null): string {
	const heading = view.title.charAt(0).toUpperCase() + view.title.slice(1);
	if (view.style === "line") {
		const line = `*${plainInline(heading)}* · ${metaLine(view, leafId)}`;
		return [line, ...view.blocks.map(blockMarkdown)].join("\n\n");
	}
	if (view.style === "summary") {
		const body = [`**${plainInline(heading)}** · ${metaLine(view, leafId)}`, ...view.blocks.map(blockMarkdown)];
		return quoted(body.join("\n\n"));
	}
	return [`### ${plainInline(heading)}`, metaLine(view, leafId), ...view.blocks.map(blockMarkdown)].join("\n\n");
}

/** The whole document. */
export function markdownDocument(doc: MarkdownDocument): string {
	const parts = [
		`# ${plainInline(doc.title)}`,
		doc.facts.map(([name, value]) => `- **${name}:** ${value}`).join("\n"),
		"---",
		...doc.entries.map((view) => entryMarkdown(view, doc.leafId)),
	];
	if (doc.entries.length === 0) parts.push("*This branch has no entries.*");
	return `${parts.join("\n\n")}\n`;
}
