/**
 * The benchmark suite's verdicts (bench/suite/goals.ts): each kind of goal reads the figure it names, a row
 * with a problem meets none, and a goal without its figure is not measured rather than met.
 */
import { expect, it } from "vitest";
import { judgeGoals } from "../bench/suite/goals.ts";
import type { BenchRow, Measure } from "../bench/suite/rows.ts";

const measure = (median: number, rssMb?: number): Measure => ({ median, min: median, max: median, rounds: 1, rssMb });

it("judges time and RSS ratios, values, values against another row, and absolute RSS", () => {
	const rows: BenchRow[] = [
		{
			bench: "t",
			name: "open",
			ours: measure(200, 400),
			pi16: measure(1000, 1000),
			floor: measure(100),
			goals: [
				{ kind: "ratio", max: 0.25 },
				{ kind: "ratio", max: 0.1 },
				{ kind: "rss", max: 0.5 },
				{ kind: "ratio", max: 2, against: "floor" },
				{ kind: "rssMb", max: 500 },
				{ kind: "rssMb", max: 300 },
				{ kind: "value", max: 250 },
			],
		},
		{ bench: "t", name: "append 1 KB", ours: measure(10) },
		{
			bench: "t",
			name: "append 100 MB",
			ours: measure(14),
			goals: [{ kind: "value", max: 1.5, relativeTo: "append 1 KB" }],
		},
	];
	const judged = judgeGoals(rows);
	expect(judged.map((goal) => [goal.text, goal.value, goal.met])).toEqual([
		["time ≤ 0.25× pi 1.6.0", 0.2, true],
		["time ≤ 0.1× pi 1.6.0", 0.2, false],
		["RSS ≤ 0.5× pi 1.6.0", 0.4, true],
		["time ≤ 2× the floor", 2, true],
		["peak RSS ≤ 500 MB", 400, true],
		["peak RSS ≤ 300 MB", 400, false],
		["≤ 250 ms", 200, true],
		["≤ 1.5× append 1 KB", 1.4, true],
	]);
});

it("meets no goal of a row with a problem, and measures none whose figure is missing", () => {
	const judged = judgeGoals([
		{
			bench: "t",
			name: "wrong",
			ours: measure(1),
			pi16: measure(10),
			problem: "differs",
			goals: [{ kind: "ratio", max: 1 }],
		},
		{ bench: "t", name: "no pi", ours: measure(1), goals: [{ kind: "ratio", max: 1 }] },
		{ bench: "t", name: "no rss", ours: measure(1), goals: [{ kind: "rssMb", max: 1 }] },
	]);
	expect(judged.map((goal) => goal.met)).toEqual([false, undefined, undefined]);
});
