/**
 * What every command that writes (`fork`, `migrate`, `check --repair`) goes through: the bundled samples
 * are refused (they belong to the package), and a file is changed only under its writer lock (the
 * package's lock files, shared with every engine on this machine), a lock held by someone else being one
 * clear line for the user.
 * @module
 */
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, relative, resolve } from "node:path";
import { type HeldLock, SessionLockedError, type WriterLocks } from "../../src/index.ts";
import { createNodeLocks } from "../node.ts";
import { CliError } from "./errors.ts";
import { samplesRoot } from "./places.ts";
import type { RunContext } from "./run-context.ts";

/** A path with its symbolic links resolved, as far as it exists (a directory to be made has none yet). */
function realPath(path: string): string {
	let existing = resolve(path);
	const rest: string[] = [];
	while (!existsSync(existing)) {
		const parent = dirname(existing);
		if (parent === existing) break;
		rest.unshift(basename(existing));
		existing = parent;
	}
	return resolve(realpathSync(existing), ...rest);
}

function inside(path: string, root: string): boolean {
	const rel = relative(realPath(root), realPath(path));
	return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** Whether `path` is in the bundled samples (false when the package has none). */
export function inSamples(path: string): boolean {
	let root: string;
	try {
		root = samplesRoot();
	} catch {
		return false;
	}
	return inside(path, root);
}

/** A `CliError` unless the tool may write to `path` (a session file of the user's). */
export function refuseSampleFile(path: string): void {
	if (inSamples(path)) {
		throw new CliError(
			`${path} is one of the sample sessions bundled with pi-sessions, which are read-only: copy the file elsewhere and name the copy`,
		);
	}
}

/** A `CliError` unless the tool may create files in `dir`, under the sessions root in use. */
export function refuseSampleRoot(context: RunContext, dir: string): void {
	const places = context.places();
	if (places.samples || inSamples(dir)) {
		throw new CliError(
			`the sessions root ${places.root} is the sample sessions bundled with pi-sessions, which are read-only: pass --dir SESSIONS_DIR (a sessions root of yours) or copy the file`,
		);
	}
}

/** Run `write` holding `path`'s writer lock; a lock held by another program is a `CliError` saying so. */
export async function withWriterLock<T>(context: RunContext, path: string, write: () => Promise<T>): Promise<T> {
	const locks: WriterLocks = createNodeLocks(context.storage);
	let lock: HeldLock;
	try {
		lock = await locks.acquire(path);
	} catch (error) {
		throw lockedError(error);
	}
	try {
		return await write();
	} finally {
		await locks.release(lock);
	}
}

/** `SessionLockedError` as a line for the user; any other error as it is. */
export function lockedError(error: unknown): unknown {
	if (!(error instanceof SessionLockedError)) return error;
	return new CliError(
		`${error.path} is locked by ${error.holder}, a program writing this session; nothing was written: close it and try again`,
	);
}
