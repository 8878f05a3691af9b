/**
 * The engine conformance suite on Deno (`deno test`): in-process and through Deno workers; and the storage
 * conformance suite on the node storage (Deno's `node:fs`, sync twin included) and the in-memory storage.
 * Deno runs `node:test`'s describe/it; `expect` is a small shim with the three matchers the suites use,
 * `toEqual` through the equality vitest's own `toEqual` uses (`@vitest/expect`'s `equals` with
 * `iterableEquality`): `undefined` and `NaN` values, Maps, Sets and typed arrays are compared as under
 * vitest, so a suite asserts the same on every runtime.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { inspect } from "node:util";
import { equals, iterableEquality } from "@vitest/expect";
import { createMemoryStorage } from "../../adapters/zenfs.ts";
import { type ExpectLike, type TestApi, testStorage } from "../../src/testing.ts";
import { runEngineConformance, runWorkerLife } from "../conformance/fixtures.ts";
import { runLineWalkAgreement } from "../conformance/line-walk.ts";
import { runListingScanAgreement } from "../conformance/listing-scan.ts";
import { nodeStorageFixture } from "../support/node-storage-fixture.ts";

const shown = (value: unknown): string => inspect(value, { depth: 6, breakLength: 120 });
const expect = (actual: unknown): ExpectLike => ({
	toBe: (expected) => assert.ok(Object.is(actual, expected), `expected ${shown(actual)} to be ${shown(expected)}`),
	toEqual: (expected) =>
		assert.ok(equals(actual, expected, [iterableEquality]), `expected ${shown(actual)} to equal ${shown(expected)}`),
	toBeNull: () => assert.ok(actual === null, `expected ${shown(actual)} to be null`),
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

describe("the expect shim", () => {
	it("tells apart what JSON data would not, and agrees with vitest's toEqual elsewhere", () => {
		const different: [unknown, unknown][] = [
			[new Map([["k", 1]]), new Map([["k", 2]])],
			[new Set([1]), new Set([2])],
			[Number.NaN, null],
			[[undefined], [null]],
			[new Uint8Array([1]), new Uint8Array([2])],
			[{ at: new Date(0) }, { at: new Date(1) }],
		];
		for (const [actual, expected] of different) assert.throws(() => expect(actual).toEqual(expected));
		expect({ a: 1, b: undefined }).toEqual({ a: 1 }); // as vitest's toEqual: an undefined key is no key
		expect(new Map([["k", [Number.NaN]]])).toEqual(new Map([["k", [Number.NaN]]]));
		assert.throws(() => expect(0).toBe(-0));
		assert.throws(() => expect(undefined).toBeNull());
	});
});
