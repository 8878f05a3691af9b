/**
 * The suite's one table: a line per row, with ours, pi 1.6.0, pi 0.73.1 and the floor (median, range and
 * peak RSS), ours ÷ each of them, and the row's goals with their verdicts. Written as Markdown, so it can
 * be pasted into BENCHMARKS.md as it is.
 * @module
 */
import type { JudgedGoal } from "./goals.ts";
import type { BenchRow, Measure } from "./rows.ts";

const HEADER = [
	"row",
	"ours",
	"pi 1.6.0",
	"pi 0.73.1",
	"floor",
	"÷ pi 1.6.0 (time, RSS)",
	"÷ pi 0.73.1",
	"÷ floor",
	"goal",
	"met",
];

/** A figure for people: 3 significant digits, thousands separated. */
export function figure(value: number): string {
	if (!Number.isFinite(value)) return String(value);
	const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : Math.abs(value) >= 1 ? 2 : 3;
	return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function measureCell(measure: Measure | undefined, unit: string): string {
	if (!measure) return "–";
	const range = measure.rounds > 1 ? ` (${figure(measure.min)}–${figure(measure.max)})` : "";
	const rss = measure.rssMb === undefined ? "" : `, ${figure(measure.rssMb)} MB`;
	return `${figure(measure.median)} ${unit}${range}${rss}`;
}

function ratioCell(ours: Measure | undefined, theirs: Measure | undefined, withRss: boolean): string {
	if (!ours || !theirs || theirs.median <= 0) return "–";
	const time = `${figure(ours.median / theirs.median)}×`;
	if (!withRss || ours.rssMb === undefined || !theirs.rssMb) return time;
	return `${time}, ${figure(ours.rssMb / theirs.rssMb)}×`;
}

function verdict(goals: readonly JudgedGoal[]): string {
	if (goals.length === 0) return "";
	return goals.map((goal) => (goal.met === undefined ? "?" : goal.met ? "yes" : "**no**")).join(", ");
}

/** "1 round", "3 rounds": how many rounds a step ran, for its preamble. */
export function roundsText(rounds: number): string {
	return `${rounds} ${rounds === 1 ? "round" : "rounds"}`;
}

/** The table as Markdown lines. */
export function renderTable(rows: readonly BenchRow[], judged: readonly JudgedGoal[]): string[] {
	const lines = rows.map((row) => {
		const goals = judged.filter((goal) => goal.row === row.name);
		const unit = row.unit ?? "ms";
		const name = row.problem ? `${row.name} (**${row.problem}**)` : row.name;
		return [
			name,
			measureCell(row.ours, unit),
			measureCell(row.pi16, unit),
			measureCell(row.pi073, unit),
			measureCell(row.floor, unit),
			ratioCell(row.ours, row.pi16, true),
			ratioCell(row.ours, row.pi073, false),
			ratioCell(row.ours, row.floor, false),
			goals.map((goal) => `${goal.text}${goal.value === undefined ? "" : ` (${figure(goal.value)})`}`).join("; "),
			verdict(goals),
		];
	});
	const all = [HEADER, ...lines].map((cells) => cells.map((cell) => cell.replace(/\|/g, "\\|")));
	const widths = HEADER.map((_, column) => Math.max(...all.map((cells) => (cells[column] as string).length)));
	const line = (cells: readonly string[]) =>
		`| ${cells.map((cell, column) => cell.padEnd(widths[column] as number)).join(" | ")} |`;
	return [
		line(all[0] as string[]),
		`| ${widths.map((width) => "-".repeat(width)).join(" | ")} |`,
		...all.slice(1).map(line),
	];
}
