/**
 * Zero-config bundling: an app that imports `pi-session-tree/worker` by name (test/e2e/app/) gets a
 * working engine worker in Chromium from a Vite dev server and a `vite build`, both without a Vite
 * configuration, from an esbuild bundle, and from a plain `<script type="module">` with no bundler; and a
 * worker that cannot load says why. The package is installed as a user has it (test/support/stage-package.ts).
 */
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build as esbuild } from "esbuild";
import type { Browser } from "playwright";
import { build, createLogger, type Logger } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/chromium.ts";
import { stagePackage } from "../support/stage-package.ts";
import { serveDev, serveStatic as serveFiles } from "../support/vite-servers.ts";

const app = fileURLToPath(new URL("./app", import.meta.url));

interface Outcome {
	result: { ok: boolean; messages?: number; reopened?: number | null; error?: string };
	/** The URLs of the workers the page started. */
	workers: string[];
}

let browser: Browser;
let project: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
	project = await mkdtemp(join(tmpdir(), "pi-bundling-"));
	await cp(app, project, { recursive: true });
	await stagePackage(project);
	browser = await launchChromium();
}, 120_000);

afterAll(async () => {
	for (const close of closers.reverse()) await close();
	await browser?.close();
	await rm(project, { recursive: true, force: true });
});

/** Open `url` in a fresh page and wait for the app's outcome. */
async function visit(url: string): Promise<Outcome> {
	const page = await browser.newPage();
	const workers: string[] = [];
	page.on("worker", (worker) => workers.push(worker.url()));
	try {
		await page.goto(url);
		const handle = await page.waitForFunction(() => document.body.dataset.result, null, { timeout: 60_000 });
		return { result: JSON.parse((await handle.jsonValue()) as string), workers };
	} finally {
		await page.close();
	}
}

/**
 * Serve `dir` as static files, closed after the tests; `"spa"` answers a missing file with index.html, as
 * many servers do.
 */
async function serveStatic(
	dir: string,
	appType: "spa" | "mpa" = "spa",
	headers: Record<string, string> = {},
): Promise<string> {
	const server = await serveFiles(project, dir, { appType, headers });
	closers.push(() => server.close());
	return server.url;
}

/** A Vite dev server on the project, closed after the tests. */
async function serveProject(options: { customLogger?: Logger } = {}): Promise<string> {
	const server = await serveDev(project, options);
	closers.push(() => server.close());
	return server.url;
}

const worked = { ok: true, messages: 2, reopened: null };

