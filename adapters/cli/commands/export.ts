/**
 * `export`: a session as Markdown (its branch root → leaf: export-markdown.ts), as one self-contained
 * HTML page (the whole tree with a navigator; export-html.ts), or as JSONL, a session file again:
 * - without `--leaf`, every entry of every branch, in file order, migrated to the current version
 *   (the header's version 3, v1 ids assigned, `hookMessage` renamed) and written with `encodeEntry`;
 * - with `--leaf`, the header and the path root → leaf as they are (same ids, same parents), plus the
 *   label entries off that path whose targets are on it, re-linked under their targets (their own
 *   parents are not in the file), in their file order (the latest label of a target still wins); the
 *   leaf is written last, so the file reads back with the same leaf, branch and labels of that branch.
 * `-o OUT` writes a new file (an exclusive create: an existing file is never overwritten; none inside
 * the bundled samples); otherwise standard output. The session is opened read-only, lazily: only what
 * the export shows is decoded.
 * @module
 */
import { writeFile } from "node:fs/promises";
import { encodeEntry, type FileEntry, type Session, type SessionEntry } from "../../../src/index.ts";
import { CliError } from "../errors.ts";
import { htmlDocument } from "../export-html.ts";
import { codeSpan, markdownDocument } from "../export-markdown.ts";
import { entryView } from "../export-view.ts";
import { leafOf, withSession } from "../read-session.ts";
import type { RunContext } from "../run-context.ts";
import { oneLine } from "../terminal.ts";
import { inSamples } from "../write-guard.ts";

export interface ExportOptions {
	format: "md" | "html" | "jsonl";
	leaf?: string;
	output?: string;
}

const TITLE_WIDTH = 80;

/** The session's name, else the first user message of `entries`, else its id. */
function titleOf(session: Session, entries: readonly SessionEntry[]): string {
	const name = session.tree.getSessionName();
	if (name) return name;
	for (const entry of entries) {
		if (entry.type === "message" && (entry.message as { role?: string } | undefined)?.role === "user") {
			const blocks = entryView(entry, undefined).blocks.filter((block) => block.kind === "text");
			const text = oneLine(blocks.map((block) => block.text).join(" "), TITLE_WIDTH);
			if (text !== "") return text;
		}
	}
	return `Session ${session.header.id}`;
}

function factsOf(
	session: Session,
	leafId: string | null,
	chosen: boolean,
	code: (text: string) => string,
): [string, string][] {
	const { header } = session;
	const facts: [string, string][] = [
		["Session", code(header.id)],
		["Working directory", code(header.cwd)],
		["Created", code(header.timestamp)],
	];
	if (session.path !== undefined) facts.push(["File", code(session.path)]);
	if (header.parentSession) facts.push(["Forked from", code(header.parentSession)]);
	const current = leafId !== null && leafId === session.tree.getLeafId();
	facts.push([
		"Leaf",
		leafId === null ? "none" : `${code(leafId)}${current ? " (the current leaf)" : chosen ? " (--leaf)" : ""}`,
	]);
	return facts;
}

async function markdown(session: Session, leaf: string | undefined): Promise<string> {
	const leafId = leafOf(session, leaf);
	const branch = leafId === null ? [] : await session.getBranch(leafId);
	const tree = session.tree;
	const facts = factsOf(session, leafId, leaf !== undefined, codeSpan);
	facts.push(["Entries", `${branch.length} on this branch, ${tree.size} in the session`]);
	return markdownDocument({
		title: titleOf(session, branch),
		facts,
		entries: branch.map((entry) => entryView(entry, tree.getLabel(entry.id))),
		leafId: tree.getLeafId(),
	});
}

async function html(session: Session, leaf: string | undefined): Promise<string> {
	const selectedId = leafOf(session, leaf);
	const entries = await session.getEntries();
	const tree = session.tree;
	const facts = factsOf(session, selectedId, leaf !== undefined, (text) => text);
	facts.push(["Entries", String(entries.length)]);
	return htmlDocument({
		title: titleOf(session, entries),
		facts,
		entries: entries.map((entry) => entryView(entry, tree.getLabel(entry.id))),
		leafId: tree.getLeafId(),
		selectedId,
	});
}

/** The records of the JSONL export (see the module comment). */
async function jsonlRecords(session: Session, leaf: string | undefined): Promise<FileEntry[]> {
	if (leaf === undefined) return [session.header, ...(await session.getEntries())];
	const leafId = leafOf(session, leaf) as string;
	const branch = await session.getBranch(leafId);
	const onPath = new Set(branch.map((entry) => entry.id));
	// Label entries elsewhere in the tree whose targets are on the path, found from the structure alone.
	const labelIds = session
		.outline()
		.filter((node) => node.type === "label" && !onPath.has(node.id))
		.map((node) => node.id);
	const labels = (await session.getEntriesById(labelIds)).filter(
		(entry): entry is Extract<SessionEntry, { type: "label" }> => entry?.type === "label" && onPath.has(entry.targetId),
	);
	if (labels.length === 0) return [session.header, ...branch];
	// Interleave in file order (the outline's order); the leaf goes last so that it stays the leaf.
	const order = new Map(session.outline().map((node, index) => [node.id, index]));
	// Under its target; a label of the leaf goes under the leaf's parent, since the leaf is written last.
	const last = branch[branch.length - 1] as SessionEntry;
	const relinked = labels.map((entry) => ({
		...entry,
		parentId: entry.targetId === last.id ? last.parentId : entry.targetId,
	}));
	const rest = [...branch.slice(0, -1), ...relinked].sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
	// A label re-linked under its target comes after it: a label is written after what it labels.
	return [session.header, ...rest, last];
}

async function jsonl(session: Session, leaf: string | undefined): Promise<string> {
	return (await jsonlRecords(session, leaf)).map(encodeEntry).join("");
}

const FORMATS = { md: markdown, html, jsonl } as const;

export async function exportCommand(context: RunContext, name: string, options: ExportOptions): Promise<void> {
	const render = FORMATS[options.format];
	if (!render) throw new CliError(`unknown format ${options.format} (md, html or jsonl)`, 2);
	if (options.output !== undefined && inSamples(options.output)) {
		throw new CliError(
			`${options.output} is inside the sample sessions bundled with pi-sessions, which are read-only: write the export elsewhere`,
		);
	}
	const text = await withSession(context, name, async (session) => {
		const problems = session.report.diagnostics.length;
		if (problems > 0 && options.format === "jsonl") {
			context.output.note(
				`${session.path}: ${problems} ${problems === 1 ? "problem" : "problems"} reading it (see pi-sessions check); lines that hold no entry are left out`,
			);
		}
		return render(session, options.leaf);
	});
	if (options.output === undefined) {
		context.output.write(text);
		return;
	}
	try {
		await writeFile(options.output, text, { flag: "wx" });
	} catch (error) {
		const code = (error as { code?: string }).code;
		if (code === "EEXIST") throw new CliError(`${options.output} already exists (export never overwrites a file)`);
		throw new CliError(`cannot write ${options.output}: ${error instanceof Error ? error.message : String(error)}`);
	}
	context.output.note(`exported ${options.format} to ${options.output}`);
}
