/**
 * `pi-sessions export` as a whole process (the built dist/cli.js) on Node, Bun and Deno, over the bundled
 * samples: Markdown holds every user message of the branch and nothing of the others; JSONL reads back as
 * the same session (the whole one migrated, or the path to `--leaf` with its labels), checked through the
 * package's Session API; HTML carries the whole session as escaped JSON. `-o` never overwrites. A hostile
 * session (`</script>`, event handlers, long backtick runs, an unclosed fence, U+2028, markup beside
 * backticks) is exported to HTML and Markdown and the escaping checked; the Markdown is also rendered
 * with a CommonMark renderer (marked) and the HTML it gives searched for any element of the session's.
 * The three runtimes write the same bytes; the page's script is the one its source compiles to; `-o`
 * writes nothing into the bundled samples. The page itself is clicked through in
 * test/e2e/cli-export-html.test.ts.
 */
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { compilePageScript, moduleText } from "../scripts/build-page-script.ts";
import { type FileEntry, Session, type SessionEntry } from "../src/index.ts";
import { CLI, ROOT, RUNTIMES, runCli } from "./support/cli.ts";
import { HOSTILE, type HostileSession, writeHostileSession } from "./support/hostile-session.ts";

/**
 * marked, a CommonMark renderer: not a dependency of this package, but of pi's (@mariozechner/pi-coding-agent,
 * a pinned devDependency, needs it), so it is taken as pi takes it, resolved from pi's package.
 */
const { marked } = createRequire(join(ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "package.json"))(
	"marked",
) as { marked: { parse(markdown: string, options: { async: false }): string } };

/** The elements a renderer makes of Markdown itself (no raw HTML), and the attributes it gives them. */
const MARKDOWN_ELEMENTS = new Set([
	"p",
	"h1",
	"h3",
	"ul",
	"li",
	"strong",
	"em",
	"code",
	"pre",
	"blockquote",
	"hr",
	"a",
]);

/** Every tag in `html` that the Markdown itself did not make: raw HTML of the session's, let through. */
function foreignMarkup(html: string): string[] {
	const foreign: string[] = [];
	for (const match of html.matchAll(/<(\/?)([A-Za-z][\w-]*)([^>]*)>/g)) {
		const [tag, closing, name, attributes] = match as unknown as [string, string, string, string];
		const element = name.toLowerCase();
		let allowed = MARKDOWN_ELEMENTS.has(element) && (attributes === "" || closing === "");
		if (allowed && attributes !== "" && element !== "a" && element !== "code") allowed = false;
		if (allowed && element === "code" && attributes !== "") allowed = /^ class="language-[\w-]+"$/.test(attributes);
		if (allowed && element === "a" && attributes !== "")
			allowed = /^ href="[^"]*"$/.test(attributes) && !/^ href="\s*(javascript|vbscript|data):/i.test(attributes);
		if (!allowed || /\son\w+\s*=/i.test(attributes)) foreign.push(tag);
	}
	foreign.push(...(html.match(/<[!?][^>]*>?/g) ?? []));
	return foreign;
}

const SAMPLES = join(CLI, "..", "samples", "sessions");
const storage = createNodeStorage();
let out: string;
let hostile: HostileSession;

/** The bundled sample whose id starts with `prefix`. */
function samplePath(prefix: string): string {
	for (const project of readdirSync(SAMPLES)) {
		const file = readdirSync(join(SAMPLES, project)).find((name) => name.split("_")[1]?.startsWith(prefix));
		if (file) return join(SAMPLES, project, file);
	}
	throw new Error(`no sample ${prefix}`);
}

async function read<T>(path: string, use: (session: Session) => Promise<T>): Promise<T> {
	const session = await Session.open(storage, path, { readOnly: true, load: "full" });
	try {
		return await use(session);
	} finally {
		await session.close();
	}
}

function userTexts(entries: readonly SessionEntry[]): string[] {
	return entries.flatMap((entry) => {
		if (entry.type !== "message" || entry.message.role !== "user") return [];
		const { content } = entry.message;
		return typeof content === "string"
			? [content]
			: content.flatMap((part) => (part.type === "text" ? [part.text] : []));
	});
}

