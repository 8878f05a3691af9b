/**
 * Benchmark at scale: opening 100 MB, 1 GB (and, with `--huge`, 4 GB) sessions, the context of a deep
 * leaf, and listing an agent directory of 1,000 sessions, side by side with pi 1.6.0, pi 0.73.1 and the
 * floor (reading the bytes; reading and `JSON.parse` of every line, the objects kept). Inputs come from
 * `bench/scale-inputs.ts` (seeded, cached under the system's temporary directory).
 *
 * Every measurement runs in a fresh child process (this file's `scale/child.ts`, bundled with esbuild so
 * no TypeScript loader sits in it), so its peak RSS (`process.resourceUsage().maxRSS`) is its own; the
 * implementations take turns in every round (the order rotates), and each row shows the median over
 * the rounds with the range. The first round also checks every answer against pi 1.6.0's (entry count,
 * leaf, a digest of the leaf's context messages, of the last 50 of them, or of every listing row), and a
 * wrong answer fails the run. Absolute times on shared machines are noise; the ratios are the result.
 *
 * Run: `npm run bench:scale` (about 8 minutes on 2 cores, plus about 30 s to generate the inputs once),
 * `npm run bench:scale -- --quick` (a fifth to a tenth of the sizes, under 2 minutes), `-- --huge` adds the
 * 4 GB open (about 20 more minutes, 4 GB of disk, children up to ~9 GB RSS); `--rounds N` (or `BENCH_ROUNDS`), `--only
 * linear,bushy,compaction-heavy,text-1gb,image-1gb,text-4gb,context,listing`, `--seed N`, `--synthetic`
 * (payloads without the corpus), `--inputs DIR` (input cache root).
 * @module
 */
import { constants as bufferConstants } from "node:buffer";
import { execFileSync, spawn } from "node:child_process";
import { closeSync, cpSync, mkdtempSync, openSync, readSync, rmSync, truncateSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import {
	type ContextImpl,
	type ContextResult,
	type ListImpl,
	type ListResult,
	type OpenImpl,
	type OpenResult,
	type PiModules,
	RESULT_MARKER,
	type Result,
	type Task,
} from "./scale/protocol.ts";
import {
	ensureInput as ensureScaleInput,
	type HomeSession,
	type ScaleInput,
	type VariantName,
} from "./scale-inputs.ts";

const argv = process.argv.slice(2);
const flag = (name: string): boolean => argv.includes(name);
const option = (name: string): string | undefined => {
	const index = argv.indexOf(name);
	return index >= 0 ? argv[index + 1] : undefined;
};
const QUICK = flag("--quick");
const HUGE = flag("--huge");
const SEED = Number(option("--seed") ?? 42);
const ROUNDS_OVERRIDE = Number(option("--rounds") ?? process.env.BENCH_ROUNDS ?? 0) || undefined;
const GROUPS = [
	"linear",
	"bushy",
	"compaction-heavy",
	"text-1gb",
	"image-1gb",
	"text-4gb",
	"context",
	"listing",
] as const;
type GroupName = (typeof GROUPS)[number];
const ONLY = option("--only")
	?.split(",")
	.map((name) => name.trim())
	.filter(Boolean);
for (const name of ONLY ?? []) {
	if (!(GROUPS as readonly string[]).includes(name))
		throw new Error(`unknown group ${name}; groups: ${GROUPS.join(", ")}`);
}
const wanted = (group: GroupName): boolean => (ONLY ? ONLY.includes(group) : group !== "text-4gb" || HUGE);

/** pi 1.6 on 1 GB needs more than V8's default heap; every child of a big input gets the same limit. */
const HEAP_FLAG = "--max-old-space-size=16384";
const BIG_INPUT_BYTES = 500e6;
/** `readFileSync(path, "utf8")` (pi 0.73.1's read) cannot make a longer string. */
const MAX_STRING_LENGTH = bufferConstants.MAX_STRING_LENGTH;

const MODULES: PiModules = {
	pi16: fileURLToPath(new URL("../node_modules/pi-coding-agent-1.6/dist/core/session-manager.js", import.meta.url)),
	pi073: fileURLToPath(
		new URL("../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js", import.meta.url),
	),
};

const scratch = mkdtempSync(join(tmpdir(), "pi-scale-run-"));
const childPath = join(scratch, "child.mjs");
const failures: string[] = [];
const todos: string[] = [];
const goals: { group: string; text: string; met: boolean | undefined }[] = [];

// ————————————————————————————————————————— children —————————————————————————————————————————

/** The environment children get: this one's, without loader options or pi's agent directory. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
	const env = { ...process.env, ...extra };
	delete env.NODE_OPTIONS;
	if (!extra.PI_CODING_AGENT_DIR) delete env.PI_CODING_AGENT_DIR;
	return env;
}

function runChild(task: Task, options: { big: boolean; timeoutMs: number; env?: NodeJS.ProcessEnv }): Promise<Result> {
	return new Promise((resolve, reject) => {
		const args = [...(options.big ? [HEAP_FLAG] : []), childPath, JSON.stringify(task)];
		const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env: options.env ?? childEnv() });
		let out = "";
		let err = "";
		child.stdout.setEncoding("utf8").on("data", (data: string) => {
			out += data;
		});
		child.stderr.setEncoding("utf8").on("data", (data: string) => {
			err = (err + data).slice(-4000);
		});
		const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
		child.on("error", reject);
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			const line = out.split("\n").find((text) => text.startsWith(RESULT_MARKER));
			if (code === 0 && line) {
				resolve(JSON.parse(line.slice(RESULT_MARKER.length)) as Result);
				return;
			}
			const why = signal
				? `killed by ${signal}${signal === "SIGKILL" ? " (timeout or out of memory)" : ""}`
				: `exit code ${code}`;
			const lines = err.trim().split("\n");
			const thrown = lines.find((text) => /^\w*(Error|Exception)\b/.test(text.trim())) ?? lines[lines.length - 1];
			const tail = thrown?.trim().slice(0, 300);
			reject(new Error(`${why}${tail ? `: ${tail}` : ""}`));
		});
	});
}

function message(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

// ————————————————————————————————————————— statistics and tables —————————————————————————————————————————

function median(values: readonly number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function fmtMs(value: number): string {
	return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

function fmtMb(bytes: number): string {
	const mb = bytes / 1e6;
	return mb >= 100 ? mb.toFixed(0) : mb.toFixed(1);
}

function spread(values: readonly number[], format: (value: number) => string): string {
	if (values.length === 0) return "—";
	if (values.length === 1) return format(values[0] as number);
	return `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
}

function ratio(ours: readonly number[], theirs: readonly number[] | undefined): string {
	if (ours.length === 0 || !theirs || theirs.length === 0) return "—";
	return `${(median(ours) / median(theirs)).toFixed(3)}×`;
}

function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
	const widths = header.map((title, column) =>
		Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
	);
	const line = (cells: readonly string[]) =>
		`| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join(" | ")} |`;
	console.log(line(header));
	console.log(
		`| ${widths.map((width, column) => (column === 0 ? "-".repeat(width) : `${"-".repeat(width - 1)}:`)).join(" | ")} |`,
	);
	for (const row of rows) console.log(line(row));
}

interface Row {
	label: string;
	ms: number[];
	rss: number[];
	rssBefore: number[];
	/** Why the row has no figures. */
	skipped?: string;
	error?: string;
	wrong?: string;
	note?: string;
}

