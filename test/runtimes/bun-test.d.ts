// The part of `bun:test` the Bun harness uses, for type-checking under Node's types.
declare module "bun:test" {
	import type { TestApi } from "../../src/testing.ts";
	export const describe: TestApi["describe"] & { skip: TestApi["describe"] };
	export const it: TestApi["it"];
	export const expect: TestApi["expect"];
	export function afterAll(fn: () => Promise<void> | void): void;
}
