/**
 * Type-level proof that the engine in a worker is the engine: `Comlink.Remote<Engine>` has every method
 * of `Engine` with the same parameters and the same results, so code is written once for both.
 * (Checked by `tsc`; the runtime assertion below only confirms the method list is what we think.)
 */
import type { Remote } from "comlink";
import { expect, expectTypeOf, it } from "vitest";
import { Engine } from "../src/index.ts";

type Methods<T> = { [K in keyof T]: T[K] extends (...args: never[]) => unknown ? K : never }[keyof T];
type SameSignatures = {
	[K in Methods<Engine>]: [Parameters<Remote<Engine>[K]>, Awaited<ReturnType<Remote<Engine>[K]>>];
};
type EngineSignatures = {
	[K in Methods<Engine>]: [Parameters<Engine[K]>, Awaited<ReturnType<Engine[K]>>];
};

it("Remote<Engine> matches Engine method by method", () => {
	expectTypeOf<SameSignatures>().toEqualTypeOf<EngineSignatures>();
	expectTypeOf<Remote<Engine>>().toMatchTypeOf<{ [K in Methods<Engine>]: unknown }>();
	// Every method returns a promise, so in-process calls already look like remote ones.
	expectTypeOf<ReturnType<Engine[Methods<Engine>]>>().toMatchTypeOf<Promise<unknown>>();
	const names = Object.getOwnPropertyNames(Engine.prototype).filter((name) => name !== "constructor");
	expect(names).toContain("appendMessage");
	expect(names).toContain("getContext");
	expect(names.length).toBeGreaterThan(30);
});
