/**
 * The browser example (examples/browser) as a person uses it, in Chromium: served by a Vite dev server
 * and by a `vite build` on a static server, both without a Vite configuration, with sessions in OPFS.
 * Session files are imported with the file picker and by a drop, listed, opened; the tree, the leaf and
 * the contexts shown are checked against the package's own tree computed in Node from the same bytes;
 * entries are clicked, messages, labels and branch summaries added, a branch forked, files exported
 * byte for byte; a second tab meets the lock and opens read-only; a reload finds everything again. The
 * real pi corpus is imported when it is there (test/support/corpus.ts), and a 60,000-entry session is
 * opened and paged. Screenshots of each step go to test/e2e/screenshots/.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultSessionDir } from "../../src/paths.ts";
import { FIXTURE_NAMES } from "../fixtures/generate.ts";
import { launchChromium } from "../support/chromium.ts";
import { CORPUS_FILES, describeWithCorpus, diskCorpus } from "../support/corpus.ts";
import { BIG_ENTRIES, bigSession } from "./example/big-session.ts";
import {
	chooseFiles,
	clickEntry,
	download,
	dropFile,
	idle,
	importOutcomes,
	listedSessions,
	load,
	openListed,
	screenshot,
	screenshots,
	scrollTree,
	shownContext,
	treeRows,
	treeSummary,
} from "./example/driver.ts";
import { contextTail, messageCount, pathIds, recordsOf, treeOf } from "./example/oracle.ts";
import { copyExample, type Served, serveBuilt, serveDev } from "./example/serve.ts";

const fixtureDir = fileURLToPath(new URL("../fixtures/sessions/", import.meta.url));
const corpus = diskCorpus();
/** The agent directory of the stock OPFS storage. */
const AGENT_DIR = "/pi/agent";
const MESSAGE = "Hello from the end-to-end test: does the leaf move here? ✓";
const LABEL = "e2e-checkpoint";
const SUMMARY = "The test left this branch after adding a message and a label.";

let browser: Browser;
let example: Awaited<ReturnType<typeof copyExample>>;
let bigPath: string;
let big: ReturnType<typeof bigSession>;
const servers: Partial<Record<"dev" | "built", Served>> = {};
const worstFrames: Record<string, number> = {};

const fixtureBytes = async (name: string) => new Uint8Array(await readFile(join(fixtureDir, name)));
/** Where the app stores an imported file: pi's directory for the header's cwd. */
const storedPath = (name: string, bytes: Uint8Array) =>
	`${defaultSessionDir(recordsOf(bytes)[0].cwd, AGENT_DIR)}/${name}`;
const withoutText = ({ entryId, role }: { entryId: string; role: string }) => ({ entryId, role });

beforeAll(async () => {
	example = await copyExample();
	bigPath = join(example.project, "big-60k.jsonl");
	big = bigSession();
	await writeFile(bigPath, big.text);
	browser = await launchChromium();
	servers.dev = await serveDev(example.project);
	servers.built = await serveBuilt(example.project);
}, 120_000);

afterAll(async () => {
	await browser?.close();
	for (const server of Object.values(servers)) await server.close();
	await example?.remove();
	console.log(`screenshots:\n${screenshots.map((path) => `  ${path}`).join("\n")}`);
	console.log(
		`worst gap between frames while importing, opening, paging and scrolling the ${BIG_ENTRIES}-entry session ` +
			`(ms; logged, not asserted): ${JSON.stringify(worstFrames)}`,
	);
});

