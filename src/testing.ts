/**
 * The storage conformance suite: every adapter must pass it, on every runtime. Like unstorage's
 * `testStorage(factory)` and the suite ZenFS ships, it is part of the package, so an adapter written
 * elsewhere can prove itself against the same contract.
 *
 * It needs no test framework of its own: pass `describe`, `it` and `expect` from vitest, `bun test`, or
 * Deno's `@std/testing/bdd` + `@std/expect`. Only `toBe`, `toEqual` and `toBeNull` are used.
 *
 * It covers every operation of `StorageOps` with its documented contract and edge cases, and the writer
 * lock protocol of `lock.ts` driven through `runTask`. When the adapter also has a synchronous twin
 * (`syncStorage` in the fixture, and `{ sync: true }`), the same operation and lock tests run again
 * through `runTaskSync`, plus checks that both drivers see the same files and the same locks.
 * @example
 * // vitest or bun test
 * import { describe, expect, it } from "vitest"; // or "bun:test"
 * import { testStorage } from "pi-session-tree/testing";
 * testStorage("memory", async () => ({ storage: await createMemoryStorage(), root: "/work" }), { describe, it, expect });
 * @example
 * // deno test
 * import { describe, it } from "jsr:@std/testing/bdd";
 * import { expect } from "jsr:@std/expect";
 * testStorage("memory", async () => ({ storage: await createMemoryStorage(), root: "/work" }), { describe, it, expect });
 * @module
 */
import { appendTests } from "./testing/append.ts";
import { createExclusiveTests } from "./testing/create-exclusive.ts";
import { linkTests } from "./testing/link.ts";
import { listTests } from "./testing/list.ts";
import { lockTests } from "./testing/locks.ts";
import { mkdirTests } from "./testing/mkdir.ts";
import { readRangeTests } from "./testing/read-range.ts";
import { removeTests } from "./testing/remove.ts";
import { renameTests } from "./testing/rename.ts";
import { replaceTests } from "./testing/replace.ts";
import { specialFileTests } from "./testing/special-files.ts";
import { statTests } from "./testing/stat.ts";
import {
	createSuite,
	type StorageFactory,
	type Suite,
	type TestApi,
	type TestStorageOptions,
} from "./testing/support.ts";
import { syncTwinTests } from "./testing/sync.ts";

export type {
	ExpectLike,
	StorageFactory,
	StorageFixture,
	TestApi,
	TestStorageOptions,
} from "./testing/support.ts";

/** One module per operation (src/testing/), registered in this order on each pass. */
const modules: readonly ((s: Suite) => void)[] = [
	readRangeTests,
	appendTests,
	createExclusiveTests,
	replaceTests,
	renameTests,
	linkTests,
	statTests,
	listTests,
	mkdirTests,
	removeTests,
	lockTests,
	specialFileTests,
];

/**
 * Register the conformance suite for one storage adapter.
 * @example
 * testStorage("node", async () => {
 *   const root = await mkdtemp(`${tmpdir()}/pi-`);
 *   return { storage: createNodeStorage(), root, cleanup: () => rm(root, { recursive: true }) };
 * }, { describe, it, expect });
 */
export function testStorage(name: string, factory: StorageFactory, t: TestApi, options: TestStorageOptions = {}): void {
	const pass = (mode: "async" | "sync"): void => {
		const suite = createSuite(name, factory, t, options, mode);
		for (const register of modules) register(suite);
	};
	t.describe(name, () => {
		pass("async");
		if (!options.sync) return;
		t.describe("through runTaskSync on the sync storage", () => {
			pass("sync");
			syncTwinTests(factory, t);
		});
	});
}