function newRow(label: string): Row {
	return { label, ms: [], rss: [], rssBefore: [] };
}

function rowCells(row: Row, pi: Row | undefined, floor: Row | undefined): string[] {
	const why = row.wrong ? `WRONG ANSWER: ${row.wrong}` : row.error ? `failed: ${row.error}` : row.skipped;
	if (why && row.ms.length === 0) return [row.label, why, "", "", "", "", ""];
	return [
		row.wrong ? `${row.label} (WRONG ANSWER)` : row.label,
		spread(row.ms, fmtMs),
		spread(row.rss, fmtMb),
		row === pi ? "1" : ratio(row.ms, pi?.ms),
		row === pi ? "1" : ratio(row.rss, pi?.rss),
		row === floor ? "1" : ratio(row.ms, floor?.ms),
		row === floor ? "1" : ratio(row.rss, floor?.rss),
	];
}

const TABLE_HEADER = [
	"case",
	"time ms, median (range)",
	"peak RSS MB, median (range)",
	"time ÷ pi 1.6",
	"RSS ÷ pi 1.6",
	"time ÷ floor",
	"RSS ÷ floor",
];

function goal(group: string, text: string, value: number | undefined, limit: number, unit: "×" | " ms" | " MB"): void {
	const met = value === undefined || Number.isNaN(value) ? undefined : value <= limit;
	const shown =
		value === undefined || Number.isNaN(value)
			? "no valid figure (not measured, failed or wrong)"
			: unit === "×"
				? `${value.toFixed(3)}×`
				: `${value.toFixed(0)}${unit}`;
	const verdict = met === undefined ? "?" : met ? "met" : "NOT met";
	const line = `${text} ≤ ${limit}${unit}: ${shown}${QUICK ? " (at the quick size)" : ""}`;
	goals.push({ group, text: line, met });
	console.log(`  goal ${verdict}: ${line}`);
}

const medianOf = (row: Row | undefined, field: "ms" | "rss"): number | undefined =>
	row && row[field].length > 0 && !row.wrong ? median(row[field]) : undefined;
