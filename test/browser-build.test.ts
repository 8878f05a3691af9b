/**
 * What the build hands to browsers: the worker a browser starts is one file that imports nothing (a dev
 * server serves it as it is, a bundler takes it whole, and it runs from its source text as a `blob:`
 * worker), with no top-level await (bundlers that make classic-script workers refuse it); the client a
 * page imports reaches only files of the package (no bare import a page without a bundler cannot resolve).
 * Run after `npm run build`.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));

/** Every module `entry` brings in (static and literal dynamic imports), as esbuild resolves them. */
async function modulesOf(entry: string): Promise<string[]> {
	const result = await build({
		entryPoints: [`${dist}${entry}`],
		bundle: true,
		format: "esm",
		platform: "browser",
		write: false,
		metafile: true,
		logLevel: "silent",
	});
	return Object.keys(result.metafile.inputs);
}

describe("the build for browsers", () => {
	it("the browser worker is one file that imports nothing, and its text is the client's fallback", async () => {
		expect(await modulesOf("worker-entry.browser.js")).toEqual(["dist/worker-entry.browser.js"]);
		const text = readFileSync(`${dist}worker-entry.browser.js`, "utf8");
		const inline = new URL("../dist/worker-inline.js", import.meta.url).href;
		const { workerSource } = (await import(inline)) as { workerSource: string };
		expect(workerSource).toBe(text);
	});

	it("the browser worker has no top-level await (a classic-script worker build accepts it)", async () => {
		const result = await build({
			entryPoints: [`${dist}worker-entry.browser.js`],
			bundle: true,
			format: "iife",
			write: false,
			logLevel: "silent",
		});
		expect(result.errors).toEqual([]);
	});

	it("its imports by computed specifier (Node's modules, never reached in a browser) are marked for Vite", () => {
		const text = readFileSync(`${dist}worker-entry.browser.js`, "utf8");
		const computed = [...text.matchAll(/\bimport\((?!["'`])/g)];
		expect(computed.length).toBeGreaterThan(0);
		expect([...text.matchAll(/\bimport\((?!["'`]|\/\* @vite-ignore \*\/)/g)]).toEqual([]);
	});

	it("the client reaches only files of the package, Comlink inside", async () => {
		const modules = await modulesOf("worker.js");
		expect(modules.filter((path) => !path.startsWith("dist/"))).toEqual([]);
		expect(modules).toContain("dist/worker-inline.js"); // the fallback, loaded only when needed
	});
});
