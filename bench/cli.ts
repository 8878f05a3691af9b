/**
 * Benchmark: `pi-sessions` (the built dist/cli.js) as whole processes, start-up included, on Node, Bun and
 * Deno, side by side with a small Node script doing the same with pi 1.6.0's `SessionManager` (its
 * session-manager.js imported by file path; only that module and what it imports are loaded, not pi's CLI):
 *
 * 1. `pi-sessions ls --all --json` over a generated agent directory of 1,000 sessions (`home-1000` of
 *    bench/scale-inputs.ts; 250 with `--quick`), warm (the listing catalog there as the same runtime's cold
 *    run wrote it, nothing changed since; a warm run must not write it again) and cold (the catalog removed
 *    before each run: the run reads every file and writes the catalog again), against
 *    `JSON.stringify(await SessionManager.listAll(), null, 2)` (pi has no catalog: its one figure serves both).
 * 2. `pi-sessions context FILE --json` of a 100 MB linear session (`linear-100mb`; 20 MB with `--quick`),
 *    against `JSON.stringify(SessionManager.open(FILE).buildSessionContext(), null, 2)`.
 *
 * The inputs are copied into a temporary directory first (the catalog is written beside the sessions root;
 * the cache of bench/scale-inputs.ts is never written to). Every implementation runs once untimed (warm-up,
 * and the check: its standard output must be byte for byte pi 1.6.0's, or at least parse to an equal
 * value); then in each round every one runs once, in an order that turns from round to round, and each
 * timed run's output must hash as its checked one did. Time: wall time of the process from the outside
 * (spawn to exit; standard output into a file). Peak RSS: `/usr/bin/time -f %M` of the process.
 *
 * Run: `npx tsx bench/cli.ts [--quick]` (`BENCH_ROUNDS=n` to choose the rounds: 3, or 1 with `--quick`, which takes about 20 s).
 * Under `npm run bench` it reports its rows (bench/suite/rows.ts).
 * @module
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
	closeSync,
	copyFileSync,
	cpSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { listingCatalogPath } from "../src/index.ts";
import { ensureInput } from "./scale-inputs.ts";
import { type BenchRow, type Goal, type Measure, measureOf, reportRow } from "./suite/rows.ts";
import { roundsText } from "./suite/table.ts";

const quick = process.argv.includes("--quick");
// One round with `--quick` (as bench/scale.ts): its figures only show that the runs work and answer right.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 3));
const ROOT = new URL("..", import.meta.url).pathname;
const CLI = join(ROOT, "dist", "cli.js");
const PI16_MODULE = join(ROOT, "node_modules", "pi-coding-agent-1.6", "dist", "core", "session-manager.js");
const TIME = "/usr/bin/time";
const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);

const started = performance.now();
const log = (text: string) =>
	process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${text}\n`);

for (const [path, what] of [
	[CLI, "dist/cli.js is missing: build it first (npm run build)"],
	[PI16_MODULE, "pi 1.6.0 is not installed (node_modules/pi-coding-agent-1.6)"],
	[TIME, "/usr/bin/time is missing (Debian's `time` package): it measures each process's peak RSS"],
	[bin("bun"), "node_modules/.bin/bun is missing (npm install)"],
	[bin("deno"), "node_modules/.bin/deno is missing (npm install)"],
] as const) {
	if (!existsSync(path)) throw new Error(what);
}

type Runtime = "node" | "bun" | "deno";
const RUNTIMES: readonly Runtime[] = ["node", "bun", "deno"];

/** The command line of our CLI on a runtime (as a user starts it: no flags beyond the runtime's own). */
function oursCommand(runtime: Runtime, args: readonly string[]): string[] {
	if (runtime === "node") return [process.execPath, CLI, ...args];
	if (runtime === "bun") return [bin("bun"), CLI, ...args];
	return [bin("deno"), "run", "-A", CLI, ...args];
}

// The processes --------------------------------------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), "pi-bench-cli-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
const stdoutFile = join(work, "stdout");
const rssFile = join(work, "rss");