const ratioOf = (ours: Row | undefined, theirs: Row | undefined, field: "ms" | "rss"): number | undefined => {
	const a = medianOf(ours, field);
	const b = medianOf(theirs, field);
	return a === undefined || b === undefined ? undefined : a / b;
};

function rotate<T>(items: readonly T[], by: number): T[] {
	const shift = items.length === 0 ? 0 : by % items.length;
	return [...items.slice(shift), ...items.slice(0, shift)];
}

/** Read a file once, untimed, so the first measured child does not pay for a cold page cache. */
function warmPageCache(path: string): void {
	const fd = openSync(path, "r");
	const buffer = Buffer.allocUnsafe(16 << 20);
	try {
		while (readSync(fd, buffer, 0, buffer.length, null) > 0);
	} finally {
		closeSync(fd);
	}
}

// ————————————————————————————————————————— opening —————————————————————————————————————————

const OPEN_LABELS: Record<OpenImpl, string> = {
	"floor-scan": "floor: read the bytes, count lines",
	"floor-parse": "floor: read + JSON.parse every line (kept)",
	pi16: "pi 1.6.0 SessionManager.open",
	pi073: "pi 0.73.1 SessionManager.open",
	"ours-full": 'ours Session.open, load: "full"',
	"ours-lazy": 'ours Session.open, load: "lazy"',
};

const sameContext = (a: OpenResult["context"], b: OpenResult["context"]): boolean =>
	a !== undefined && b !== undefined && a.messages === b.messages && a.digest === b.digest;

/** Whose context the others are checked against: pi 1.6.0's, or ours full's when pi 1.6.0 built none. */
interface ContextReference {
	result: OpenResult;
	name: string;
}

/**
 * What is wrong with `result` (an open's answer) compared with the generator's entry count and leaf,
 * pi 1.6.0's, and the context reference; `undefined` if nothing.
 */
function openProblem(
	impl: OpenImpl,
	result: OpenResult,
	pi: OpenResult | undefined,
	reference: ContextReference | undefined,
	input: ScaleInput,
): string | undefined {
	const problems: string[] = [];
	if (result.entries !== input.entries) problems.push(`${result.entries} entries, the file has ${input.entries}`);
	if (impl !== "floor-scan" && result.leafId !== input.leafId) {
		problems.push(`leaf ${result.leafId}, the file's is ${input.leafId}`);
	}
	const ours = impl === "ours-full" || impl === "ours-lazy";
	if (pi && (ours || impl === "pi073") && (result.entries !== pi.entries || result.leafId !== pi.leafId)) {
		problems.push(`${result.entries} entries / leaf ${result.leafId}; pi 1.6.0: ${pi.entries} / ${pi.leafId}`);
	}
	if (result.checkError && impl !== "pi16") problems.push(`building the leaf's context threw ${result.checkError}`);
	const expected = reference?.result;
	if (expected && expected !== result && expected.context) {
		if (impl === "ours-lazy" && result.pageSupported) {
			if (!sameContext(result.last50, expected.last50)) {
				problems.push(`contextPage({ last: 50 }) differs from the last 50 context messages of ${reference.name}`);
			}
			if (result.pageTotal !== expected.context.messages) {
				problems.push(
					`contextPage total ${result.pageTotal}; ${reference.name}: ${expected.context.messages} messages`,
				);
			}
		} else if ((impl === "ours-full" || impl === "pi073") && !result.checkError) {
			if (!sameContext(result.context, expected.context)) {
				problems.push(
					`context of the leaf differs from ${reference.name}'s (${result.context?.messages} vs ${expected.context.messages} messages)`,
				);
			}
		}
	}
	return problems.length > 0 ? problems.join("; ") : undefined;
}

interface OpenGroupReport {
	rows: Map<OpenImpl | "page", Row>;
	pi: OpenResult | undefined;
}