/** The JSON inside the page's `<script type="application/json">`. */
function pageData(html: string): { raw: string; data: { entries: { id: string; blocks: { text: string }[] }[] } } {
	const match = /<script type="application\/json" id="session-data">([\s\S]*?)<\/script>/.exec(html);
	if (!match) throw new Error("no session data in the page");
	const raw = match[1] as string;
	return { raw, data: JSON.parse(raw) };
}

/** The Markdown's lines outside fenced code blocks (CommonMark's rule: closed by a run of the same char, as long or longer). */
function outsideFences(markdown: string): string[] {
	const lines: string[] = [];
	let open: { char: string; length: number } | undefined;
	for (const line of markdown.split("\n")) {
		const fence = /^(?:> ?)?( {0,3})(`{3,}|~{3,})(.*)$/.exec(line);
		const run = fence?.[2];
		if (open) {
			if (run && run[0] === open.char && run.length >= open.length && (fence[3] ?? "").trim() === "") open = undefined;
			else if (!line.startsWith(">") && line.startsWith("### ")) lines.push(`INSIDE A FENCE: ${line}`);
			continue;
		}
		if (run) open = { char: run[0] as string, length: run.length };
		else lines.push(line);
	}
	expect(open, "every fence is closed").toBeUndefined();
	return lines;
}

beforeAll(async () => {
	out = mkdtempSync(join(tmpdir(), "pi-sessions-export-"));
	hostile = await writeHostileSession();
});

afterAll(() => {
	rmSync(out, { recursive: true, force: true });
	rmSync(hostile.dir, { recursive: true, force: true });
});

describe.each(RUNTIMES)("export on %s", (runtime) => {
	const blog = () => samplePath("66bc");

	it("md: the current branch's messages, in order, and none of the branch left", async () => {
		const run = runCli(runtime, ["export", "66bc", "--samples"]);
		expect(run.stderr).toBe("");
		expect(run.status).toBe(0);
		const { branch, other, name, leaf } = await read(blog(), async (session) => {
			const branch = await session.getBranch();
			const onBranch = new Set(branch.map((entry) => entry.id));
			const other = (await session.getEntries()).filter((entry) => !onBranch.has(entry.id));
			return { branch, other, name: session.tree.getSessionName(), leaf: session.tree.getLeafId() };
		});
		expect(run.stdout.startsWith(`# ${name}\n`)).toBe(true);
		expect(run.stdout).toContain(`**Leaf:** \`${leaf}\` (the current leaf)`);
		let at = 0;
		for (const text of userTexts(branch)) {
			const found = run.stdout.indexOf(text, at);
			expect(found, text).toBeGreaterThan(at);
			at = found;
		}
		for (const entry of branch) expect(run.stdout).toContain(`\`${entry.id}\``);
		for (const entry of other) expect(run.stdout).not.toContain(`\`${entry.id}\``);
		expect(run.stdout).toContain("> **Compaction");
		expect(run.stdout).toContain("> **Branch summary");
		expect(run.stdout).toMatch(/^\*Model: anthropic\/claude-opus-4-5\* · `52e97842`/m);
		expect(run.stdout).toMatch(/^\*\*tool call edit \(toolu\\_01SajL3TMyeuwYo7QXdq6FJtEQ\)\*\*\n\n```json\n/m);
		outsideFences(run.stdout);
	});

	it("md --leaf: the branch to that entry", async () => {
		const run = runCli(runtime, ["export", "66bc", "--samples", "--leaf", "f210746f"]);
		expect(run.status).toBe(0);
		const branch = await read(blog(), (session) => session.getBranch("f210746f"));
		for (const text of userTexts(branch)) expect(run.stdout).toContain(text);
		expect(run.stdout).toContain("Switch themes with CSS variables on :root.");
		expect(run.stdout).not.toContain("Keep a second stylesheet");
		expect(run.stdout).toContain("**Leaf:** `f210746f` (--leaf)");
	});

	it("jsonl: the whole session, every branch, reads back the same", async () => {
		const file = join(out, `${runtime}-whole.jsonl`);
		const run = runCli(runtime, ["export", "66bc", "--samples", "--format", "jsonl", "-o", file]);
		expect(run.status).toBe(0);
		expect(run.stdout).toBe("");
		const lines = readFileSync(file, "utf8").split("\n");
		expect(lines.pop()).toBe("");
		for (const line of lines) JSON.parse(line);
		const [source, copy] = await Promise.all(
			[blog(), file].map((path) =>
				read(path, async (session) => ({
					header: session.header,
					entries: await session.getEntries(),
					leaf: session.tree.getLeafId(),
					labels: [...session.tree.getLabels()],
					context: await session.buildSessionContext(),
				})),
			),
		);
		expect(copy).toEqual(source);
		// The sample is a v3 file pi wrote: the export is the very same bytes.
		expect(readFileSync(file, "utf8")).toBe(readFileSync(blog(), "utf8"));
	});

	it("jsonl: an older file comes out migrated to version 3", async () => {
		const file = join(out, `${runtime}-v1.jsonl`);
		const run = runCli(runtime, ["export", "dd0f", "--samples", "--format", "jsonl", "-o", file]);
		expect(run.status).toBe(0);
		const records = readFileSync(file, "utf8")
			.trimEnd()
			.split("\n")
			.map((line) => JSON.parse(line) as FileEntry);
		expect(records[0]).toMatchObject({ type: "session", version: 3, id: "dd0f9fba-f061-48b7-b815-e90cc01ea0c4" });
		expect(records.slice(1).every((entry) => "id" in entry && typeof entry.id === "string")).toBe(true);
		expect(JSON.stringify(records)).not.toContain("hookMessage");
		const view = (session: Session) =>
			(async () => ({ messages: (await session.buildSessionContext()).messages, count: session.tree.size }))();
		const source = await read(samplePath("dd0f"), view);
		const copy = await read(file, view);
		expect(copy.messages).toEqual(source.messages);
		expect(copy.count).toBe(source.count);
	});

	it("jsonl: a damaged file comes out without its damaged line, and says so", async () => {
		const file = join(out, `${runtime}-damaged.jsonl`);
		const run = runCli(runtime, ["export", "0bad", "--samples", "--format", "jsonl", "-o", file]);
		expect(run.status).toBe(0);
		expect(run.stderr).toContain("1 problem reading it");
		const entries = (session: Session) => session.getEntries();
		const copy = await read(file, async (session) => {
			expect(session.report.diagnostics).toEqual([]);
			return entries(session);
		});
		expect(copy).toEqual(await read(samplePath("0bad"), entries));
	});

	it("jsonl --leaf: the header and the path, with the labels of its entries", async () => {
		const file = join(out, `${runtime}-leaf.jsonl`);
		const leaf = "f210746f";
		const run = runCli(runtime, ["export", "66bc", "--samples", "--format", "jsonl", "--leaf", leaf, "-o", file]);
		expect(run.status).toBe(0);
		const view = (session: Session) =>
			(async () => {
				const branch = await session.getBranch(leaf);
				return {
					header: session.header,
					branch,
					context: await session.buildSessionContext(leaf),
					labels: branch.map((entry) => [entry.id, session.tree.getLabel(entry.id)]),
				};
			})();
		const source = await read(blog(), view);
		const copy = await read(file, async (session) => {
			expect(session.tree.getLeafId()).toBe(leaf);
			expect(session.tree.diagnostics).toEqual([]);
			return view(session);
		});
		expect(copy).toEqual(source);
		const ids = readFileSync(file, "utf8")
			.trimEnd()
			.split("\n")
			.slice(1)
			.map((line) => (JSON.parse(line) as SessionEntry).id);
		// The path, and the label entry of the other branch that clears the root's label.
		expect(new Set(ids)).toEqual(new Set([...source.branch.map((entry) => entry.id), "526962f1"]));
		expect(ids[ids.length - 1]).toBe(leaf);
	});

	it("html: the whole session as escaped JSON in one self-contained page", async () => {
		const run = runCli(runtime, ["export", "66bc", "--samples", "--format", "html"]);
		expect(run.status).toBe(0);
		const html = run.stdout;
		const { raw, data } = pageData(html);
		expect(raw).not.toMatch(/[<>&\u2028\u2029]/);
		const entries = await read(blog(), (session) => session.getEntries());
		expect(data.entries.map((entry) => entry.id)).toEqual(entries.map((entry) => entry.id));
		expect(raw).toContain('\\u003clink id=\\"dark-css\\"'); // the thinking of 8ad6321d, escaped
		expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/);
		const page = html.replace(raw, "");
		expect(page).not.toMatch(/\b(src|href)=/);
		expect(page).not.toContain("<link");
	});

	it("-o refuses an existing file and leaves it as it was", () => {
		const file = join(out, `${runtime}-taken.md`);
		writeFileSync(file, "mine");
		const run = runCli(runtime, ["export", "66bc", "--samples", "-o", file]);
		expect(run.status).toBe(1);
		expect(run.stderr).toContain(`pi-sessions: ${file} already exists`);
		expect(readFileSync(file, "utf8")).toBe("mine");
	});

	it("an unknown --leaf is one line on standard error", () => {
		const run = runCli(runtime, ["export", "66bc", "--samples", "--leaf", "nothere", "--format", "jsonl"]);
		expect(run.status).toBe(1);
		expect(run.stdout).toBe("");
		expect(run.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^pi-sessions: no entry nothere in /)]);
	});

	it("a hostile session: html keeps all of it inside escaped JSON", () => {
		const run = runCli(runtime, ["export", hostile.path, "--format", "html"]);
		expect(run.status).toBe(0);
		const html = run.stdout;
		const { raw, data } = pageData(html);
		expect(raw).not.toMatch(/[<>&\u2028\u2029]/);
		expect(raw).toContain("\\u003c/script\\u003e\\u003cscript\\u003ewindow.__pwned");
		expect(raw).toContain("\\u2028b\\u2029c");
		// Only the page's own two script blocks, and no session markup anywhere.
		expect(html.match(/<script/g)).toHaveLength(2);
		expect(html.match(/<\/script>/g)).toHaveLength(2);
		for (const text of Object.values(HOSTILE)) {
			if (/[<>]/.test(text)) expect(html).not.toContain(text);
		}
		expect(html).not.toMatch(/<(img|svg|iframe|b)\b/);
		// The texts come back whole from the JSON.
		const all = JSON.stringify(data);
		for (const text of [...hostile.userTexts.first, ...hostile.userTexts.second])
			expect(all).toContain(JSON.stringify(text).slice(1, -1));
	});

	it("a hostile session: md keeps fences closed and markup inert", () => {
		const run = runCli(runtime, ["export", hostile.path, "--leaf", hostile.first[3] as string]);
		expect(run.status).toBe(0);
		const md = run.stdout;
		const outside = outsideFences(md);
		expect(outside.filter((line) => line.startsWith("INSIDE A FENCE"))).toEqual([]);
		// Every message of the branch has its heading outside any fence.
		expect(outside.filter((line) => line.startsWith("### "))).toEqual([
			"### User",
			"### Assistant · anthropic/claude",
			"### Tool result · bash",
			"### User",
			"### Assistant · anthropic/claude",
		]);
		// No tag can open outside fenced code, inside code spans or not (the facts list aside: code spans the
		// export writes itself, with delimiters longer than any backtick run in them).
		const afterFacts = outside.slice(outside.indexOf("---") + 1);
		expect(afterFacts.filter((line) => /<[A-Za-z/!?]/.test(line))).toEqual([]);
		expect(md).toContain("- **Working directory:** `/work/<img src=x onerror=alert(3)>`");
		// The fence the assistant's text opens and never closes is closed where the text ends.
		expect(md).toContain("````\nthe rest is inside a fence that never closes\n````\n\n**tool call bash");
		// The tool call's fence is longer than the ten backticks it holds.
		expect(md).toContain("\n```````````json\n");
		expect(md).toContain("&lt;/script>&lt;script>window.__pwned");
		expect(md).toContain(HOSTILE.lineSeparators);
		// The name (a title here) and the label are plain text.
		expect(md.split("\n")[0]).toBe("# &lt;/title>&lt;script>window.\\_\\_pwned='name'&lt;/script>");
		expect(md).toContain("label **&lt;b onmouseover=window.\\_\\_pwned='label'>hot&lt;/b>**");
		// The code spans around markup: an escaped backtick opens none; a span is cut at its `<`.
		expect(md).toContain("look \\`&lt;img src=x onerror=\"window.__pwned='escaped';alert(4)\">` here");
		expect(md).toContain("two \\\\&lt;`img src=x onerror=\"window.__pwned='double'\">` here");
		expect(md).toContain("``one ` ``&lt;`img src=x onerror=\"window.__pwned='runs'\">` then ``` &lt;svg");
		expect(md).toContain("`code`&lt;img src=x");
	});

	it.each([
		["the current branch", () => []],
		["the first branch", () => ["--leaf", hostile.first[3] as string]],
	])("a hostile session: md of %s rendered by a CommonMark renderer has no element of the session", (_, extra) => {
		const run = runCli(runtime, ["export", hostile.path, ...extra()]);
		expect(run.status).toBe(0);
		const html = marked.parse(run.stdout, { async: false });
		expect(foreignMarkup(html)).toEqual([]);
		// The session's markup is there, as text.
		expect(html).toContain("&lt;img src=x onerror=");
		expect(html).toContain("&lt;svg onload=window.__pwned=");
		// Escaped backticks show as backticks, spans as code.
		expect(html).toContain("look `&lt;img src=x");
		expect(html).toContain("<code>code</code>&lt;img src=x");
	});

	it("-o refuses a file inside the bundled samples, however it is named, and writes nothing there", () => {
		const project = readdirSync(SAMPLES)[0] as string;
		const link = join(out, `${runtime}-samples-link`);
		symlinkSync(SAMPLES, link);
		const targets = [
			join(SAMPLES, `${runtime}-export.md`),
			join(SAMPLES, project, `${runtime}-export.jsonl`),
			join(SAMPLES, `${runtime}-new-dir`, "export.md"),
			relative(ROOT, join(SAMPLES, `${runtime}-relative.html`)),
			join(link, `${runtime}-through-a-link.md`),
		];
		try {
			for (const target of targets) {
				const run = runCli(runtime, ["export", "66bc", "--samples", "--format", "jsonl", "-o", target]);
				expect(run.stderr).toContain(`pi-sessions: ${target} is inside the sample sessions bundled with pi-sessions`);
				expect(run.status).toBe(1);
				expect(run.stdout).toBe("");
			}
			for (const target of targets) expect(existsSync(join(ROOT, target)) || existsSync(target), target).toBe(false);
		} finally {
			for (const target of targets) rmSync(join(ROOT, target), { force: true });
			rmSync(join(SAMPLES, `${runtime}-new-dir`), { recursive: true, force: true });
		}
		// Beside the samples is not inside them.
		const beside = join(out, `${runtime}-beside`, "export.md");
		mkdirSync(join(out, `${runtime}-beside`));
		expect(runCli(runtime, ["export", "66bc", "--samples", "-o", beside]).status).toBe(0);
		expect(existsSync(beside)).toBe(true);
	});
});

