import { describe, expect, test } from "vitest";
import { trackProgress } from "../src/engine-progress.ts";

/** A callback on another thread: each call answers with a promise that the test settles. */
function remoteCallback() {
	const answers: { resolve: () => void; reject: (error: unknown) => void }[] = [];
	const callback = (_done: number, _total: number) =>
		new Promise<void>((resolve, reject) => {
			answers.push({ resolve, reject });
		});
	return { callback: callback as (done: number, total: number) => void, answers };
}

describe("trackProgress", () => {
	test("without a callback there is nothing to wait for", async () => {
		const progress = trackProgress(undefined);
		expect(progress.callback).toBeUndefined();
		await expect(progress.settled()).resolves.toBeUndefined();
	});

	test("settled waits for the last answer", async () => {
		const remote = remoteCallback();
		const progress = trackProgress(remote.callback);
		progress.callback?.(1, 2);
		progress.callback?.(2, 2);
		let settled = false;
		const waiting = progress.settled().then(() => {
			settled = true;
		});
		remote.answers[0]?.resolve();
		await Promise.resolve();
		await Promise.resolve();
		expect(settled).toBe(false);
		remote.answers[1]?.resolve();
		await waiting;
		expect(settled).toBe(true);
	});

	test("a failed answer fails the work, and the first failure is the one reported", async () => {
		const remote = remoteCallback();
		const progress = trackProgress(remote.callback);
		progress.callback?.(1, 3);
		progress.callback?.(2, 3);
		remote.answers[0]?.reject(new RangeError("first"));
		remote.answers[1]?.reject(new RangeError("second"));
		await expect(progress.settled()).rejects.toThrow("first");
	});

	test("a cancellation that arrives while the last answer is awaited cancels the work", async () => {
		const remote = remoteCallback();
		const progress = trackProgress(remote.callback);
		const controller = new AbortController();
		progress.callback?.(1, 1);
		const waiting = progress.settled(controller.signal);
		controller.abort(new RangeError("stop"));
		remote.answers[0]?.resolve();
		await expect(waiting).rejects.toThrow("stop");
	});

	test("a signal that was never aborted lets the work finish", async () => {
		const remote = remoteCallback();
		const progress = trackProgress(remote.callback);
		progress.callback?.(1, 1);
		remote.answers[0]?.resolve();
		await expect(progress.settled(new AbortController().signal)).resolves.toBeUndefined();
	});
});