async function openGroup(group: GroupName, input: ScaleInput, rounds: number): Promise<OpenGroupReport> {
	const big = input.bytes >= BIG_INPUT_BYTES;
	const timeoutMs = input.bytes >= 2e9 ? 45 * 60_000 : big ? 15 * 60_000 : 5 * 60_000;
	const impls: OpenImpl[] = ["floor-scan", "floor-parse", "pi16", "pi073", "ours-full", "ours-lazy"];
	const rows = new Map<OpenImpl | "page", Row>(impls.map((impl) => [impl, newRow(OPEN_LABELS[impl])]));
	const pageRow = newRow("ours lazy, then contextPage({ last: 50 }): the page alone");
	rows.set("page", pageRow);
	let active = [...impls];
	if (input.bytes > MAX_STRING_LENGTH) {
		const skip = rows.get("pi073") as Row;
		skip.skipped = "skipped: too large for pi 0.73.1 (see below)";
		skip.note = `was skipped: it reads with readFileSync(path, "utf8"), and ${fmtMb(input.bytes)} MB exceeds V8's maximum string length (${fmtMb(MAX_STRING_LENGTH)} M characters)`;
		active = active.filter((impl) => impl !== "pi073");
	}
	const first = new Map<OpenImpl, OpenResult>();
	let reference: ContextReference | undefined;
	warmPageCache(input.path);
	const started = performance.now();
	for (let round = 0; round < rounds; round++) {
		for (const impl of rotate(active, round)) {
			const row = rows.get(impl) as Row;
			try {
				const task: Task = { kind: "open", impl, path: input.path, check: round === 0, modules: MODULES };
				const result = (await runChild(task, { big, timeoutMs })) as OpenResult;
				if (round === 0) first.set(impl, result);
				row.ms.push(result.open.ms);
				row.rss.push(result.open.peakRssBytes);
				row.rssBefore.push(result.rssBeforeBytes);
				if (result.page) {
					pageRow.ms.push(result.page.ms);
					pageRow.rss.push(result.page.peakRssBytes);
				}
			} catch (error) {
				row.error = message(error);
				active = active.filter((other) => other !== impl);
				if (impl.startsWith("ours")) failures.push(`${group}: ${row.label} failed: ${row.error}`);
			}
		}
		if (round === 0) {
			const pi = first.get("pi16");
			const full = first.get("ours-full");
			reference = pi?.context
				? { result: pi, name: "pi 1.6.0" }
				: full?.context
					? { result: full, name: "ours full" }
					: undefined;
			if (pi?.checkError) {
				(rows.get("pi16") as Row).note =
					`opened the file, but its buildSessionContext() threw ${pi.checkError}; ` +
					"so ours lazy's page was checked against ours full's context, and ours full's context against nothing";
			}
			for (const [impl, result] of first) {
				const problem = openProblem(impl, result, pi, reference, input);
				if (!problem) continue;
				const row = rows.get(impl) as Row;
				if (impl === "pi073") {
					row.note = `differs from pi 1.6.0: ${problem}`;
					continue;
				}
				row.wrong = problem;
				active = active.filter((other) => other !== impl);
				failures.push(`${group}: ${row.label}: WRONG ANSWER: ${problem}`);
			}
			const lazy = first.get("ours-lazy");
			if (lazy && !lazy.pageSupported) {
				pageRow.skipped = "TODO: Session has no contextPage yet";
				todos.push(`${group}: the contextPage({ last: 50 }) row (Session has no contextPage yet)`);
			}
			if (!pi) {
				todos.push(`${group}: pi 1.6.0 gave no answer, so ours was checked against the generator only`);
			}
		}
	}
	const pi = first.get("pi16");
	const piRow = rows.get("pi16");
	const floor = rows.get("floor-parse");
	const context = pi?.context ? `; leaf context ${pi.context.messages.toLocaleString("en")} messages` : "";
	const shape =
		`${input.compactions} compactions, ${input.labels} labels, ${input.branches} branches` +
		(input.images > 0 ? `, ${input.images} images (${fmtMb(input.imageBytes)} MB of base64)` : "");
	console.log(
		`\n### ${input.name}: ${fmtMb(input.bytes)} MB, ${input.entries.toLocaleString("en")} entries, ${shape}; ` +
			`leaf ${input.leafId} at depth ${input.leafDepth.toLocaleString("en")}${context}`,
	);
	console.log(
		`${rounds} rounds, ${input.source} payloads, seed ${input.seed}${big ? `, children run with ${HEAP_FLAG}` : ""}; ` +
			`${((performance.now() - started) / 1000).toFixed(0)} s`,
	);
	printTable(
		TABLE_HEADER,
		[...rows.entries()].map(([impl, row]) => {
			const cells = rowCells(row, piRow, floor);
			if (impl === "page") cells[3] = cells[4] = cells[5] = cells[6] = "";
			return cells;
		}),
	);
	const structure = pi ? "pi 1.6.0's and the generator's" : "the generator's (pi 1.6.0 gave no answer)";
	const contexts =
		reference?.name === "pi 1.6.0"
			? "the leaf's context (ours full) and its last 50 messages (ours lazy page) against pi 1.6.0's"
			: reference
				? "ours lazy page against the last 50 messages of ours full's context (pi 1.6.0 built none)"
				: "no context (none was built)";
	console.log(`checked in round 1: entry count and leaf against ${structure}; ${contexts}`);
	const before = (impl: OpenImpl) => {
		const row = rows.get(impl);
		return row && row.rssBefore.length > 0 ? `${fmtMb(median(row.rssBefore))} MB` : "—";
	};
	console.log(
		`RSS before the timed open (node + modules loaded): floor ${before("floor-parse")}, pi 1.6.0 ${before("pi16")}, ` +
			`pi 0.73.1 ${before("pi073")}, ours ${before("ours-full")}; the page row's RSS is the peak over open and page`,
	);
	for (const row of rows.values()) if (row.note) console.log(`note: ${row.label} ${row.note}`);
	return { rows, pi };
}

