/**
 * Random operation sequences with random storage faults (fast-check) on the Node storage and on ZenFS in
 * memory. The property, its operations and faults are in test/support/fault-sequences.ts, which
 * test/browser/fault-sequences.test.ts runs on OPFS in Chromium.
 *
 * `FAULT_RUNS` sets the cases per storage (default 40, bounded for CI), `FAULT_SEED` the seed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import type { Storage } from "../src/storage.ts";
import { checkFaultSequences } from "./support/fault-sequences.ts";

const RUNS = Number(process.env.FAULT_RUNS ?? "") || 40;
const SEED = Number(process.env.FAULT_SEED ?? "") || undefined;

const temporary: string[] = [];
afterAll(() => {
	for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

const bases: [string, () => Promise<{ storage: Storage; root: string }>][] = [
	[
		"node",
		async () => {
			const root = mkdtempSync(join(tmpdir(), "fault-sequences-"));
			temporary.push(root);
			return { storage: createNodeStorage(), root };
		},
	],
	["zenfs", async () => ({ storage: await createMemoryStorage(), root: "/data" })],
];

describe.each(bases)("random operations with random faults on %s storage", (_name, setup) => {
	it(`every call ends typed or done; every acknowledged entry survives, in order (${RUNS} sequences)`, async () => {
		await checkFaultSequences(setup, RUNS, SEED);
	}, 120_000);
});
