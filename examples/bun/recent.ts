/**
 * Your five most recent pi sessions and the size of each one's model context, with Bun:
 *
 *   bun examples/bun/recent.ts [COUNT]
 *
 * Reads `$PI_CODING_AGENT_DIR/sessions` or `~/.pi/agent/sessions` and changes nothing there (no listing
 * catalog, no lock, no repair). On a machine without pi sessions it shows the samples bundled with the
 * package instead, and says so on standard error.
 * @module
 */
import { stat } from "node:fs/promises";
import { homedir } from "node:os";
import { resolveAgentDir, sessionsRoot } from "pi-session-tree";
import { describe, recentSessions, samplesRoot } from "../shared/recent-sessions.ts";

const count = Number(Bun.argv[2] ?? 5);
if (!Number.isInteger(count) || count < 1) {
	console.error(`usage: bun ${Bun.argv[1]} [COUNT]   (COUNT: how many sessions, 5 unless given)`);
	process.exit(2);
}

let root = sessionsRoot(resolveAgentDir(Bun.env.PI_CODING_AGENT_DIR, homedir()));
if (
	!(await stat(root).then(
		(found) => found.isDirectory(),
		() => false,
	))
) {
	console.error(`No pi sessions at ${root}: showing the sample sessions bundled with pi-session-tree.`);
	root = samplesRoot();
}

const started = Bun.nanoseconds();
const sessions = await recentSessions(root, count);
const ms = (Bun.nanoseconds() - started) / 1e6;
const plural = sessions.length === 1 ? "" : "s";
console.log(`The ${sessions.length} most recent session${plural} in ${root} (read in ${ms.toFixed(0)} ms):\n`);
console.log(sessions.map(describe).join("\n\n"));
