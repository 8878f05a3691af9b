/**
 * Benchmark at scale: opening 100 MB, 1 GB (and, with `--huge`, 4 GB) sessions, the context of a deep
 * leaf, `getTree()`, a fork of a long branch, the migration of a v1 file, listing agent directories of
 * 1,000 and 250 sessions and finding the most recent of 1,000, side by side with pi 1.6.0 (and, for
 * opens, pi 0.73.1 and the floor: reading the bytes; reading and `JSON.parse` of every line, the objects
 * kept). Inputs come from `bench/scale-inputs.ts` (seeded, cached under the system's temporary directory).
 *
 * Every measurement runs in a fresh child process (this file's `scale/child.ts`, bundled with esbuild so
 * no TypeScript loader sits in it), so its peak RSS (`process.resourceUsage().maxRSS`) is its own; the
 * implementations take turns in every round (the order rotates), and each row shows the median over
 * the rounds with the range. The first round also checks every whole answer against pi 1.6.0's, after
 * the timings in each child: of an open, entry count, leaf, and a digest of the header and every entry
 * (each one's JSON, in file order), the labels and the name (ours lazy reads every entry for it, decoding
 * every body), the leaf's context and the last page of 50 (its offset and entry ids too); of the deepest
 * leaf's context, every call's; every listing row, every field; the tree's nodes; the files a fork or a
 * migration wrote (and where the fork went on); the file found. A wrong answer fails the run. Absolute times on shared machines are noise; the ratios are the result. Under `npm run bench`
 * (`BENCH_ROWS` set) each figure is also handed to the suite as a row (bench/suite/rows.ts): "lazy open,
 * linear 100 MB", "listAll cold, 1,000 sessions", …, the size measured in the name.
 *
 * Run: `npm run bench:scale` (9–13 minutes on 2 cores, plus about 30 s to generate the inputs once),
 * `npm run bench:scale -- --quick` (1 round; opens of 20 MB, the 1 GB inputs' stand-ins at 25 MB,
 * listings of 250 sessions, the most recent of 250: about a minute), `-- --huge` adds the 4 GB open
 * (about 20 more minutes, 4 GB of disk, children up to ~9 GB RSS); `--rounds N` (or `BENCH_ROUNDS`),
 * `--only linear,bushy,compaction-heavy,text-1gb,image-1gb,text-4gb,context,listing,tree,recent,fork,migration`,
 * `--seed N`, `--synthetic` (payloads without the corpus), `--inputs DIR` (input cache root).
 * @module
 */
import { constants as bufferConstants } from "node:buffer";
import { execFileSync, spawn } from "node:child_process";
import {
	closeSync,
	copyFileSync,
	cpSync,
	linkSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readSync,
	rmSync,
	statSync,
	truncateSync,
	utimesSync,
} from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import {
	type ContextImpl,
	type ContextResult,
	type ForkResult,
	type ListImpl,
	type ListResult,
	type MigrateResult,
	type OpenImpl,
	type OpenResult,
	type PairImpl,
	type PiModules,
	RESULT_MARKER,
	type RecentResult,
	type Result,
	type Sample,
	type Task,
	type TreeResult,
} from "./scale/protocol.ts";
import {
	ensureInput as ensureScaleInput,
	ensureV1Input,
	type HomeSession,
	type ScaleInput,
	type V1Input,
	type VariantName,
} from "./scale-inputs.ts";
import { type BenchRow, type Goal, type Measure, measureOf, reportRow } from "./suite/rows.ts";
import { roundsText } from "./suite/table.ts";

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
	"tree",
	"recent",
	"fork",
	"migration",
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
/**
 * Rounds of every group with `--quick`, whose figures only show that the suite runs and answers right
 * (every answer is checked in the first round): one keeps the whole quick suite under three minutes on a
 * 2-core machine slow at fresh memory (two took 3 min 31 s there).
 */
const QUICK_ROUNDS = 1;
/** Sizes `--quick` uses instead of the inputs' own quick sizes (the 1 GB inputs' stand-ins: 25 MB). */
const QUICK_BYTES: Partial<Record<VariantName, number>> = { "text-1gb": 25e6, "image-1gb": 25e6 };
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

// ————————————————————————————————————————— rows for the suite —————————————————————————————————————————

/**
 * `linear-20mb` → `linear 20 MB`, `text-1gb` → `text 1 GB`: row names carry the size measured, so the rows
 * of a quick run are not taken for a full run's.
 */
