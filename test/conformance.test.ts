/**
 * The engine conformance suite on Node: in-process and through a worker thread, on the node and the
 * ZenFS in-memory storage.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { type EngineWorker, startEngineWorker } from "../adapters/worker.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { Engine } from "../src/index.ts";
import { type AnyEngine, type EngineFixture, engineConformance } from "./conformance/engine-suite.ts";

const corpus = async (name: string): Promise<Uint8Array> =>
	readFileSync(new URL(`../../shared/corpus/${name}`, import.meta.url));
const api = { describe, it, expect };
let counter = 0;

async function nodeRoot(): Promise<Pick<EngineFixture, "root" | "cleanup">> {
	const root = await mkdtemp(join(tmpdir(), "conformance-"));
	return { root, cleanup: () => rm(root, { recursive: true, force: true }) };
}

engineConformance(
	"node storage, in-process",
	async () => ({
		engine: new Engine({ storage: createNodeStorage(), agentDir: "/unused" }) as unknown as AnyEngine,
		...(await nodeRoot()),
	}),
	api,
	{ corpus },
);

engineConformance(
	"memory storage, in-process",
	async () => ({
		engine: new Engine({ storage: await createMemoryStorage(), agentDir: "/pi/agent" }) as unknown as AnyEngine,
		root: "/work",
	}),
	api,
	{ corpus },
);

/** One worker per storage, shared by that storage's tests; each test gets a fresh directory. */
function workerFixture(storage: "node" | "memory"): () => Promise<EngineFixture> {
	let worker: Promise<EngineWorker> | undefined;
	afterAll(async () => {
		await (await worker)?.terminate();
	});
	return async () => {
		worker ??= startEngineWorker({ storage, agentDir: "/unused" });
		const { engine } = await worker;
		const roots = storage === "node" ? await nodeRoot() : { root: `/work-${++counter}` };
		return { engine, ...roots };
	};
}

engineConformance("node storage, worker thread", workerFixture("node"), api, { corpus });
engineConformance("memory storage, worker thread", workerFixture("memory"), api, { corpus });
