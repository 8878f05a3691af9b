/**
 * A session written to hold everything an export must not let through: `</script>`, event-handler
 * attributes, `javascript:` URLs, backtick runs longer than any fence, unclosed fences, U+2028/U+2029,
 * markup next to backticks that a Markdown renderer might or might not read as a code span (an escaped
 * backtick, an escaped backslash before one, runs of different lengths, markup right after a span, a
 * span across lines, a link destination that takes a backtick), in messages, tool calls, tool results,
 * a label and the session name. Any script it manages to run sets `window.__pwned` or opens a dialog.
 * Two branches from the first message; the current leaf is on the second, and a label of the first
 * entry is set from the first branch.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeStorage } from "../../adapters/node.ts";
import { type AssistantMessage, Session } from "../../src/index.ts";
import { assistantMessage, smallUsage, userMessage } from "./messages.ts";

export const HOSTILE = {
	script: "</script><script>window.__pwned='script';alert(1)</script>",
	img: `<img src=x onerror="window.__pwned='img';alert(2)">`,
	svg: "<svg onload=window.__pwned='svg'>",
	iframe: "<iframe src=\"javascript:window.__pwned='iframe'\"></iframe>",
	lineSeparators: "a\u2028b\u2029c",
	backticks: "``````````",
	unclosedFence: "````\nthe rest is inside a fence that never closes",
	label: "<b onmouseover=window.__pwned='label'>hot</b>",
	name: "</title><script>window.__pwned='name'</script>",
	escapedBacktick: "look \\`<img src=x onerror=\"window.__pwned='escaped';alert(4)\">` here",
	doubleBackslash: "two \\\\`<img src=x onerror=\"window.__pwned='double'\">` here",
	backtickRuns:
		"`` one ` <img src=x onerror=\"window.__pwned='runs'\"> `` then ``` <svg onload=window.__pwned='runs3'> ``",
	afterSpan: "`code`<img src=x onerror=\"window.__pwned='after'\">",
	spanAcrossLines: "an open ` here\nand ` <img src=x onerror=\"window.__pwned='lines'\"> `",
	linkTakesBacktick: "[x](`) <img src=x onerror=\"window.__pwned='link'\"> `",
} as const;

/** The cases about code spans, one paragraph each. */
export const HOSTILE_SPANS: string = [
	HOSTILE.escapedBacktick,
	HOSTILE.doubleBackslash,
	HOSTILE.backtickRuns,
	HOSTILE.afterSpan,
	HOSTILE.spanAcrossLines,
	HOSTILE.linkTakesBacktick,
].join("\n\n");

export interface HostileSession {
	path: string;
	dir: string;
	/** Ids: the first user message (the root), each branch's entries, the current leaf. */
	root: string;
	first: string[];
	second: string[];
	leaf: string;
	/** User message texts by branch (root's included in both). */
	userTexts: { first: string[]; second: string[] };
}

export async function writeHostileSession(): Promise<HostileSession> {
	const dir = mkdtempSync(join(tmpdir(), "pi-sessions-hostile-"));
	const storage = createNodeStorage();
	const session = await Session.create(storage, { cwd: "/work/<img src=x onerror=alert(3)>", sessionDir: dir });
	const t = Date.UTC(2026, 2, 1);
	const rootText = `Print ${HOSTILE.script} and ${HOSTILE.img} please ${HOSTILE.lineSeparators}`;
	const root = await session.appendMessage(userMessage(rootText, t));
	const call: AssistantMessage = {
		role: "assistant",
		content: [
			{ type: "thinking", thinking: `thinking about ${HOSTILE.svg}\n\n${HOSTILE_SPANS}` },
			{ type: "text", text: HOSTILE.unclosedFence },
			{
				type: "toolCall",
				id: "call_1",
				name: "bash",
				arguments: { command: `echo '${HOSTILE.backticks}' '${HOSTILE.script}'` },
			},
		],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude",
		usage: smallUsage,
		stopReason: "toolUse",
		timestamp: t + 1000,
	};
	const a1 = await session.appendMessage(call);
	const r1 = await session.appendMessage({
		role: "toolResult",
		toolCallId: "call_1",
		toolName: "bash",
		content: [{ type: "text", text: `${HOSTILE.backticks}\n${HOSTILE.script}\n${HOSTILE.svg}` }],
		isError: false,
		timestamp: t + 2000,
	});
	const firstText = `First branch: ${HOSTILE.iframe}\n\n${HOSTILE_SPANS}`;
	const u1 = await session.appendMessage(userMessage(firstText, t + 3000));
	const a1b = await session.appendMessage(assistantMessage(`Done ${HOSTILE.img}`, { timestamp: t + 4000 }));
	const l1 = await session.appendLabelChange(root, HOSTILE.label);
	const n1 = await session.appendSessionInfo(HOSTILE.name);
	session.branch(root);
	const secondText = `Second branch ${HOSTILE.script} ${HOSTILE.lineSeparators}`;
	const u2 = await session.appendMessage(userMessage(secondText, t + 5000));
	const a2 = await session.appendMessage(
		assistantMessage(`Answer on the second branch ${HOSTILE.svg}\n\n${HOSTILE_SPANS}`, { timestamp: t + 6000 }),
	);
	const path = session.path as string;
	await session.close();
	return {
		path,
		dir,
		root,
		first: [a1, r1, u1, a1b, l1, n1],
		second: [u2, a2],
		leaf: a2,
		userTexts: { first: [rootText, firstText], second: [rootText, secondText] },
	};
}