describe("export writes the same bytes on every runtime", () => {
	const cases: [string, () => string[]][] = [
		["md", () => ["export", hostile.path]],
		["md --leaf", () => ["export", hostile.path, "--leaf", hostile.first[3] as string]],
		["html", () => ["export", hostile.path, "--format", "html"]],
		["html --leaf", () => ["export", hostile.path, "--format", "html", "--leaf", hostile.first[3] as string]],
		["jsonl", () => ["export", hostile.path, "--format", "jsonl"]],
		["html of a sample", () => ["export", "66bc", "--samples", "--format", "html"]],
	];
	it.each(cases)("%s", (_, args) => {
		const [node, ...others] = RUNTIMES.map((runtime) => {
			const file = join(out, `same-${runtime}-${Math.random().toString(36).slice(2)}`);
			const run = runCli(runtime, [...args(), "-o", file]);
			expect(run.status, `${runtime}: ${run.stderr}`).toBe(0);
			return readFileSync(file);
		});
		for (const [index, bytes] of others.entries())
			expect(Buffer.compare(bytes, node as Buffer), `${RUNTIMES[index + 1]} writes what node writes`).toBe(0);
	});

	it("the page's script is the one export-page-script.ts compiles to (npx tsx scripts/build-page-script.ts)", async () => {
		const committed = readFileSync(join(ROOT, "adapters", "cli", "export-page-script.generated.ts"), "utf8");
		expect(committed).toBe(moduleText(await compilePageScript()));
	});
});
