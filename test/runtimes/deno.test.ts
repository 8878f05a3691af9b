/**
 * The engine conformance suite on Deno (`deno test`): in-process and through Deno workers. Deno runs
 * `node:test`'s describe/it; `expect` is a small shim over `node:assert` with the three matchers the
 * suite uses (values are compared as JSON data, as the suite only compares plain data).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { ExpectLike } from "../../src/testing.ts";
import { runEngineConformance, runWorkerLife } from "../conformance/fixtures.ts";

const asData = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
const expect = (actual: unknown): ExpectLike => ({
	toBe: (expected) => assert.ok(Object.is(actual, expected), `expected ${String(actual)} to be ${String(expected)}`),
	toEqual: (expected) => assert.deepStrictEqual(asData(actual), asData(expected)),
	toBeNull: () => assert.equal(actual, null),
});

runEngineConformance(
	{ describe, it: (name, fn) => it(name, () => fn()), expect },
	(fn) => after(fn),
	(name, fn) => describe.skip(name, fn),
);
runWorkerLife({ describe, it: (name, fn) => it(name, () => fn()), expect });
