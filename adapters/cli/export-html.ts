/**
 * A session as one self-contained HTML page: a navigator of the whole tree (every entry, branches
 * indented, labels and the current leaf marked) beside a main pane that shows the branch root → the
 * entry clicked. It opens offline: its style and script are inline, and a Content-Security-Policy
 * allows nothing else (no network, no other script: the two inline blocks are allowed by their hashes).
 *
 * Session text never becomes markup. The page's static HTML holds none of it: the session travels as
 * JSON in a `<script type="application/json">` block with `<`, `>`, `&`, U+2028 and U+2029 written as
 * `\uXXXX` (so no `</script>` can end the block), and the page's script builds every element itself
 * and puts session text in with `textContent` only. The navigator is built with an explicit stack, so
 * a path of hundreds of thousands of entries takes no deep recursion; the main pane draws the last
 * `PAGE` entries of a long branch and earlier ones on request.
 *
 * The script is `pageScript` below, written as a function so it is type-checked; its source text is
 * inlined (it uses nothing from outside its body).
 * @module
 */
import { createHash } from "node:crypto";
import type { EntryView } from "./export-view.ts";

export interface HtmlDocument {
	title: string;
	facts: [name: string, value: string][];
	entries: EntryView[];
	/** The session's current leaf. */
	leafId: string | null;
	/** The entry whose branch is shown first (`--leaf`, else the current leaf). */
	selectedId: string | null;
}

