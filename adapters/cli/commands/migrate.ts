/**
 * `migrate`: rewrite a session file of an older format version (v1, v2) in the current one, the way the
 * package opens such a file for writing: under its writer lock, the original kept first as
 * `<file>.v<N>.bak` (`.v<N>.<k>.bak` when that name is taken; nothing is overwritten), lines that could
 * not be read kept as they were. A file that already is current is left alone: nothing is written. Says
 * what happened on standard output.
 * @module
 */
import { CURRENT_SESSION_VERSION, runTask, Session } from "../../../src/index.ts";
import { readSessionHeader } from "../../../src/load.ts";
import { createNodeLocks } from "../../node.ts";
import { CliError } from "../errors.ts";
import type { RunContext } from "../run-context.ts";
import { lockedError, refuseSampleFile } from "../write-guard.ts";

export async function migrateCommand(context: RunContext, file: string): Promise<void> {
	const { storage, output } = context;
	const path = await context.sessionPath(file);
	refuseSampleFile(path);
	const header = await runTask(readSessionHeader(path), storage);
	if (!header) throw new CliError(`${path} is not a pi session: its first line is not a session header`);
	const version = typeof header.version === "number" ? header.version : 1;
	if (version >= CURRENT_SESSION_VERSION) {
		const newer = version > CURRENT_SESSION_VERSION ? `, newer than this tool's ${CURRENT_SESSION_VERSION}` : "";
		output.line(`${path} is already version ${version}${newer}: nothing was written`);
		return;
	}
	let session: Session;
	try {
		// Opening for writing migrates (see src/open-session.ts), with the lock held while it does.
		session = await Session.open(storage, path, { locks: createNodeLocks(storage), load: "full" });
	} catch (error) {
		throw lockedError(error);
	}
	const { migratedFrom, diagnostics } = session.report;
	await session.close();
	if (!migratedFrom?.backupPath) {
		// Someone else migrated it between the look at its header and the lock.
		output.line(`${path} is already version ${CURRENT_SESSION_VERSION}: nothing was written`);
		return;
	}
	output.line(`migrated ${path} from version ${migratedFrom.version} to ${CURRENT_SESSION_VERSION}`);
	output.line(`the original is kept as ${migratedFrom.backupPath}`);
	const skipped = diagnostics.length;
	if (skipped > 0) {
		output.note(
			`${skipped} ${skipped === 1 ? "problem was" : "problems were"} found while reading it (lines that could not be read were kept as they were): see pi-sessions check ${path}`,
		);
	}
}
