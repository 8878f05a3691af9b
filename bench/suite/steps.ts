/**
 * The benchmark scripts `npm run bench` runs, in order, each in a process of its own: how to start it in a
 * quick and in a full run, and how long it may take before the suite gives up on it.
 * @module
 */

export interface Step {
	/** Name for `--only` and the table. */
	name: string;
	script: string;
	/** Arguments of a full run and of a `--quick` one. */
	full: string[];
	quick: string[];
	/** Minutes after which the step is stopped and its rows reported missing. */
	timeoutMinutes: { full: number; quick: number };
	/** Runs in Chromium: skipped, with a note, where there is none. */
	browser?: boolean;
}

export const STEPS: readonly Step[] = [
	{
		name: "scale",
		script: "bench/scale.ts",
		full: [],
		quick: ["--quick"],
		timeoutMinutes: { full: 20, quick: 3 },
	},
	{
		name: "context",
		script: "bench/context-deep-leaf.ts",
		full: [],
		quick: ["--quick"],
		timeoutMinutes: { full: 5, quick: 2 },
	},
	{
		name: "appends",
		script: "bench/worker-appends.ts",
		full: [],
		quick: ["--quick"],
		timeoutMinutes: { full: 8, quick: 2 },
	},
	{
		name: "responsiveness",
		script: "bench/worker-responsiveness.ts",
		full: [],
		quick: ["--quick"],
		timeoutMinutes: { full: 8, quick: 2 },
	},
	{
		name: "cli",
		script: "bench/cli.ts",
		full: [],
		quick: ["--quick"],
		timeoutMinutes: { full: 8, quick: 2 },
	},
	{
		name: "browser",
		script: "bench/browser.ts",
		full: ["--only=appends,open"],
		quick: ["--quick", "--only=appends,open"],
		timeoutMinutes: { full: 10, quick: 3 },
		browser: true,
	},
];