for (const kind of ["dev", "built"] as const) {
	describe(`the example app, ${kind === "dev" ? "from a Vite dev server" : "from a vite build"}`, () => {
		let context: BrowserContext;
		let page: Page;
		const shot = (name: string, on: Page = page) => screenshot(on, `${kind}-${name}`);
		const url = () => servers[kind]?.url as string;
		// What the steps build on: v3-current's stored path and tree, and what was appended to it.
		let v3Path: string;
		let v3Bytes: Uint8Array;
		const appended = { messageId: "", labelId: "", summaryId: "", branchPoint: "" };
		let forkPath: string;

		beforeAll(async () => {
			context = await browser.newContext({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
			page = await context.newPage();
			await load(page, url());
			v3Bytes = await fixtureBytes("v3-current.jsonl");
			v3Path = storedPath("v3-current.jsonl", v3Bytes);
		});
		afterAll(async () => {
			if (page)
				worstFrames[kind] = await page.evaluate(() => (window as unknown as { __worstFrameMs: number }).__worstFrameMs);
			await context?.close();
		});

		it("imports session files with the file picker and by a drop, and lists them newest first", async () => {
			const picked = FIXTURE_NAMES.filter((name) => name !== "v3-crlf.jsonl");
			await chooseFiles(
				page,
				picked.map((name) => join(fixtureDir, name)),
			);
			const outcomes = await importOutcomes(page);
			for (const name of picked) expect(outcomes[name]?.status, outcomes[name]?.text).toBe("imported");
			await dropFile(page, "v3-crlf.jsonl", await fixtureBytes("v3-crlf.jsonl"));
			expect((await importOutcomes(page))["v3-crlf.jsonl"]?.status).toBe("imported");

			const listed = await listedSessions(page);
			const expected = await Promise.all(
				FIXTURE_NAMES.map(async (name) => {
					const bytes = await fixtureBytes(name);
					return { path: storedPath(name, bytes), messages: messageCount(bytes) };
				}),
			);
			expect(listed.map(({ path, messages }) => ({ path, messages })).sort(byPath)).toEqual(expected.sort(byPath));
			const dates = listed.map((session) => session.modified);
			expect(dates).toEqual([...dates].sort((a, b) => b - a));
			expect(listed.find((session) => session.path === v3Path)?.text).toContain("Blog: dark mode"); // its session name
			await shot("01-imported");
		});

		it("refuses to import a name that is stored already, and exports untouched files byte for byte", async () => {
			await chooseFiles(page, [join(fixtureDir, "v3-current.jsonl")]);
			const outcome = (await importOutcomes(page))["v3-current.jsonl"];
			expect(outcome?.status).toBe("exists");
			expect(outcome?.text).toContain("not overwritten");
			for (const name of [
				"v3-current.jsonl",
				"v3-crlf.jsonl",
				"v3-garbage-line.jsonl",
				"v2-branching.jsonl",
				"v1-linear.jsonl",
			]) {
				const original = await fixtureBytes(name);
				const file = await download(page, `#session-list li[data-path="${storedPath(name, original)}"] button`);
				expect(file.name).toBe(name);
				expect(Buffer.from(file.bytes).equals(Buffer.from(original)), name).toBe(true);
			}
		});

		it("opens damaged files as pi reads them: a skipped line reported, a torn last line repaired", async () => {
			const garbage = await fixtureBytes("v3-garbage-line.jsonl");
			await openListed(page, storedPath("v3-garbage-line.jsonl", garbage));
			expect(await page.textContent("#session-header")).toContain("1 line(s) skipped: line 17 invalid-json");
			expect((await treeSummary(page)).entries).toBe(treeOf(garbage).getEntries().length);
			const torn = await fixtureBytes("v3-torn-last-line.jsonl");
			await openListed(page, storedPath("v3-torn-last-line.jsonl", torn));
			expect(await page.textContent("#session-header")).toContain("last line was repaired");
			// Repairing ends the torn line with a line feed, and changes nothing else.
			const file = await download(page, "#export");
			expect(Buffer.from(file.bytes).equals(Buffer.concat([torn, Buffer.from("\n")]))).toBe(true);
		});

		it("opens a session and shows its tree: both branches, labels, compaction and summary, the leaf marked", async () => {
			await openListed(page, v3Path);
			const tree = treeOf(v3Bytes);
			const leaf = tree.getLeafId() as string;
			expect(await treeSummary(page)).toEqual({
				entries: tree.getEntries().length,
				branchPoints: 1,
				compactions: 1,
				branchSummaries: 1,
				leaf,
			});
			const rows = await treeRows(page);
			expect(rows.map((row) => row.id).sort()).toEqual(
				tree
					.getEntries()
					.map((entry) => entry.id)
					.sort(),
			); // all 31 in view
			expect(rows.filter((row) => row.classes.includes("leaf")).map((row) => row.id)).toEqual([leaf]);
			const onPath = new Set(pathIds(tree, leaf));
			expect(rows.filter((row) => row.classes.includes("on-path")).map((row) => row.id)).toEqual(
				rows.map((row) => row.id).filter((id) => onPath.has(id)),
			);
			for (const row of rows) expect(row.label, row.id).toBe(tree.getLabel(row.id) ?? "");
			expect(rows.some((row) => row.label === "works")).toBe(true);
			const branchPoint = tree.getEntries().find((entry) => tree.getChildren(entry.id).length > 1)?.id as string;
			const branches = rows.filter((row) => row.parent === branchPoint);
			expect(branches.map((row) => row.indent)).toEqual([1, 1]);
			expect(rows.find((row) => row.id === branchPoint)?.indent).toBe(0);
			expect(rows.filter((row) => row.type === "compaction" && row.classes.includes("t-compaction"))).toHaveLength(1);
			expect(rows.filter((row) => row.type === "branch_summary")).toHaveLength(1);
			const shown = await shownContext(page);
			const expected = contextTail(tree, leaf, 50);
			expect([shown.total, shown.messages.map(withoutText)]).toEqual([expected.total, expected.tail]);
			// Opening a v3 file changes nothing in it.
			const file = await download(page, "#export");
			expect(Buffer.from(file.bytes).equals(Buffer.from(v3Bytes))).toBe(true);
			await shot("02-tree");
		});

		it("makes a clicked entry the leaf and shows its context, as the engine gives it in Node", async () => {
			const tree = treeOf(v3Bytes);
			const onPath = new Set(pathIds(tree, tree.getLeafId() as string));
			const branchPoint = tree.getEntries().find((entry) => tree.getChildren(entry.id).length > 1)?.id as string;
			// The end of the branch that was left: not on the current leaf's path.
			let end = tree.getChildren(branchPoint).find((child) => !onPath.has(child.id))?.id as string;
			for (let next = tree.getChildren(end)[0]; next; next = tree.getChildren(end)[0]) end = next.id;
			await clickEntry(page, end);
			expect((await treeSummary(page)).leaf).toBe(end);
			const rows = await treeRows(page);
			expect(rows.filter((row) => row.classes.includes("leaf")).map((row) => row.id)).toEqual([end]);
			const shown = await shownContext(page);
			const expected = contextTail(tree, end, 50);
			expect([shown.total, shown.messages.map(withoutText)]).toEqual([expected.total, expected.tail]);
			appended.branchPoint = branchPoint;
			await shot("03-clicked-entry");
		});

		it("adds a user message, a label and a branch with a summary; the export starts with the original bytes", async () => {
			const left = (await treeSummary(page)).leaf;
			await page.fill("#message-text", MESSAGE);
			await page.click("#add-message");
			await idle(page);
			const afterMessage = await treeSummary(page);
			appended.messageId = afterMessage.leaf;
			expect(afterMessage.entries).toBe(32);
			const messageRow = (await treeRows(page)).find((row) => row.id === appended.messageId);
			expect([messageRow?.parent, messageRow?.role, messageRow?.classes.includes("leaf")]).toEqual([
				left,
				"user",
				true,
			]);
			expect((await shownContext(page)).messages.at(-1)).toEqual({
				entryId: appended.messageId,
				role: "user",
				text: MESSAGE,
			});

			await page.fill("#label-text", LABEL);
			await page.click("#set-label");
			await idle(page);
			appended.labelId = (await treeSummary(page)).leaf;
			const rows = await treeRows(page);
			expect(rows.find((row) => row.id === appended.messageId)?.label).toBe(LABEL);
			expect(rows.find((row) => row.id === appended.labelId)?.type).toBe("label");

			await clickEntry(page, appended.branchPoint);
			expect(await page.isEnabled("#add-summary")).toBe(true);
			await page.fill("#summary-text", SUMMARY);
			await page.click("#add-summary");
			await idle(page);
			appended.summaryId = (await treeSummary(page)).leaf;
			const summaryRow = (await treeRows(page)).find((row) => row.id === appended.summaryId);
			expect([summaryRow?.type, summaryRow?.parent]).toEqual(["branch_summary", appended.branchPoint]);
			const shown = await shownContext(page);
			expect(shown.messages.at(-1)).toEqual({ entryId: appended.summaryId, role: "branchSummary", text: SUMMARY });

			const file = await download(page, "#export");
			expect(Buffer.from(file.bytes.subarray(0, v3Bytes.length)).equals(Buffer.from(v3Bytes))).toBe(true);
			const added = recordsOf(file.bytes.subarray(v3Bytes.length));
			expect(added.map((entry) => [entry.type, entry.id, entry.parentId])).toEqual([
				["message", appended.messageId, left],
				["label", appended.labelId, appended.messageId],
				["branch_summary", appended.summaryId, appended.branchPoint],
			]);
			expect(added[0]).toMatchObject({ message: { role: "user", content: MESSAGE } });
			expect(added[1]).toMatchObject({ targetId: appended.messageId, label: LABEL });
			expect(added[2]).toMatchObject({ fromId: appended.labelId, summary: SUMMARY });
			const expected = contextTail(treeOf(file.bytes), appended.summaryId, 50);
			expect([shown.total, shown.messages.map(withoutText)]).toEqual([expected.total, expected.tail]);
			await shot("04-appended");
		});

		it("forks the branch into a new session, which a second tab can open read-only only", async () => {
			await page.click("#fork");
			await idle(page);
			forkPath = (await page.$eval("#open-session", (element) => (element as HTMLElement).dataset.path)) as string;
			expect(forkPath).not.toBe(v3Path);
			expect(await page.textContent("#parent-session")).toContain(v3Path);
			expect((await listedSessions(page)).map((session) => session.path)).toContain(forkPath);
			const fork = await download(page, "#export");
			const [header, ...entries] = recordsOf(fork.bytes);
			expect(header.parentSession).toBe(v3Path);
			const source = treeOf(await (await download(page, `#session-list li[data-path="${v3Path}"] button`)).bytes);
			const kept = (ids: { id: string; type: string }[]) => ids.filter((e) => e.type !== "label").map((e) => e.id);
			expect(kept(entries)).toEqual(kept(source.getBranch(appended.summaryId)));
			const shown = await shownContext(page);
			const expected = contextTail(treeOf(fork.bytes), appended.summaryId, 50);
			expect([shown.total, shown.messages.map(withoutText)]).toEqual([expected.total, expected.tail]);
			await shot("05-forked");

			const other = await context.newPage();
			try {
				await load(other, url());
				await openListed(other, forkPath);
				expect(await other.textContent("#lock-notice")).toContain("open for writing elsewhere");
				await shot("06-locked-in-second-tab", other);
				await other.click("#open-read-only");
				await idle(other);
				expect(await other.isVisible("#read-only")).toBe(true);
				expect(await other.isDisabled("#add-message")).toBe(true);
				expect((await shownContext(other)).messages).toEqual(shown.messages);
				// It reads the file the first tab holds open for writing.
				const read = await download(other, "#export");
				expect(Buffer.from(read.bytes).equals(Buffer.from(fork.bytes))).toBe(true);
				await shot("07-read-only-in-second-tab", other);
			} finally {
				await other.close();
			}
		});

		it("finds everything again after a reload (OPFS keeps it)", async () => {
			const before = (await listedSessions(page)).map(({ path, messages }) => ({ path, messages }));
			await page.reload();
			await idle(page);
			expect((await listedSessions(page)).map(({ path, messages }) => ({ path, messages }))).toEqual(before);
			await openListed(page, v3Path);
			const summary = await treeSummary(page);
			expect([summary.entries, summary.leaf, summary.branchSummaries]).toEqual([34, appended.summaryId, 2]);
			const rows = await treeRows(page);
			expect(rows.find((row) => row.id === appended.messageId)?.label).toBe(LABEL);
			await openListed(page, forkPath);
			expect((await treeSummary(page)).leaf).toBe(appended.summaryId);
			await shot("08-reloaded");
		});

		describeWithCorpus({ describe, it, describeSkip: describe.skip }, corpus, "with the real pi corpus", () => {
			it("imports it, migrates a v1 session on opening, and pages through its context", async () => {
				await chooseFiles(
					page,
					CORPUS_FILES.map((file) => corpus.path(file)),
				);
				const listed = await listedSessions(page);
				const outcomes = await importOutcomes(page);
				for (const file of CORPUS_FILES) {
					const bytes = corpus.readSync(file);
					expect(outcomes[file]?.status).toBe("imported");
					expect(listed.find((session) => session.path === storedPath(file, bytes))?.messages).toBe(
						messageCount(bytes),
					);
				}
				const original = corpus.readSync("pi-v1-before-compaction.jsonl");
				await openListed(page, storedPath("pi-v1-before-compaction.jsonl", original));
				expect(await page.textContent("#session-header")).toContain("migrated from v1");
				// The file is v3 now: its export is what the worker has, ids and all.
				const tree = treeOf((await download(page, "#export")).bytes);
				const leaf = tree.getLeafId() as string;
				expect(await treeSummary(page)).toMatchObject({ entries: tree.getEntries().length, compactions: 2, leaf });
				let expected = contextTail(tree, leaf, 50);
				expect((await shownContext(page)).messages.map(withoutText)).toEqual(expected.tail);
				await page.click("#older");
				await idle(page);
				expected = contextTail(tree, leaf, 100);
				const shown = await shownContext(page);
				expect([shown.total, shown.messages.map(withoutText)]).toEqual([expected.total, expected.tail]);
				await shot("09-corpus");
			});
		});

		it(`opens a ${BIG_ENTRIES.toLocaleString("en")}-entry session: the tree drawn as it scrolls, the context in pages`, async () => {
			const bytes = new Uint8Array(await readFile(bigPath));
			const tree = treeOf(bytes);
			const leaf = tree.getLeafId() as string;
			await page.evaluate(() => (window as unknown as { __resetFrameMonitor(): void }).__resetFrameMonitor());
			await chooseFiles(page, [bigPath]);
			await openListed(page, storedPath("big-60k.jsonl", bytes));
			expect(await treeSummary(page)).toEqual({
				entries: BIG_ENTRIES,
				branchPoints: 6,
				compactions: 3,
				branchSummaries: 3,
				leaf,
			});
			let rows = await treeRows(page);
			expect(rows.length).toBeLessThan(200); // only what is in view
			expect(rows.filter((row) => row.classes.includes("leaf")).map((row) => row.id)).toEqual([leaf]);
			for (const older of [0, 1, 2]) {
				if (older) {
					await page.click("#older");
					await idle(page);
				}
				const expected = contextTail(tree, leaf, 50 * (older + 1));
				const shown = await shownContext(page);
				expect([shown.total, shown.messages.map(withoutText)]).toEqual([expected.total, expected.tail]);
			}
			await scrollTree(page, "top");
			rows = await treeRows(page);
			const side = big.sideBranches[0] as { from: string; first: string };
			expect(rows.filter((row) => row.parent === side.from).map((row) => row.indent)).toEqual([1, 1]);
			await clickEntry(page, side.first);
			const expected = contextTail(tree, side.first, 50);
			const shown = await shownContext(page);
			expect([shown.total, shown.messages.map(withoutText)]).toEqual([expected.total, expected.tail]);
			await scrollTree(page, "bottom");
			worstFrames[kind] = await page.evaluate(() => (window as unknown as { __worstFrameMs: number }).__worstFrameMs);
			await shot("10-big-session");
		});
	});
}

function byPath(a: { path: string }, b: { path: string }): number {
	return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}