function inputLabel(name: string): string {
	const match = /^(.*)-(\d+)(kb|mb|gb)$/.exec(name);
	return match ? `${match[1]} ${match[2]} ${(match[3] as string).toUpperCase()}` : name;
}

/** A row's figures for the suite: none when it failed before a figure, or gave a wrong answer. */
function measureOfRow(row: Row | undefined): Measure | undefined {
	if (!row || row.wrong || row.ms.length === 0) return undefined;
	return measureOf(row.ms, row.rss);
}

/** A row of the suite, from this script's rows: `ours`' wrong answer or failure becomes its `problem`. */
interface SuiteRow extends Omit<BenchRow, "bench" | "ours" | "pi16" | "pi073" | "floor"> {
	ours: Row | undefined;
	pi16?: Row | undefined;
	pi073?: Row | undefined;
	floor?: Row | undefined;
}

const SUITE_NAMES = { pi16: "pi 1.6.0", pi073: "pi 0.73.1", floor: "the floor" } as const;

function reportSuiteRow(row: SuiteRow): void {
	const { ours, pi16, pi073, floor, ...rest } = row;
	const out: BenchRow = { bench: "scale", ...rest };
	const notes = rest.note ? [rest.note] : [];
	const oursMeasure = measureOfRow(ours);
	if (oursMeasure) out.ours = oursMeasure;
	const problem =
		rest.problem ?? (ours?.wrong ? `wrong answer: ${ours.wrong}` : ours?.error ? `failed: ${ours.error}` : undefined);
	if (problem) out.problem = problem;
	if (!ours) notes.push("ours not measured");
	else if (ours.skipped && !oursMeasure) notes.push(ours.skipped);
	for (const [key, other] of [
		["pi16", pi16],
		["pi073", pi073],
		["floor", floor],
	] as const) {
		const measure = measureOfRow(other);
		if (measure) out[key] = measure;
		if (other?.error) notes.push(`${SUITE_NAMES[key]} failed: ${other.error}`);
		else if (other?.note) notes.push(`${SUITE_NAMES[key]} ${other.note}`);
		else if (other?.skipped) notes.push(`${SUITE_NAMES[key]}: ${other.skipped}`);
	}
	if (notes.length > 0) out.note = notes.join("; ");
	reportRow(out);
}

const timeGoal = (max: number): Goal => ({ kind: "ratio", max, against: "pi16" });
const rssGoal = (max: number): Goal => ({ kind: "rss", max, against: "pi16" });

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
 * pi 1.6.0's, the context reference and the reference of the whole answer (every entry, the header, the
 * labels and the name); `undefined` if nothing.
 */
