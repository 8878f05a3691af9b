/**
 * Calls whose arguments or answer cannot be read on the other side of the worker (Node fires
 * `messageerror` for a value nested deeper than the receiving thread's stack can deserialise): each
 * rejects with `UnreadableMessageError` instead of waiting forever, and the worker goes on serving.
 */
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { nodeWorkerEntryUrl, startEngineWorker, UnreadableMessageError } from "../adapters/worker.ts";
import { userMessage } from "./support/messages.ts";

const encoder = new TextEncoder();

/** JSON text of a value nested `depth` objects deep. */
const deepJson = (depth: number): string => `${'{"c":'.repeat(depth)}0${"}".repeat(depth)}`;

/** A value nested `depth` objects deep. */
function deepValue(depth: number): unknown {
	let value: unknown = 0;
	for (let i = 0; i < depth; i++) value = { c: value };
	return value;
}

/** `promise`'s outcome, or "pending" if it has not settled within `ms`: a hang fails instead of timing out the test. */
async function settledWithin(
	promise: Promise<unknown>,
	ms = 10_000,
): Promise<PromiseSettledResult<unknown> | "pending"> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const pending = new Promise<"pending">((resolve) => {
		timer = setTimeout(() => resolve("pending"), ms);
	});
	const [outcome] = await Promise.race([Promise.allSettled([promise]), pending.then((p) => [p] as const)]);
	clearTimeout(timer);
	return outcome as PromiseSettledResult<unknown> | "pending";
}

function reasonOf(outcome: PromiseSettledResult<unknown> | "pending"): unknown {
	return outcome !== "pending" && outcome.status === "rejected" ? outcome.reason : outcome;
}

describe("messages that cannot be read on arrival", () => {
	it("an entry too deep for this thread to receive never becomes an answer: skipped on read as too-deep; the engine goes on", async () => {
		const { engine, terminate } = await startEngineWorker({ storage: "memory" });
		try {
			// 5,000 levels: more than this thread can deserialise, so it must not be read into the tree at all.
			const header = '{"type":"session","version":3,"id":"deep","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}';
			const entry = `{"type":"custom","customType":"deep","id":"aaaaaaaa","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","data":${deepJson(5000)}}`;
			await engine.importSessionFile("/deep.jsonl", encoder.encode(`${header}\n${entry}\n`));
			const { handle } = await engine.open("/deep.jsonl");
			expect(await settledWithin(engine.getEntry(handle, "aaaaaaaa"))).toEqual({
				status: "fulfilled",
				value: undefined,
			});
			const diagnostics = await engine.getDiagnostics(handle);
			expect(diagnostics.map((d) => [d.reason, d.line])).toEqual([["too-deep", 2]]);
			expect(await engine.getOutline(handle)).toEqual([]);
			expect(await engine.appendMessage(handle, userMessage("after", 1))).toMatch(/^[0-9a-f]{8}$/);
		} finally {
			await terminate();
		}
	});

	it("arguments too deep for the worker's stack: the call rejects (direct, or a whole batch) and nothing is applied", async () => {
		// A small stack in the worker: this thread serialises what the worker cannot deserialise.
		const worker = new Worker(nodeWorkerEntryUrl(), { resourceLimits: { stackSizeMb: 1 } });
		const { engine, terminate } = await startEngineWorker({ storage: "memory", worker });
		try {
			const { handle } = await engine.inMemory("/p");
			const deep = deepValue(2000);
			const direct = reasonOf(await settledWithin(engine.create({ cwd: "/q", deep } as never)));
			expect(direct).toBeInstanceOf(UnreadableMessageError);
			expect([(direct as UnreadableMessageError).method, (direct as UnreadableMessageError).part]).toEqual([
				"create",
				"arguments",
			]);
			const batch = [
				engine.appendMessage(handle, userMessage("same batch", 1)),
				engine.appendCustomEntry(handle, "deep", deep),
			];
			const reasons = await Promise.all(batch.map(async (call) => reasonOf(await settledWithin(call))));
			for (const reason of reasons) expect(reason).toBeInstanceOf(UnreadableMessageError);
			expect((reasons[0] as UnreadableMessageError).method).toBe("runBatch");
			expect(await engine.getBranch(handle)).toEqual([]);
			expect(await engine.openHandles()).toEqual([handle]);
		} finally {
			await terminate();
		}
	});
});
