/**
 * The locks of a worker that died: its engine's lock files are stale once the worker is gone, so this
 * thread and workers started later can open those sessions for writing (before, they stayed locked until
 * the process ended, and the error named this very process's pid as the other writer).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import { createNodeLocks, createNodeStorage } from "../adapters/node.ts";
import { EngineWorkerError, nodeWorkerEntryUrl, startEngineWorker } from "../adapters/worker.ts";
import { Session } from "../src/index.ts";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("a worker that dies holding locks", () => {
	it("leaves them stale: this thread and a new worker can write those sessions", async () => {
		const agentDir = mkdtempSync(join(tmpdir(), "pst-dead-worker-"));
		dirs.push(agentDir);
		const thread = new Worker(nodeWorkerEntryUrl());
		const { engine } = await startEngineWorker({ storage: "node", agentDir, worker: thread });
		const { handle, path } = await engine.create({ cwd: "/p" });
		await engine.appendMessage(handle, { role: "user", content: "before the crash", timestamp: 1 });
		const lockOwner = JSON.parse(readFileSync(`${path}.lock`, "utf8"));
		expect(lockOwner.thread).toBe(thread.threadId);
		await thread.terminate(); // the worker dies without closing anything
		await expect(engine.summary(handle)).rejects.toBeInstanceOf(EngineWorkerError);

		const storage = createNodeStorage();
		const session = await Session.open(storage, path as string, { locks: createNodeLocks(storage) });
		await session.appendMessage({ role: "assistant", content: [], timestamp: 2 } as never);
		await session.close();

		const next = await startEngineWorker({ storage: "node", agentDir });
		try {
			// This thread released its lock; take it in this thread again, then kill a worker holding one.
			const opened = await next.engine.open(path as string);
			expect(opened.entryCount).toBe(2);
		} finally {
			await next.terminate();
		}
	});

	it("a lock of a live worker is refused, naming the worker's thread, not this process as another writer", async () => {
		const agentDir = mkdtempSync(join(tmpdir(), "pst-live-worker-"));
		dirs.push(agentDir);
		const { engine, terminate } = await startEngineWorker({ storage: "node", agentDir });
		try {
			const { path } = await engine.create({ cwd: "/p" });
			const storage = createNodeStorage();
			const refused = await Session.open(storage, path as string, {
				create: true,
				locks: createNodeLocks(storage),
			}).then(
				() => undefined,
				(error: unknown) => error,
			);
			expect((refused as Error).name).toBe("SessionLockedError");
			expect((refused as Error).message).toMatch(/thread \d+ of this process \(pid \d+\), a worker's engine/);
		} finally {
			await terminate();
		}
	});
});
