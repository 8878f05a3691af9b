/**
 * The persistence walk-through, runnable unchanged on Node (`npx tsx`), Bun (`npx bun`) and Deno
 * (`npx deno run -A`): create, append, branch, fork, migrate and list pi sessions in pi's layout, with
 * the async `Session` and with the pi-compatible `SessionManager`.
 *
 * It works in a temporary agent directory unless `PI_CODING_AGENT_DIR` is set, so it never touches
 * your real `~/.pi` by accident. Prints one line per step and `ok` at the end; exits 1 on a mismatch.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentDir, createNodeLocks, createNodeStorage } from "../adapters/node.ts";
import { SessionManager } from "../adapters/pi-compat.ts";
import { defaultSessionDir, listAllSessions, Session, sessionsRoot } from "../src/index.ts";

process.env.PI_CODING_AGENT_DIR ??= mkdtempSync(join(tmpdir(), "pi-agent-"));
const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
const storage = createNodeStorage();
const locks = createNodeLocks(storage); // lock files shared with other processes
const check = (what: string, ok: boolean) => {
	console.log(`${ok ? "✓" : "✗"} ${what}`);
	if (!ok) process.exit(1);
};
const assistant = (text: string) => ({
	role: "assistant" as const,
	content: [{ type: "text" as const, text }],
	api: "messages",
	provider: "anthropic",
	model: "claude-sonnet-4-5",
	usage: {
		input: 1,
		output: 1,
		cacheRead: 0,
		cacheWrite: 0,
		totalTokens: 2,
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
	},
	stopReason: "stop" as const,
	timestamp: Date.now(),
});

console.log(`runtime: ${runtime}, agent dir: ${agentDir()}`);
const cwd = "/home/me/project";
const sessionDir = defaultSessionDir(cwd, agentDir());

// Async engine: create, append, branch, fork to a new file.
const session = await Session.create(storage, { cwd, sessionDir, durability: "group", locks });
const question = await session.appendMessage({ role: "user", content: "How do I list files?", timestamp: Date.now() });
check("the file exists from the first user message (pi 1.6)", (await storage.stat(session.path as string)) !== null);
const [answer] = await Promise.all([
	session.appendMessage(assistant("Use ls.")),
	session.appendLabelChange(question, "start"),
]);
session.branch(question);
await session.appendMessage({ role: "user", content: "And hidden files?", timestamp: Date.now() });
const firstFile = session.path as string;
const fork = await session.createBranchedSession(answer);
const forkWritten = fork !== undefined && (await storage.stat(fork)) !== null;
check(
	"createBranchedSession wrote a new file pointing back",
	session.header.parentSession === firstFile && forkWritten,
);
await session.close();

// Reopen, and migrate a v1 file as old pi versions wrote it (a copy of the generated one in test/fixtures;
// the original is kept as a backup). It goes where pi would have put it: <ISO time>_<session id>.jsonl.
const reopened = await Session.open(storage, firstFile, { locks });
check("reopened with every entry", reopened.tree.size === 4 && reopened.tree.getLabel(question) === "start");
await reopened.close();
const v1Text = readFileSync(new URL("../test/fixtures/sessions/v1-linear.jsonl", import.meta.url), "utf8");
const v1Header = JSON.parse(v1Text.slice(0, v1Text.indexOf("\n"))) as { id: string; timestamp: string };
const v1 = join(sessionDir, `${v1Header.timestamp.replace(/[:.]/g, "-")}_${v1Header.id}.jsonl`);
writeFileSync(v1, v1Text);
const migrated = await Session.open(storage, v1, { locks });
check(
	`migrated v1 → v3 with a backup (${migrated.tree.size} entries)`,
	migrated.report.migratedFrom?.backupPath !== undefined,
);
const context = migrated.tree.buildSessionContext();
check(
	`context of the migrated leaf starts with its compaction summary (${context.messages.length} messages)`,
	context.messages[0]?.role === "compactionSummary",
);
await migrated.close();

// The pi-compatible facade, synchronously, on the same files.
const manager = SessionManager.continueRecent(cwd);
check("SessionManager.continueRecent opened the most recent session", manager.getSessionFile() !== undefined);
manager.appendMessage({ role: "user", content: "One more question", timestamp: Date.now() });
const forked = SessionManager.forkFrom(firstFile, "/home/me/other");
check("SessionManager.forkFrom copied the history into another project", forked.getEntries().length === 4);
manager.close();
forked.close();

const all = await listAllSessions(storage, sessionsRoot(agentDir()));
// The first file, its fork, the migrated file, and the copy in the other project.
check(`listed ${all.length} sessions across projects`, all.length === 4);
console.log("ok");