interface ProcessRun {
	ms: number;
	rssBytes: number;
	/** SHA-256 of its standard output, and its length. */
	sha256: string;
	bytes: number;
}

/** Run a command to its end, its output into a file; a non-zero status throws with its standard error. */
function runProcess(command: readonly string[], env: NodeJS.ProcessEnv): ProcessRun {
	const out = openSync(stdoutFile, "w");
	let run: ReturnType<typeof spawnSync>;
	const start = performance.now();
	try {
		run = spawnSync(TIME, ["-f", "%M", "-o", rssFile, ...command], {
			cwd: ROOT,
			env,
			stdio: ["ignore", out, "pipe"],
			maxBuffer: 64 << 20,
		});
	} finally {
		closeSync(out);
	}
	const ms = performance.now() - start;
	if (run.error) throw run.error;
	if (run.status !== 0) {
		throw new Error(`${command.join(" ")} exited with ${run.status ?? run.signal}: ${String(run.stderr).trim()}`);
	}
	// /usr/bin/time writes the figure (KiB) as its file's last line.
	const kib = Number(readFileSync(rssFile, "utf8").trim().split("\n").pop());
	if (!Number.isFinite(kib)) throw new Error(`no peak RSS from ${TIME} for ${command.join(" ")}`);
	const output = readFileSync(stdoutFile);
	return { ms, rssBytes: kib * 1024, sha256: createHash("sha256").update(output).digest("hex"), bytes: output.length };
}

/** The environment of every run: pi's agent directory, no colour, nothing of the suite's. */
function runEnv(agentDir: string): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = { ...process.env, PI_CODING_AGENT_DIR: agentDir, NO_COLOR: "1" };
	delete env.BENCH_ROWS;
	delete env.PI_CODING_AGENT_SESSION_DIR;
	delete env.FORCE_COLOR;
	return env;
}

// One benchmark: implementations in rounds ---------------------------------------------------------------

interface Contender {
	/** "node", "bun", "deno", "pi16", or with a variant: "node cold". */
	key: string;
	command: string[];
	/** Run just before each of its runs (untimed): removing the catalog. */
	before?: () => void;
	/** Run just after each of its runs (untimed): a check; returns a note, if any. */
	after?: () => string | undefined;
}

interface Figures {
	ms: number[];
	rss: number[];
	/** What its output was checked to be against pi 1.6.0's, or why it is wrong. */
	checked: string;
	problem?: string;
	notes: Set<string>;
}

/**
 * Every contender once untimed (the check against the reference's output), then `ROUNDS` rounds of one run
 * each, in an order turned by one each round. The first contender is the reference (pi 1.6.0).
 */
