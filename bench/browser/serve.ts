/**
 * The bench page (page/), built by Vite as production code (minified, the worker bundled as an ES module
 * worker) into a directory of its own, and served from there by Vite's preview server with the session
 * files the page loads. No Vite configuration file: every option is here.
 * @module
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";
import { type Served, serveStatic } from "../../test/support/vite-servers.ts";

const pageDir = fileURLToPath(new URL("./page", import.meta.url));
/** Build page/ into `outDir` (emptied first). */
export async function buildPage(outDir: string): Promise<void> {
	await build({
		root: pageDir,
		configFile: false,
		publicDir: false,
		mode: "production",
		logLevel: "warn",
		build: { outDir, emptyOutDir: true, target: "es2022", reportCompressedSize: false },
		// Module workers: the worker's storages are loaded on demand (dynamic imports), which needs ES output.
		worker: { format: "es" },
	});
}

/** Put a file next to the built page, for the page to fetch at `/<name>`. */
export async function addFile(outDir: string, name: string, content: string | Uint8Array): Promise<string> {
	await writeFile(join(outDir, name), content);
	return `/${name}`;
}

/** Serve a built page (and the files added to it) on 127.0.0.1; the page's URL, and how to stop. */
export function servePage(outDir: string): Promise<Served> {
	return serveStatic(pageDir, outDir, {
		logLevel: "warn",
		// Cross-origin isolated, so that the page's and the worker's `performance.now()` tick in 5 µs, not 100 µs.
		headers: { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" },
	});
}
