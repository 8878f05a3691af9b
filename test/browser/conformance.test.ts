/**
 * The engine conformance suite in Chromium: in-process on the page, and through a module Worker, on the
 * ZenFS in-memory storage; and the worker's life (terminating it, a worker that fails to load).
 */
import { afterAll, describe, expect, it } from "vitest";
import { type EngineWorker, EngineWorkerError, startEngineWorker } from "../../adapters/worker.ts";
import { createMemoryStorage } from "../../adapters/zenfs.ts";
import { Engine } from "../../src/index.ts";
import {
	type AnyEngine,
	type EngineFixture,
	engineConformance,
	type SuiteOptions,
} from "../conformance/engine-suite.ts";
import { globCorpus } from "../support/corpus.ts";

// The generated files are part of the repository; the corpus beside it may be missing, and then its glob is
// empty (a static `?raw` import of a missing file would fail to bundle). vitest.config.ts passes CI through.
const fixtures = import.meta.glob<string>("../fixtures/sessions/*.jsonl", { query: "?raw", import: "default" });
const corpusFiles = import.meta.glob<string>("../../../shared/corpus/*.jsonl", { query: "?raw", import: "default" });
const options: SuiteOptions = {
	fixture: async (name) => {
		const load = fixtures[`../fixtures/sessions/${name}`];
		if (!load) throw new Error(`no generated session file ${name}`);
		return new TextEncoder().encode(await load());
	},
	corpus: globCorpus(corpusFiles, "../shared/corpus (beside the repository)"),
	describeSkip: describe.skip,
};
const api = { describe, it, expect };

it("runs in a browser with module workers", () => {
	expect(typeof window).toBe("object");
	expect(typeof Worker).toBe("function");
	expect(typeof process === "undefined" || !process.versions?.node).toBe(true);
});

engineConformance(
	"memory storage, in-process (Chromium)",
	async () => ({
		engine: new Engine({ storage: await createMemoryStorage(), agentDir: "/pi" }) as unknown as AnyEngine,
		root: "/work",
	}),
	api,
	options,
);

it("a module Worker that fails to load rejects startEngineWorker with EngineWorkerError", async () => {
	const url = URL.createObjectURL(new Blob(["throw new Error('boom')"], { type: "text/javascript" }));
	const failed = await startEngineWorker({ storage: "memory", worker: new Worker(url, { type: "module" }) }).then(
		() => "started",
		(error: unknown) => error,
	);
	expect(failed).toBeInstanceOf(EngineWorkerError);
	expect(String((failed as Error).cause)).toContain("boom");
});

it("after terminate(), calls reject with EngineWorkerError", async () => {
	const { engine, terminate } = await startEngineWorker({ storage: "memory" });
	const { handle } = await engine.inMemory("/p");
	await terminate();
	await expect(engine.getBranch(handle)).rejects.toBeInstanceOf(EngineWorkerError);
});

let worker: Promise<EngineWorker> | undefined;
let counter = 0;
afterAll(async () => {
	await (await worker)?.terminate();
});
engineConformance(
	"memory storage, module Worker (Chromium)",
	async (): Promise<EngineFixture> => {
		worker ??= startEngineWorker({ storage: "memory" });
		return { engine: (await worker).engine, root: `/work-${++counter}` };
	},
	api,
	options,
);
