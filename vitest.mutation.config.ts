import { defineConfig, type ViteUserConfig } from "vitest/config";

/**
 * The tests the mutation run (stryker.config.mjs) uses: the node tests that call `src/` in the test's own
 * process. Stryker switches its mutants on by a global of that process, so tests that reach the engine
 * through a child process, a worker thread or the built `dist/` cannot see a mutant and are left out.
 */
const config: ViteUserConfig = defineConfig({
	test: {
		testTimeout: 60_000,
		include: [
			"test/context.test.ts",
			"test/context-walk.test.ts",
			"test/migrate.test.ts",
			"test/tree.test.ts",
			"test/node-table.test.ts",
			"test/session.test.ts",
			"test/session-fixtures.test.ts",
			"test/open-session.test.ts",
			"test/lazy-open.test.ts",
			"test/properties.test.ts",
			"test/lock-files.test.ts",
			"test/foreign-locks.test.ts",
			"test/storage.test.ts",
			"test/jsonl.test.ts",
			"test/pi16-differential.test.ts",
			"test/pi16-damaged-trees.test.ts",
			"test/pi16-migration-oracle.test.ts",
			"test/fault-sequences.test.ts",
			"test/fault-sequences-sync.test.ts",
			// Written for what the first mutation run found unguarded.
			"test/mutants-*.test.ts",
		],
	},
});
export default config;
