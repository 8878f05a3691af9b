/**
 * Your five most recent pi sessions and the size of each one's model context, with Deno, allowed to
 * read files and the environment and nothing else:
 *
 *   deno run --allow-read --allow-env examples/deno/recent.ts [COUNT]
 *
 * Reads `$PI_CODING_AGENT_DIR/sessions` or `~/.pi/agent/sessions` and changes nothing there (no listing
 * catalog, no lock, no repair). On a machine without pi sessions it shows the samples bundled with the
 * package instead, and says so on standard error.
 * @module
 */
import { resolveAgentDir, sessionsRoot } from "pi-session-tree";
import { describe, recentSessions, samplesRoot } from "../shared/recent-sessions.ts";

const count = Number(Deno.args[0] ?? 5);
if (!Number.isInteger(count) || count < 1) {
	console.error("usage: deno run --allow-read --allow-env examples/deno/recent.ts [COUNT]   (5 unless given)");
	Deno.exit(2);
}

const home = Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? ".";
let root = sessionsRoot(resolveAgentDir(Deno.env.get("PI_CODING_AGENT_DIR"), home));
if (
	!(await Deno.stat(root).then(
		(found) => found.isDirectory,
		() => false,
	))
) {
	console.error(`No pi sessions at ${root}: showing the sample sessions bundled with pi-session-tree.`);
	root = samplesRoot();
}

const started = performance.now();
const sessions = await recentSessions(root, count);
const ms = performance.now() - started;
const plural = sessions.length === 1 ? "" : "s";
console.log(`The ${sessions.length} most recent session${plural} in ${root} (read in ${ms.toFixed(0)} ms):\n`);
console.log(sessions.map(describe).join("\n\n"));
