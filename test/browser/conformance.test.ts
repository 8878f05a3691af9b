/**
 * The engine conformance suite in Chromium: in-process on the page, and through a module Worker, on the
 * ZenFS in-memory storage; and the worker's life (terminating it, a worker that fails to load).
 */
import { afterAll, describe, expect, it } from "vitest";
import beforeCompaction from "../../../shared/corpus/pi-v1-before-compaction.jsonl?raw";
import largeSession from "../../../shared/corpus/pi-v1-large-session.jsonl?raw";
import { type EngineWorker, EngineWorkerError, startEngineWorker } from "../../adapters/worker.ts";
import { createMemoryStorage } from "../../adapters/zenfs.ts";
import { Engine } from "../../src/index.ts";
import { type AnyEngine, type EngineFixture, engineConformance } from "../conformance/engine-suite.ts";

const corpusText: Record<string, string> = {
	"pi-v1-large-session.jsonl": largeSession,
	"pi-v1-before-compaction.jsonl": beforeCompaction,
};
const corpus = async (name: string): Promise<Uint8Array> => new TextEncoder().encode(corpusText[name]);
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
	{ corpus },
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
	{ corpus },
);
