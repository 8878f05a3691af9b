/**
 * `fork`: a new session holding the root → leaf path of a session (its current leaf unless `--leaf`),
 * as pi's `createBranchedSession` makes it (label entries dropped from the path, the labels that still
 * apply added after it), its header's `parentSession` naming the source. The new file goes where pi 1.6
 * puts the sessions of the target working directory (`--to`, default the source's): the directory for
 * that cwd under the sessions root in use. The source is only read; the new file is created exclusively
 * (nothing is ever overwritten) while its writer lock is held. Prints the new file's path on standard
 * output, and what was forked on standard error.
 * @module
 */
import { resolve } from "node:path";
import { branchIntoNewFile } from "../../../src/fork.ts";
import { encodeCwd, runTask } from "../../../src/index.ts";
import { readSessionHeader } from "../../../src/load.ts";
import { openSessionFile } from "../../../src/open-session.ts";
import { joinPath } from "../../../src/paths.ts";
import { CliError } from "../errors.ts";
import type { RunContext } from "../run-context.ts";
import { plural } from "../terminal.ts";
import { refuseSampleRoot, withWriterLock } from "../write-guard.ts";

export interface ForkOptions {
	/** The last entry of the path to fork (default: the source's current leaf). */
	leaf?: string;
	/** The new session's working directory (default: the source's). */
	to?: string;
}

export async function forkCommand(context: RunContext, name: string, options: ForkOptions): Promise<void> {
	const { storage, output } = context;
	const source = await context.sessionPath(name);
	const header = await runTask(readSessionHeader(source), storage);
	if (!header) throw new CliError(`${source} is not a pi session: its first line is not a session header`);
	const cwd = options.to === undefined ? header.cwd : resolve(options.to);
	const sessionDir = joinPath(context.places().root, encodeCwd(cwd));
	refuseSampleRoot(context, sessionDir);

	// Read only (no lock, nothing repaired or migrated on disk); lazily: bodies are decoded when written.
	const read = await runTask(
		openSessionFile(source, { readOnly: true, create: false, load: "lazy", sessionDir, cwd }),
		storage,
	);
	const leafId = options.leaf ?? read.tree.getLeafId();
	if (leafId === null) throw new CliError(`${source} has no entries: there is nothing to fork`);
	if (read.tree.structureOf(leafId) === undefined) throw new CliError(`no entry ${leafId} in ${source}`);
	const fork = branchIntoNewFile(read, leafId);
	const path = fork.path as string;
	const entries = fork.tree.structureBetween(0, fork.tree.size);
	// pi writes a session file only once it holds a user or assistant message; a fork without one would be
	// written by nobody (the engine would keep it in memory until one came).
	const conversation = entries.some(
		(entry) => entry.type === "message" && ["user", "assistant"].includes(String(entry.message?.role)),
	);
	if (!conversation) {
		throw new CliError(
			`the path to ${leafId} holds no user or assistant message, and pi writes no session file without one: nothing was written`,
		);
	}

	await storage.mkdir(sessionDir);
	await withWriterLock(context, path, () => runTask(fork.persist(fork.size, true), storage));
	if (!(await storage.stat(path))) throw new CliError(`the fork was not written to ${path}`);
	output.line(path);
	output.note(
		`forked ${plural(entries.length, "entry", "entries")} of ${source}, up to ${leafId}, into session ${fork.tree.getSessionId()} (cwd ${cwd})`,
	);
}
