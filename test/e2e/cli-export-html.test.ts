/**
 * The page `pi-sessions export --format html` writes, opened from a file:// URL in Chromium: the
 * navigator lists every entry (labels and the current leaf marked), and clicking entries on different
 * branches shows each one's branch root → entry in the main pane. A hostile session's text shows as text:
 * no script of it runs (`window.__pwned` stays unset, no dialog opens), no element of it exists, and the
 * page asks for nothing over the network. A 50,000-entry path builds its navigator (no recursion) and
 * draws the tail of its branch. Screenshots go to test/e2e/screenshots/.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeStorage } from "../../adapters/node.ts";
import { Session } from "../../src/index.ts";
import { launchChromium } from "../support/chromium.ts";
import { CLI, runCli } from "../support/cli.ts";
import { HOSTILE, type HostileSession, writeHostileSession } from "../support/hostile-session.ts";

const screenshotDir = fileURLToPath(new URL("./screenshots/", import.meta.url));
const BIG = 50_000;

let browser: Browser;
let dir: string;
let hostile: HostileSession;

interface Watched {
	page: Page;
	dialogs: string[];
	requests: string[];
	errors: string[];
}

/** Export `session` to an HTML file and open it, watching for dialogs, requests and page errors. */
async function openExport(session: string, name: string, extra: string[] = []): Promise<Watched> {
	const file = join(dir, `${name}.html`);
	const run = runCli("node", ["export", session, "--format", "html", "-o", file, ...extra]);
	expect(run.status, run.stderr).toBe(0);
	const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
	const watched: Watched = { page, dialogs: [], requests: [], errors: [] };
	page.on("dialog", (dialog) => {
		watched.dialogs.push(dialog.message());
		void dialog.dismiss();
	});
	page.on("request", (request) => {
		if (!request.url().startsWith("file:")) watched.requests.push(request.url());
	});
	page.on("pageerror", (error) => watched.errors.push(error.message));
	page.on("console", (message) => {
		if (message.type() === "error") watched.errors.push(message.text());
	});
	await page.goto(pathToFileURL(file).href);
	await page.waitForSelector("#navigator .row");
	return watched;
}

/** The ids of the entries the main pane shows, top to bottom. */
function shown(page: Page): Promise<string[]> {
	return page.$$eval("#branch article.entry", (articles) =>
		articles.map((article) => (article as HTMLElement).dataset.id ?? ""),
	);
}

async function click(page: Page, id: string): Promise<void> {
	await page.click(`#navigator .row[data-id="${id}"]`);
	await page.waitForFunction(
		(id) => document.querySelector(`#navigator .row.selected`)?.getAttribute("data-id") === id,
		id,
	);
}

async function screenshot(page: Page, name: string): Promise<void> {
	await mkdir(screenshotDir, { recursive: true });
	await page.screenshot({ path: join(screenshotDir, `${name}.png`) });
}

async function branchIds(path: string, leaf: string): Promise<string[]> {
	const session = await Session.open(createNodeStorage(), path, { readOnly: true });
	try {
		return (await session.getBranch(leaf)).map((entry) => entry.id);
	} finally {
		await session.close();
	}
}

