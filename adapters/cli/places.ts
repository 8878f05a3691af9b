/**
 * Where the tool looks for sessions: `--dir`, else pi's own sessions root (`$PI_CODING_AGENT_DIR/sessions`
 * or `~/.pi/agent/sessions`), else, on a machine where that does not exist, the sample sessions bundled
 * with the package (said on standard error). The listing catalog lives beside the sessions root, where pi
 * does not look for sessions; the bundled samples get none (nothing is written into the package).
 * @module
 */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { listingCatalogPathForSessionsRoot, sessionsRoot } from "../../src/index.ts";
import { agentDir } from "../node.ts";
import { CliError } from "./errors.ts";
import type { Output } from "./terminal.ts";

export interface Places {
	/** The directory that holds one directory of sessions per project. */
	root: string;
	/** The listing catalog's path, or undefined when none is kept. */
	catalog: string | undefined;
	/** True when these are the bundled samples (commands that write refuse them). */
	samples: boolean;
}

export interface PlaceOptions {
	dir?: string;
	samples?: boolean;
	catalog?: boolean;
}

/** The bundled samples, built into `dist/samples/sessions` (beside the built tool, or from the sources). */
export function samplesRoot(): string {
	const candidates = [
		new URL("./samples/sessions", import.meta.url),
		new URL("../../dist/samples/sessions", import.meta.url),
	];
	for (const candidate of candidates) {
		const path = fileURLToPath(candidate);
		if (existsSync(path)) return path;
	}
	throw new CliError("the bundled sample sessions are missing (run `npm run build`)");
}

/** Whether `path` is a directory, or a link to one. */
export function isDirectory(path: string): boolean {
	return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

/** Whether `path` is a regular file, or a link to one. */
export function isFile(path: string): boolean {
	return statSync(path, { throwIfNoEntry: false })?.isFile() === true;
}

export function findPlaces(options: PlaceOptions, output: Output): Places {
	if (options.samples) return { root: samplesRoot(), catalog: undefined, samples: true };
	const withCatalog = (root: string): Places => ({
		root,
		catalog: options.catalog === false ? undefined : listingCatalogPathForSessionsRoot(root),
		samples: false,
	});
	if (options.dir !== undefined) {
		const root = resolve(options.dir);
		if (!isDirectory(root)) throw new CliError(`no such directory: ${root}`);
		return withCatalog(root);
	}
	const root = sessionsRoot(agentDir());
	if (isDirectory(root)) return withCatalog(root);
	output.note(`No pi sessions at ${root} (a fresh machine?): showing the sample sessions bundled with pi-sessions.`);
	return { root: samplesRoot(), catalog: undefined, samples: true };
}
