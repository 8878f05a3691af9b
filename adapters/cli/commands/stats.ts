/**
 * `stats`: what a session holds. The tree's shape comes from the structure of a lazy open; counts, bytes
 * and usage from one pass over the file's lines (each line parsed once, nothing kept but the sums), so a
 * session of any size is measured in memory that does not grow with it. Tokens and cost add up the
 * `usage` of assistant messages, and separately that of pi 1.6's `usage` entries (work such as a
 * compaction's summary). `--json` prints the `SessionStats` object.
 *
 * Lines are read as the session reader reads them (`parseLine`): a line it skips (not JSON, not an object,
 * no string `type`, a torn last line) is an unreadable line here, so the count is that of the reader's
 * diagnostics for lines that hold no entry (what `check` lists). Lines over a read limit (too long, nested
 * too deep) are among them, and also named (line number, byte offset, size) in `overLimit`: the line limit
 * is the run's (`RunContext.limits`), and such a line is never held. The largest entries are named by the ids
 * the other commands use: those of the opened session's entries in file order, which for a v1 file (whose
 * lines have no ids) are the ids the package gives them on every read.
 * @module
 */
import { createReadStream } from "node:fs";
import { entryKind, type Line, LineSplitter, MAX_NESTING_DEPTH, type OutlineNode } from "../../../src/index.ts";
import { DEFAULT_MAX_LINE_BYTES, parseLine } from "../../../src/jsonl.ts";
import { withSession } from "../read-session.ts";
import type { RunContext } from "../run-context.ts";
import { formatBytes } from "../terminal.ts";

export interface TokenTotals {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	totalTokens: number;
	cost: number;
}

export interface SessionStats {
	path: string;
	sessionId: string;
	bytes: number;
	lines: number;
	/** Lines that hold no entry (a damaged file's): not JSON, not an object, no string `type`, a torn last line. */
	unreadableLines: number;
	entries: number;
	/** Entries and their lines' bytes (terminators included) by kind: "user", "assistant", "compaction", … */
	byKind: Record<string, { count: number; bytes: number }>;
	tree: { roots: number; leaves: number; branchPoints: number; maxDepth: number; leafDepth: number };
	compactions: number;
	labels: number;
	/** Summed `usage` of assistant messages. */
	assistantUsage: TokenTotals;
	/** Summed `usage` of `usage` entries. */
	otherUsage: TokenTotals;
	/** The largest lines, biggest first; `id` as the other commands name the entry (null when it has none). */
	largest: { id: string | null; kind: string; line: number; bytes: number }[];
	/**
	 * Lines not read because they are over a read limit, as every read skips them (counted among
	 * `unreadableLines` too): longer than `maxLineBytes` (`too-long`), or nested deeper than
	 * `MAX_NESTING_DEPTH` (`too-deep`). `lines`: the first of them (at most `OVER_LIMIT_NAMED`), each
	 * with its bytes without its line feed.
	 */
	overLimit: {
		count: number;
		maxLineBytes: number;
		lines: { line: number; byteOffset: number; bytes: number; reason: "too-long" | "too-deep" }[];
	};
}

const LARGEST = 5;
/** Lines over a limit named one by one (the rest counted), so the stats stay small whatever the file holds. */
export const OVER_LIMIT_NAMED = 20;

function zeroTotals(): TokenTotals {
	return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
}

function addUsage(totals: TokenTotals, usage: unknown): void {
	if (typeof usage !== "object" || usage === null) return;
	const u = usage as Record<string, unknown>;
	const number = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
	totals.input += number(u.input);
	totals.output += number(u.output);
	totals.cacheRead += number(u.cacheRead);
	totals.cacheWrite += number(u.cacheWrite);
	totals.totalTokens += number(u.totalTokens);
	totals.cost += number((u.cost as Record<string, unknown> | undefined)?.total);
}

/** The shape of the tree from its outline (parents come before their children in it). */
export function treeShape(nodes: readonly OutlineNode[], leafId: string | null): SessionStats["tree"] {
	const depth = new Map<string, number>();
	let roots = 0;
	let leaves = 0;
	let branchPoints = 0;
	let maxDepth = 0;
	for (const node of nodes) {
		const d = node.parentId === null ? 0 : (depth.get(node.parentId) ?? -1) + 1;
		depth.set(node.id, d);
		if (node.parentId === null) roots++;
		if (node.childCount === 0) leaves++;
		if (node.childCount > 1) branchPoints++;
		if (d > maxDepth) maxDepth = d;
	}
	return { roots, leaves, branchPoints, maxDepth, leafDepth: leafId === null ? -1 : (depth.get(leafId) ?? -1) };
}

/** One of the largest lines, with its entry's place in the file (0 for the first entry after the header). */
type LargeLine = SessionStats["largest"][number] & { ordinal: number };

/**
 * Counts, bytes and usage of the file's lines. `ids` are the session's entry ids in file order (its
 * outline's); when there are as many as the file has entries, every entry is indexed under its id there,
 * and the largest lines are named by them (a v1 file's lines have no ids of their own).
 */
