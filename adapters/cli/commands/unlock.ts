/**
 * `unlock`: the way out of a writer lock that stands in the way. Says who holds the lock of a session
 * file (pid, machine, thread, since when) and removes it when that holder is gone. A holder that may be
 * alive (another machine's, whose liveness cannot be told from here, or a program of this machine that
 * runs) is refused unless `--force`; a forced break prints a warning on standard error naming the holder.
 * Nothing is ever removed without saying so.
 * @module
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { durationText, type LockStatus } from "../../../src/lock-files.ts";
import { createNodeLocks } from "../../node.ts";
import { CliError } from "../errors.ts";
import type { RunContext } from "../run-context.ts";

/**
 * The session file a name stands for; its lock file (`FILE.lock`) names the same session, even when the
 * session file itself is gone.
 */
async function sessionOf(context: RunContext, file: string): Promise<string> {
	if (!file.endsWith(".jsonl.lock")) return context.sessionPath(file);
	const session = file.slice(0, -".lock".length);
	return existsSync(session) ? context.sessionPath(session) : resolve(session);
}

function heldBy(status: LockStatus): string {
	const thread = status.owner?.thread !== undefined ? `, thread ${status.owner.thread}` : "";
	const since =
		status.owner && Number.isFinite(status.owner.startedAt)
			? `; its process started ${new Date(status.owner.startedAt).toISOString()}`
			: "";
	const age = status.ageMs !== undefined ? `, taken ${durationText(Math.max(0, status.ageMs))} ago` : "";
	return `${status.holder}${status.state === "unreadable" ? "" : thread}${age}${since}`;
}

const STATES: Record<Exclude<LockStatus["state"], "free">, string> = {
	alive: "it is running",
	unknown: "it is on another machine: whether it still runs cannot be told from here",
	gone: "it is gone",
	unreadable: "the file names no holder that can be read",
};

export async function unlockCommand(context: RunContext, file: string, options: { force: boolean }): Promise<void> {
	const { output } = context;
	const path = await sessionOf(context, file);
	const locks = createNodeLocks(context.storage);
	const status = await locks.inspect(path);
	if (status.state === "free") {
		output.line(`${path} is not locked: nothing was removed`);
		return;
	}
	output.line(`${path} is locked by ${heldBy(status)} (${STATES[status.state]})`);
	if (!status.breakable && !options.force) {
		const force = `pi-sessions unlock ${path} --force`;
		const why =
			status.state === "alive"
				? `close that program; only if you are sure it does not write this session: ${force}`
				: status.state === "unknown"
					? `if you are sure it no longer runs (that machine is off, or the program was killed): ${force}`
					: `it may be being written right now: try again in a moment, or: ${force}`;
		throw new CliError(`the lock was left in place: ${why}`);
	}
	const result = await locks.breakLock(path, {
		force: options.force,
		onBreak: (broken) =>
			output.note(
				`warning: broke the writer lock of ${broken.path}, held by ${broken.holder}, which ${
					status.state === "alive" ? "is running" : "may still be running"
				}: if it still writes, two programs now write this session and their entries end up on separate branches; close one of them`,
			),
	});
	if (!result.removed) {
		throw new CliError(`the lock of ${path} changed while it was being removed: nothing was removed; look again`);
	}
	output.line(
		result.broken ? `removed the lock of ${path} by force` : `removed the stale lock of ${path} (its holder is gone)`,
	);
}
