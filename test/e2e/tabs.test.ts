/**
 * One writer across tabs, in Chromium: pages of one browser context share an origin, so its OPFS and its
 * Web Locks. A second tab opening a session for writing is refused with `SessionLockedError` and can open
 * it read-only; once the first tab is closed, or its renderer crashes, the lock is gone and the second tab
 * writes. A tab closed in the middle of a burst of appends loses none that it had acknowledged.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { launchPersistentChromium } from "../support/chromium.ts";
import { stagePackage } from "../support/stage-package.ts";
import { serveStatic } from "../support/vite-servers.ts";

const app = fileURLToPath(new URL("./app", import.meta.url));

let project: string;
let origin: string;
let close: () => Promise<void>;
let context: BrowserContext;

beforeAll(async () => {
	project = await mkdtemp(join(tmpdir(), "pi-tabs-"));
	await cp(app, project, { recursive: true });
	await stagePackage(project);
	const server = await serveStatic(project, project);
	origin = server.url;
	close = () => server.close();
}, 120_000);

afterAll(async () => {
	await context?.close();
	await close?.();
	await rm(project, { recursive: true, force: true });
});

beforeEach(async () => {
	await context?.close();
	// A fresh browser on a fresh profile each test: its own, empty origin-private file system, on disk as in
	// a user's ordinary tab (an off-the-record context keeps it in memory).
	context = await launchPersistentChromium(await mkdtemp(join(project, "profile-")));
});

/** A tab with the engine worker started on OPFS (`window.engineWorker`). */
async function openTab(): Promise<Page> {
	const page = await context.newPage();
	await page.goto(`${origin}tabs.html`);
	await page.waitForFunction(() => document.body.dataset.ready === "yes");
	await page.evaluate(async () => {
		const w = window as unknown as Record<string, unknown>;
		const start = w.startEngineWorker as (config: { storage: string }) => Promise<unknown>;
		w.engineWorker = await start({ storage: "opfs" });
	});
	return page;
}

/** A session with a user and an assistant message (so its file exists), open for writing in `page`. */
async function createSession(page: Page): Promise<{ path: string; handle: string }> {
	return page.evaluate(async () => {
		const { engine } = (window as unknown as { engineWorker: { engine: EngineLike } }).engineWorker;
		const { handle, path } = await engine.create({ cwd: "/project" });
		await engine.appendMessage(handle, { role: "user", content: "first", timestamp: 1 });
		await engine.appendMessage(handle, assistantMessage("answer"));
		return { handle, path };

		function assistantMessage(text: string) {
			const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
			return {
				role: "assistant",
				content: [{ type: "text", text }],
				api: "anthropic-messages",
				provider: "anthropic",
				model: "m",
				usage: { ...zero, totalTokens: 0, cost: { ...zero, total: 0 } },
				stopReason: "stop",
				timestamp: 2,
			};
		}
	});
}

/** What opening `path` in `page` gives: the summary's fields, or the error's name and message. */
function tryOpen(page: Page, path: string, readOnly = false): Promise<OpenOutcome> {
	return page.evaluate(
		async ({ path, readOnly }) => {
			const { engine } = (window as unknown as { engineWorker: { engine: EngineLike } }).engineWorker;
			try {
				const { handle, readOnly: opened } = await engine.open(path, { readOnly });
				const texts = (await engine.getBranch(handle)).map((entry) => JSON.stringify(entry.message?.content));
				return { handle, readOnly: opened, texts };
			} catch (error) {
				return { error: `${(error as Error).name}: ${(error as Error).message}` };
			}
		},
		{ path, readOnly },
	);
}

type OpenOutcome = { handle: string; readOnly: boolean; texts: string[] } | { error: string };

/** The engine as the page script uses it (the test's code runs in the page; these are its types). */
interface EngineLike {
	create(options: { cwd: string }): Promise<{ handle: string; path: string }>;
	open(path: string, options: { readOnly: boolean }): Promise<{ handle: string; readOnly: boolean }>;
	appendMessage(handle: string, message: unknown): Promise<string>;
	getBranch(handle: string): Promise<{ id: string; message?: { content: unknown } }[]>;
}

interface Closing {
	close(handle: string): Promise<void>;
}

