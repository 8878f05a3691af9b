/**
 * Random operation sequences over a session tree, applied the same way to our `SessionTree` and to pi's
 * `SessionManager` (both have pi's method names). Operations name entries by append index, so each side
 * resolves them to its own ids.
 */
import fc from "fast-check";
import type { AgentMessage, ImageContent, TextContent } from "../../src/index.ts";
import { smallUsage } from "./messages.ts";

export type Op =
	| {
			kind: "message";
			role: "user" | "assistant" | "toolResult" | "bashExecution" | "custom";
			text: string;
			nullContent: boolean;
	  }
	| { kind: "thinking"; level: string }
	| { kind: "model"; provider: string; modelId: string }
	| { kind: "compaction"; keepBack: number; summary: string }
	| { kind: "custom"; customType: string; data: unknown }
	| { kind: "customMessage"; customType: string; text: string; asBlocks: boolean; display: boolean }
	| { kind: "label"; target: number; label: string | undefined }
	| { kind: "name"; name: string }
	| { kind: "branch"; target: number }
	| { kind: "reset" }
	| { kind: "branchSummary"; target: number | null; summary: string };

/** The operations both implementations offer under the same names. */
export interface OpsTarget {
	appendMessage(message: never): string;
	appendThinkingLevelChange(level: string): string;
	appendModelChange(provider: string, modelId: string): string;
	appendCompaction(summary: string, firstKeptEntryId: string, tokensBefore: number): string;
	appendCustomEntry(customType: string, data?: unknown): string;
	appendCustomMessageEntry(
		customType: string,
		content: string | (TextContent | ImageContent)[],
		display: boolean,
	): string;
	appendLabelChange(targetId: string, label: string | undefined): string;
	appendSessionInfo(name: string): string;
	branch(id: string): void;
	resetLeaf(): void;
	branchWithSummary(id: string | null, summary: string): string;
	getBranch(fromId?: string): { id: string }[];
}

const text = fc.string({ maxLength: 12 });

export const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
	{
		weight: 8,
		arbitrary: fc.record({
			kind: fc.constant("message" as const),
			role: fc.constantFrom(
				"user" as const,
				"assistant" as const,
				"toolResult" as const,
				"bashExecution" as const,
				"custom" as const,
			),
			text,
			nullContent: fc.boolean(),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({ kind: fc.constant("thinking" as const), level: fc.constantFrom("off", "low", "high") }),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("model" as const),
			provider: fc.constantFrom("anthropic", "openai"),
			modelId: fc.constantFrom("a", "b"),
		}),
	},
	{ weight: 2, arbitrary: fc.record({ kind: fc.constant("compaction" as const), keepBack: fc.nat(6), summary: text }) },
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("custom" as const),
			customType: fc.constantFrom("ext-a", "ext-b"),
			data: fc.jsonValue({ maxDepth: 2 }),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("customMessage" as const),
			customType: fc.constantFrom("ext-a"),
			text,
			asBlocks: fc.boolean(),
			display: fc.boolean(),
		}),
	},
	{
		weight: 2,
		arbitrary: fc.record({
			kind: fc.constant("label" as const),
			target: fc.nat(),
			label: fc.option(fc.constantFrom("", "keep", "important", "x"), { nil: undefined }),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("name" as const),
			name: fc.constantFrom("", "  Refactor  ", "Session A"),
		}),
	},
	{ weight: 2, arbitrary: fc.record({ kind: fc.constant("branch" as const), target: fc.nat() }) },
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("reset" as const) }) },
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("branchSummary" as const),
			target: fc.option(fc.nat(), { nil: null }),
			summary: fc.constantFrom("", "tried another way"),
		}),
	},
);

export const opsArbitrary: fc.Arbitrary<Op[]> = fc.array(opArbitrary, { minLength: 1, maxLength: 60 });

/** A message of the given role; `timestamp` is the op's index so both sides get equal messages. */
export function messageFor(op: Extract<Op, { kind: "message" }>, timestamp: number): AgentMessage {
	const content = op.nullContent ? null : [{ type: "text" as const, text: op.text }];
	switch (op.role) {
		case "user":
			return { role: "user", content: content ?? op.text, timestamp } as AgentMessage;
		case "assistant":
			return {
				role: "assistant",
				content,
				api: "messages",
				provider: "anthropic",
				model: `m-${op.text.length % 3}`,
				usage: smallUsage,
				stopReason: "stop",
				timestamp,
			} as AgentMessage;
		case "toolResult":
			return {
				role: "toolResult",
				toolCallId: "call",
				toolName: "bash",
				content,
				isError: false,
				timestamp,
			} as AgentMessage;
		case "bashExecution":
			return {
				role: "bashExecution",
				command: "ls",
				output: op.text,
				exitCode: 0,
				cancelled: false,
				truncated: false,
				timestamp,
			};
		case "custom":
			return {
				role: "custom",
				customType: "ext",
				content: content ?? op.text,
				display: true,
				timestamp,
			} as AgentMessage;
	}
}

/**
 * Apply operations in order. Returns the ids of appended entries in append order, so that two targets'
 * ids can be paired up by position.
 */
export function applyOps(target: OpsTarget, ops: readonly Op[]): string[] {
	const ids: string[] = [];
	const pick = (index: number): string | undefined => (ids.length === 0 ? undefined : ids[index % ids.length]);
	ops.forEach((op, index) => {
		switch (op.kind) {
			case "message":
				ids.push(target.appendMessage(messageFor(op, index) as never));
				break;
			case "thinking":
				ids.push(target.appendThinkingLevelChange(op.level));
				break;
			case "model":
				ids.push(target.appendModelChange(op.provider, op.modelId));
				break;
			case "compaction": {
				const path = target.getBranch();
				const kept = path[Math.max(0, path.length - 1 - op.keepBack)];
				if (kept) ids.push(target.appendCompaction(op.summary, kept.id, 1000 + index));
				break;
			}
			case "custom":
				ids.push(target.appendCustomEntry(op.customType, op.data));
				break;
			case "customMessage":
				ids.push(
					target.appendCustomMessageEntry(
						op.customType,
						op.asBlocks ? [{ type: "text", text: op.text }] : op.text,
						op.display,
					),
				);
				break;
			case "label": {
				const id = pick(op.target);
				if (id) ids.push(target.appendLabelChange(id, op.label));
				break;
			}
			case "name":
				ids.push(target.appendSessionInfo(op.name));
				break;
			case "branch": {
				const id = pick(op.target);
				if (id) target.branch(id);
				break;
			}
			case "reset":
				target.resetLeaf();
				break;
			case "branchSummary": {
				const id = op.target === null ? null : pick(op.target);
				if (id !== undefined) ids.push(target.branchWithSummary(id, op.summary));
				break;
			}
		}
	});
	return ids;
}