function measureAll(
	what: string,
	contenders: readonly Contender[],
	env: NodeJS.ProcessEnv,
	reference: string,
): Map<string, Figures> {
	const figures = new Map<string, Figures>();
	const outputs = new Map<string, { sha256: string; bytes: number }>();
	const referenceFile = join(work, "reference");
	/** One run; a failure becomes the contender's problem (its rows say so), and the others go on. */
	const once = (contender: Contender): ProcessRun | undefined => {
		const own = figures.get(contender.key) as Figures;
		try {
			contender.before?.();
			const run = runProcess(contender.command, env);
			const note = contender.after?.();
			if (note) own.notes.add(note);
			return run;
		} catch (error) {
			own.problem = `failed: ${String((error as Error).message ?? error)
				.split("\n")[0]
				?.slice(0, 300)}`;
			log(`${what}: ${contender.key} ${own.problem}`);
			return undefined;
		}
	};
	const parses = (path: string): unknown => {
		try {
			return JSON.parse(readFileSync(path, "utf8"));
		} catch {
			return undefined;
		}
	};
	for (const contender of contenders) {
		figures.set(contender.key, { ms: [], rss: [], checked: "", notes: new Set() });
		log(`${what}: ${contender.key}, untimed (warm-up and check)`);
		const run = once(contender);
		if (!run) continue;
		outputs.set(contender.key, { sha256: run.sha256, bytes: run.bytes });
		const own = figures.get(contender.key) as Figures;
		if (contender.key === reference) {
			copyFileSync(stdoutFile, referenceFile);
			own.checked = `the reference (${run.bytes.toLocaleString("en-US")} bytes of output)`;
			continue;
		}
		const expected = outputs.get(reference);
		if (!expected) {
			own.problem = "not checked: pi 1.6.0 failed";
		} else if (run.sha256 === expected.sha256 && run.bytes === expected.bytes) {
			own.checked = `stdout byte for byte pi 1.6.0's (${run.bytes.toLocaleString("en-US")} bytes, SHA-256 ${run.sha256.slice(0, 12)}…), every timed run the same`;
		} else if (isDeepStrictEqual(parses(stdoutFile) ?? Symbol("not JSON"), parses(referenceFile))) {
			own.checked = `stdout parsed equal to pi 1.6.0's (not byte for byte: ${run.bytes} bytes against ${expected.bytes}), every timed run the same`;
		} else {
			own.problem = "output differs from pi 1.6.0's";
			log(`${what}: ${contender.key}: ${own.problem}; not timed`);
		}
	}
	const timed = contenders.filter((contender) => !figures.get(contender.key)?.problem);
	for (let round = 0; round < ROUNDS; round++) {
		const shift = round % timed.length;
		const order = [...timed.slice(shift), ...timed.slice(0, shift)];
		log(`${what}: round ${round + 1}/${ROUNDS}: ${order.map((contender) => contender.key).join(", ")}`);
		for (const contender of order) {
			const own = figures.get(contender.key) as Figures;
			if (own.problem) continue;
			const run = once(contender);
			if (!run) continue;
			if (run.sha256 !== outputs.get(contender.key)?.sha256) {
				own.problem = `a timed run's output differs from its checked one (round ${round + 1})`;
				continue;
			}
			own.ms.push(run.ms);
			own.rss.push(run.rssBytes);
		}
	}
	return figures;
}

// The inputs -------------------------------------------------------------------------------------------

const inputLog = (text: string) => log(`inputs: ${text}`);
const home = ensureInput("home-1000", { quick, log: inputLog });
const session = ensureInput("linear-100mb", { quick, log: inputLog });
const sessionCount = home.sessions?.length ?? 0;
if (home.kind !== "home" || sessionCount === 0) throw new Error(`${home.name} is not an agent directory`);

log(`copying ${home.name} (${(home.bytes / 1e6).toFixed(0)} MB) and ${session.name} into ${work}`);
const agentDir = join(work, "agent");
cpSync(home.path, agentDir, { recursive: true, preserveTimestamps: true });
const catalog = listingCatalogPath(agentDir);
const catalogDir = dirname(catalog);
if (existsSync(catalogDir)) rmSync(catalogDir, { recursive: true, force: true });
const sessionDir = join(work, "session");
mkdirSync(sessionDir);
const sessionPath = join(sessionDir, basename(session.path));
copyFileSync(session.path, sessionPath);
const sessionStat = statSync(sessionPath);

const pi16Url = pathToFileURL(PI16_MODULE).href;
const pi16Ls = join(work, "pi16-ls.mjs");
writeFileSync(
	pi16Ls,
	`import { SessionManager } from ${JSON.stringify(pi16Url)};\n` +
		'process.stdout.write(JSON.stringify(await SessionManager.listAll(), null, 2) + "\\n");\n',
);
const pi16Context = join(work, "pi16-context.mjs");
writeFileSync(
	pi16Context,
	`import { SessionManager } from ${JSON.stringify(pi16Url)};\n` +
		"const manager = SessionManager.open(process.argv[2]);\n" +
		'process.stdout.write(JSON.stringify(manager.buildSessionContext(), null, 2) + "\\n");\n',
);
const env = runEnv(agentDir);

