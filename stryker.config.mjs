// @ts-check
/**
 * Mutation testing (`npm run test:mutation`): StrykerJS changes one rule at a time in the modules issue 16
 * names (context, migration, tree, load, locks) and runs the tests that cover it; a mutant that no test
 * notices is a rule no test guards. The report goes to reports/mutation/; the survivors that are kept on
 * purpose are listed, with why, in test/MUTANTS.md. Too slow for every CI run (tens of minutes here).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

// Stryker runs the tests in a copy of the repository, where `../shared` is not beside it: say where it is.
const corpus = fileURLToPath(new URL("../shared/corpus", import.meta.url));
if (existsSync(corpus) && !process.env.PI_CORPUS_DIR) process.env.PI_CORPUS_DIR = corpus;
// Each covering test runs again for every mutant: the property tests try fewer cases than in `npm test`
// (a fifth; the oracle and fault sequences a quarter or less), or the run would take hours here.
process.env.PROPERTY_RUNS_SCALE ??= "0.2";
process.env.FUZZ_RUNS ??= "16";
process.env.FAULT_RUNS ??= "12";

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
const config = {
	testRunner: "vitest",
	vitest: { configFile: "vitest.mutation.config.ts", related: false },
	coverageAnalysis: "perTest",
	mutate: [
		"src/context.ts",
		"src/context-walk.ts",
		"src/migrate.ts",
		"src/tree.ts",
		"src/tree-index.ts",
		"src/tree-load.ts",
		"src/tree-append.ts",
		"src/tree-labels.ts",
		"src/node-table.ts",
		"src/load.ts",
		"src/lock-files.ts",
		"src/writer-lock.ts",
		"src/lock-threads.ts",
	],
	// A static mutant (a module-level constant) would need every test run again for each; skip them.
	ignoreStatic: true,
	concurrency: 2,
	timeoutMS: 10_000,
	reporters: ["clear-text", "progress-append-only", "html", "json"],
	htmlReporter: { fileName: "reports/mutation/index.html" },
	jsonReporter: { fileName: "reports/mutation/mutation.json" },
	// A later run tests again only the mutants whose code or covering tests changed.
	incremental: true,
	incrementalFile: "reports/mutation/stryker-incremental.json",
	tempDirName: ".stryker-tmp",
	cleanTempDir: "always",
};
export default config;
