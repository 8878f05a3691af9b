/**
 * The session engine in a `worker_threads` worker, driven from the main thread: create a session, append
 * a conversation with a tool call, branch, compact, fork, then print the tree and the model context.
 *
 *   npm run build && npx tsx examples/node/worker.ts
 *
 * Every engine call is a message to the worker and comes back as a promise of plain data, so parsing and
 * file writes never block this thread. The sessions are written in pi's layout under a new temporary agent
 * directory, or under `PI_CODING_AGENT_DIR` if it is set; the paths are printed at the end.
 * @module
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// The package root's pure helpers (no storage, no worker): an entry's kind and text, in words.
import { entryKind, entryPreview, messageText, type OutlineNode } from "pi-session-tree";
// The client side of the worker: it starts the stock worker entry and hands back a typed proxy of the engine.
import { startEngineWorker } from "pi-session-tree/worker";

const agentDir = process.env.PI_CODING_AGENT_DIR ?? mkdtempSync(join(tmpdir(), "pi-agent-"));
// `storage: "node"` is the local file system, with lock files shared with other processes (and pi).
const { engine, terminate } = await startEngineWorker({ storage: "node", agentDir });

// Messages as pi's agent loop records them. Assistant messages carry the model and its token usage.
const usage = (input: number, output: number) => ({
	input,
	output,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: input + output,
	cost: {
		input: input * 3e-6,
		output: output * 15e-6,
		cacheRead: 0,
		cacheWrite: 0,
		total: input * 3e-6 + output * 15e-6,
	},
});
const model = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" };
const user = (text: string) => ({ role: "user" as const, content: text, timestamp: Date.now() });
const assistant = (text: string, input: number, output: number) => ({
	role: "assistant" as const,
	content: [{ type: "text" as const, text }],
	...model,
	usage: usage(input, output),
	stopReason: "stop" as const,
	timestamp: Date.now(),
});

try {
	// A new session for a project. Its file appears with the first user or assistant message, as in pi.
	const { handle } = await engine.create({ cwd: "/home/me/todo-app" });
	await engine.appendModelChange(handle, "anthropic", "claude-sonnet-4-5");
	await engine.appendMessage(handle, user("Which tests are failing?"));

	// A tool call and its result: the assistant asks for `bash`, the agent runs it and records the output.
	await engine.appendMessage(handle, {
		role: "assistant",
		content: [{ type: "toolCall", id: "call_1", name: "bash", arguments: { command: "npm test" } }],
		...model,
		usage: usage(820, 40),
		stopReason: "toolUse",
		timestamp: Date.now(),
	});
	await engine.appendMessage(handle, {
		role: "toolResult",
		toolCallId: "call_1",
		toolName: "bash",
		content: [{ type: "text", text: "FAIL test/due-date.test.ts\n  ✗ parses 'tomorrow'\n1 failed, 41 passed" }],
		isError: false,
		timestamp: Date.now(),
	});
	const answer = await engine.appendMessage(handle, assistant("One: due-date parsing of 'tomorrow'.", 900, 30));
	await engine.appendLabelChange(handle, answer, "diagnosis");

	// One way forward: fix the bug.
	await engine.appendMessage(handle, user("Fix it."));
	await engine.appendMessage(handle, assistant("Fixed: 'tomorrow' now adds one day in local time.", 1400, 220));

	// Branch: move the leaf back to the diagnosis and go another way. Nothing is rewritten; the file only
	// grows, and the abandoned path stays in the tree (branchWithSummary would also leave a summary of it).
	await engine.branch(handle, answer);
	const other = await engine.appendMessage(handle, user("Don't fix it yet: write a test for 'next week' too."));
	await engine.appendMessage(handle, assistant("Added a failing test for 'next week'.", 1500, 180));

	// Compact: a summary stands in for everything before `other` in the model context from here on.
	await engine.appendCompaction(
		handle,
		"The user's due-date parser fails on 'tomorrow'; tests were added.",
		other,
		4200,
	);
	await engine.appendMessage(handle, user("Now fix both."));
	await engine.appendMessage(handle, assistant("Both pass now.", 600, 90));
	await engine.appendSessionInfo(handle, "Failing due-date tests");

	const summary = await engine.summary(handle);
	console.log(`session ${summary.header.id} "${summary.name}": ${summary.entryCount} entries`);
	console.log(`file: ${summary.path}\n`);
	await printTree(handle, summary.leafId);
	await printContext(handle);

	// Fork: continue from the diagnosis in a new file (pi's createBranchedSession). The new file holds the
	// path root → `answer` and points back at the original (`parentSession`); the handle now writes there.
	const original = summary.path;
	const forked = await engine.createBranchedSession(handle, answer);
	await engine.appendMessage(handle, user("Explain the bug instead."));
	const fork = await engine.summary(handle);
	console.log(`\nforked into ${forked}\n  (its parentSession: ${fork.header.parentSession})`);
	await printTree(handle, fork.leafId);

	// forkFrom copies a whole session into another project.
	const copy = await engine.forkFrom(original as string, "/home/me/todo-app-v2");
	console.log(`\ncopied into ${copy.path}: ${copy.entryCount} entries`);

	const sessions = await engine.listAll();
	console.log(`\n${sessions.length} sessions in ${agentDir}`);
} finally {
	// Closes every session (pending writes are written, locks released), then ends the worker.
	await terminate();
}

/** The tree as an outline: one line per entry, a linear run as a column, branches drawn, the leaf marked. */
async function printTree(handle: string, leafId: string | null): Promise<void> {
	// The outline is the cheap view of the tree (ids, kinds, labels; no bodies): one call for the whole tree.
	const nodes = await engine.getOutline(handle);
	const children = new Map<string | null, OutlineNode[]>();
	for (const node of nodes) children.set(node.parentId, [...(children.get(node.parentId) ?? []), node]);
	const print = async (node: OutlineNode, first: string, rest: string): Promise<void> => {
		const entry = await engine.getEntry(handle, node.id); // the body, for its text
		const label = node.label ? ` [${node.label}]` : "";
		const leaf = node.id === leafId ? "  ← leaf" : "";
		console.log(`${first}${node.id} ${entryKind(node)}${label}: ${entry ? oneLine(entryPreview(entry)) : ""}${leaf}`);
		const next = children.get(node.id) ?? [];
		for (const [index, child] of next.entries()) {
			if (next.length === 1) await print(child, rest, rest);
			else if (index < next.length - 1) await print(child, `${rest}├─ `, `${rest}│  `);
			else await print(child, `${rest}└─ `, `${rest}   `);
		}
	};
	for (const root of children.get(null) ?? []) await print(root, "", "");
}

/** What the model would be sent from the current leaf: the compaction summary, then what was kept after it. */
async function printContext(handle: string): Promise<void> {
	const context = await engine.getContext(handle); // or { last: 50 }: a page from the end
	console.log(`\ncontext of the leaf: ${context.total} messages, model ${context.model?.modelId}`);
	for (const message of context.messages) console.log(`  ${message.role}: ${oneLine(messageText(message))}`);
}

function oneLine(text: string): string {
	const line = text.replace(/\s+/g, " ").trim();
	return line.length > 70 ? `${line.slice(0, 69)}…` : line;
}
