/**
 * The storage conformance suite in Chromium, on the ZenFS in-memory storage, plain and under a root
 * prefix (as test/storage.test.ts runs them on Node). The node storage and the sync twin do not exist here.
 */
import { InMemory, resolveMountConfig } from "@zenfs/core";
import { describe, expect, it } from "vitest";
import { createMemoryStorage, createZenfsStorage } from "../../adapters/zenfs.ts";
import { testStorage } from "../../src/testing.ts";

const t = { describe, it, expect };

it("runs in a browser, without Node", () => {
	expect(typeof window).toBe("object");
	expect(typeof process === "undefined" || !process.versions?.node).toBe(true);
});

testStorage("zenfs in memory (Chromium)", async () => ({ storage: await createMemoryStorage(), root: "/work" }), t);
testStorage(
	"zenfs under a root prefix (Chromium)",
	async () => ({
		storage: createZenfsStorage(await resolveMountConfig({ backend: InMemory }), { root: "/prefix" }),
		root: "/work",
	}),
	t,
);