function openGoals(group: GroupName, report: OpenGroupReport, input: ScaleInput): void {
	const rows = report.rows;
	const pi = rows.get("pi16");
	const lazy = rows.get("ours-lazy");
	const full = rows.get("ours-full");
	if (group === "linear" || group === "bushy" || group === "compaction-heavy") {
		goal(group, `${input.name} lazy open time ÷ pi 1.6.0`, ratioOf(lazy, pi, "ms"), 0.25, "×");
		goal(group, `${input.name} lazy open RSS ÷ pi 1.6.0`, ratioOf(lazy, pi, "rss"), 0.5, "×");
		goal(group, `${input.name} full open time ÷ pi 1.6.0`, ratioOf(full, pi, "ms"), 0.9, "×");
		goal(group, `${input.name} full open RSS ÷ pi 1.6.0`, ratioOf(full, pi, "rss"), 1.0, "×");
	} else if (group === "text-1gb" || group === "image-1gb") {
		goal(group, `${input.name} lazy open time`, medianOf(lazy, "ms"), 3000, " ms");
		goal(group, `${input.name} lazy open peak RSS`, (medianOf(lazy, "rss") ?? Number.NaN) / 1e6, 500, " MB");
		goal(
			group,
			`${input.name} contextPage({ last: 50 }) after the lazy open`,
			medianOf(rows.get("page"), "ms"),
			100,
			" ms",
		);
	} else {
		console.log(`  ${input.name} opens: reported, no target set`);
	}
}

// ————————————————————————————————————————— the context of the deepest leaf —————————————————————————————————————————

async function contextGroup(input: ScaleInput, rounds: number): Promise<void> {
	const impls: ContextImpl[] = ["pi16", "ours"];
	const label: Record<ContextImpl, string> = {
		pi16: "pi 1.6.0 buildSessionContext()",
		ours: "ours session.tree.buildSessionContext()",
	};
	const firstRows = new Map(impls.map((impl) => [impl, newRow(`${label[impl]}, first call after the open`)]));
	const repeatRows = new Map(impls.map((impl) => [impl, newRow(`${label[impl]}, median of 5 more calls`)]));
	const first = new Map<ContextImpl, ContextResult>();
	let active = [...impls];
	warmPageCache(input.path);
	const started = performance.now();
	for (let round = 0; round < rounds; round++) {
		for (const impl of rotate(active, round)) {
			try {
				const task: Task = { kind: "context", impl, path: input.path, repeats: 5, modules: MODULES };
				const result = (await runChild(task, {
					big: input.bytes >= BIG_INPUT_BYTES,
					timeoutMs: 5 * 60_000,
				})) as ContextResult;
				if (round === 0) first.set(impl, result);
				(firstRows.get(impl) as Row).ms.push(result.firstMs);
				(firstRows.get(impl) as Row).rss.push(result.peakRssBytes);
				(repeatRows.get(impl) as Row).ms.push(median(result.repeatMs));
				(repeatRows.get(impl) as Row).rss.push(result.peakRssBytes);
			} catch (error) {
				(firstRows.get(impl) as Row).error = message(error);
				active = active.filter((other) => other !== impl);
				if (impl === "ours") failures.push(`context: ours failed: ${message(error)}`);
			}
		}
		if (round === 0) {
			const pi = first.get("pi16");
			const ours = first.get("ours");
			const problems: string[] = [];
			if (ours && ours.leafId !== input.deepestId)
				problems.push(`leaf ${ours.leafId}, the deepest entry is ${input.deepestId}`);
			if (ours && pi && !sameContext(ours.context, pi.context)) {
				problems.push(`context differs from pi 1.6.0's (${ours.context.messages} vs ${pi.context.messages} messages)`);
			}
			if (problems.length > 0) {
				(firstRows.get("ours") as Row).wrong = problems.join("; ");
				(repeatRows.get("ours") as Row).wrong = problems.join("; ");
				active = active.filter((other) => other !== "ours");
				failures.push(`context: ours: WRONG ANSWER: ${problems.join("; ")}`);
			}
		}
	}
	const pi = first.get("pi16");
	console.log(
		`\n### Context of the deepest leaf of ${input.name}: depth ${input.deepestDepth.toLocaleString("en")}, ` +
			`${pi?.context.messages.toLocaleString("en") ?? "?"} context messages`,
	);
	console.log(
		`${rounds} rounds; each child opens the file fully (not timed here), then times buildSessionContext() once and 5 more times; ` +
			`${((performance.now() - started) / 1000).toFixed(0)} s. RSS is the child's peak, open included.`,
	);
	const header = ["case", "time ms, median (range)", "peak RSS MB, median (range)", "time ÷ pi 1.6"];
	const cells = (row: Row, piRow: Row | undefined) => {
		const why = row.wrong ? `WRONG ANSWER: ${row.wrong}` : row.error ? `failed: ${row.error}` : undefined;
		if (why && row.ms.length === 0) return [row.label, why, "", ""];
		return [row.label, spread(row.ms, fmtMs), spread(row.rss, fmtMb), row === piRow ? "1" : ratio(row.ms, piRow?.ms)];
	};
	const piFirst = firstRows.get("pi16");
	const piRepeat = repeatRows.get("pi16");
	printTable(header, [
		cells(piFirst as Row, piFirst),
		cells(firstRows.get("ours") as Row, piFirst),
		cells(piRepeat as Row, piRepeat),
		cells(repeatRows.get("ours") as Row, piRepeat),
	]);
	console.log("checked against pi 1.6.0 in round 1: leaf = the deepest entry, digest of every context message");
	goal(
		"context",
		`deepest-leaf context of ${input.name}, first call, ours ÷ pi 1.6.0`,
		ratioOf(firstRows.get("ours"), piFirst, "ms"),
		0.3,
		"×",
	);
	goal(
		"context",
		`deepest-leaf context of ${input.name}, repeated, ours ÷ pi 1.6.0`,
		ratioOf(repeatRows.get("ours"), piRepeat, "ms"),
		0.3,
		"×",
	);
}