// 1. Listings -------------------------------------------------------------------------------------------

const catalogTime = (): number | undefined => statSync(catalog, { throwIfNoEntry: false })?.mtimeMs;
/**
 * Each runtime's warm runs start from the catalog as its own cold run left it (restored untimed): a catalog
 * written on one runtime is not taken as it is by another (Node's and Deno's `stat` times differ in their
 * fractions of a millisecond), and a user runs the tool on one runtime.
 */
const snapshotOf = (runtime: Runtime) => join(work, `catalog-${runtime}`);
const listingContenders: Contender[] = [{ key: "pi16", command: [process.execPath, pi16Ls] }];
for (const runtime of RUNTIMES) {
	let before: number | undefined;
	listingContenders.push({
		key: `${runtime} warm`,
		command: oursCommand(runtime, ["ls", "--all", "--json"]),
		before: () => {
			rmSync(catalogDir, { recursive: true, force: true });
			cpSync(snapshotOf(runtime), catalogDir, { recursive: true });
			before = catalogTime();
			if (before === undefined) throw new Error("no listing catalog before a warm listing");
		},
		after: () => (catalogTime() === before ? undefined : "a warm run wrote the catalog again"),
	});
	listingContenders.push({
		key: `${runtime} cold`,
		command: oursCommand(runtime, ["ls", "--all", "--json"]),
		before: () => rmSync(catalogDir, { recursive: true, force: true }),
		after: () => {
			if (catalogTime() === undefined) throw new Error(`${runtime}: a cold listing wrote no catalog`);
			rmSync(snapshotOf(runtime), { recursive: true, force: true });
			cpSync(catalogDir, snapshotOf(runtime), { recursive: true });
			return undefined;
		},
	});
}
// A warm run needs its runtime's catalog: the cold runs come first in the untimed pass.
const coldFirst = [
	listingContenders[0] as Contender,
	...listingContenders.filter((contender) => contender.key.endsWith("cold")),
	...listingContenders.filter((contender) => contender.key.endsWith("warm")),
];
const listingFigures = measureAll(`ls, ${sessionCount} sessions`, coldFirst, env, "pi16");

// 2. Context ----------------------------------------------------------------------------------------------

const contextContenders: Contender[] = [
	{ key: "pi16", command: [process.execPath, pi16Context, sessionPath] },
	...RUNTIMES.map((runtime) => ({ key: runtime, command: oursCommand(runtime, ["context", sessionPath, "--json"]) })),
];
const contextFigures = measureAll(`context, ${session.name}`, contextContenders, env, "pi16");
const sessionAfter = statSync(sessionPath);
const sessionUntouched = sessionAfter.size === sessionStat.size && sessionAfter.mtimeMs === sessionStat.mtimeMs;

// The rows ------------------------------------------------------------------------------------------------

const sizeText = `${Math.round(session.bytes / 1e6)} MB`;
const sessionsText = sessionCount.toLocaleString("en-US");
const rows: BenchRow[] = [];

function rowOf(
	name: string,
	ours: Figures | undefined,
	pi: Figures | undefined,
	extra: Partial<BenchRow>,
	notes: readonly string[],
): BenchRow {
	const row: BenchRow = { bench: "cli", name, ...extra };
	const oursMeasure: Measure | undefined = ours && !ours.problem ? measureOf(ours.ms, ours.rss) : undefined;
	const piMeasure: Measure | undefined = pi && !pi.problem ? measureOf(pi.ms, pi.rss) : undefined;
	if (oursMeasure) row.ours = oursMeasure;
	if (piMeasure) row.pi16 = piMeasure;
	if (ours?.checked) row.checked = ours.checked;
	const problem = ours?.problem ?? (pi?.problem ? `pi 1.6.0: ${pi.problem}` : undefined);
	if (problem) row.problem = problem;
	const allNotes = [...notes, ...(ours?.notes ?? [])];
	if (allNotes.length > 0) row.note = allNotes.join("; ");
	return row;
}

