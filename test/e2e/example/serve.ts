/**
 * The example app as a user runs it, in a temporary copy of examples/browser (without its node_modules)
 * with the built package installed there: from a Vite dev server, and from a `vite build` served as
 * static files (Vite's preview server). Neither with a Vite configuration.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build, createServer, preview } from "vite";
import { stagePackage } from "../../support/stage-package.ts";

const example = fileURLToPath(new URL("../../../examples/browser", import.meta.url));

export interface Served {
	url: string;
	close(): Promise<void>;
}

/** A fresh copy of the example with the package staged; `remove` deletes it. */
export async function copyExample(): Promise<{ project: string; remove(): Promise<void> }> {
	const project = await mkdtemp(join(tmpdir(), "pi-example-"));
	await cp(example, project, {
		recursive: true,
		filter: (source) => !relative(example, source).split(sep).includes("node_modules"),
	});
	await stagePackage(project);
	return { project, remove: () => rm(project, { recursive: true, force: true }) };
}

/** The Vite dev server on `project`. */
export async function serveDev(project: string): Promise<Served> {
	const server = await createServer({
		root: project,
		configFile: false,
		logLevel: "error",
		server: { port: 0, host: "127.0.0.1" },
	});
	await server.listen();
	return { url: server.resolvedUrls?.local[0] as string, close: () => server.close() };
}

/** `vite build` of `project`, served by Vite's preview server. */
export async function serveBuilt(project: string): Promise<Served> {
	const outDir = join(project, "dist");
	await build({ root: project, configFile: false, logLevel: "error", build: { outDir, emptyOutDir: true } });
	const server = await preview({
		root: project,
		configFile: false,
		logLevel: "error",
		build: { outDir },
		preview: { port: 0, host: "127.0.0.1" },
	});
	return { url: server.resolvedUrls?.local[0] as string, close: () => server.close() };
}
