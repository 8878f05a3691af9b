/**
 * The rows every benchmark of the suite reports, in one shape, so `npm run bench` (bench/run.ts) can print
 * them as one table, write them as JSON and draw the charts. A benchmark script prints its own detail as
 * before and, when `BENCH_ROWS` names a file (the suite sets it), appends each row there as a JSON line.
 * @module
 */
import { appendFileSync } from "node:fs";

/** One implementation's figures for a row: medians over the rounds, with their ranges. */
export interface Measure {
	/** Median time in ms (or the row's `unit`), and the range over the rounds. */
	median: number;
	min: number;
	max: number;
	/** Peak RSS in MB, median over the rounds, where the benchmark measures it (each run in its own process). */
	rssMb?: number;
	/** Rounds measured. */
	rounds: number;
}

/** A goal of the issues: a ratio of ours to pi 1.6.0's (or the floor's), or a bound on our own figure. */
export interface Goal {
	/**
	 * `ratio`: ours ÷ `against`'s median time must be at most `max`; `rss`: the same of peak RSS; `value`: ours
	 * at most `max` in the row's unit; `rssMb`: our peak RSS at most `max` MB.
	 */
	kind: "ratio" | "rss" | "value" | "rssMb";
	max: number;
	against?: "pi16" | "pi073" | "floor" | "ours";
	/** For a `value` goal measured against one of our own other rows (the OPFS append at 100 MB ÷ at 1 KB): that row's name. */
	relativeTo?: string;
}

export interface BenchRow {
	/** The benchmark script that measured it ("scale", "worker-appends", …). */
	bench: string;
	/** What is measured, as a reader would say it: "lazy open, linear 100 MB". */
	name: string;
	/** The unit of the figures: "ms" unless said. */
	unit?: "ms" | "µs" | "MB" | "frames";
	/** Input size in bytes, or count of sessions, for the charts. */
	size?: { bytes?: number; sessions?: number; entries?: number };
	ours?: Measure;
	pi16?: Measure;
	pi073?: Measure;
	floor?: Measure;
	goals?: Goal[];
	/** What was checked to be equal to pi 1.6.0's answer before timing ("entry count, leaf, context digest"). */
	checked?: string;
	/** Why an implementation has no figure (pi 0.73.1 cannot open 1 GB, …), or a note for the table. */
	note?: string;
	/** A wrong answer or a failure: the row counts as not met. */
	problem?: string;
	/**
	 * Where the row is drawn: `open` (time and peak RSS against `size.bytes`; `label` names our line, "lazy"
	 * or "full", pi 1.6.0 and the floor drawn once per size) or `listing` (time against `size.sessions`;
	 * `label` "cold" or "warm").
	 */
	plot?: { chart: "open" | "listing"; label: string };
}

/** Whether this process was started by the suite. */
export function inSuite(): boolean {
	return process.env.BENCH_ROWS !== undefined;
}

/** Hand a row to the suite (nothing when the script runs on its own). */
export function reportRow(row: BenchRow): void {
	const file = process.env.BENCH_ROWS;
	if (file) appendFileSync(file, `${JSON.stringify(row)}\n`);
}

/** A `Measure` from the values of the rounds (and peak RSS figures in bytes, if measured). */
export function measureOf(values: readonly number[], rssBytes?: readonly number[]): Measure | undefined {
	if (values.length === 0) return undefined;
	const sorted = [...values].sort((a, b) => a - b);
	const measure: Measure = {
		median: middle(sorted),
		min: sorted[0] as number,
		max: sorted[sorted.length - 1] as number,
		rounds: values.length,
	};
	if (rssBytes && rssBytes.length > 0) measure.rssMb = middle([...rssBytes].sort((a, b) => a - b)) / 1e6;
	return measure;
}

function middle(sorted: readonly number[]): number {
	const half = sorted.length >> 1;
	return sorted.length % 2 ? (sorted[half] as number) : ((sorted[half - 1] as number) + (sorted[half] as number)) / 2;
}