beforeAll(async () => {
	if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npx tsup first`);
	dir = await mkdtemp(join(tmpdir(), "pi-export-html-"));
	hostile = await writeHostileSession();
	browser = await launchChromium();
}, 60_000);

afterAll(async () => {
	await browser?.close();
	if (dir) await rm(dir, { recursive: true, force: true });
	if (hostile) await rm(hostile.dir, { recursive: true, force: true });
});

describe("the exported HTML page in Chromium", () => {
	it("a hostile session: branches by click, its text as text, none of its scripts run", async () => {
		const { page, dialogs, requests, errors } = await openExport(hostile.path, "hostile");
		const all = [hostile.root, ...hostile.first, ...hostile.second];
		const rows = await page.$$eval("#navigator .row", (rows) => rows.map((row) => (row as HTMLElement).dataset.id));
		expect(new Set(rows)).toEqual(new Set(all));
		expect(rows).toHaveLength(all.length);
		expect(await page.title()).toBe(HOSTILE.name);
		// The root carries its label as text; the current leaf is marked.
		expect(await page.textContent(`#navigator .row[data-id="${hostile.root}"] .badge`)).toBe(HOSTILE.label);
		expect(await page.textContent(`#navigator .row[data-id="${hostile.leaf}"] .badge.leaf`)).toBe("leaf");

		// First the current leaf's branch (the second one).
		expect(await shown(page)).toEqual([hostile.root, ...hostile.second]);
		const rootText = await page.textContent(`#branch article[data-id="${hostile.root}"] .text`);
		expect(rootText).toBe(hostile.userTexts.first[0]);

		// An entry of the first branch: its branch, with the tool call and result as text.
		const firstUser = hostile.first[2] as string;
		await click(page, firstUser);
		expect(await shown(page)).toEqual([hostile.root, ...hostile.first.slice(0, 3)]);
		const code = await page.$$eval("#branch pre code", (codes) => codes.map((code) => code.textContent));
		expect(code.join("\n")).toContain(HOSTILE.script);
		expect(code.join("\n")).toContain(HOSTILE.svg);
		expect(await page.textContent(`#branch article[data-id="${firstUser}"] .text`)).toBe(hostile.userTexts.first[1]);
		expect(await page.$$eval("#navigator .row.on-path", (rows) => rows.length)).toBe(4);
		await screenshot(page, "cli-export-hostile-first-branch");

		// Back on the second branch, at its first entry.
		await click(page, hostile.second[0] as string);
		expect(await shown(page)).toEqual([hostile.root, hostile.second[0]]);
		// And the end of the first branch (the session name entry).
		await click(page, hostile.first[5] as string);
		expect(await shown(page)).toEqual([hostile.root, ...hostile.first]);
		await screenshot(page, "cli-export-hostile");

		await page.hover(`#navigator .row[data-id="${hostile.root}"] .badge`);
		expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
		expect(await page.$$eval("img, svg, iframe, b", (found) => found.length)).toBe(0);
		expect(await page.$$eval("script", (scripts) => scripts.length)).toBe(2);
		expect(dialogs).toEqual([]);
		expect(requests).toEqual([]);
		expect(errors).toEqual([]);
		await page.close();
	});

	it("the bundled blog sample: --leaf picks the branch shown first; both branches by click", async () => {
		const { page, errors } = await openExport("66bc", "blog", ["--samples", "--leaf", "f210746f"]);
		const sample = runCli("node", ["export", "66bc", "--samples", "--format", "jsonl"]).stdout;
		const samplePath = join(dir, "blog.jsonl");
		await writeFile(samplePath, sample);
		expect(await shown(page)).toEqual(await branchIds(samplePath, "f210746f"));
		await click(page, "84a0d3e6");
		expect(await shown(page)).toEqual(await branchIds(samplePath, "84a0d3e6"));
		expect(await page.textContent("#branch")).toContain("Keep a second stylesheet, dark.css");
		expect(await page.textContent('#navigator .row[data-id="84a0d3e6"] .badge.leaf')).toBe("leaf");
		expect(await page.textContent('#navigator .row[data-id="362195bb"] .badge')).toBe("works");
		await click(page, "66a1e0ae");
		expect(await shown(page)).toEqual(await branchIds(samplePath, "66a1e0ae"));
		expect(await page.textContent("#branch")).not.toContain("Keep a second stylesheet");
		await screenshot(page, "cli-export-blog");
		expect(errors).toEqual([]);
		await page.close();
	});

	it(`a path of ${BIG} entries: the navigator is built and the branch's tail drawn`, async () => {
		const lines = [
			JSON.stringify({ type: "session", version: 3, id: "big", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/big" }),
		];
		const id = (index: number) => index.toString(16).padStart(8, "0");
		for (let index = 0; index < BIG; index++) {
			const timestamp = new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString();
			const message = { role: "user", content: `message ${index}`, timestamp: Date.parse(timestamp) };
			lines.push(
				JSON.stringify({
					type: "message",
					id: id(index),
					parentId: index === 0 ? null : id(index - 1),
					timestamp,
					message,
				}),
			);
		}
		const path = join(dir, "big.jsonl");
		await writeFile(path, `${lines.join("\n")}\n`);
		const { page, errors } = await openExport(path, "big");
		expect(await page.$$eval("#navigator .row", (rows) => rows.length)).toBe(BIG);
		const ids = await shown(page);
		expect(ids).toHaveLength(500);
		expect(ids[ids.length - 1]).toBe(id(BIG - 1));
		await page.click("#branch button.earlier");
		expect(await shown(page)).toHaveLength(1000);
		await click(page, id(10));
		expect(await shown(page)).toEqual(Array.from({ length: 11 }, (_, index) => id(index)));
		expect(errors).toEqual([]);
		await page.close();
	}, 120_000);
});
