import { rm, writeFile } from "node:fs/promises";
import { build } from "esbuild";
import { defineConfig, type Options } from "tsup";
import { writeSamples } from "./scripts/write-samples.ts";

// One entry per package.json subpath; test/exports.test.ts keeps this, package.json and deno.json in step.
export const entries: Record<string, string> = {
	index: "src/index.ts",
	node: "adapters/node.ts",
	zenfs: "adapters/zenfs.ts",
	opfs: "adapters/opfs.ts",
	"web-locks": "adapters/web-locks.ts",
	"pi-compat": "adapters/pi-compat.ts",
	testing: "src/testing.ts",
	worker: "adapters/worker.ts",
	"worker-host": "adapters/worker-host.ts",
	"worker-entry": "adapters/worker-entry.ts",
};

/**
 * The browser's copy of the worker entry: one file with every dependency inside and no imports, so a
 * dev server serves it as it is and a bundler takes it whole (package.json's `browser` condition of
 * `./worker-entry`, and the worker `startEngineWorker` starts in a browser). Its text also becomes
 * `worker-inline.js`, for bundlers that copy no worker files.
 */
async function buildBrowserWorker(): Promise<void> {
	const result = await build({
		entryPoints: ["adapters/worker-entry.ts"],
		bundle: true,
		format: "esm",
		platform: "browser",
		target: "es2022",
		minify: true,
		write: false,
		logLevel: "error",
	});
	const [output] = result.outputFiles;
	if (!output) throw new Error("esbuild wrote no browser worker");
	// Minifying drops comments: mark again the imports of Node's modules (never reached in a browser, and
	// by specifiers bundlers cannot follow), so that a dev server does not warn about each of them.
	const text = output.text.replace(/\bimport\((?=[\w$])/g, "import(/* @vite-ignore */");
	await writeFile("dist/worker-entry.browser.js", text);
	await writeFile("dist/worker-inline.js", `export const workerSource = ${JSON.stringify(text)};\n`);
	await rm("dist/worker-inline.js.map", { force: true });
}

const config: Options = defineConfig({
	// The client's source-text fallback is its own file, replaced by buildBrowserWorker; `cli` is the bin.
	entry: { ...entries, "worker-inline": "adapters/worker-inline.ts", cli: "adapters/cli/bin.ts" },
	format: ["esm"],
	dts: { entry: entries },
	clean: true,
	sourcemap: true,
	target: "es2022",
	platform: "neutral",
	// Comlink inside: a page may load the client with a plain <script type="module">, without an import map.
	noExternal: ["comlink"],
	onSuccess: async () => {
		await buildBrowserWorker();
		writeSamples("dist/samples/sessions");
	},
}) as Options;
export default config;
