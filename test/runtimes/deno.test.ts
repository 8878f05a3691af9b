/**
 * The engine conformance suite on Deno (`deno test`): in-process and through Deno workers; and the storage
 * conformance suite on the node storage (Deno's `node:fs`, sync twin included) and the in-memory storage.
 * Deno runs `node:test`'s describe/it; `expect` is a small shim over `node:assert` with the three matchers
 * the suites use (values are compared as JSON data, as the suites only compare plain data).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createMemoryStorage } from "../../adapters/zenfs.ts";
import { type ExpectLike, type TestApi, testStorage } from "../../src/testing.ts";
import { runEngineConformance, runWorkerLife } from "../conformance/fixtures.ts";
import { runLineWalkAgreement } from "../conformance/line-walk.ts";
import { runListingScanAgreement } from "../conformance/listing-scan.ts";
import { nodeStorageFixture } from "../support/node-storage-fixture.ts";

const asData = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
const expect = (actual: unknown): ExpectLike => ({
	toBe: (expected) => assert.ok(Object.is(actual, expected), `expected ${String(actual)} to be ${String(expected)}`),
	toEqual: (expected) => assert.deepStrictEqual(asData(actual), asData(expected)),
	toBeNull: () => assert.equal(actual, null),
});
// node:test passes its own context to a test function; the suites' tests take none.
const t: TestApi = { describe, it: (name, fn) => it(name, () => fn()), expect };

runEngineConformance(
	t,
	(fn) => after(fn),
	(name, fn) => describe.skip(name, fn),
);
runWorkerLife(t);
runLineWalkAgreement(t);
runListingScanAgreement(t);

testStorage("node storage (Deno)", nodeStorageFixture, t, { sync: true });
testStorage("memory storage (Deno)", async () => ({ storage: await createMemoryStorage(), root: "/work" }), t);
