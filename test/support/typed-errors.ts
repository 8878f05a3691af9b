/**
 * The errors the package may throw at a caller: every class of src/errors.ts (so a new one counts at once),
 * for the tests that require every failure to be one of them.
 * @module
 */
import * as errors from "../../src/errors.ts";

type ErrorClass = abstract new (...args: never[]) => Error;

export const TYPED: ErrorClass[] = (Object.values(errors) as unknown[]).filter(
	(value): value is ErrorClass => typeof value === "function" && value.prototype instanceof Error,
);

/** Whether `error` is an instance of one of the package's error classes. */
export function isTyped(error: unknown): boolean {
	return TYPED.some((type) => error instanceof type);
}
