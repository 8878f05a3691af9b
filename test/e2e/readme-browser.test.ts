/**
 * The README's browser blocks (```ts browser) run in Chromium, as a page of an app runs them: each with its
 * prelude, as a module of a Vite dev server over a project that has the package installed
 * (test/support/stage-package.ts), in a fresh browser context (an empty OPFS). A block passes when its
 * module finishes without an error. test/readme.test.ts type-checks them.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/chromium.ts";
import { fencedBlocks } from "../support/readme-blocks.ts";
import { stagePackage } from "../support/stage-package.ts";
import { type Served, serveDev } from "../support/vite-servers.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const blocks = fencedBlocks(await readFile(join(root, "README.md"), "utf8")).filter(
	(block) => block.info[0] === "ts" && block.info.includes("browser"),
);

let browser: Browser;
let project: string;
let server: Served;

beforeAll(async () => {
	project = await mkdtemp(join(tmpdir(), "pi-readme-browser-"));
	await cp(join(root, "test/e2e/app"), project, { recursive: true });
	await stagePackage(project);
	for (const block of blocks) {
		const name = `readme-line-${block.line}`;
		await writeFile(join(project, `${name}.ts`), `${block.prelude}\n// ── README.md:${block.line} ──\n${block.code}\n`);
		// The page reports how the block's module ended: its import settles once its top-level awaits have.
		await writeFile(
			join(project, `${name}.html`),
			`<!doctype html><html><head><link rel="icon" href="data:,"></head><body><script type="module">
import("./${name}.ts").then(
	() => { document.body.dataset.result = "finished"; },
	(error) => { document.body.dataset.result = "failed: " + (error && error.stack || error); },
);
</script></body></html>\n`,
		);
	}
	server = await serveDev(project);
	browser = await launchChromium();
}, 120_000);

afterAll(async () => {
	await browser?.close();
	await server?.close();
	await rm(project, { recursive: true, force: true });
});

describe("README.md browser blocks", () => {
	it("there is at least one", () => {
		expect(blocks.length).toBeGreaterThan(0);
	});

	for (const block of blocks) {
		it(`README.md:${block.line} runs in Chromium without an error`, async () => {
			const context = await browser.newContext();
			try {
				const page = await context.newPage();
				const errors: string[] = [];
				page.on("pageerror", (error) => errors.push(error.message));
				await page.goto(`${server.url}readme-line-${block.line}.html`);
				const result = await page.waitForFunction(() => document.body.dataset.result, null, { timeout: 60_000 });
				expect(await result.jsonValue()).toBe("finished");
				expect(errors).toEqual([]);
			} finally {
				await context.close();
			}
		});
	}
});