// ————————————————————————————————————————— listing —————————————————————————————————————————

const PHASES = ["cold (first call in the process)", "warm (second call)", "warm after appends to 10 sessions"];

async function listingGroup(input: ScaleInput, rounds: number): Promise<void> {
	const started = performance.now();
	// A working copy: the appends between listings must not change the cached input.
	const agentDir = join(scratch, "agent");
	cpSync(input.path, agentDir, { recursive: true, preserveTimestamps: true });
	const sessionsRoot = join(agentDir, "sessions");
	const sessions = (input.sessions ?? []).map((session) => ({
		...session,
		path: join(agentDir, session.path.slice(input.path.length)),
	}));
	// Ten sessions spread over the listing's order get one user message each: they become the newest.
	const byActivity = [...sessions].sort((a, b) => a.lastActivity - b.lastActivity);
	const newest = Math.max(...sessions.map((session) => session.lastActivity));
	const appended: HomeSession[] = Array.from(
		{ length: Math.min(10, byActivity.length) },
		(_, i) => byActivity[Math.floor((i * byActivity.length) / 10)] as HomeSession,
	);
	const appends = appended.map((session, i) => {
		const time = newest + 60_000 * (i + 1);
		const entry = {
			type: "message",
			id: (0xa0000000 + i).toString(16),
			parentId: session.lastId,
			timestamp: new Date(time).toISOString(),
			message: { role: "user", content: [{ type: "text", text: `appended between listings ${i}` }], timestamp: time },
		};
		return { path: session.path, line: `${JSON.stringify(entry)}\n`, size: session.bytes };
	});
	const catalogPath = join(scratch, "catalog", "sessions-catalog.json");
	const impls: ListImpl[] = ["pi16", "ours", "ours-catalog"];
	const label: Record<ListImpl, string> = {
		pi16: "pi 1.6.0 SessionManager.listAll()",
		ours: "ours listAllSessions(storage, root)",
		"ours-catalog": "ours listAllSessions(storage, root, { catalog })",
	};
	const rows = new Map(impls.map((impl) => [impl, PHASES.map((phase) => newRow(`${label[impl]}: ${phase}`))]));
	const first = new Map<ListImpl, ListResult>();
	let active = [...impls];
	for (let round = 0; round < rounds; round++) {
		for (const impl of rotate(active, round)) {
			const phaseRows = rows.get(impl) as Row[];
			rmSync(join(scratch, "catalog"), { recursive: true, force: true });
			try {
				const task: Task = {
					kind: "list",
					impl,
					sessionsRoot,
					appends: appends.map(({ path, line }) => ({ path, line })),
					modules: MODULES,
				};
				if (impl === "ours-catalog") task.catalogPath = catalogPath;
				const env = impl === "pi16" ? childEnv({ PI_CODING_AGENT_DIR: agentDir }) : childEnv();
				const result = (await runChild(task, { big: false, timeoutMs: 10 * 60_000, env })) as ListResult;
				if (round === 0) first.set(impl, result);
				result.phases.forEach((phase, index) => {
					const row = phaseRows[index] as Row;
					row.ms.push(phase.ms);
					row.rss.push(phase.peakRssBytes);
					row.rssBefore.push(result.rssBeforeBytes);
				});
			} catch (error) {
				(phaseRows[0] as Row).error = message(error);
				active = active.filter((other) => other !== impl);
				if (impl !== "pi16") failures.push(`listing: ${label[impl]} failed: ${message(error)}`);
			} finally {
				for (const { path, size } of appends) truncateSync(path, size);
			}
		}
		if (round === 0) {
			const pi = first.get("pi16");
			const catalog = first.get("ours-catalog");
			if (catalog && !catalog.catalogWritten) {
				for (const row of rows.get("ours-catalog") as Row[]) {
					row.skipped = "TODO: listAllSessions has no catalog option yet (no catalog file was written)";
					row.ms.length = row.rss.length = 0;
				}
				todos.push("listing: the persistent-catalog rows (listAllSessions wrote no catalog file for { catalog })");
				active = active.filter((other) => other !== "ours-catalog");
			}
			for (const impl of ["ours", "ours-catalog"] as const) {
				const ours = first.get(impl);
				if (!ours || !pi || !active.includes(impl)) continue;
				ours.phases.forEach((phase, index) => {
					const theirs = pi.phases[index];
					if (!theirs || phase.digest === theirs.digest) return;
					const row = phase.rows.findIndex((digest, at) => digest !== theirs.rows[at]);
					const problem = `${PHASES[index]}: ${phase.sessions} sessions vs pi's ${theirs.sessions}; first differing row ${row < 0 ? phase.rows.length : row}`;
					const target = (rows.get(impl) as Row[])[index] as Row;
					target.wrong = problem;
					failures.push(`listing: ${label[impl]}: WRONG ANSWER: ${problem}`);
				});
				if ((rows.get(impl) as Row[]).some((row) => row.wrong)) active = active.filter((other) => other !== impl);
			}
			if (!pi) todos.push("listing: pi 1.6.0 gave no answer, so the listings were not checked");
		}
	}
	const pi = first.get("pi16");
	console.log(
		`\n### Listing ${input.name}: ${sessions.length.toLocaleString("en")} sessions over ${input.projects} projects, ` +
			`${fmtMb(input.bytes)} MB, ${input.entries.toLocaleString("en")} entries`,
	);
	const sizes = sessions.map((session) => session.bytes).sort((a, b) => a - b);
	console.log(
		`session sizes: median ${fmtMb(median(sizes))} MB, largest ${fmtMb(sizes[sizes.length - 1] ?? 0)} MB, ` +
			`${sizes.filter((size) => size < 100e3).length} under 100 kB; ${rounds} rounds; ` +
			`${((performance.now() - started) / 1000).toFixed(0)} s`,
	);
	console.log(
		"each child lists three times: cold = its first call (the OS page cache is warm for every case), warm = a second " +
			"call, then one user message appended (untimed) to 10 sessions and a third call; RSS is the peak so far",
	);
	const piRows = rows.get("pi16") as Row[];
	const tableRows: string[][] = [];
	for (let phase = 0; phase < PHASES.length; phase++) {
		for (const impl of impls) {
			const row = (rows.get(impl) as Row[])[phase] as Row;
			const piRow = piRows[phase];
			const why = row.wrong ? `WRONG ANSWER: ${row.wrong}` : row.error ? `failed: ${row.error}` : row.skipped;
			if (why && row.ms.length === 0) {
				tableRows.push([row.label, why, "", "", ""]);
				continue;
			}
			tableRows.push([
				row.wrong ? `${row.label} (WRONG ANSWER)` : row.label,
				spread(row.ms, fmtMs),
				spread(row.rss, fmtMb),
				row === piRow ? "1" : ratio(row.ms, piRow?.ms),
				row === piRow ? "1" : ratio(row.rss, piRow?.rss),
			]);
		}
	}
	printTable(
		["case", "time ms, median (range)", "peak RSS MB, median (range)", "time ÷ pi 1.6", "RSS ÷ pi 1.6"],
		tableRows,
	);
	console.log(
		pi
			? `checked against pi 1.6.0 in round 1: every row of every listing (${pi.phases[0]?.sessions} sessions: path, id, cwd, name, parent, created, modified, message count, first message, all text)`
			: "pi 1.6.0 gave no answer: listings not checked",
	);
	const ours = rows.get("ours") as Row[];
	const catalog = rows.get("ours-catalog") as Row[];
	const hasCatalog = (catalog[0] as Row).ms.length > 0;
	goal("listing", "cold listAll time, ours ÷ pi 1.6.0", ratioOf(ours[0], piRows[0], "ms"), 0.35, "×");
	goal("listing", "cold listAll RSS, ours ÷ pi 1.6.0", ratioOf(ours[0], piRows[0], "rss"), 0.5, "×");
	if (hasCatalog) {
		goal(
			"listing",
			"cold listAll time with the catalog, ours ÷ pi 1.6.0",
			ratioOf(catalog[0], piRows[0], "ms"),
			0.35,
			"×",
		);
		goal(
			"listing",
			"cold listAll RSS with the catalog, ours ÷ pi 1.6.0",
			ratioOf(catalog[0], piRows[0], "rss"),
			0.5,
			"×",
		);
	}
	const warm = hasCatalog ? catalog : ours;
	const how = hasCatalog ? "with the catalog" : "without a catalog (the catalog rows are TODO)";
	goal("listing", `warm listAll time ${how}, ours ÷ pi 1.6.0`, ratioOf(warm[1], piRows[1], "ms"), 0.02, "×");
	goal(
		"listing",
		`warm after appends to 10 sessions ${how}, ours ÷ pi 1.6.0`,
		ratioOf(warm[2], piRows[2], "ms"),
		0.05,
		"×",
	);
	rmSync(agentDir, { recursive: true, force: true });
}