function openProblem(
	impl: OpenImpl,
	result: OpenResult,
	pi: OpenResult | undefined,
	reference: ContextReference | undefined,
	wholeReference: ContextReference | undefined,
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
	const whole = wholeReference?.result.whole;
	const mine = result.whole;
	if (whole && mine && wholeReference.result !== result) {
		const of = wholeReference.name;
		if (mine.entries.count !== whole.entries.count || mine.entries.digest !== whole.entries.digest) {
			problems.push(`the header and the ${mine.entries.count} entries differ from ${of}'s (${whole.entries.count})`);
		}
		// The floor reads records only: no labels, no name.
		if (mine.labels && (mine.labels.count !== whole.labels?.count || mine.labels.digest !== whole.labels.digest)) {
			problems.push(`the ${mine.labels.count} labels differ from ${of}'s (${whole.labels?.count})`);
		}
		if (mine.labels && mine.name !== whole.name) problems.push(`name ${mine.name}, ${of}'s ${whole.name}`);
	}
	const expected = reference?.result;
	if (expected && expected !== result && expected.context) {
		if (impl === "ours-lazy" && result.pageSupported) {
			if (!sameContext(result.last50, expected.last50)) {
				problems.push(`contextPage({ last: 50 }) differs from the last 50 context messages of ${reference.name}`);
			}
			if (expected.last50Place !== undefined && result.last50Place !== expected.last50Place) {
				problems.push(`contextPage({ last: 50 })'s offset or entry ids differ from ${reference.name}'s`);
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

/** The rows of an open group: each open, ours lazy's page, and pi 1.6.0's context after its open. */
type OpenRowKey = OpenImpl | "page" | "pi16-page";

interface OpenGroupReport {
	rows: Map<OpenRowKey, Row>;
	pi: OpenResult | undefined;
	/** Whose context ours was checked against. */
	referenceName: string | undefined;
	/** Whose whole answer (every entry, header, labels, name) ours was checked against. */
	wholeName: string | undefined;
}

async function openGroup(group: GroupName, input: ScaleInput, rounds: number): Promise<OpenGroupReport> {
	const big = input.bytes >= BIG_INPUT_BYTES;
	const timeoutMs = input.bytes >= 2e9 ? 45 * 60_000 : big ? 15 * 60_000 : 5 * 60_000;
	const impls: OpenImpl[] = ["floor-scan", "floor-parse", "pi16", "pi073", "ours-full", "ours-lazy"];
	const rows = new Map<OpenRowKey, Row>(impls.map((impl) => [impl, newRow(OPEN_LABELS[impl])]));
	const pageRow = newRow("ours lazy, then contextPage({ last: 50 }): the page alone");
	rows.set("page", pageRow);
	const piPageRow = newRow("pi 1.6.0, then buildSessionContext(), its last 50: the context alone");
	rows.set("pi16-page", piPageRow);
	let active = [...impls];
	if (input.bytes > MAX_STRING_LENGTH) {
		const skip = rows.get("pi073") as Row;
		skip.skipped = "skipped: too large for pi 0.73.1 (see below)";
		skip.note = `was skipped: it reads with readFileSync(path, "utf8"), and ${fmtMb(input.bytes)} MB exceeds V8's maximum string length (${fmtMb(MAX_STRING_LENGTH)} M characters)`;
		active = active.filter((impl) => impl !== "pi073");
	}
	const first = new Map<OpenImpl, OpenResult>();
	let reference: ContextReference | undefined;
	let wholeName: string | undefined;
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
					const target = impl === "pi16" ? piPageRow : pageRow;
					target.ms.push(result.page.ms);
					target.rss.push(result.page.peakRssBytes);
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
			// The whole answer's reference: pi 1.6.0's, or ours full's when pi 1.6.0 gave none.
			const wholeReference = pi?.whole
				? { result: pi, name: "pi 1.6.0" }
				: full?.whole
					? { result: full, name: "ours full" }
					: undefined;
			wholeName = wholeReference?.name;
			if (pi?.checkError) {
				(rows.get("pi16") as Row).note =
					`opened the file, but its buildSessionContext() threw ${pi.checkError}; ` +
					"so ours lazy's page was checked against ours full's context, and ours full's context against nothing";
			}
			for (const [impl, result] of first) {
				const problem = openProblem(impl, result, pi, reference, wholeReference, input);
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
		`${roundsText(rounds)}, ${input.source} payloads, seed ${input.seed}${big ? `, children run with ${HEAP_FLAG}` : ""}; ` +
			`${((performance.now() - started) / 1000).toFixed(0)} s`,
	);
	printTable(
		TABLE_HEADER,
		[...rows.entries()].map(([impl, row]) => {
			const cells = rowCells(row, piRow, floor);
			if (impl === "page" || impl === "pi16-page") cells[3] = cells[4] = cells[5] = cells[6] = "";
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
	const whole = wholeName
		? `; every entry (JSON, in file order), the header, the labels and the name against ${wholeName}'s (ours lazy: read after its timings, decoding every body), the floor's records against it too`
		: "";
	console.log(`checked in round 1: entry count and leaf against ${structure}; ${contexts}${whole}`);
	const before = (impl: OpenImpl) => {
		const row = rows.get(impl);
		return row && row.rssBefore.length > 0 ? `${fmtMb(median(row.rssBefore))} MB` : "—";
	};
	console.log(
		`RSS before the timed open (node + modules loaded): floor ${before("floor-parse")}, pi 1.6.0 ${before("pi16")}, ` +
			`pi 0.73.1 ${before("pi073")}, ours ${before("ours-full")}; the page row's RSS is the peak over open and page`,
	);
	for (const row of rows.values()) if (row.note) console.log(`note: ${row.label} ${row.note}`);
	return { rows, pi, referenceName: reference?.name, wholeName };
}

/** The group's rows for the suite: the lazy and the full open, and the leaf's last page after a lazy open. */
function reportOpenRows(group: GroupName, report: OpenGroupReport, input: ScaleInput): void {
	const rows = report.rows;
	const name = inputLabel(input.name);
	const size = { bytes: input.bytes, entries: input.entries };
	const oneGb = group === "text-1gb" || group === "image-1gb";
	const withGoals = group !== "text-4gb";
	const theirs = { pi16: rows.get("pi16"), pi073: rows.get("pi073"), floor: rows.get("floor-parse") };
	const structure =
		(report.pi ? "entry count and leaf, against pi 1.6.0's" : "entry count and leaf, against the generator's") +
		(report.wholeName
			? `; every entry (a digest of each one's JSON in file order), the header, the labels and the name, against ${report.wholeName}'s`
			: "");
	const against = report.referenceName ?? "nothing (no context was built)";
	const rssNote = "peak RSS of a fresh child; the floor: read in ranges and JSON.parse of every line, kept";
	reportSuiteRow({
		name: `lazy open, ${name}`,
		ours: rows.get("ours-lazy"),
		...theirs,
		size,
		plot: { chart: "open", label: "lazy" },
		goals: withGoals
			? [
					timeGoal(0.25),
					rssGoal(0.5),
					...(oneGb
						? ([
								{ kind: "value", max: 3000 },
								{ kind: "rssMb", max: 500 },
							] as Goal[])
						: []),
				]
			: [],
		checked: `${structure}; contextPage({ last: 50 }) and the context's length against ${against}'s`,
		note: rssNote,
	});
	reportSuiteRow({
		name: `full open, ${name}`,
		ours: rows.get("ours-full"),
		...theirs,
		size,
		plot: { chart: "open", label: "full" },
		goals: withGoals ? [timeGoal(0.9), rssGoal(1.0)] : [],
		checked: `${structure}; a digest of the leaf's whole context against ${against}'s`,
		note: rssNote,
	});
	const page = rows.get("page") as Row;
	const lazy = rows.get("ours-lazy") as Row;
	reportSuiteRow({
		name: `leaf's last page (50 messages), ${name}`,
		ours: page,
		pi16: rows.get("pi16-page"),
		size,
		goals: oneGb ? [{ kind: "value", max: 100 }] : [],
		checked: `the 50 messages (thinking level and model too), their entries' ids, the page's offset and the context's length, against ${against}'s`,
		note:
			"ours: contextPage({ last: 50 }) after a lazy open; pi 1.6.0: buildSessionContext() after its open, " +
			"the last 50 kept; RSS is the peak over the open and the page",
		...(lazy.wrong
			? { problem: `wrong answer: ${lazy.wrong}` }
			: lazy.error
				? { problem: `failed: ${lazy.error}` }
				: {}),
	});
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
				const task: Task = {
					kind: "context",
					impl,
					path: input.path,
					repeats: 5,
					check: round === 0,
					modules: MODULES,
				};
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
			const again = ours?.repeatDigests?.findIndex((digest) => digest !== ours.context.digest) ?? -1;
			if (again >= 0) problems.push(`call ${again + 2} gave another context than the first`);
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
		`${roundsText(rounds)}; each child opens the file fully (not timed here), then times buildSessionContext() once and 5 more times; ` +
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
	console.log(
		"checked against pi 1.6.0 in round 1: leaf = the deepest entry, digest of every context message (thinking level and model too); each repeated call's the same",
	);
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
	const size = { bytes: input.bytes, entries: input.entries };
	const checked =
		"leaf = the deepest entry; a digest of the whole context (every message, thinking level, model), against pi 1.6.0's; every repeated call's the same as the first";
	const note = "in a fresh child after a full open (not timed); RSS is the child's peak, the open included";
	reportSuiteRow({
		name: `context of the deepest leaf, ${inputLabel(input.name)}`,
		ours: firstRows.get("ours"),
		pi16: piFirst,
		size,
		goals: [timeGoal(0.3)],
		checked,
		note: `buildSessionContext(), the first call after the open; ${note}`,
	});
	reportSuiteRow({
		name: `context of the deepest leaf, repeated, ${inputLabel(input.name)}`,
		ours: repeatRows.get("ours"),
		pi16: piRepeat,
		size,
		goals: [timeGoal(0.3)],
		checked,
		note: `buildSessionContext(), median of 5 calls after the first; ${note}`,
	});
}

// ————————————————————————————————————————— listing —————————————————————————————————————————

const PHASES = ["cold (first call in the process)", "warm (second call)", "warm after appends to 10 sessions"];

async function listingGroup(input: ScaleInput, rounds: number): Promise<void> {
	const started = performance.now();
	// A working copy: the appends between listings must not change the cached input.
	const agentDir = join(scratch, `agent-${input.name}`);
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
			`${sizes.filter((size) => size < 100e3).length} under 100 kB; ${roundsText(rounds)}; ` +
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
	const of = input.name;
	goal("listing", `${of} cold listAll time, ours ÷ pi 1.6.0`, ratioOf(ours[0], piRows[0], "ms"), 0.35, "×");
	goal("listing", `${of} cold listAll RSS, ours ÷ pi 1.6.0`, ratioOf(ours[0], piRows[0], "rss"), 0.5, "×");
	if (hasCatalog) {
		goal(
			"listing",
			`${of} cold listAll time with the catalog, ours ÷ pi 1.6.0`,
			ratioOf(catalog[0], piRows[0], "ms"),
			0.35,
			"×",
		);
		goal(
			"listing",
			`${of} cold listAll RSS with the catalog, ours ÷ pi 1.6.0`,
			ratioOf(catalog[0], piRows[0], "rss"),
			0.5,
			"×",
		);
	}
	const warm = hasCatalog ? catalog : ours;
	const how = hasCatalog ? "with the catalog" : "without a catalog (the catalog rows are TODO)";
	goal("listing", `${of} warm listAll time ${how}, ours ÷ pi 1.6.0`, ratioOf(warm[1], piRows[1], "ms"), 0.02, "×");
	goal(
		"listing",
		`${of} warm after appends to 10 sessions ${how}, ours ÷ pi 1.6.0`,
		ratioOf(warm[2], piRows[2], "ms"),
		0.05,
		"×",
	);
	rmSync(agentDir, { recursive: true, force: true });

	const count = sessions.length.toLocaleString("en");
	const size = { sessions: sessions.length, bytes: input.bytes, entries: input.entries };
	const checked = pi
		? "every row of the listing (path, id, cwd, name, parent, created, modified, message count, first message, all text), against pi 1.6.0's"
		: "nothing: pi 1.6.0 gave no answer";
	const note =
		"in a fresh child: cold is its first listAll (the OS page cache warm), every row's allMessagesText read in the timing; RSS is the peak so far";
	const catalogNote = hasCatalog
		? "ours with { catalog } (written by the cold call before it)"
		: "ours without a catalog (listAllSessions has no catalog option)";
	reportSuiteRow({
		name: `listAll cold, ${count} sessions`,
		ours: ours[0],
		pi16: piRows[0],
		size,
		plot: { chart: "listing", label: "cold" },
		goals: [timeGoal(0.35), rssGoal(0.5)],
		checked,
		note: `ours without a catalog; ${note}`,
	});
	reportSuiteRow({
		name: `listAll warm, ${count} sessions`,
		ours: warm[1],
		pi16: piRows[1],
		size,
		plot: { chart: "listing", label: "warm" },
		goals: [timeGoal(0.02)],
		checked,
		note: `the second call in the child, nothing changed; ${catalogNote}; ${note}`,
	});
	reportSuiteRow({
		name: `listAll warm after appends, ${count} sessions`,
		ours: warm[2],
		pi16: piRows[2],
		size,
		goals: [timeGoal(0.05)],
		checked,
		note: `the third call, after one user message appended (untimed) to 10 sessions; ${catalogNote}; ${note}`,
	});
}

// ————————————————————————————————————————— one operation: getTree, the most recent session, a fork, a migration —————————————————————————————————————————

const PAIR_IMPLS: readonly PairImpl[] = ["pi16", "ours"];

interface PairRun<R extends Result> {
	rows: Map<PairImpl, Row>;
	/** The answers of round 1. */
	first: Map<PairImpl, R>;
	rounds: number;
	seconds: number;
}

/**
 * Rounds of one operation, pi 1.6.0 and ours taking turns, each in a fresh child with a working directory
 * of its own (removed after it). `check` reads round 1's answers and says what is wrong with ours, which
 * is then measured no more.
 */
async function pairRounds<R extends Result>(options: {
	group: GroupName;
	labels: Record<PairImpl, string>;
	rounds: number;
	task: (impl: PairImpl, workDir: string) => Task;
	sample: (result: R) => Sample;
	check: (ours: R, pi: R | undefined) => string[];
}): Promise<PairRun<R>> {
	const rows = new Map(PAIR_IMPLS.map((impl) => [impl, newRow(options.labels[impl])]));
	const first = new Map<PairImpl, R>();
	let active = [...PAIR_IMPLS];
	const started = performance.now();
	for (let round = 0; round < options.rounds; round++) {
		for (const impl of rotate(active, round)) {
			const row = rows.get(impl) as Row;
			const workDir = join(scratch, `work-${options.group}-${impl}-${round}`);
			try {
				const result = (await runChild(options.task(impl, workDir), { big: false, timeoutMs: 5 * 60_000 })) as R;
				if (round === 0) first.set(impl, result);
				const sample = options.sample(result);
				row.ms.push(sample.ms);
				row.rss.push(sample.peakRssBytes);
			} catch (error) {
				row.error = message(error);
				active = active.filter((other) => other !== impl);
				if (impl === "ours") failures.push(`${options.group}: ${row.label} failed: ${row.error}`);
			} finally {
				rmSync(workDir, { recursive: true, force: true });
			}
		}
		const ours = first.get("ours");
		if (round === 0 && ours) {
			const pi = first.get("pi16");
			if (!pi) todos.push(`${options.group}: pi 1.6.0 gave no answer, so ours was not checked against it`);
			const problems = options.check(ours, pi);
			if (problems.length > 0) {
				const row = rows.get("ours") as Row;
				row.wrong = problems.join("; ");
				active = active.filter((other) => other !== "ours");
				failures.push(`${options.group}: ${row.label}: WRONG ANSWER: ${row.wrong}`);
			}
		}
	}
	return { rows, first, rounds: options.rounds, seconds: (performance.now() - started) / 1000 };
}

function printPairTable(title: string, what: string, run: PairRun<Result>, checked: string): void {
	console.log(`\n### ${title}`);
	console.log(`${what}; ${roundsText(run.rounds)}; ${run.seconds.toFixed(0)} s`);
	const pi = run.rows.get("pi16");
	printTable(
		TABLE_HEADER.slice(0, 5),
		PAIR_IMPLS.map((impl) => rowCells(run.rows.get(impl) as Row, pi, undefined).slice(0, 5)),
	);
	console.log(`checked against pi 1.6.0 in round 1: ${checked}`);
}

/** What differs between two answer digests, or nothing. */
function answerProblems(
	what: string,
	ours: { answer: { count: number; digest: string } },
	pi: { answer: { count: number; digest: string }; checkError?: string } | undefined,
): string[] {
	if (!pi || pi.checkError) return [];
	if (ours.answer.count !== pi.answer.count) return [`${ours.answer.count} ${what}, pi 1.6.0's ${pi.answer.count}`];
	return ours.answer.digest === pi.answer.digest ? [] : [`the ${what} differ from pi 1.6.0's`];
}

async function treeGroup(input: ScaleInput, rounds: number): Promise<void> {
	warmPageCache(input.path);
	const run = await pairRounds<TreeResult>({
		group: "tree",
		labels: { pi16: "pi 1.6.0 getTree()", ours: "ours session.tree.getTree()" },
		rounds,
		task: (impl) => ({ kind: "tree", impl, path: input.path, modules: MODULES }),
		sample: (result) => result.tree,
		check: (ours, pi) => [
			...(ours.answer.count === input.entries
				? []
				: [`${ours.answer.count} nodes, the file has ${input.entries} entries`]),
			...answerProblems("nodes (entry, label, label time, children in order)", ours, pi),
		],
	});
	const checked =
		"every node's entry (as JSON), label, label time and children in order (a digest of the pre-order walk)";
	printPairTable(
		`getTree() of ${input.name}: ${input.entries.toLocaleString("en")} entries, ${input.branches} branches`,
		"each child opens the file whole (not timed), then times getTree(); RSS is the child's peak, the open included",
		run,
		checked,
	);
	reportSuiteRow({
		name: `getTree, ${inputLabel(input.name)}`,
		ours: run.rows.get("ours"),
		pi16: run.rows.get("pi16"),
		size: { bytes: input.bytes, entries: input.entries },
		checked: `${checked}, against pi 1.6.0's`,
		note: "after a full open (not timed); RSS is the child's peak, the open included",
	});
}

/**
 * `findMostRecentSession` over one directory holding every session of `home` (hard links, so the files
 * keep their times): pi 1.6.0's (what `continueRecent` calls before it opens the file) against ours.
 */
async function recentGroup(home: ScaleInput, rounds: number): Promise<void> {
	const dir = join(scratch, "recent");
	mkdirSync(dir, { recursive: true });
	// The newest files: several when they share a time (the file system's clock is coarse).
	let newest: { paths: string[]; mtimeMs: number } | undefined;
	for (const session of home.sessions ?? []) {
		const target = join(dir, basename(session.path));
		try {
			linkSync(session.path, target);
		} catch {
			copyFileSync(session.path, target);
			const stat = statSync(session.path);
			utimesSync(target, stat.atime, stat.mtime);
		}
		const { mtimeMs } = statSync(target);
		if (!newest || mtimeMs > newest.mtimeMs) newest = { paths: [resolve(target)], mtimeMs };
		else if (mtimeMs === newest.mtimeMs) newest.paths.push(resolve(target));
	}
	const count = home.sessions?.length ?? 0;
	const run = await pairRounds<RecentResult>({
		group: "recent",
		labels: { pi16: "pi 1.6.0 findMostRecentSession(dir)", ours: "ours findMostRecentSession(dir)" },
		rounds,
		task: (impl) => ({ kind: "recent", impl, dir, modules: MODULES }),
		sample: (result) => result.sample,
		check: (ours, pi) => {
			const problems: string[] = [];
			const found = ours.path && resolve(ours.path);
			if (pi && found !== (pi.path && resolve(pi.path))) problems.push(`found ${ours.path}, pi 1.6.0 ${pi.path}`);
			if (newest && !newest.paths.includes(found ?? "")) {
				problems.push(`found ${ours.path}, the newest file is ${newest.paths.join(" or ")}`);
			}
			return problems;
		},
	});
	rmSync(dir, { recursive: true, force: true });
	const ties =
		newest && newest.paths.length > 1
			? ` (${newest.paths.length} files share the newest mtime: the order of the directory decides)`
			: "";
	printPairTable(
		`findMostRecentSession over ${count.toLocaleString("en")} sessions of ${home.name} in one directory`,
		`no cwd filter${ties}; the OS page cache warm`,
		run,
		"the file found (and that it is the newest by mtime)",
	);
	reportSuiteRow({
		name: `findMostRecentSession, ${count.toLocaleString("en")} sessions`,
		ours: run.rows.get("ours"),
		pi16: run.rows.get("pi16"),
		size: { sessions: count, bytes: home.bytes },
		checked: "the file found, against pi 1.6.0's, and that it is the newest by mtime",
		note: `every session of ${home.name} in one directory (hard links), no cwd filter; pi 1.6.0: its exported findMostRecentSession, which continueRecent calls`,
	});
}

async function forkGroup(input: ScaleInput, rounds: number): Promise<void> {
	const leafId = input.deepestId as string;
	warmPageCache(input.path);
	const run = await pairRounds<ForkResult>({
		group: "fork",
		labels: {
			pi16: "pi 1.6.0 createBranchedSession(deepest leaf)",
			ours: "ours session.createBranchedSession(deepest leaf)",
		},
		rounds,
		task: (impl, workDir) => ({ kind: "fork", impl, path: input.path, leafId, workDir, modules: MODULES }),
		sample: (result) => result.fork,
		check: (ours, pi) => [
			...(ours.checkError ? [`reading the new file: ${ours.checkError}`] : []),
			...answerProblems("lines of the new file", ours, pi),
			...(pi && !pi.checkError && ours.place !== pi.place
				? [`returned ${ours.place} (directory, session switched to it); pi 1.6.0 ${pi.place}`]
				: []),
		],
	});
	const pi = run.first.get("pi16");
	if (pi?.checkError) (run.rows.get("pi16") as Row).note = `wrote no file to check against: ${pi.checkError}`;
	const checked =
		"every line of the new file (the header without its id and timestamp, parentSession by file name, the ids of the labels it made numbered in order), the directory of the path returned and that the session goes on in it";
	printPairTable(
		`Fork of the deepest leaf of ${input.name}: ${input.deepestDepth.toLocaleString("en")} entries on its path`,
		"each child copies the file (not timed), opens the copy for writing, whole (not timed), then times the fork " +
			"(written, no fsync); RSS is the child's peak, the open included",
		run,
		checked,
	);
	reportSuiteRow({
		name: `fork of a long branch, ${inputLabel(input.name)}`,
		ours: run.rows.get("ours"),
		pi16: run.rows.get("pi16"),
		size: { bytes: input.bytes, entries: input.deepestDepth },
		checked: `${checked}, against pi 1.6.0's`,
		note: "createBranchedSession of the deepest leaf after a full open for writing (not timed); RSS is the child's peak, the open included",
	});
}

async function migrationGroup(v1: V1Input, rounds: number): Promise<void> {
	warmPageCache(v1.path);
	const run = await pairRounds<MigrateResult>({
		group: "migration",
		labels: {
			pi16: "pi 1.6.0 SessionManager.open (migrates in place)",
			ours: "ours Session.open (migrates, keeps a backup)",
		},
		rounds,
		task: (impl, workDir) => ({ kind: "migrate", impl, path: v1.path, workDir, modules: MODULES }),
		sample: (result) => result.migrate,
		check: (ours, pi) => [
			...(ours.checkError ? [`reading the migrated file: ${ours.checkError}`] : []),
			...(ours.answer.count === v1.entries ? [] : [`${ours.answer.count} entries, the v1 file has ${v1.entries}`]),
			...(ours.backupPath ? [] : ["no backup of the v1 file was kept"]),
			...(ours.backupPath && !ours.backupIntact ? ["the backup is not the v1 file byte for byte"] : []),
			...answerProblems("migrated lines", ours, pi),
		],
	});
	const checked = "every line of the migrated file, each id replaced by its entry's index (both draw fresh ids)";
	printPairTable(
		`Migration of ${v1.name}: a v1 file of ${fmtMb(v1.bytes)} MB, ${v1.entries.toLocaleString("en")} entries, ${v1.compactions} compactions`,
		"each child copies the file (not timed), then times the open for writing that migrates it to v3 and rewrites it; RSS is the child's peak",
		run,
		checked,
	);
	reportSuiteRow({
		name: `migration of a v1 file, ${Math.round(v1.bytes / 1e6)} MB`,
		ours: run.rows.get("ours"),
		pi16: run.rows.get("pi16"),
		size: { bytes: v1.bytes, entries: v1.entries },
		checked: `${checked}, against pi 1.6.0's; ours kept a backup, byte for byte the v1 file`,
		note: `made from ${v1.from} (its labels left out); the open that migrates, on a copy of its own each`,
	});
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
	const rounds = (full: number) => ROUNDS_OVERRIDE ?? (QUICK ? QUICK_ROUNDS : full);
	console.log(
		`## Scale benchmark${QUICK ? " (--quick: smaller inputs)" : ""} — node ${process.version}, ${cpus().length} cores, ` +
			`${(totalmem() / 2 ** 30).toFixed(0)} GiB, at ${gitDescription()}, ${new Date().toISOString()}`,
	);
	const ensure = (name: VariantName, bytes?: number): ScaleInput =>
		ensureScaleInput(name, {
			seed: SEED,
			quick: QUICK,
			synthetic: flag("--synthetic"),
			...(bytes === undefined ? {} : { bytes }),
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
		["linear", "linear-100mb", 3],
		["bushy", "bushy-100mb", 3],
		["compaction-heavy", "compaction-heavy-100mb", 3],
		["text-1gb", "text-1gb", 3],
		["image-1gb", "image-1gb", 3],
		["text-4gb", "text-4gb", 2],
	];
	const inputs = new Map<VariantName, ScaleInput>();
	const input = (variant: VariantName): ScaleInput => {
		const known = inputs.get(variant) ?? ensure(variant, QUICK ? QUICK_BYTES[variant] : undefined);
		inputs.set(variant, known);
		return known;
	};
	for (const [group, variant] of openGroups) if (wanted(group)) input(variant);
	if (wanted("context") || wanted("fork") || wanted("migration")) input("linear-100mb");
	if (wanted("tree")) input("bushy-100mb");
	if (wanted("listing") || wanted("recent")) input("home-1000");
	// A smaller agent directory beside it, so the listing chart has two sizes: 250 sessions (none with
	// `--quick`, whose figures only show that the suite runs: it keeps under three minutes).
	const smallHome = wanted("listing") && !QUICK ? ensure("home-1000", 75e6) : undefined;
	const v1 = wanted("migration") ? ensureV1Input(input("linear-100mb"), (line) => console.log(line)) : undefined;
	for (const each of [...inputs.values(), ...(smallHome ? [smallHome] : [])]) {
		console.log(`input ${each.name}: ${each.path} (${each.source} payloads, seed ${each.seed})`);
	}
	if (v1) console.log(`input ${v1.name}: ${v1.path} (${fmtMb(v1.bytes)} MB, made from ${v1.from})`);

	for (const [group, variant, fullRounds] of openGroups) {
		if (!wanted(group)) continue;
		const report = await openGroup(group, input(variant), rounds(fullRounds));
		openGoals(group, report, input(variant));
		reportOpenRows(group, report, input(variant));
	}
	if (wanted("context")) await contextGroup(input("linear-100mb"), rounds(5));
	if (wanted("tree")) await treeGroup(input("bushy-100mb"), rounds(3));
	if (wanted("fork")) await forkGroup(input("linear-100mb"), rounds(3));
	if (v1) await migrationGroup(v1, rounds(3));
	if (wanted("listing")) {
		await listingGroup(input("home-1000"), rounds(3));
		if (smallHome) await listingGroup(smallHome, rounds(3));
	}
	if (wanted("recent")) await recentGroup(input("home-1000"), rounds(5));

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
