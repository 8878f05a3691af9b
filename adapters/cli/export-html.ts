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
 * The script is `pageScript` (export-page-script.ts, a function so that it is type-checked), compiled
 * once by scripts/build-page-script.ts into the text of export-page-script.generated.ts: the page holds
 * that text, so every runtime writes the same bytes (a function's own source text differs between them:
 * Bun prints it anew) and the same hash in the Content-Security-Policy.
 * @module
 */
import { createHash } from "node:crypto";
import { PAGE_SCRIPT } from "./export-page-script.generated.ts";
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

function sha256(text: string): string {
	return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/** The whole page. */
export function htmlDocument(doc: HtmlDocument): string {
	const script = PAGE_SCRIPT;
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
