/**
 * A session named on the command line: a path to its file, or its id or a unique prefix of it, found
 * across every project under the sessions root (by the ids in pi's file names, then by the headers'
 * ids through the listing, for files named otherwise).
 * @module
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { listAllSessions, type Storage } from "../../src/index.ts";
import { sessionIdOfFileName } from "../../src/paths.ts";
import { CliError } from "./errors.ts";
import type { Places } from "./places.ts";

function isFile(path: string): boolean {
	try {
		return statSync(path).isFile();
	} catch {
		return false;
	}
}

interface Candidate {
	id: string;
	path: string;
}

function candidatesByFileName(root: string): Candidate[] {
	const found: Candidate[] = [];
	for (const project of readdirSync(root, { withFileTypes: true })) {
		const dir = join(root, project.name);
		if (!project.isDirectory() && !(project.isSymbolicLink() && existsSync(dir) && statSync(dir).isDirectory()))
			continue;
		for (const name of readdirSync(dir)) {
			const id = name.endsWith(".jsonl") ? sessionIdOfFileName(name) : undefined;
			if (id !== undefined) found.push({ id, path: join(dir, name) });
		}
	}
	return found;
}

function chooseOne(name: string, matches: Candidate[], root: string): string | undefined {
	const exact = matches.filter((match) => match.id === name);
	const chosen = exact.length > 0 ? exact : matches;
	const paths = [...new Set(chosen.map((match) => match.path))];
	if (paths.length === 1) return paths[0];
	if (paths.length === 0) return undefined;
	const shown = paths.slice(0, 5).join(", ");
	throw new CliError(
		`"${name}" matches ${paths.length} sessions under ${root}: ${shown}${paths.length > 5 ? ", …" : ""}`,
	);
}

/** The path of the session `name` stands for; a `CliError` saying what was looked for when there is none. */
export async function findSession(name: string, placesOf: () => Places, storage: Storage): Promise<string> {
	if (isFile(name)) return resolve(name);
	if (name.includes("/") || name.endsWith(".jsonl")) throw new CliError(`no such session file: ${resolve(name)}`);
	if (name === "") throw new CliError("no session named: give a file or a session id");
	const places = placesOf();
	const byFileName = chooseOne(
		name,
		candidatesByFileName(places.root).filter((candidate) => candidate.id.startsWith(name)),
		places.root,
	);
	if (byFileName) return byFileName;
	const sessions = await listAllSessions(storage, places.root, { catalog: places.catalog });
	const byHeader = sessions
		.filter((session) => typeof session.id === "string" && session.id.startsWith(name))
		.map((session) => ({ id: session.id, path: session.path }));
	const found = chooseOne(name, byHeader, places.root);
	if (found) return found;
	throw new CliError(`no session file or session id (or id prefix) "${name}" under ${places.root}`);
}
