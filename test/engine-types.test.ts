/**
 * Type-level proof that the engine in a worker is the engine: `Comlink.Remote<Engine>` has every method
 * of `Engine` with the same parameters and the same results, so code is written once for both.
 * (Checked by `tsc`; the runtime assertions below confirm the method lists are what we think.)
 */
import type { Remote } from "comlink";
import { expect, expectTypeOf, it } from "vitest";
import { ENGINE_METHODS, type HostedEngine } from "../adapters/worker-wire.ts";
import { APPEND_METHODS, type AppendMethod } from "../src/append-methods.ts";
import { Engine, type SessionHandle, type SessionTree } from "../src/index.ts";

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

it("the engine's appends are the tree's, with a handle first, on Engine and on Remote<Engine>", () => {
	expectTypeOf<Remote<Engine>>().toMatchTypeOf<{ [K in AppendMethod]: unknown }>();
	expectTypeOf<Parameters<Remote<Engine>["appendCompaction"]>>().toEqualTypeOf<
		[SessionHandle, ...Parameters<SessionTree["appendCompaction"]>]
	>();
	expectTypeOf<ReturnType<Engine["appendMessage"]>>().toEqualTypeOf<Promise<string>>();
	for (const method of APPEND_METHODS) expect(typeof Engine.prototype[method]).toBe("function");
});

it("ENGINE_METHODS, which the worker client forwards, lists exactly the engine's methods", () => {
	expectTypeOf<(typeof ENGINE_METHODS)[number]>().toEqualTypeOf<Methods<Engine>>();
	expectTypeOf<HostedEngine>().toMatchTypeOf<Pick<Engine, Methods<Engine>>>();
	const names = Object.getOwnPropertyNames(Engine.prototype).filter((name) => name !== "constructor");
	expect([...ENGINE_METHODS].sort()).toEqual(names.sort());
});
