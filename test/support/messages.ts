/** Message factories shared by the tests. */
import type { AssistantMessage, UserMessage } from "../../src/index.ts";

/** Token usage of a tiny exchange. */
export const smallUsage: AssistantMessage["usage"] = {
	input: 1,
	output: 1,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 2,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

export function userMessage(content: string, timestamp: number = Date.now()): UserMessage {
	return { role: "user", content, timestamp };
}

export function assistantMessage(
	text: string,
	{
		timestamp = Date.now(),
		provider = "anthropic",
		model = "claude",
	}: { timestamp?: number; provider?: string; model?: string } = {},
): AssistantMessage {
	return {
		role: "assistant",
		content: [{ type: "text", text }],
		api: "anthropic-messages",
		provider,
		model,
		usage: smallUsage,
		stopReason: "stop",
		timestamp,
	};
}
