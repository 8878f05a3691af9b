/**
 * `npm run bench`: every benchmark of bench/suite/steps.ts in one run, each script in a process of its own
 * (its detail kept in a log), then one table of every row it reported (bench/suite/rows.ts): ours, pi 1.6.0,
 * pi 0.73.1 and the floor, the ratios, the goals and whether each is met.
 *
 * Options: `--quick` (small inputs, few rounds: a few minutes), `--json` (the rows and goals as JSON on
 * standard output instead of the table), `--charts DIR` (write the SVG charts of bench/suite/charts.ts
 * there), `--only NAME,…` (some steps), `--logs DIR` (where each step's output goes; default a temporary
 * directory, named at the end; its `rows.jsonl` holds the rows, `run.json` the run's machine, time and
 * steps), `--from FILE` (no run: the table, JSON and charts of the rows an earlier run saved, told with the
 * `run.json` beside them). A step that fails or runs out of time is reported, and the run goes on.
 * @module
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { chartsOf, renderChart } from "./suite/charts.ts";
import { judgeGoals } from "./suite/goals.ts";
import type { BenchRow } from "./suite/rows.ts";
import { STEPS, type Step } from "./suite/steps.ts";
import { renderTable } from "./suite/table.ts";

const { values } = parseArgs({
	options: {
		quick: { type: "boolean", default: false },
		json: { type: "boolean", default: false },
		charts: { type: "string" },
		only: { type: "string" },
		logs: { type: "string" },
		from: { type: "string" },
	},
});

const only = values.only?.split(",").map((name) => name.trim());
for (const name of only ?? []) {
	if (!STEPS.some((step) => step.name === name)) {
		throw new Error(`unknown step ${name}; steps: ${STEPS.map((step) => step.name).join(", ")}`);
	}
}
const steps = STEPS.filter((step) => !only || only.includes(step.name));
const logs = values.logs ?? mkdtempSync(join(tmpdir(), "pi-bench-"));
mkdirSync(logs, { recursive: true });
const rowsFile = values.from ?? join(logs, "rows.jsonl");
if (!values.from) rmSync(rowsFile, { force: true });
const TSX = join(process.cwd(), "node_modules", ".bin", "tsx");

const say = (line: string) => process.stderr.write(`${line}\n`);

interface StepOutcome {
	step: string;
	seconds: number;
	/** Undefined when it ended well. */
	problem?: string;
}

/** Run one step, its output to its log; resolves when it ends or is stopped. */
function runStep(step: Step): Promise<StepOutcome> {
	const args = values.quick ? step.quick : step.full;
	const minutes = values.quick ? step.timeoutMinutes.quick : step.timeoutMinutes.full;
	const log = join(logs, `${step.name}.log`);
	const started = performance.now();
	say(`bench: ${step.name} (${step.script} ${args.join(" ")}), log ${log}`);
	return new Promise((resolve) => {
		// A process group of its own: tsx runs the script in a child, which starts children of its own
		// (scale's, Chromium), and a step that runs out of time is stopped whole.
		const child = spawn(TSX, [step.script, ...args], {
			env: { ...process.env, BENCH_ROWS: rowsFile },
			stdio: ["ignore", "pipe", "pipe"],
			detached: true,
		});
		const chunks: Buffer[] = [];
		child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
		child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
		let timedOut = false;
		const timer = setTimeout(() => {
			timedOut = true;
			try {
				process.kill(-(child.pid as number), "SIGKILL");
			} catch {
				child.kill("SIGKILL");
			}
		}, minutes * 60_000);
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			writeFileSync(log, Buffer.concat(chunks));
			const seconds = (performance.now() - started) / 1000;
			const problem = timedOut
				? `stopped after ${minutes} min`
				: code === 0
					? undefined
					: `exited with ${code ?? signal}`;
			say(`bench: ${step.name} ${problem ?? "done"} in ${seconds.toFixed(0)} s`);
			resolve({ step: step.name, seconds, problem });
		});
	});
}

const started = performance.now();
const outcomes: StepOutcome[] = [];
for (const step of values.from ? [] : steps) {
	const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
	if (step.browser && !existsSync(chromium)) {
		outcomes.push({ step: step.name, seconds: 0, problem: `no Chromium at ${chromium}: skipped` });
		continue;
	}
	outcomes.push(await runStep(step));
}

const rows: BenchRow[] = existsSync(rowsFile)
	? readFileSync(rowsFile, "utf8")
			.split("\n")
			.filter((line) => line !== "")
			.map((line) => JSON.parse(line) as BenchRow)
	: [];
const judged = judgeGoals(rows);
const met = judged.filter((goal) => goal.met).length;

/** What a run was, saved beside its rows (`run.json`) so that `--from` tells it as the run did. */
interface RunFacts {
	quick: boolean;
	machine: string;
	seconds: number;
	steps: StepOutcome[];
}
const factsFile = join(dirname(rowsFile), "run.json");
const facts: RunFacts = values.from
	? existsSync(factsFile)
		? (JSON.parse(readFileSync(factsFile, "utf8")) as RunFacts)
		: { quick: values.quick, machine: "", seconds: Number.NaN, steps: [] }
	: {
			quick: values.quick,
			machine: `${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${loadavg()[0]?.toFixed(2)} at the end`,
			seconds: (performance.now() - started) / 1000,
			steps: outcomes,
		};
if (!values.from) writeFileSync(factsFile, `${JSON.stringify(facts, null, "\t")}\n`);

if (values.charts) {
	mkdirSync(values.charts, { recursive: true });
	for (const chart of chartsOf(rows)) {
		writeFileSync(join(values.charts, chart.file), renderChart(chart));
		say(`bench: chart ${join(values.charts, chart.file)}`);
	}
}

if (values.json) {
	process.stdout.write(`${JSON.stringify({ ...facts, rows, goals: judged }, null, "\t")}\n`);
} else {
	const out = (line = "") => process.stdout.write(`${line}\n`);
	const run = facts.machine
		? `${facts.quick ? "Quick" : "Full"} run, ${facts.seconds.toFixed(0)} s, on ${facts.machine}`
		: `no ${factsFile} to tell the run`;
	out(values.from ? `Rows of ${values.from}: ${run}` : `${run}; logs in ${logs}`);
	out();
	for (const line of renderTable(rows, judged)) out(line);
	out();
	out(`${met} of ${judged.length} goals met.`);
	for (const goal of judged.filter((judgedGoal) => judgedGoal.met !== true)) {
		out(`- ${goal.met === undefined ? "not measured" : "not met"}: ${goal.row}: ${goal.text}`);
	}
	for (const row of rows.filter((benchRow) => benchRow.problem)) out(`- problem: ${row.name}: ${row.problem}`);
	for (const outcome of facts.steps.filter((stepOutcome) => stepOutcome.problem)) {
		out(`- step ${outcome.step}: ${outcome.problem} (its rows and goals are missing above)`);
	}
	for (const row of rows.filter((benchRow) => benchRow.note)) out(`- note: ${row.name}: ${row.note}`);
}
const failed =
	rows.some((row) => row.problem) ||
	facts.steps.some((outcome) => outcome.problem && !outcome.problem.endsWith("skipped"));
process.exitCode = failed ? 1 : 0;
