/**
 * Batches (`runBatch`, the worker host's): a batch of the wrong shape is refused whole before anything is
 * applied, in-process and through the worker; and the client sends every batchable method through them.
 * (Each call's own outcome, and messages as byte ranges: test/encoded-message.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { startEngineWorker } from "../adapters/worker.ts";
import { runBatch } from "../adapters/worker-batch.ts";
import { BATCHABLE_METHODS, type BatchCall, type BatchResult } from "../adapters/worker-wire.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { APPEND_METHODS } from "../src/append-methods.ts";
import { InvalidArgumentError } from "../src/errors.ts";
import { Engine } from "../src/index.ts";
import { assistantMessage, userMessage } from "./support/messages.ts";

async function newEngine(): Promise<Engine> {
	return new Engine({ storage: await createMemoryStorage(), agentDir: "/agent" });
}

describe("runBatch", () => {
	it("a batch whose shape is wrong anywhere is refused whole: no call before the bad one is applied", async () => {
		const engine = await newEngine();
		const { handle } = await engine.create({ cwd: "/p" });
		const good: BatchCall = { method: "appendCustomEntry", args: [handle, "x", 1] };
		const bad: unknown[] = [
			{ method: "appendEncodedMessages", args: [handle, 0, "not ends", []] },
			{ method: "appendEncodedMessages", args: [handle, 0, [1, 2], ["user"]] }, // fewer roles than messages
			{ method: "closeAll", args: [] }, // not batchable
			{ method: "appendMessage" }, // no arguments
			null,
		];
		for (const call of bad) {
			await expect(runBatch(engine, [good, good, call as BatchCall], new Uint8Array(2))).rejects.toThrow(
				InvalidArgumentError,
			);
		}
		await expect(runBatch(engine, "calls" as never)).rejects.toThrow(InvalidArgumentError);
		expect(await engine.getBranch(handle)).toEqual([]);
		await engine.flush(handle);
		await engine.closeAll();
	});

	it("every batchable method is the tree's appends, branch and resetLeaf", () => {
		expect(BATCHABLE_METHODS).toEqual([...APPEND_METHODS, "branch", "resetLeaf"]);
	});
});

describe("batches through the worker", () => {
	it("a malformed batch sent to the worker is refused whole: the caller's rejection means nothing was written", async () => {
		const { engine, terminate } = await startEngineWorker({ storage: "memory" });
		try {
			const { handle } = await engine.inMemory("/p");
			const hosted = engine as unknown as { runBatch(calls: BatchCall[]): Promise<BatchResult[]> };
			const sent = hosted.runBatch([
				{ method: "appendCustomEntry", args: [handle, "before", 1] },
				{ method: "appendEncodedMessages", args: [handle, 0, "not ends", []] },
			]);
			await expect(sent).rejects.toThrow(InvalidArgumentError);
			expect(await engine.getBranch(handle)).toEqual([]);
		} finally {
			await terminate();
		}
	});

	it("the client sends every append kind, branch and resetLeaf issued in one tick as one runBatch", async () => {
		const sent: { path?: string[] }[] = [];
		const post = MessagePort.prototype.postMessage;
		const { engine, terminate } = await startEngineWorker({ storage: "memory" });
		MessagePort.prototype.postMessage = function (this: MessagePort, message: unknown, ...rest: never[]) {
			if ((message as { path?: unknown })?.path) sent.push(message as { path?: string[] });
			return post.call(this, message, ...rest);
		} as typeof post;
		try {
			const { handle } = await engine.inMemory("/p");
			const root = await engine.appendCustomEntry(handle, "root");
			sent.length = 0;
			const usage = assistantMessage("u").usage;
			const calls = [
				engine.appendMessage(handle, userMessage("hi", 1)),
				engine.appendThinkingLevelChange(handle, "high"),
				engine.appendModelChange(handle, "p", "m"),
				engine.appendCompaction(handle, "summary", root, 10),
				engine.appendUsage(handle, "kind", "p", "m", usage),
				engine.appendContextEdit(handle, root, null),
				engine.appendCustomEntry(handle, "x", { n: 1 }),
				engine.appendCustomMessageEntry(handle, "x", "text", true),
				engine.appendSessionInfo(handle, "name"),
				engine.appendLabelChange(handle, root, "label"),
				engine.branchWithSummary(handle, root, "summary"),
				engine.branch(handle, root),
				engine.resetLeaf(handle),
			];
			const outcomes = await Promise.allSettled(calls);
			expect(sent.map((message) => message.path?.join("."))).toEqual(["runBatch"]);
			// Every one was applied there (the context edit of a custom entry is refused, as in-process).
			const rejected = outcomes.flatMap((outcome, index) => (outcome.status === "rejected" ? [index] : []));
			expect(rejected).toEqual([5]);
			expect((await engine.getBranch(handle)).length).toBe(0);
		} finally {
			MessagePort.prototype.postMessage = post;
			await terminate();
		}
	});
});
