/**
 * `context`: what would be sent to the model from a leaf, as pi 1.6's `buildSessionContext` gives it
 * (`--json` prints that object as it is: `{ messages, thinkingLevel, model }`); `--last N` only its last N
 * messages, decoding only the entries they come from.
 * @module
 */
import { fieldText } from "../../../src/entry-text.ts";
import { type AgentMessage, messageText } from "../../../src/index.ts";
import { leafOf, withSession } from "../read-session.ts";
import type { RunContext } from "../run-context.ts";

export interface ContextOptions {
	leaf?: string;
	last?: number;
	json: boolean;
}

const ROLE_NAMES = new Map([
	["toolResult", "tool result"],
	["bashExecution", "bash"],
	["branchSummary", "branch summary"],
	["compactionSummary", "compaction summary"],
	["custom", "custom"],
]);

export async function contextCommand(context: RunContext, name: string, options: ContextOptions): Promise<void> {
	await withSession(context, name, async (session) => {
		const leafId = leafOf(session, options.leaf);
		const { output } = context;
		let answer: { messages: AgentMessage[]; thinkingLevel: string; model: unknown };
		let total: number;
		if (options.last === undefined) {
			answer = await session.buildSessionContext(leafId);
			total = answer.messages.length;
		} else {
			const page = await session.contextPage({ leafId, last: options.last });
			answer = { messages: page.messages, thinkingLevel: page.thinkingLevel, model: page.model };
			total = page.total;
		}
		if (options.json) {
			output.json(answer);
			return;
		}
		const { color } = output;
		const model = answer.model as { provider?: unknown; modelId?: unknown } | null;
		const shown = answer.messages.length;
		output.line(
			color.dim(
				`${total} messages${shown < total ? ` (the last ${shown})` : ""} · model ${model ? `${fieldText(model.provider)}/${fieldText(model.modelId)}` : "none"} · thinking ${fieldText(answer.thinkingLevel)} · leaf ${leafId ?? "none"}`,
			),
		);
		for (const message of answer.messages) {
			output.line();
			const role = fieldText((message as { role?: unknown } | null)?.role);
			output.line(color.bold(color.cyan(ROLE_NAMES.get(role) ?? (role || "message"))));
			output.line(messageText(message));
		}
	});
}
