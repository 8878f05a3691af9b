/**
 * The bench page (page/), built by Vite as production code (minified, the worker bundled as an ES module
 * worker) into a directory of its own, and served from there by Vite's preview server with the session
 * files the page loads. No Vite configuration file: every option is here.
 * @module
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, preview } from "vite";

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
export async function servePage(outDir: string): Promise<{ url: string; close: () => Promise<void> }> {
	const server = await preview({
		root: pageDir,
		configFile: false,
		logLevel: "warn",
		build: { outDir },
		// Cross-origin isolated, so that the page's and the worker's `performance.now()` tick in 5 µs, not 100 µs.
		preview: {
			port: 0,
			host: "127.0.0.1",
			headers: { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" },
		},
	});
	const url = server.resolvedUrls?.local[0];
	if (!url) throw new Error("the preview server gave no URL");
	return { url, close: () => server.close() };
}
