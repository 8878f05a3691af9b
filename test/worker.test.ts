/**
 * The worker on Node, where listeners can be counted and a worker's heap limited: locks between the
 * worker and this thread, signals passed to many calls, and what callers see when the worker runs out
 * of memory.
 * (Terminating and a worker that fails to load are checked on every runtime, in conformance/fixtures.ts.)
 */
import { getEventListeners } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { EngineWorkerError, nodeWorkerEntryUrl, startEngineWorker } from "../adapters/worker.ts";
import { Session, SessionLockedError } from "../src/index.ts";
import { assistantMessage, userMessage } from "./support/messages.ts";

/** The error a promise rejects with (it must reject). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
	return promise.then(
		() => {
			throw new Error("resolved, but should have rejected");
		},
		(error: Error) => error,
	);
}

describe("the engine worker's life", () => {
	it("a session this thread holds open cannot be opened for writing by the worker (another thread)", async () => {
		const dir = mkdtempSync(join(tmpdir(), "pi-worker-lock-"));
		try {
			const here = await Session.create(createNodeStorage(), { cwd: "/p", sessionDir: dir });
			await here.appendMessage(userMessage("hi", 1));
			await here.appendMessage(assistantMessage("hello", { timestamp: 2 }));
			const path = here.path as string;
			const { engine, terminate } = await startEngineWorker({ storage: "node", agentDir: dir });
			await expect(engine.open(path)).rejects.toBeInstanceOf(SessionLockedError);
			const reader = await engine.open(path, { readOnly: true });
			expect(reader.entryCount).toBe(2);
			await here.close();
			const writer = await engine.open(path); // free once this thread let go
			await engine.close(writer.handle);
			await terminate();
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	it("a message holding a function crosses as its JSON does, one whose JSON is no object is refused; custom data holding one fails its whole batch", async () => {
		const { engine, terminate } = await startEngineWorker({ storage: "memory" });
		const { handle } = await engine.create({ cwd: "/p" });
		const withFunction = { ...userMessage("hi", 1), format: () => "hi" };
		const id = await engine.appendMessage(handle, withFunction);
		expect(await engine.getEntry(handle, id)).toMatchObject({ message: userMessage("hi", 1) });
		// A message whose JSON is not an object (text, or nothing for a function) is refused alone, with a
		// TypeError, in a burst with others: no entry that no reader could use is ever written.
		const other = await engine.create({ cwd: "/q" });
		const burst = await Promise.allSettled([
			engine.appendMessage(handle, userMessage("a", 1)),
			engine.appendMessage(other.handle, userMessage("b", 1)),
			engine.appendMessage(handle, { toJSON: () => "as text" } as never),
			engine.appendMessage(handle, (() => 1) as never),
		]);
		expect(burst.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", "rejected", "rejected"]);
		expect(burst.slice(2).map((outcome) => outcome.status === "rejected" && outcome.reason.name)).toEqual([
			"InvalidArgumentError",
			"InvalidArgumentError",
		]);
		const appended = burst.slice(0, 2).map((outcome) => (outcome.status === "fulfilled" ? outcome.value : ""));
		const entries = await Promise.all(
			appended.map((entryId, n) => engine.getEntry(n === 1 ? other.handle : handle, entryId)),
		);
		expect(entries.map((entry) => entry?.type === "message" && entry.message)).toEqual([
			userMessage("a", 1),
			userMessage("b", 1),
		]);
		// Structured clone, not JSON, carries other arguments: the batch they travel in fails together.
		const batch = [
			engine.appendMessage(handle, userMessage("same batch", 2)),
			engine.appendCustomEntry(handle, "x", { format: () => "x" }),
		];
		const failures = await Promise.all(batch.map(rejection));
		expect(failures.map((error) => error.name)).toEqual(["DataCloneError", "DataCloneError"]);
		expect((await engine.getBranch(handle)).length).toBe(2);
		await terminate();
	});

	it("a long-lived AbortSignal passed to many calls keeps no listener once they are done", async () => {
		const { engine, terminate } = await startEngineWorker({ storage: "memory" });
		const signal = new AbortController().signal;
		await Promise.all(Array.from({ length: 50 }, () => engine.list("/nowhere", undefined, signal)));
		expect(getEventListeners(signal, "abort")).toEqual([]);
		const pending = engine.list("/nowhere", undefined, signal);
		expect(getEventListeners(signal, "abort").length).toBe(1); // linked while the call runs
		await pending;
		expect(getEventListeners(signal, "abort")).toEqual([]);
		await terminate();
	});

	it("a worker that runs out of memory: the waiting call and every later one reject; this thread lives on", async () => {
		const worker = new Worker(nodeWorkerEntryUrl(), { resourceLimits: { maxOldGenerationSizeMb: 32 } });
		const { engine, terminate } = await startEngineWorker({ storage: "memory", worker });
		const { handle } = await engine.inMemory("/p");
		// About 200 MB of entries held in the session's tree: far past the worker's 32 MB heap.
		const blob = "x".repeat(1 << 20);
		const appends = Array.from({ length: 200 }, (_, n) => engine.appendCustomEntry(handle, "big", `${n}${blob}`));
		const results = await Promise.allSettled(appends);
		const failures = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
		expect(failures.length).toBeGreaterThan(0);
		for (const { reason } of failures) expect(reason).toBeInstanceOf(EngineWorkerError);
		const [first] = failures;
		expect(String((first as PromiseRejectedResult).reason.cause)).toMatch(/memory/i);
		expect(await rejection(engine.openHandles())).toBeInstanceOf(EngineWorkerError);
		await terminate(); // resolves: nothing is left to wait for
	});
});
