/**
 * What the page does with the engine worker: start it on the storage named in `?storage=` (default
 * memory), write a session, end the worker, start a new one and read the session back. The outcome goes
 * to `document.body.dataset.result` as JSON, for the test to read.
 */
export async function run(startEngineWorker) {
	const storage = new URLSearchParams(location.search).get("storage") ?? "memory";
	try {
		const first = await startEngineWorker({ storage });
		const { handle, path } = await first.engine.create({ cwd: "/project" });
		await first.engine.appendMessage(handle, { role: "user", content: "hello from the page", timestamp: 1 });
		await first.engine.appendMessage(handle, {
			role: "assistant",
			content: [{ type: "text", text: "hi" }],
			api: "anthropic-messages",
			provider: "anthropic",
			model: "m",
			usage: {
				input: 1,
				output: 1,
				cacheRead: 0,
				cacheWrite: 0,
				totalTokens: 2,
				cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
			},
			stopReason: "stop",
			timestamp: 2,
		});
		const messages = (await first.engine.getContext(handle)).messages.length;
		await first.terminate();
		let reopened = null;
		if (storage !== "memory") {
			const second = await startEngineWorker({ storage });
			const { handle: again } = await second.engine.open(path);
			reopened = (await second.engine.getContext(again)).messages.length;
			await second.terminate();
		}
		document.body.dataset.result = JSON.stringify({ ok: true, messages, reopened });
	} catch (error) {
		document.body.dataset.result = JSON.stringify({ ok: false, error: `${error?.name}: ${error?.message}` });
	}
}