async function lineStats(
	path: string,
	ids: readonly string[],
	maxLineBytes: number,
): Promise<Omit<SessionStats, "path" | "sessionId" | "tree" | "labels">> {
	const stats = {
		bytes: 0,
		lines: 0,
		unreadableLines: 0,
		entries: 0,
		compactions: 0,
		assistantUsage: zeroTotals(),
		otherUsage: zeroTotals(),
	};
	// A Map: a kind such as "constructor" or "__proto__" is a key like any other (an object's would be its prototype's).
	const byKind = new Map<string, { count: number; bytes: number }>();
	const largest: LargeLine[] = [];
	const overLimit: SessionStats["overLimit"] = { count: 0, maxLineBytes, lines: [] };
	let headerSeen = false;
	// The reads' limit: a longer line is never held (only its first bytes are, for its excerpt).
	const splitter = new LineSplitter({ maxLineBytes });
	const take = (text: Line) => {
		const bytes = text.byteLength;
		const line = text.line;
		stats.lines++;
		stats.bytes += bytes;
		const parsed = parseLine(text);
		if (!parsed) return;
		if (!parsed.record) {
			stats.unreadableLines++;
			const reason = parsed.diagnostic.reason;
			if (reason === "too-long" || reason === "too-deep") {
				overLimit.count++;
				const { byteOffset, terminated } = text;
				const lineBytes = bytes - (terminated ? 1 : 0);
				if (overLimit.lines.length < OVER_LIMIT_NAMED)
					overLimit.lines.push({ line, byteOffset, bytes: lineBytes, reason });
			}
			return;
		}
		// The first record is the header (the session opened, so it is one); lines before it hold no record.
		if (!headerSeen) {
			headerSeen = true;
			return;
		}
		const record = parsed.record as Record<string, unknown>;
		const ordinal = stats.entries++;
		const message = record.message as Record<string, unknown> | undefined;
		const role = typeof message === "object" && message !== null ? message.role : undefined;
		const kind = entryKind({ type: record.type as string, role: role as string | undefined });
		let slot = byKind.get(kind);
		if (!slot) {
			slot = { count: 0, bytes: 0 };
			byKind.set(kind, slot);
		}
		slot.count++;
		slot.bytes += bytes;
		if (record.type === "compaction") stats.compactions++;
		if (role === "assistant") addUsage(stats.assistantUsage, message?.usage);
		if (record.type === "usage") addUsage(stats.otherUsage, record.usage);
		const id = typeof record.id === "string" ? record.id : null;
		largest.push({ id, kind, line, bytes, ordinal });
		largest.sort((a, b) => b.bytes - a.bytes);
		if (largest.length > LARGEST) largest.pop();
	};
	for await (const chunk of createReadStream(path)) {
		for (const line of splitter.push(chunk as Uint8Array)) take(line);
	}
	for (const line of splitter.end()) take(line);
	const indexed = ids.length === stats.entries;
	const named = largest.map(({ ordinal, ...entry }) => ({ ...entry, id: indexed ? (ids[ordinal] ?? null) : entry.id }));
	// Object.fromEntries defines own keys, "__proto__" too.
	return { ...stats, byKind: Object.fromEntries(byKind), largest: named, overLimit };
}

export async function statsCommand(context: RunContext, name: string, options: { json: boolean }): Promise<void> {
	await withSession(context, name, async (session) => {
		const path = session.path as string;
		const outline = session.outline();
		const stats: SessionStats = {
			path,
			sessionId: session.header.id,
			...(await lineStats(
				path,
				outline.map((node) => node.id),
				context.limits?.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
			)),
			tree: treeShape(outline, session.tree.getLeafId()),
			labels: session.tree.getLabels().size,
		};
		const { output } = context;
		if (options.json) {
			output.json(stats);
			return;
		}
		const { color } = output;
		const usage = (t: TokenTotals) =>
			`${t.input} in, ${t.output} out, ${t.cacheRead} cache read, ${t.cacheWrite} cache write (${t.totalTokens} total), $${t.cost.toFixed(4)}`;
		output.line(color.bold(`${stats.sessionId}  ${color.dim(path)}`));
		output.line(
			`${stats.entries} entries in ${stats.lines} lines, ${formatBytes(stats.bytes)}${stats.unreadableLines ? color.red(`, ${stats.unreadableLines} unreadable lines`) : ""}`,
		);
		const { tree } = stats;
		output.line(
			`tree: ${tree.roots} root${tree.roots === 1 ? "" : "s"}, ${tree.leaves} branch ends, ${tree.branchPoints} branch points, depth ${tree.maxDepth} (the leaf at ${tree.leafDepth})`,
		);
		const { overLimit } = stats;
		if (overLimit.count > 0) {
			output.line(color.red(`${overLimit.count} ${overLimit.count === 1 ? "line" : "lines"} not read, over a limit:`));
			for (const skipped of overLimit.lines) {
				const why =
					skipped.reason === "too-long"
						? `longer than the limit of ${formatBytes(overLimit.maxLineBytes)}`
						: `nested deeper than ${MAX_NESTING_DEPTH} levels`;
				output.line(
					`  line ${String(skipped.line).padStart(7)}  ${formatBytes(skipped.bytes).padStart(10)}  at byte ${skipped.byteOffset}, ${why}`,
				);
			}
			const more = overLimit.count - overLimit.lines.length;
			if (more > 0) output.line(`  and ${more} more`);
		}
		output.line(`${stats.compactions} compactions, ${stats.labels} labels`);
		output.line(`assistant usage: ${usage(stats.assistantUsage)}`);
		if (stats.otherUsage.totalTokens > 0 || stats.otherUsage.cost > 0)
			output.line(`other usage: ${usage(stats.otherUsage)}`);
		output.line();
		output.line(color.bold("by kind"));
		const kinds = Object.entries(stats.byKind).sort((a, b) => b[1].bytes - a[1].bytes);
		for (const [kind, { count, bytes }] of kinds)
			output.line(`  ${kind.padEnd(18)} ${String(count).padStart(7)}  ${formatBytes(bytes).padStart(10)}`);
		output.line();
		output.line(color.bold("largest entries"));
		for (const entry of stats.largest)
			output.line(
				`  ${color.cyan(entry.id ?? "(no id)")} ${entry.kind.padEnd(14)} line ${String(entry.line).padStart(7)}  ${formatBytes(entry.bytes).padStart(10)}`,
			);
	});
}