/** JSON that can sit inside a `<script>` block: no `<`, `>`, `&`, U+2028 or U+2029 in it as such. */
export function scriptSafeJson(value: unknown): string {
	return JSON.stringify(value).replace(
		/[<>&\u2028\u2029]/g,
		(c) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, "0")}`,
	);
}

const STYLE = `
:root { color-scheme: light dark; --fg: #1d1f23; --bg: #fff; --dim: #6a7078; --line: #d9dce1; --accent: #2f6fdb;
  --user: #eef4ff; --assistant: #f6f7f9; --tool: #f3f1ea; --summary: #fff6dd; --sel: #dbe7ff; --path: #eef3fb; }
@media (prefers-color-scheme: dark) { :root { --fg: #e3e5e8; --bg: #16181c; --dim: #8f959e; --line: #30343a;
  --accent: #79a6ff; --user: #1d2636; --assistant: #1e2024; --tool: #24231e; --summary: #2e2a1b; --sel: #27395c; --path: #1d2533; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); display: grid;
  grid-template-columns: minmax(16rem, 30%) 1fr; height: 100vh; }
nav { overflow: auto; border-right: 1px solid var(--line); padding: .5rem 0; }
nav h1 { font-size: 1rem; margin: .25rem .75rem .5rem; }
main { overflow: auto; padding: 1rem 1.5rem 4rem; }
.facts { color: var(--dim); font-size: 12px; margin: 0 .75rem .75rem; }
.facts div { overflow-wrap: anywhere; }
.row { display: flex; gap: .4rem; align-items: baseline; width: 100%; border: 0; background: none; color: inherit;
  font: inherit; font-size: 12.5px; text-align: left; padding: 1px .5rem 1px calc(.5rem + var(--depth, 0) * 14px);
  cursor: pointer; white-space: nowrap; }
.row:hover { background: var(--path); }
.row.on-path { background: var(--path); }
.row.selected { background: var(--sel); }
.row.fork { border-top: 1px dashed var(--line); }
.row .kind { color: var(--accent); flex: none; }
.row .preview { overflow: hidden; text-overflow: ellipsis; color: var(--dim); }
.badge { flex: none; font-size: 11px; padding: 0 .35rem; border-radius: .6rem; background: #f0d77a; color: #3b3000; }
.badge.leaf { background: #8ad39b; color: #0b3317; }
.entry { border: 1px solid var(--line); border-radius: 6px; margin: .75rem 0; padding: .5rem .75rem; }
.entry.user { background: var(--user); } .entry.assistant { background: var(--assistant); }
.entry.tool { background: var(--tool); } .entry.summary { background: var(--summary); }
.entry.line { border-style: dashed; padding: .25rem .75rem; }
.entry header { display: flex; flex-wrap: wrap; gap: .5rem; align-items: baseline; }
.entry header .title { font-weight: 600; }
.entry header .meta { color: var(--dim); font-size: 12px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: .4rem 0; }
.thinking { white-space: pre-wrap; color: var(--dim); font-style: italic; border-left: 3px solid var(--line); padding-left: .6rem; margin: .4rem 0; }
figure { margin: .4rem 0; } figcaption { color: var(--dim); font-size: 12px; }
pre { margin: .2rem 0; padding: .5rem; overflow: auto; max-height: 30rem; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; }
.note { color: var(--dim); font-style: italic; margin: .3rem 0; }
.branch-head { color: var(--dim); margin: 0 0 .5rem; }
button.earlier { margin: .5rem 0; }
`;

/**
 * The page's script. It runs in the page, alone: it reads the session from `#session-data` and draws
 * with `createElement` and `textContent`. Nothing here may refer to anything outside this function.
 */
export function pageScript(): void {
	type Block =
		| { kind: "text" | "thinking" | "note"; text: string }
		| { kind: "code"; caption: string; text: string; lang?: string };
	type View = {
		id: string;
		parentId: string | null;
		kind: string;
		timestamp: string;
		style: string;
		title: string;
		preview: string;
		label?: string;
		blocks: Block[];
	};
	type Data = {
		title: string;
		facts: [string, string][];
		entries: View[];
		leafId: string | null;
		selectedId: string | null;
	};
	const PAGE = 500;
	const source = document.getElementById("session-data");
	const data = JSON.parse(source?.textContent ?? "{}") as Data;
	const nav = document.getElementById("navigator") as HTMLElement;
	const main = document.getElementById("branch") as HTMLElement;

	const element = <K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string) => {
		const node = document.createElement(tag);
		if (className) node.className = className;
		if (text !== undefined) node.textContent = text;
		return node;
	};

	document.title = data.title;
	nav.append(element("h1", undefined, data.title));
	const facts = element("div", "facts");
	for (const [name, value] of data.facts) facts.append(element("div", undefined, `${name}: ${value}`));
	nav.append(facts);

	const byId = new Map<string, View>();
	for (const view of data.entries) byId.set(view.id, view);
	const children = new Map<string | null, View[]>();
	for (const view of data.entries) {
		const parent = view.parentId !== null && byId.has(view.parentId) ? view.parentId : null;
		const list = children.get(parent);
		if (list) list.push(view);
		else children.set(parent, [view]);
	}
	const time = (view: View) => Date.parse(view.timestamp) || 0;
	for (const list of children.values()) if (list.length > 1) list.sort((a, b) => time(a) - time(b));

	// The navigator, depth first with a stack of its own: a chain of single children stays at one depth,
	// the children of a branch point go one deeper.
	const rows = new Map<string, HTMLElement>();
	const fragment = document.createDocumentFragment();
	const roots = children.get(null) ?? [];
	const stack: { view: View; depth: number; fork: boolean }[] = [];
	for (let index = roots.length - 1; index >= 0; index--)
		stack.push({ view: roots[index] as View, depth: roots.length > 1 ? 1 : 0, fork: roots.length > 1 });
	for (let item = stack.pop(); item; item = stack.pop()) {
		const { view, depth } = item;
		if (rows.has(view.id)) continue;
		const row = element("button", item.fork ? "row fork" : "row");
		row.type = "button";
		row.dataset.id = view.id;
		row.style.setProperty("--depth", String(Math.min(depth, 40)));
		row.append(element("span", "kind", view.kind), element("span", "preview", view.preview));
		if (view.label !== undefined) row.append(element("span", "badge", view.label));
		if (view.id === data.leafId) row.append(element("span", "badge leaf", "leaf"));
		row.title = `${view.id} · ${view.timestamp}`;
		rows.set(view.id, row);
		fragment.append(row);
		const next = children.get(view.id) ?? [];
		const branches = next.length > 1;
		for (let index = next.length - 1; index >= 0; index--)
			stack.push({ view: next[index] as View, depth: branches ? depth + 1 : depth, fork: branches });
	}
	nav.append(fragment);

	const blockElement = (block: Block): HTMLElement => {
		if (block.kind === "code") {
			const figure = element("figure");
			const pre = element("pre");
			pre.append(element("code", undefined, block.text));
			figure.append(element("figcaption", undefined, block.caption), pre);
			return figure;
		}
		return element("div", block.kind, block.text);
	};

	const entryElement = (view: View): HTMLElement => {
		const article = element("article", `entry ${view.style}`);
		article.dataset.id = view.id;
		const header = element("header");
		header.append(element("span", "title", view.title), element("span", "meta", `${view.id} · ${view.timestamp}`));
		if (view.label !== undefined) header.append(element("span", "badge", view.label));
		if (view.id === data.leafId) header.append(element("span", "badge leaf", "current leaf"));
		article.append(header);
		for (const block of view.blocks) article.append(blockElement(block));
		return article;
	};

	let marked: string[] = [];
	let selected: string | null = null;
	const show = (id: string, shown = PAGE) => {
		const path: View[] = [];
		const seen = new Set<string>();
		for (let at = byId.get(id); at && !seen.has(at.id); at = at.parentId === null ? undefined : byId.get(at.parentId)) {
			seen.add(at.id);
			path.push(at);
		}
		path.reverse();
		for (const markedId of marked) rows.get(markedId)?.classList.remove("on-path", "selected");
		marked = path.map((view) => view.id);
		for (const markedId of marked) rows.get(markedId)?.classList.add("on-path");
		rows.get(id)?.classList.add("selected");
		selected = id;
		main.replaceChildren();
		main.append(element("p", "branch-head", `Branch root → ${id}: ${path.length} entries`));
		const from = Math.max(0, path.length - shown);
		if (from > 0) {
			const earlier = element("button", "earlier", `Show ${Math.min(PAGE, from)} earlier entries (${from} not shown)`);
			earlier.type = "button";
			earlier.addEventListener("click", () => show(id, shown + PAGE));
			main.append(earlier);
		}
		const list = document.createDocumentFragment();
		for (let index = from; index < path.length; index++) list.append(entryElement(path[index] as View));
		main.append(list);
	};

	nav.addEventListener("click", (event) => {
		const row = (event.target as Element | null)?.closest<HTMLElement>(".row");
		const id = row?.dataset.id;
		if (id === undefined || id === selected) return;
		show(id);
		main.scrollTop = main.scrollHeight;
	});
	const first = data.selectedId ?? data.entries[data.entries.length - 1]?.id;
	if (first !== undefined && byId.has(first)) {
		show(first);
		rows.get(first)?.scrollIntoView({ block: "center" });
	} else main.append(element("p", "note", "This session has no entries."));
}

function sha256(text: string): string {
	return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/** The whole page. */
export function htmlDocument(doc: HtmlDocument): string {
	const script = `(${pageScript.toString()})();`;
	const csp = [
		"default-src 'none'",
		`script-src ${sha256(script)}`,
		`style-src ${sha256(STYLE)}`,
		"img-src data:",
		"base-uri 'none'",
		"form-action 'none'",
	].join("; ");
	return [
		"<!doctype html>",
		'<html lang="en">',
		"<head>",
		'<meta charset="utf-8">',
		`<meta http-equiv="Content-Security-Policy" content="${csp}">`,
		'<meta name="viewport" content="width=device-width, initial-scale=1">',
		'<meta name="generator" content="pi-sessions export">',
		"<title>pi session</title>",
		`<style>${STYLE}</style>`,
		"</head>",
		"<body>",
		'<nav id="navigator" aria-label="session tree"></nav>',
		'<main id="branch"><noscript>This page draws the session with its script; allow scripts to see it.</noscript></main>',
		`<script type="application/json" id="session-data">${scriptSafeJson(doc)}</script>`,
		`<script>${script}</script>`,
		"</body>",
		"</html>",
		"",
	].join("\n");
}
