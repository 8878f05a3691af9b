import { describe, expect, it } from "vitest";
import { errorFromData } from "../adapters/worker.ts";
import { errorToData } from "../src/error-data.ts";
import { InvalidArgumentError, SessionLockedError } from "../src/errors.ts";
import { StorageError } from "../src/storage.ts";
import { TYPED } from "./support/typed-errors.ts";

/** Through structured cloning, as between threads. */
const acrossThreads = (error: unknown): Error => errorFromData(structuredClone(errorToData(error)));

describe("errors as data, across threads", () => {
	it("come back as the same class, with message, stack and their own fields", () => {
		const owner = { pid: 7, host: "h", startedAt: 1, token: "t" };
		const original = new SessionLockedError("/s.jsonl", owner);
		const copy = acrossThreads(original);
		expect(copy).toBeInstanceOf(SessionLockedError);
		expect(copy).toBeInstanceOf(Error);
		expect([copy.name, copy.message, copy.stack]).toEqual([original.name, original.message, original.stack]);
		expect((copy as SessionLockedError).owner).toEqual(owner);
		expect((copy as SessionLockedError).path).toBe("/s.jsonl");
	});

	it("keep their cause, and leave out fields that cannot be cloned", () => {
		const cause = Object.assign(new Error("EACCES: permission denied"), { code: "EACCES", errno: -13 });
		const original = Object.assign(new StorageError("io", "/a", "io: /a", { cause }), { retry: () => 0 });
		const copy = acrossThreads(original) as StorageError & { retry?: unknown };
		expect(copy).toBeInstanceOf(StorageError);
		expect([copy.code, copy.path, copy.retry]).toEqual(["io", "/a", undefined]);
		expect(copy.cause).toBeInstanceOf(Error);
		expect([(copy.cause as Error).message, (copy.cause as { code?: string }).code]).toEqual([
			"EACCES: permission denied",
			"EACCES",
		]);
	});

	it("never throw: looping causes, unreadable fields, null-prototype values, names of Object.prototype", () => {
		const looping = new Error("a");
		looping.cause = new Error("b", { cause: looping });
		const copy = acrossThreads(looping);
		expect([copy.message, (copy.cause as Error).message, (copy.cause as Error).cause]).toEqual(["a", "b", undefined]);
		const unreadable = Object.defineProperty(new Error("c"), "field", {
			enumerable: true,
			get() {
				throw new Error("no");
			},
		});
		expect(errorToData(unreadable).fields).toEqual({});
		expect(errorToData(new Error("d", { cause: Object.create(null) })).cause?.message).toBe("[object Object]");
		expect(errorToData(Object.create(null)).message).toBe("[object Object]");
		for (const name of ["toString", "constructor", "__proto__"]) {
			const rebuilt = errorFromData({ name, message: "m", fields: {} });
			expect([rebuilt.constructor, rebuilt.name]).toEqual([Error, name]);
		}
	});

	it("every class of errors.ts comes back as itself (a new one must be added to the wire's table)", () => {
		expect(TYPED.length).toBeGreaterThan(10);
		for (const type of TYPED) {
			const original = Object.assign(Reflect.construct(Error, ["m"], type) as Error, { name: type.name });
			const copy = acrossThreads(original);
			expect([copy.constructor, copy.name], type.name).toEqual([type, type.name]);
		}
		// A caller's bad argument stays a TypeError on the far side too, as pi's checks throw.
		expect(acrossThreads(new InvalidArgumentError("bad"))).toBeInstanceOf(TypeError);
	});

	it("built-in classes, aborts, unknown names and thrown non-errors", () => {
		expect(acrossThreads(new RangeError("far"))).toBeInstanceOf(RangeError);
		const aborted = acrossThreads(new DOMException("stop", "AbortError"));
		expect([aborted instanceof DOMException, aborted.name, aborted.message]).toEqual([true, "AbortError", "stop"]);
		const custom = acrossThreads(Object.assign(new Error("x"), { name: "SomethingElseError" }));
		expect([custom.constructor, custom.name]).toEqual([Error, "SomethingElseError"]);
		expect(errorToData("plain string")).toEqual({ name: "Error", message: "plain string", fields: {} });
	});
});