// ————————————————————————————————————————— main —————————————————————————————————————————

function gitDescription(): string {
	try {
		const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
		const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "adapters"], { encoding: "utf8" }).trim();
		return dirty ? `${head} + uncommitted changes in src/ or adapters/` : head;
	} catch {
		return "unknown commit";
	}
}

async function main(): Promise<void> {
	const started = performance.now();
	const rounds = (full: number) => ROUNDS_OVERRIDE ?? (QUICK ? 3 : full);
	console.log(
		`## Scale benchmark${QUICK ? " (--quick: smaller inputs)" : ""} — node ${process.version}, ${cpus().length} cores, ` +
			`${(totalmem() / 2 ** 30).toFixed(0)} GiB, at ${gitDescription()}, ${new Date().toISOString()}`,
	);
	const ensure = (name: VariantName): ScaleInput =>
		ensureScaleInput(name, {
			seed: SEED,
			quick: QUICK,
			synthetic: flag("--synthetic"),
			...(option("--inputs") ? { root: option("--inputs") } : {}),
			log: (line) => console.log(line),
		});

	buildSync({
		entryPoints: [fileURLToPath(new URL("./scale/child.ts", import.meta.url))],
		bundle: true,
		platform: "node",
		format: "esm",
		target: "node20",
		outfile: childPath,
		logLevel: "error",
	});

	const openGroups: [GroupName, VariantName, number][] = [
		["linear", "linear-100mb", 5],
		["bushy", "bushy-100mb", 5],
		["compaction-heavy", "compaction-heavy-100mb", 5],
		["text-1gb", "text-1gb", 3],
		["image-1gb", "image-1gb", 3],
		["text-4gb", "text-4gb", 2],
	];
	const inputs = new Map<VariantName, ScaleInput>();
	for (const [group, variant] of openGroups) if (wanted(group)) inputs.set(variant, ensure(variant));
	if (wanted("context") && !inputs.has("linear-100mb")) inputs.set("linear-100mb", ensure("linear-100mb"));
	if (wanted("listing")) inputs.set("home-1000", ensure("home-1000"));
	for (const input of inputs.values()) {
		console.log(`input ${input.name}: ${input.path} (${input.source} payloads, seed ${input.seed})`);
	}

	for (const [group, variant, fullRounds] of openGroups) {
		if (!wanted(group)) continue;
		const input = inputs.get(variant) as ScaleInput;
		const report = await openGroup(group, input, rounds(fullRounds));
		openGoals(group, report, input);
	}
	if (wanted("context")) await contextGroup(inputs.get("linear-100mb") as ScaleInput, rounds(5));
	if (wanted("listing")) await listingGroup(inputs.get("home-1000") as ScaleInput, rounds(5));

	console.log("\n### Goals");
	for (const { text, met } of goals) console.log(`- ${met === undefined ? "?" : met ? "met" : "NOT met"}: ${text}`);
	const met = goals.filter((entry) => entry.met).length;
	console.log(goals.length > 0 ? `${met} of ${goals.length} goals met` : "(no goals in the groups run)");
	if (todos.length > 0) {
		console.log("\n### TODO");
		for (const todo of todos) console.log(`- ${todo}`);
	}
	console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s`);
	if (failures.length > 0) {
		console.error("\nFAILED:");
		for (const failure of failures) console.error(`- ${failure}`);
		process.exitCode = 1;
	}
}

try {
	await main();
} finally {
	rmSync(scratch, { recursive: true, force: true });
}
