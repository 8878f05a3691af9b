/**
 * A session named on the command line: a path to its file, or its id or a unique prefix of it, found
 * across every project under the sessions root (by the ids in pi's file names, then by the headers'
 * ids through the listing, for files named otherwise).
 * @module
 */
import { readdirSync, realpathSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { listAllSessions, type Storage } from "../../src/index.ts";
import { sessionIdOfFileName } from "../../src/paths.ts";
import { notAFileError } from "../../src/storage.ts";
import { fileTypeOf } from "../fs-promises.ts";
import { CliError } from "./errors.ts";
import { isDirectory, isFile, type Places } from "./places.ts";

interface Candidate {
	id: string;
	path: string;
}

function candidatesByFileName(root: string): Candidate[] {
	const found: Candidate[] = [];
	for (const project of readdirSync(root, { withFileTypes: true })) {
		const dir = join(root, project.name);
		if (!project.isDirectory() && !(project.isSymbolicLink() && isDirectory(dir))) continue;
		for (const file of readdirSync(dir, { withFileTypes: true })) {
			const id = file.name.endsWith(".jsonl") ? sessionIdOfFileName(file.name) : undefined;
			const path = join(dir, file.name);
			if (id !== undefined && (file.isFile() || (file.isSymbolicLink() && isFile(path)))) found.push({ id, path });
		}
	}
	return found;
}

function chooseOne(name: string, matches: Candidate[], root: string): string | undefined {
	const exact = matches.filter((match) => match.id === name);
	const chosen = exact.length > 0 ? exact : matches;
	// A link and the file it points to are one session.
	const paths = [...new Set(chosen.map((match) => realpathSync(match.path)))];
	if (paths.length === 1) return paths[0];
	if (paths.length === 0) return undefined;
	const shown = paths.slice(0, 5).join(", ");
	throw new CliError(
		`"${name}" matches ${paths.length} sessions under ${root}: ${shown}${paths.length > 5 ? ", …" : ""}`,
	);
}

/** The path of the session `name` stands for; a `CliError` saying what was looked for when there is none. */
export async function findSession(name: string, placesOf: () => Places, storage: Storage): Promise<string> {
	// The file itself, not a link to it: a command that rewrites it (migrate, repair) must rewrite the
	// session, not replace the link, and take the lock every other writer of that file takes.
	if (isFile(name)) return realpathSync(name);
	if (name.includes("/") || name.endsWith(".jsonl")) {
		// Something that is no regular file (a named pipe, a device, a directory) is never read: say what it is.
		const there = statSync(name, { throwIfNoEntry: false });
		if (there) throw new CliError(notAFileError(resolve(name), fileTypeOf(there)).message);
		throw new CliError(`no such session file: ${resolve(name)}`);
	}
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

/** Shown ids are at least this long (a session id from pi is a UUIDv7: its first 8 characters are a time). */
const SHORT_ID = 8;

/**
 * Ids as a listing shows them: each cut to its shortest prefix (at least 8 characters) that no other
 * session under the root begins with, so that what is shown can be typed back (`tree PREFIX`). Sessions
 * made within the same minute share their first 8 characters.
 */
export function shortIds(shown: Iterable<unknown>, places: Places): (id: unknown) => string {
	const all = [
		...new Set([...candidatesByFileName(places.root).map((c) => c.id), ...[...shown].filter(isString)]),
	].sort();
	const common = (a: string | undefined, b: string) => {
		let length = 0;
		while (a !== undefined && length < a.length && a[length] === b[length]) length++;
		return length;
	};
	return (id) => {
		if (!isString(id)) return String(id);
		let low = 0;
		let high = all.length;
		while (low < high) {
			const middle = (low + high) >> 1;
			if ((all[middle] as string) < id) low = middle + 1;
			else high = middle;
		}
		const next = all[low] === id ? all[low + 1] : all[low];
		const length = Math.max(SHORT_ID, common(all[low - 1], id) + 1, common(next, id) + 1);
		return id.slice(0, length);
	};
}

function isString(value: unknown): value is string {
	return typeof value === "string";
}