/** Open `path` for writing in `page`, trying again while it is locked (the other holder is going away). */
async function openOnceFree(page: Page, path: string): Promise<OpenOutcome> {
	for (let attempt = 0; ; attempt++) {
		const outcome = await tryOpen(page, path);
		if (!("error" in outcome) || !outcome.error.startsWith("SessionLockedError") || attempt === 50) return outcome;
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

describe("one writer across tabs (OPFS + Web Locks)", () => {
	it("a second tab is refused the lock, reads the session read-only, and writes once the first tab is closed", async () => {
		const first = await openTab();
		const second = await openTab();
		const { path } = await createSession(first);
		const refused = await tryOpen(second, path);
		expect("error" in refused && refused.error).toMatch(
			/^SessionLockedError: .* is locked by another tab or worker of this origin .*open it read-only/,
		);
		const readOnly = await tryOpen(second, path, true);
		expect(readOnly).toMatchObject({ readOnly: true, texts: ['"first"', '[{"type":"text","text":"answer"}]'] });
		await first.close();
		const taken = await openOnceFree(second, path);
		expect(taken).toMatchObject({ readOnly: false, texts: ['"first"', '[{"type":"text","text":"answer"}]'] });
	});

	it("two tabs opening one session for writing at the same moment: exactly one gets it", async () => {
		const owner = await openTab();
		const { path } = await createSession(owner);
		await owner.close(); // the session is free now
		const tabs = await Promise.all([openTab(), openTab(), openTab()]);
		// Wait until the closed tab's lock is gone, read-only (that takes no lock), then all at once.
		await openOnceFree(tabs[0] as Page, path).then(async (outcome) => {
			if ("error" in outcome) throw new Error(outcome.error);
			await (tabs[0] as Page).evaluate(async (handle) => {
				const { engine } = (window as unknown as { engineWorker: { engine: EngineLike & Closing } }).engineWorker;
				await engine.close(handle);
			}, outcome.handle);
		});
		const outcomes = await Promise.all(tabs.map((tab) => tryOpen(tab, path)));
		const winners = outcomes.filter((outcome) => !("error" in outcome));
		const refusals = outcomes.flatMap((outcome) => ("error" in outcome ? [outcome.error] : []));
		expect(winners).toHaveLength(1);
		expect(refusals).toEqual([
			expect.stringMatching(/^SessionLockedError/),
			expect.stringMatching(/^SessionLockedError/),
		]);
	});

	it("a tab whose renderer crashes lets go of its lock", async () => {
		const first = await openTab();
		const second = await openTab();
		const { path } = await createSession(first);
		expect(await tryOpen(second, path)).toMatchObject({ error: expect.stringMatching(/^SessionLockedError/) });
		const cdp = await context.newCDPSession(first);
		const crashed = first.waitForEvent("crash");
		// The command is never answered: the crash takes its connection along.
		void cdp.send("Page.crash").catch(() => undefined);
		await crashed;
		const taken = await openOnceFree(second, path);
		expect(taken).toMatchObject({ readOnly: false, texts: ['"first"', '[{"type":"text","text":"answer"}]'] });
	});

	it.each([
		["awaited one by one", 1],
		["pipelined, 50 a tick (batches)", 50],
	])("a tab closed in the middle of a burst of appends (%s) loses none it acknowledged", async (_kind, perTick) => {
		const first = await openTab();
		const acknowledged: string[] = [];
		await first.exposeFunction("acknowledge", (id: string, text: string) => acknowledged.push(`${id} ${text}`));
		const { path, handle } = await createSession(first);
		// Appends, `perTick` issued together and then awaited, each acknowledged to the test as soon as it
		// resolves; the loop runs until the tab is closed.
		await first.evaluate(
			({ handle, perTick }) => {
				const w = window as unknown as {
					engineWorker: { engine: EngineLike };
					acknowledge(id: string, t: string): void;
				};
				void (async () => {
					for (let n = 0; ; n += perTick) {
						const texts = Array.from({ length: perTick }, (_, k) => `burst ${n + k} ${"x".repeat(400)}`);
						await Promise.all(
							texts.map(async (text) => {
								const message = { role: "user", content: text, timestamp: 3 };
								w.acknowledge(await w.engineWorker.engine.appendMessage(handle, message), text);
							}),
						);
					}
				})();
			},
			{ handle, perTick },
		);
		while (acknowledged.length < 300) await new Promise((resolve) => setTimeout(resolve, 20));
		await first.close();
		const seen = [...acknowledged];
		const second = await openTab();
		const reopened = await second.evaluate(async (path) => {
			const { engine } = (window as unknown as { engineWorker: { engine: EngineLike } }).engineWorker;
			for (let attempt = 0; attempt < 50; attempt++) {
				try {
					const { handle } = await engine.open(path, { readOnly: false });
					return (await engine.getBranch(handle)).map((entry) => `${entry.id} ${entry.message?.content}`);
				} catch (error) {
					if ((error as Error).name !== "SessionLockedError") throw error;
					await new Promise((resolve) => setTimeout(resolve, 100));
				}
			}
			throw new Error("the closed tab's lock was never released");
		}, path);
		const kept = new Set(reopened);
		expect(seen.length).toBeGreaterThanOrEqual(300);
		expect(seen.filter((line) => !kept.has(line))).toEqual([]);
		console.log(`closed mid-burst: ${seen.length} appends acknowledged, ${reopened.length - 2} found on reopening`);
	});
});
