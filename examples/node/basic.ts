/**
 * Builds a small branching, compacting session in memory and prints its tree and the model context
 * of its leaf. Run with `npm start`.
 */
import { encodeEntry, SessionTree, type SessionTreeNode } from "../../src/index.ts";

const tree = SessionTree.create({ cwd: "/home/me/project" });
const usage = {
	input: 10,
	output: 5,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 15,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const assistant = (text: string) => ({
	role: "assistant" as const,
	content: [{ type: "text" as const, text }],
	api: "anthropic-messages",
	provider: "anthropic",
	model: "claude-sonnet-4-5",
	usage,
	stopReason: "stop" as const,
	timestamp: Date.now(),
});

tree.appendModelChange("anthropic", "claude-sonnet-4-5");
const question = tree.appendMessage({ role: "user", content: "How do I list files?", timestamp: Date.now() });
tree.appendMessage(assistant("Use `ls`."));
tree.appendLabelChange(question, "first question");
const followUp = tree.appendMessage({ role: "user", content: "And hidden ones?", timestamp: Date.now() });
tree.appendMessage(assistant("Use `ls -a`."));
tree.appendCompaction("The user asked how to list files; answer: ls.", followUp, 1200);
tree.appendThinkingLevelChange("high");
tree.appendMessage({ role: "user", content: "Sort them by size?", timestamp: Date.now() });
// Go back and try another path from the first answer, leaving a summary of the abandoned branch.
tree.branchWithSummary(question, "Explored listing hidden files and sorting.");
tree.appendMessage({ role: "user", content: "Actually, how do I count them?", timestamp: Date.now() });
tree.appendSessionInfo("Listing files");

function printTree(roots: SessionTreeNode[]): void {
	const stack = roots.map((node) => ({ node, depth: 0 })).reverse();
	for (let item = stack.pop(); item; item = stack.pop()) {
		const { entry, label } = item.node;
		const what = entry.type === "message" ? `${entry.message.role}` : entry.type;
		const marker = entry.id === tree.getLeafId() ? "  ← leaf" : "";
		console.log(`${"  ".repeat(item.depth)}${entry.id} ${what}${label ? ` [${label}]` : ""}${marker}`);
		for (const child of [...item.node.children].reverse()) stack.push({ node: child, depth: item.depth + 1 });
	}
}

console.log(`session ${tree.getSessionId()} "${tree.getSessionName()}" (${tree.size} entries)\n`);
console.log("tree:");
printTree(tree.getTree());
const context = tree.buildSessionContext();
console.log(
	`\ncontext of the leaf: model ${context.model?.provider}/${context.model?.modelId}, thinking ${context.thinkingLevel}`,
);
for (const message of context.messages) {
	const text =
		"summary" in message
			? message.summary
			: typeof message.content === "string"
				? message.content
				: JSON.stringify(message.content);
	console.log(`  ${message.role}: ${text}`);
}
console.log(`\nfirst line of the file pi would read:\n  ${encodeEntry(tree.getHeader()).trim()}`);
