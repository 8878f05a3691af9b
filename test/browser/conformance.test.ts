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
	deepSessionFile,
	deepValue,
	describeOutcome,
	type EngineFixture,
	engineConformance,
	outcomeWithin,
	type SuiteOptions,
	settledAsAllowed,
} from "../conformance/engine-suite.ts";
import { runLineWalkAgreement } from "../conformance/line-walk.ts";
import { runListingScanAgreement } from "../conformance/listing-scan.ts";
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

/**
 * A module Worker of the stock entry, made with the bundler pattern (`new URL(…, import.meta.url)`), as an
 * app with a bundler makes it. Under vitest it must be: vitest rewrites every dynamic `import()` of the
 * modules it serves into a call of a helper it defines only in pages and in workers made this way, and the
 * worker loads its storage with a dynamic import.
 */
const stockWorker = () => new Worker(new URL("../../adapters/worker-entry.ts", import.meta.url), { type: "module" });

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

it("with no worker given, startEngineWorker starts the package's browser worker (here, from the sources)", async () => {
	const { engine, terminate } = await startEngineWorker({ storage: "memory" });
	try {
		const { handle } = await engine.inMemory("/p");
		await engine.appendMessage(handle, { role: "user", content: "default worker", timestamp: 1 });
		expect((await engine.getContext(handle)).messages).toEqual([
			{ role: "user", content: "default worker", timestamp: 1 },
		]);
	} finally {
		await terminate();
	}
});

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
	const { engine, terminate } = await startEngineWorker({ storage: "memory", worker: stockWorker() });
	const { handle } = await engine.inMemory("/p");
	await terminate();
	await expect(engine.getBranch(handle)).rejects.toBeInstanceOf(EngineWorkerError);
});

it("a worker the app terminates itself (no event is sent): its calls reject instead of waiting forever", async () => {
	const raw = stockWorker();
	const { engine, terminate } = await startEngineWorker({ storage: "memory", worker: raw });
	const { handle } = await engine.inMemory("/p");
	raw.terminate();
	expect(await outcomeWithin(engine.getBranch(handle), 10_000)).toBeInstanceOf(EngineWorkerError);
	expect(await outcomeWithin(terminate(), 10_000)).toBe("resolved");
});

it("a storage the worker has no factory for rejects startEngineWorker, naming those it has", async () => {
	await expect(startEngineWorker({ storage: "nowhere", worker: stockWorker() })).rejects.toThrow(
		/no storage "nowhere" \(it has "node", "memory", "opfs"\)/,
	);
});

it("an answer too deep to read on the page settles: it arrives, or one side refuses it", async () => {
	const { engine, terminate } = await startEngineWorker({ storage: "memory", worker: stockWorker() });
	try {
		for (const depth of [1000, 1600, 1700, 1800, 1900, 3000]) {
			const path = `/deep-${depth}.jsonl`;
			await engine.importSessionFile(path, deepSessionFile(depth));
			const { handle } = await engine.open(path);
			const outcome = await outcomeWithin(engine.getEntry(handle, "aaaaaaaa"));
			console.log(`Chromium, an answer ${depth} deep:`, describeOutcome(outcome));
			expect(settledAsAllowed(outcome)).toBe(true);
		}
		expect(await engine.openHandles()).toHaveLength(6); // the engine goes on
	} finally {
		await terminate();
	}
});

it("arguments too deep for the worker settle: they arrive, or one side refuses them", async () => {
	const { engine, terminate } = await startEngineWorker({ storage: "memory", worker: stockWorker() });
	try {
		const { handle } = await engine.inMemory("/p");
		for (const depth of [1000, 2000, 3000, 5000, 8000, 20000]) {
			const direct = await outcomeWithin(engine.create({ cwd: "/q", deep: deepValue(depth) } as never));
			const batched = await outcomeWithin(engine.appendCustomEntry(handle, "deep", deepValue(depth)));
			console.log(`Chromium, arguments ${depth} deep:`, describeOutcome(direct), "/", describeOutcome(batched));
			expect(settledAsAllowed(direct) && settledAsAllowed(batched)).toBe(true);
		}
		expect(await engine.openHandles()).toContain(handle); // the engine goes on
	} finally {
		await terminate();
	}
});

let worker: Promise<EngineWorker> | undefined;
let counter = 0;
afterAll(async () => {
	await (await worker)?.terminate();
});
engineConformance(
	"memory storage, module Worker (Chromium)",
	async (): Promise<EngineFixture> => {
		worker ??= startEngineWorker({ storage: "memory", worker: stockWorker() });
		return { engine: (await worker).engine, root: `/work-${++counter}` };
	},
	api,
	options,
);

runLineWalkAgreement({ describe, it, expect });
runListingScanAgreement({ describe, it, expect });