describe("an app importing pi-session-tree/worker, with no bundler configuration", () => {
	it("runs from a Vite dev server (the package pre-bundled by Vite's optimizer), which has nothing to warn about", async () => {
		const warnings: string[] = [];
		const customLogger = createLogger("warn");
		customLogger.warn = (message) => warnings.push(message);
		customLogger.warnOnce = (message) => warnings.push(message);
		customLogger.error = (message) => warnings.push(message);
		const { result, workers } = await visit(await serveProject({ customLogger }));
		expect(result).toEqual(worked);
		// The package's own worker file, not the source-text fallback.
		expect(workers).toEqual([
			expect.stringMatching(/\/node_modules\/pi-session-tree\/dist\/worker-entry\.browser\.js/),
		]);
		expect(warnings).toEqual([]);
	});

	it("runs from a `vite build` (the worker bundled by Vite as a worker)", async () => {
		const outDir = join(project, "out-vite");
		await build({ root: project, configFile: false, logLevel: "silent", build: { outDir, emptyOutDir: true } });
		const origin = await serveStatic(outDir);
		const { result, workers } = await visit(origin);
		expect(result).toEqual(worked);
		expect(workers).toEqual([expect.stringMatching(/\/assets\/worker-entry\.browser-[\w-]+\.js$/)]);
		// On OPFS the session outlives the worker: a second worker reads it back.
		const opfs = await visit(`${origin}?storage=opfs`);
		expect(opfs.result).toEqual({ ...worked, reopened: 2 });
		expect(opfs.workers).toHaveLength(2);
	});

	it("runs with a Worker the app makes from pi-session-tree/worker-entry (Vite's ?worker), in dev and built", async () => {
		const dev = await visit(`${await serveProject()}custom.html`);
		expect(dev.result).toEqual(worked);
		expect(dev.workers).toEqual([expect.stringMatching(/worker-entry\.browser\.js\?worker_file/)]);
		const outDir = join(project, "out-vite-custom");
		const input = join(project, "custom.html");
		await build({
			root: project,
			configFile: false,
			logLevel: "silent",
			build: { outDir, emptyOutDir: true, rollupOptions: { input } },
		});
		const built = await visit(`${await serveStatic(outDir)}custom.html`);
		expect(built.result).toEqual(worked);
		expect(built.workers).toEqual([expect.stringMatching(/\/assets\/worker-entry\.browser-[\w-]+\.js$/)]);
	});

	it("runs from an esbuild bundle, which copies no worker file: the worker starts from its source text", async () => {
		const outDir = join(project, "out-esbuild");
		await esbuild({
			entryPoints: [join(project, "main.js")],
			bundle: true,
			format: "esm",
			outdir: outDir,
			logLevel: "error",
		});
		await cp(join(project, "index.html"), join(outDir, "index.html"));
		const origin = await serveStatic(outDir);
		const { result, workers } = await visit(origin);
		expect(result).toEqual(worked);
		// First the file next to the bundle (missing), then the fallback.
		expect(workers.at(-1)).toMatch(/^blob:/);
		// A blob: worker has the page's origin, so its OPFS too.
		expect((await visit(`${origin}?storage=opfs`)).result).toEqual({ ...worked, reopened: 2 });
	});

	it("runs from a plain <script type=module> with no bundler and no import map", async () => {
		const { result, workers } = await visit(`${await serveStatic(project)}plain.html`);
		expect(result).toEqual(worked);
		expect(workers).toEqual([
			expect.stringMatching(/\/node_modules\/pi-session-tree\/dist\/worker-entry\.browser\.js$/),
		]);
	});
});

describe("a worker that cannot load says why", () => {
	const broken = (name: string) => join(project, "node_modules/pi-session-tree/dist", name);
	let origin: string;
	let strictOrigin: string;
	beforeAll(async () => {
		origin = await serveStatic(project);
		strictOrigin = await serveStatic(project, "mpa");
		await writeFile(broken("worker-inline.js"), "export const workerSource = undefined;\n");
	});

	it("a module that throws while it loads: its own error", async () => {
		await writeFile(broken("worker-entry.browser.js"), 'throw new Error("the module broke while loading");\n');
		const { result } = await visit(`${origin}plain.html`);
		expect(result.ok).toBe(false);
		expect(result.error).toMatch(
			/^EngineWorkerError: the engine worker did not load: .*the module broke while loading/,
		);
	});

	it("a page whose Content-Security-Policy refuses workers: the policy, named", async () => {
		const outDir = join(project, "out-vite");
		const policy = { "Content-Security-Policy": "worker-src 'none'" };
		const { result } = await visit(await serveStatic(outDir, "spa", policy));
		expect(result.ok).toBe(false);
		expect(result.error).toMatch(/did not load: the page's Content-Security-Policy refused .*\(worker-src/);
	});

	it("a worker file that is not there: what fetching it gave (a 404, or a server's fallback page)", async () => {
		await rm(broken("worker-entry.browser.js"));
		const strict = await visit(`${strictOrigin}plain.html`);
		expect(strict.result.ok).toBe(false);
		expect(strict.result.error).toMatch(/did not load: fetching http:\/\/.*\/worker-entry\.browser\.js gave HTTP 404/);
		const fallback = await visit(`${origin}plain.html`);
		expect(fallback.result.error).toMatch(
			/did not load: http:\/\/.*\/worker-entry\.browser\.js answered with text\/html/,
		);
	});
});
