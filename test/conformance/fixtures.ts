/**
 * The engine fixtures every server-side runtime (Node, Bun, Deno) runs the conformance suite with:
 * in-process and through a worker, on the node and the in-memory storage.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeStorage } from "../../adapters/node.ts";
import { type EngineWorker, startEngineWorker } from "../../adapters/worker.ts";
import { createMemoryStorage } from "../../adapters/zenfs.ts";
import { Engine } from "../../src/index.ts";
import type { TestApi } from "../../src/testing.ts";
import { type AnyEngine, type EngineFixture, engineConformance } from "./engine-suite.ts";

const corpus = async (name: string): Promise<Uint8Array> =>
	new Uint8Array(readFileSync(new URL(`../../../shared/corpus/${name}`, import.meta.url)));
let counter = 0;

async function diskRoot(): Promise<Pick<EngineFixture, "root" | "cleanup">> {
	const root = await mkdtemp(join(tmpdir(), "conformance-"));
	return { root, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** One worker per storage, shared by that storage's tests (each gets a fresh directory). */
function throughWorker(
	storage: "node" | "memory",
	afterAll: (fn: () => Promise<void>) => void,
): () => Promise<EngineFixture> {
	let worker: Promise<EngineWorker> | undefined;
	afterAll(async () => {
		await (await worker)?.terminate();
	});
	return async () => {
		worker ??= startEngineWorker({ storage, agentDir: "/unused" });
		const { engine } = await worker;
		return { engine, ...(storage === "node" ? await diskRoot() : { root: `/work-${++counter}` }) };
	};
}

/** Register the suite four times: {node, memory} storage × {in-process, worker}. */
export function runEngineConformance(t: TestApi, afterAll: (fn: () => Promise<void>) => void): void {
	const inProcess = async (storage: "node" | "memory"): Promise<EngineFixture> =>
		storage === "node"
			? {
					engine: new Engine({ storage: createNodeStorage(), agentDir: "/unused" }) as unknown as AnyEngine,
					...(await diskRoot()),
				}
			: {
					engine: new Engine({ storage: await createMemoryStorage(), agentDir: "/pi" }) as unknown as AnyEngine,
					root: "/work",
				};
	engineConformance("node storage, in-process", () => inProcess("node"), t, { corpus });
	engineConformance("memory storage, in-process", () => inProcess("memory"), t, { corpus });
	engineConformance("node storage, worker", throughWorker("node", afterAll), t, { corpus });
	engineConformance("memory storage, worker", throughWorker("memory", afterAll), t, { corpus });
}
