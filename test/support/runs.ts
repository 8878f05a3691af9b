/**
 * How many cases a property test tries: `runs` as written, scaled by `PROPERTY_RUNS_SCALE` when it is set
 * (the mutation run, `stryker.config.mjs`, sets it below 1: it runs a test again for every mutant the test
 * covers). At least one.
 * @module
 */
export function propertyRuns(runs: number): number {
	const scale = Number(globalThis.process?.env.PROPERTY_RUNS_SCALE ?? "") || 1;
	return Math.max(1, Math.round(runs * scale));
}