const warmGoal: Goal = { kind: "ratio", max: 0.1, against: "pi16" };
for (const runtime of RUNTIMES) {
	rows.push(
		rowOf(
			`pi-sessions ls --all --json, warm, ${sessionsText} sessions (${runtime})`,
			listingFigures.get(`${runtime} warm`),
			listingFigures.get("pi16"),
			{ size: { sessions: sessionCount, bytes: home.bytes }, goals: [warmGoal] },
			[
				`${home.name}, ${(home.bytes / 1e6).toFixed(0)} MB; whole processes, start-up included; ${runtime} vs pi 1.6.0's listAll() on Node`,
			],
		),
	);
}
for (const runtime of RUNTIMES) {
	rows.push(
		rowOf(
			`pi-sessions ls --all --json, cold (no catalog), ${sessionsText} sessions (${runtime})`,
			listingFigures.get(`${runtime} cold`),
			listingFigures.get("pi16"),
			{ size: { sessions: sessionCount, bytes: home.bytes } },
			[
				`the catalog removed before each run, which writes it again; pi 1.6.0 has no catalog: the same runs as the warm row's`,
			],
		),
	);
}
for (const runtime of RUNTIMES) {
	rows.push(
		rowOf(
			`pi-sessions context --json, ${sizeText} session (${runtime})`,
			contextFigures.get(runtime),
			contextFigures.get("pi16"),
			{ size: { bytes: session.bytes, entries: session.entries } },
			[
				`${session.name} (${session.entries.toLocaleString("en-US")} entries); pi 1.6.0: SessionManager.open + buildSessionContext in a Node script`,
				...(sessionUntouched ? [] : ["the session file changed while it was read"]),
			],
		),
	);
}
for (const row of rows) reportRow(row);

// The report ----------------------------------------------------------------------------------------------

const fmt = (value: number): string =>
	value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
const cell = (measure: Measure | undefined): string =>
	measure ? `${fmt(measure.median)} ms (${fmt(measure.min)}–${fmt(measure.max)}), ${fmt(measure.rssMb ?? 0)} MB` : "–";
const ratio = (row: BenchRow): string =>
	row.ours && row.pi16
		? `${(row.ours.median / row.pi16.median).toFixed(3)}×, ${((row.ours.rssMb ?? 0) / (row.pi16.rssMb ?? 1)).toFixed(2)}×`
		: "–";
const header = ["row", "ours", "pi 1.6.0", "÷ pi 1.6.0 (time, RSS)"];
const cells = rows.map((row) => [
	row.problem ? `${row.name} (${row.problem})` : row.name,
	cell(row.ours),
	cell(row.pi16),
	ratio(row),
]);
const widths = header.map((title, i) => Math.max(title.length, ...cells.map((line) => (line[i] as string).length)));
const line = (values: readonly string[]) =>
	`| ${values.map((value, i) => value.padEnd(widths[i] as number)).join(" | ")} |`;
const cpu = cpus();
console.log(
	`\npi-sessions as whole processes — ${roundsText(ROUNDS)}${quick ? " (--quick)" : ""} after one untimed run each; ` +
		`Node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
		`load average ${loadavg()[0]?.toFixed(2)}; ${((performance.now() - started) / 1000).toFixed(0)} s in all`,
);
console.log(`inputs: ${home.name} (${(home.bytes / 1e6).toFixed(0)} MB) and ${session.name}, copied to ${work}\n`);
console.log(line(header));
console.log(`| ${widths.map((width) => "-".repeat(width)).join(" | ")} |`);
for (const values of cells) console.log(line(values));
console.log("");
for (const row of rows) {
	if (row.checked) console.log(`${row.name}: ${row.checked}${row.note ? `; ${row.note}` : ""}`);
}
console.log(
	"\nTime: wall time of each process, spawn to exit, its standard output into a file; median (range) over the rounds. " +
		"RSS: the process's peak resident size (/usr/bin/time -f %M), median over the rounds.",
);
