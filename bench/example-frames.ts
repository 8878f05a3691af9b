/**
 * The browser example (examples/browser/) with a 100 MB session: how long importing it (the file picker)
 * and opening it take, and the page's worst frame and long tasks meanwhile. Built app and dev server, in
 * Chromium on a fresh profile on disk each round. The session is the generated one of `bench/generate.ts`
 * (59,556 entries, 100.04 MB). Goal (issue 11): no frame over 50 ms.
 * Run: `npm run bench:example` (`npx tsx bench/example-frames.ts [rounds]`, default 3).
 * @module
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chooseFiles, idle, load, openListed, treeSummary } from "../test/e2e/example/driver.ts";
import { copyExample, serveBuilt, serveDev } from "../test/e2e/example/serve.ts";
import { launchPersistentChromium } from "../test/support/chromium.ts";
import { generateLinearSession } from "./generate.ts";
import { median } from "./worker-support.ts";

interface Round {
	importMs: number;
	openMs: number;
	worstFrameMs: number;
	longTasksMs: number[];
}

const rounds = Number(process.argv[2] ?? 3);
const scratch = await mkdtemp(join(tmpdir(), "pi-example-bench-"));
const session = generateLinearSession();
const file = join(scratch, "2025-01-01T00-00-00-000Z_big-100mb.jsonl");
await writeFile(file, `${session.lines.join("\n")}\n`);

/** One round: a fresh browser, import the file, open it, read the page's frame monitor and long tasks. */
async function round(url: string): Promise<Round> {
	const context = await launchPersistentChromium(await mkdtemp(join(scratch, "profile-")));
	try {
		const page = await context.newPage();
		await load(page, url);
		await page.evaluate(() => {
			const w = window as unknown as { longTasks: number[]; __resetFrameMonitor(): void };
			w.longTasks = [];
			new PerformanceObserver((list) => {
				for (const entry of list.getEntries()) w.longTasks.push(Math.round(entry.duration));
			}).observe({ type: "longtask" });
			w.__resetFrameMonitor();
		});
		const started = performance.now();
		await chooseFiles(page, [file]);
		await idle(page);
		const imported = performance.now();
		const paths = await page.evaluate(() =>
			Array.from(document.querySelectorAll("[data-path]"), (row) => (row as HTMLElement).dataset.path as string),
		);
		const path = paths.find((p) => p.endsWith("_big-100mb.jsonl"));
		if (!path) throw new Error(`the imported session is not listed (${paths.join(", ")})`);
		await openListed(page, path);
		await idle(page);
		const opened = performance.now();
		// The answer first: the tree the page shows has every entry of the session.
		const { entries } = await treeSummary(page);
		if (entries !== session.records.length - 1) throw new Error(`the page shows ${entries} entries`);
		const shown = await page.evaluate(() => ({
			worst: (window as unknown as { __worstFrameMs: number }).__worstFrameMs,
			long: (window as unknown as { longTasks: number[] }).longTasks,
		}));
		return {
			importMs: imported - started,
			openMs: opened - imported,
			worstFrameMs: shown.worst,
			longTasksMs: shown.long,
		};
	} finally {
		await context.close();
	}
}

const { project, remove } = await copyExample();
try {
	const servers = { built: await serveBuilt(project), dev: await serveDev(project) };
	const results: Record<string, Round[]> = { built: [], dev: [] };
	for (let n = 0; n < rounds; n++) {
		for (const mode of ["built", "dev"] as const) results[mode]?.push(await round(servers[mode].url));
	}
	console.log(`example app, ${(session.bytes / 1e6).toFixed(2)} MB session, ${rounds} rounds each (median, range)\n`);
	console.log("| app   | import ms | open ms | worst frame ms | long tasks (ms) | goal < 50 ms |");
	console.log("| ----- | --------: | ------: | -------------: | --------------- | ------------ |");
	for (const [mode, list] of Object.entries(results)) {
		const cell = (pick: (r: Round) => number) => {
			const values = list.map(pick).sort((a, b) => a - b);
			return `${median(values).toFixed(0)} (${values[0]?.toFixed(0)}–${values.at(-1)?.toFixed(0)})`;
		};
		const worst = Math.max(...list.map((r) => r.worstFrameMs), ...list.flatMap((r) => r.longTasksMs));
		const long = list.flatMap((r) => r.longTasksMs);
		console.log(
			`| ${mode.padEnd(5)} | ${cell((r) => r.importMs)} | ${cell((r) => r.openMs)} | ${cell((r) => r.worstFrameMs)} | ${long.length ? long.join(", ") : "none"} | ${worst < 50 ? "met" : "not met"} |`,
		);
	}
	await Promise.all(Object.values(servers).map((server) => server.close()));
} finally {
	await remove();
	await rm(scratch, { recursive: true, force: true });
}
