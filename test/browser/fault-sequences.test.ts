/**
 * The random operation sequences with random storage faults of test/support/fault-sequences.ts, in
 * Chromium: on OPFS (the storage in a module Worker, each operation forwarded from the page, faults
 * injected on the page's side) and on ZenFS in memory.
 */
import { afterAll, describe, it } from "vitest";
import { createMemoryStorage } from "../../adapters/zenfs.ts";
import { checkFaultSequences } from "../support/fault-sequences.ts";
import { forwarded, storageWorker, workers } from "./opfs/forwarded.ts";

const RUNS = 25;
const shared = storageWorker();
const opened: number[] = [];

afterAll(async () => {
	for (const id of opened) await shared.close(id);
	for (const worker of workers) worker.terminate();
});

describe("random operations with random faults in Chromium", () => {
	it(`on OPFS: every call ends typed or done; every acknowledged entry survives, in order (${RUNS} sequences)`, async () => {
		await checkFaultSequences(async () => {
			const id = await shared.open(`/fault-sequences/${crypto.randomUUID()}`);
			opened.push(id);
			return { storage: forwarded(shared, id), root: "/work" };
		}, RUNS);
	}, 180_000);

	it(`on ZenFS in memory (${RUNS} sequences)`, async () => {
		await checkFaultSequences(async () => ({ storage: await createMemoryStorage(), root: "/data" }), RUNS);
	}, 120_000);
});
