/**
 * The example app as a user runs it, in a temporary copy of examples/browser (without its node_modules)
 * with the built package installed there: from a Vite dev server, and from a `vite build` served as
 * static files (Vite's preview server). Neither with a Vite configuration.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";
import { stagePackage } from "../../support/stage-package.ts";
import { type Served, serveDev as serveDevServer, serveStatic } from "../../support/vite-servers.ts";

export type { Served };

const example = fileURLToPath(new URL("../../../examples/browser", import.meta.url));

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
export function serveDev(project: string): Promise<Served> {
	return serveDevServer(project, { logLevel: "error" });
}

/** `vite build` of `project`, served by Vite's preview server. */
export async function serveBuilt(project: string): Promise<Served> {
	const outDir = join(project, "dist");
	await build({ root: project, configFile: false, logLevel: "error", build: { outDir, emptyOutDir: true } });
	return serveStatic(project, outDir, { logLevel: "error" });
}
