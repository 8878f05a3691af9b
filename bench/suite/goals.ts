/**
 * The goals of the rows judged: the figure each goal is about, and whether it is met.
 * @module
 */
import type { BenchRow, Goal, Measure } from "./rows.ts";

export interface JudgedGoal {
	row: string;
	goal: Goal;
	/** The figure compared with `goal.max`: a ratio, or a value in the row's unit; undefined when missing. */
	value: number | undefined;
	met: boolean | undefined;
	/** The goal in words: "time ÷ pi 1.6.0 ≤ 0.25×". */
	text: string;
}

const AGAINST_NAMES = { pi16: "pi 1.6.0", pi073: "pi 0.73.1", floor: "the floor", ours: "ours" } as const;

/** Every goal of every row, with its figure and verdict. A row with a problem meets none of its goals. */
export function judgeGoals(rows: readonly BenchRow[]): JudgedGoal[] {
	const byName = new Map(rows.map((row) => [row.name, row]));
	return rows.flatMap((row) =>
		(row.goals ?? []).map((goal): JudgedGoal => {
			const value = row.problem ? undefined : figureOf(row, goal, byName);
			const met = value === undefined ? undefined : value <= goal.max;
			return { row: row.name, goal, value, met: row.problem ? false : met, text: goalText(row, goal) };
		}),
	);
}

function figureOf(row: BenchRow, goal: Goal, byName: ReadonlyMap<string, BenchRow>): number | undefined {
	const ours = row.ours;
	if (!ours) return undefined;
	if (goal.kind === "rssMb") return ours.rssMb;
	if (goal.kind === "value") {
		if (goal.relativeTo === undefined) return ours.median;
		const other = byName.get(goal.relativeTo)?.ours;
		return other && other.median > 0 ? ours.median / other.median : undefined;
	}
	const against: Measure | undefined = row[goal.against ?? "pi16"];
	if (!against) return undefined;
	if (goal.kind === "rss") {
		return ours.rssMb !== undefined && against.rssMb ? ours.rssMb / against.rssMb : undefined;
	}
	return against.median > 0 ? ours.median / against.median : undefined;
}

export function goalText(row: BenchRow, goal: Goal): string {
	if (goal.kind === "rssMb") return `peak RSS ≤ ${goal.max} MB`;
	if (goal.kind === "value") {
		return goal.relativeTo === undefined ? `≤ ${goal.max} ${row.unit ?? "ms"}` : `≤ ${goal.max}× ${goal.relativeTo}`;
	}
	const what = goal.kind === "rss" ? "RSS" : "time";
	return `${what} ≤ ${goal.max}× ${AGAINST_NAMES[goal.against ?? "pi16"]}`;
}
