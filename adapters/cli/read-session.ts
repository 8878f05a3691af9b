/**
 * A session opened to be read: lazily (structure now, bodies when asked: a 1 GB session opens in
 * seconds), read-only (no lock taken, nothing repaired or migrated on disk), closed when done.
 * @module
 */
import { type LoadMode, Session } from "../../src/index.ts";
import { CliError } from "./errors.ts";
import type { RunContext } from "./run-context.ts";

export async function withSession<T>(
	context: RunContext,
	name: string,
	read: (session: Session) => Promise<T>,
	load: LoadMode = "lazy",
): Promise<T> {
	const path = await context.sessionPath(name);
	const session = await Session.open(context.storage, path, { ...context.limits, readOnly: true, load });
	try {
		return await read(session);
	} finally {
		await session.close();
	}
}

/** The leaf a command asks for (`--leaf`), or the session's own; a `CliError` for an id the session lacks. */
export function leafOf(session: Session, leaf: string | undefined): string | null {
	if (leaf === undefined) return session.tree.getLeafId();
	if (session.tree.structureOf(leaf) === undefined) throw new CliError(`no entry ${leaf} in ${session.path}`);
	return leaf;
}
