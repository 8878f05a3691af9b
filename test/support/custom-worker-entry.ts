/**
 * A worker entry of one's own (test/worker-host.test.ts): the stock storages and two more. `custom`'s
 * factory returns every option it wants the engine to have; `keeping` is a storage that keeps each file's
 * bytes and answers reads with views of them, as a storage of one's own may (the host must not give those
 * buffers away).
 */

import { exposeEngine, stockStorages } from "../../adapters/worker-host.ts";
import { createMemoryStorage } from "../../adapters/zenfs.ts";
import type { Storage } from "../../src/index.ts";

/** `inner`, with reads answered from whole-file buffers it keeps (dropped when the file changes). */
function keepingReads(inner: Storage): Storage {
	const kept = new Map<string, Uint8Array>();
	const changing =
		<A extends unknown[], R>(change: (path: string, ...rest: A) => Promise<R>) =>
		(path: string, ...rest: A) => {
			kept.delete(path);
			return change(path, ...rest);
		};
	return {
		...inner,
		async readRange(path, start, end) {
			let whole = kept.get(path);
			if (!whole) {
				whole = await inner.readRange(path, 0, (await inner.stat(path))?.size ?? 0);
				kept.set(path, whole);
			}
			return whole.subarray(start, end);
		},
		append: changing(inner.append),
		createExclusive: changing(inner.createExclusive),
		replace: changing(inner.replace),
		remove: changing(inner.remove),
		rename: (from, to) => {
			kept.delete(from);
			kept.delete(to);
			return inner.rename(from, to);
		},
	};
}

void exposeEngine({
	storages: {
		...stockStorages,
		custom: async (config) => ({
			storage: await createMemoryStorage(),
			agentDir: `/custom/${config.agentDir ?? "default"}`,
			durability: "fsync",
		}),
		keeping: async () => ({ storage: keepingReads(await createMemoryStorage()), agentDir: "/pi/agent" }),
	},
});
