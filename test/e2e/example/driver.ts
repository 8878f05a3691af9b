/**
 * Driving the example page with Playwright as a person would (its file input, drops, clicks, downloads),
 * and reading back what it shows. Every action waits until the page is idle again (`body[data-busy]` is
 * 0) and fails with the page's own error message when it reports one.
 */
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright";
import type { ShownMessage } from "./oracle.ts";

const TIMEOUT = 30_000;
export const screenshotDir: string = fileURLToPath(new URL("../screenshots/", import.meta.url));
/** Paths of the screenshots taken, printed at the end. */
export const screenshots: string[] = [];

/** Wait until the page has finished what it is doing; its error, if it shows one, fails the test. */
export async function idle(page: Page): Promise<void> {
	await page.waitForFunction(() => document.body.dataset.busy === "0", null, { timeout: TIMEOUT });
	const error = await page.$eval("#status", (status) => (status.classList.contains("error") ? status.textContent : ""));
	if (error) throw new Error(`the page says: ${error}`);
}

/** Load the app at `url` and wait for its session list. */
export async function load(page: Page, url: string): Promise<void> {
	await page.goto(url);
	await idle(page);
}

/** Choose files with the file picker. */
export async function chooseFiles(page: Page, paths: string[]): Promise<void> {
	await page.setInputFiles("#file-input", paths);
	await idle(page);
}

/** Drop a file on the page, as dragging it from the desktop does. */
export async function dropFile(page: Page, name: string, bytes: Uint8Array): Promise<void> {
	const base64 = Buffer.from(bytes).toString("base64");
	await page.evaluate(
		({ name, base64 }) => {
			const data = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
			const transfer = new DataTransfer();
			transfer.items.add(new File([data], name));
			const zone = document.getElementById("drop-zone") as HTMLElement;
			for (const type of ["dragenter", "dragover", "drop"]) {
				zone.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
			}
		},
		{ name, base64 },
	);
	await idle(page);
}

/** What each import said, by file name. */
export async function importOutcomes(page: Page): Promise<Record<string, { status: string; text: string }>> {
	const items = await page.$$eval("#import-results li", (lis) =>
		lis.map((li) => [li.dataset.name ?? "", { status: li.dataset.status ?? "", text: li.textContent ?? "" }] as const),
	);
	return Object.fromEntries(items);
}

export interface ListedSession {
	path: string;
	modified: number;
	messages: number;
	text: string;
}

/** The session list, top to bottom. */
export function listedSessions(page: Page): Promise<ListedSession[]> {
	return page.$$eval("#session-list li[data-path]", (lis) =>
		lis.map((li) => ({
			path: li.dataset.path ?? "",
			modified: Number(li.dataset.modified),
			messages: Number(li.dataset.messages),
			text: li.textContent ?? "",
		})),
	);
}

/** Open a listed session by clicking it. */
export async function openListed(page: Page, path: string): Promise<void> {
	await page.click(`#session-list li[data-path="${path}"] .info`);
	await idle(page);
}

/** The tree's counts and leaf, as the line above it says. */
export async function treeSummary(
	page: Page,
): Promise<{ entries: number; branchPoints: number; compactions: number; branchSummaries: number; leaf: string }> {
	const data = await page.$eval("#tree-summary", (element) => ({ ...element.dataset }));
	return {
		entries: Number(data.entries),
		branchPoints: Number(data.branchPoints),
		compactions: Number(data.compactions),
		branchSummaries: Number(data.branchSummaries),
		leaf: data.leaf ?? "",
	};
}

export interface TreeRowShown {
	id: string;
	parent: string;
	type: string;
	role: string;
	indent: number;
	label: string;
	classes: string[];
}

/** The tree rows drawn now (a virtual list: those in view and a margin). */
export function treeRows(page: Page): Promise<TreeRowShown[]> {
	return page.$$eval("#tree .row", (rows) =>
		rows.map((row) => ({
			id: row.dataset.id ?? "",
			parent: row.dataset.parent ?? "",
			type: row.dataset.type ?? "",
			role: row.dataset.role ?? "",
			indent: Number(row.dataset.indent),
			label: row.dataset.label ?? "",
			classes: Array.from(row.classList),
		})),
	);
}

/** Scroll the tree to its top or bottom, and wait for the rows there to be drawn. */
export async function scrollTree(page: Page, to: "top" | "bottom"): Promise<void> {
	await page.$eval(
		"#tree",
		(tree, to) => {
			tree.scrollTop = to === "top" ? 0 : tree.scrollHeight;
		},
		to,
	);
	await page.waitForFunction(
		(to) => {
			const tree = document.getElementById("tree") as HTMLElement;
			const tops = Array.from(tree.querySelectorAll<HTMLElement>(".row")).map((row) =>
				Number.parseFloat(row.style.top),
			);
			return to === "top" ? tops.includes(0) : Math.max(...tops) + 22 >= tree.scrollHeight - 1;
		},
		to,
		{ timeout: TIMEOUT },
	);
}

/** Click an entry's row (it must be drawn). */
export async function clickEntry(page: Page, id: string): Promise<void> {
	await page.click(`#tree .row[data-id="${id}"]`);
	await idle(page);
}

/** The context messages shown, oldest first, and the total the page says the context has. */
export async function shownContext(
	page: Page,
): Promise<{ total: number; messages: (ShownMessage & { text: string })[] }> {
	const total = Number(await page.$eval("#context .range", (range) => (range as HTMLElement).dataset.total));
	const messages = await page.$$eval("#context .msg", (items) =>
		items.map((item) => ({
			entryId: item.dataset.entryId ?? "",
			role: item.dataset.role ?? "",
			text: item.querySelector(".text")?.textContent ?? "",
		})),
	);
	return { total, messages };
}

/** Click `selector`, which downloads a file, and give the file's name and bytes. */
export async function download(page: Page, selector: string): Promise<{ name: string; bytes: Uint8Array }> {
	const [file] = await Promise.all([page.waitForEvent("download", { timeout: TIMEOUT }), page.click(selector)]);
	const bytes = new Uint8Array(await readFile(await file.path()));
	await idle(page);
	return { name: file.suggestedFilename(), bytes };
}

/** Save a screenshot a person can look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
	await mkdir(screenshotDir, { recursive: true });
	const path = join(screenshotDir, `${name}.png`);
	await page.screenshot({ path });
	screenshots.push(path);
}
