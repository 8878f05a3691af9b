/**
 * The worker's side takes storage factories by name: a worker entry of one's own plugs in a storage
 * without changing the host, and a client naming a storage the worker lacks is told which it has.
 */
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { startEngineWorker } from "../adapters/worker.ts";
import { createEngineFactory } from "../adapters/worker-host.ts";

/** A Node worker of a TypeScript entry module (tsx's loader, which worker threads do not inherit). */
function tsWorker(entry: URL): Worker {
	const tsx = import.meta.resolve("tsx/esm/api");
	const bootstrap = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(entry.href)});`;
	return new Worker(new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`));
}

describe("storage factories", () => {
	it("a storage of one's own worker entry: the factory's options make the engine, the stock ones stay", async () => {
		const entry = new URL("./support/custom-worker-entry.ts", import.meta.url);
		const custom = await startEngineWorker({ storage: "custom", agentDir: "a", worker: tsWorker(entry) });
		const memory = await startEngineWorker({ storage: "memory", worker: tsWorker(entry) });
		try {
			expect(await custom.engine.sessionDirFor("/p")).toMatch(/^\/custom\/a\/sessions\//);
			expect(await memory.engine.sessionDirFor("/p")).toMatch(/^\/pi\/agent\/sessions\//);
		} finally {
			await Promise.all([custom.terminate(), memory.terminate()]);
		}
	});

	it("exporting through the worker never gives away a storage's own buffer: the file is still there after", async () => {
		const entry = new URL("./support/custom-worker-entry.ts", import.meta.url);
		const { engine, terminate } = await startEngineWorker({ storage: "keeping", worker: tsWorker(entry) });
		try {
			const bytes = new TextEncoder().encode(
				'{"type":"session","version":3,"id":"k","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n',
			);
			await engine.importSessionFile("/k.jsonl", bytes);
			expect(await engine.exportSessionFile("/k.jsonl")).toEqual(bytes);
			expect(await engine.exportSessionFile("/k.jsonl")).toEqual(bytes);
			const { entryCount } = await engine.open("/k.jsonl", { readOnly: true });
			expect(entryCount).toBe(0);
		} finally {
			await terminate();
		}
	});

	it("createEngineFactory calls the named factory once per engine; an unknown name is a TypeError naming those there are", async () => {
		const seen: unknown[] = [];
		const { createMemoryStorage } = await import("../adapters/zenfs.ts");
		const factory = createEngineFactory({
			storages: {
				spy: async () => {
					const options = { storage: await createMemoryStorage(), agentDir: "/spy", durability: "fsync" as const };
					seen.push(options);
					return options;
				},
			},
		});
		const port = await factory.createEngine({ storage: "spy" });
		port.close();
		expect(seen).toHaveLength(1);
		await expect(factory.createEngine({ storage: "other" })).rejects.toThrow(/no storage "other" \(it has "spy"\)/);
		await expect(factory.createEngine({ storage: "toString" })).rejects.toThrow(TypeError);
	});
});
