/**
 * Random operation sequences over a session, for the differential tests against pi 1.6.0: every kind of
 * entry pi 1.6 writes (system messages, usage, context edits, compactions that keep none or name an entry
 * off the path, branch summaries with usage…), with some operations that pi refuses (both sides must), and
 * forks. Operations name entries by position, so each side resolves them to its own ids; each carries a
 * clock step, which may go back, so that children sort by timestamp as well as by append order.
 * (test/support/ops.ts is the generator for pi 0.73.1, which knows fewer kinds.)
 */
import fc from "fast-check";
import type { Usage } from "../../src/index.ts";

/** An id neither side has. */
export const UNKNOWN_ID = "not-an-entry";

/** Which entry a compaction keeps from. */
export type Keep =
	/** The entry `back` steps before the leaf (the leaf itself for 0). */
	| { mode: "path"; back: number }
	/** `null`: retain none. */
	| { mode: "none" }
	/** Argument left out: retain none. */
	| { mode: "omitted" }
	/** Any entry of the session by position, on the path or not. */
	| { mode: "any"; pick: number }
	/** An id that is no entry. */
	| { mode: "unknown" };

/** An entry named by position among all entries, among the branch's, or an id that is no entry. */
export type Target = { among: "all" | "branch"; pick: number } | { among: "unknown" };

export type Op16 = { dt: number } & (
	| { kind: "message"; message: Record<string, unknown> }
	| { kind: "thinking"; level: string }
	| { kind: "model"; provider: string; modelId: string }
	| { kind: "usage"; usageKind: string; provider: string; model: string; usage: Usage; note: string | undefined }
	| {
			kind: "compaction";
			keep: Keep;
			summary: string;
			details: unknown;
			fromHook: boolean | undefined;
			usage: Usage | undefined;
	  }
	| { kind: "contextEdit"; target: Target; replacement: unknown }
	| { kind: "custom"; customType: string; data: unknown }
	| { kind: "customMessage"; customType: string; content: unknown; display: boolean; details: unknown }
	| { kind: "label"; target: Target; label: string | undefined }
	| { kind: "name"; name: string }
	| { kind: "branch"; target: Target }
	| { kind: "reset" }
	| {
			kind: "branchSummary";
			target: Target | null;
			summary: string;
			details: unknown;
			fromHook: boolean | undefined;
			usage: Usage | undefined;
	  }
	| { kind: "fork"; target: Target }
);

type MaybePromise<T> = T | Promise<T>;

/**
 * What the operations need of a session: pi 1.6's method names (`appendUsage` giving the id, as ours does),
 * `fork` for `createBranchedSession` (the session then holds the fork), and the ids in order.
 */
export interface Target16 {
	appendMessage(message: unknown): MaybePromise<string>;
	appendThinkingLevelChange(level: string): MaybePromise<string>;
	appendModelChange(provider: string, modelId: string): MaybePromise<string>;
	appendUsage(kind: string, provider: string, model: string, usage: Usage, note?: string): MaybePromise<string>;
	appendCompaction(
		summary: string,
		firstKeptEntryId: string | null | undefined,
		tokensBefore: number,
		details?: unknown,
		fromHook?: boolean,
		usage?: Usage,
	): MaybePromise<string>;
	appendContextEdit(targetId: string, replacement: unknown): MaybePromise<string>;
	appendCustomEntry(customType: string, data?: unknown): MaybePromise<string>;
	appendCustomMessageEntry(
		customType: string,
		content: unknown,
		display: boolean,
		details?: unknown,
	): MaybePromise<string>;
	appendLabelChange(targetId: string, label: string | undefined): MaybePromise<string>;
	appendSessionInfo(name: string): MaybePromise<string>;
	branch(id: string): void;
	resetLeaf(): void;
	branchWithSummary(
		id: string | null,
		summary: string,
		details?: unknown,
		fromHook?: boolean,
		usage?: Usage,
	): MaybePromise<string>;
	fork(leafId: string): MaybePromise<void>;
	/** Ids of the session's entries, in file order. */
	entryIds(): string[];
	/** Ids of the root → leaf path. */
	branchIds(): string[];
}

/** What one operation did on one side. */
export type Outcome =
	| { kind: "appended"; id: string }
	| { kind: "moved" }
	| { kind: "forked"; ids: string[] }
	| { kind: "skipped" }
	| { kind: "threw"; message: string };

// Arbitraries -------------------------------------------------------------------------------------

const text: fc.Arbitrary<string> = fc.oneof(
	{ weight: 4, arbitrary: fc.string({ maxLength: 10 }) },
	{ weight: 1, arbitrary: fc.constantFrom("héllo 🚀", "two\nlines", "\u2028sep", 'quote " and \\', "") },
);

const usageArbitrary: fc.Arbitrary<Usage> = fc
	.record({ input: fc.nat(500), output: fc.nat(500), cacheRead: fc.nat(50), cost: fc.nat(100) })
	.map(({ input, output, cacheRead, cost }) => ({
		input,
		output,
		cacheRead,
		cacheWrite: 0,
		totalTokens: input + output + cacheRead,
		cost: { input: cost / 1000, output: 0, cacheRead: 0, cacheWrite: 0, total: cost / 1000 },
	}));

const textBlock = fc.record({ type: fc.constant("text"), text });
const imageBlock = fc.record({
	type: fc.constant("image"),
	data: fc.constantFrom("aGk=", "AAAA"),
	mimeType: fc.constant("image/png"),
});
const thinkingBlock = fc.record({ type: fc.constant("thinking"), thinking: text });
const toolCallBlock = fc.record({
	type: fc.constant("toolCall"),
	id: fc.constantFrom("call-1", "call-2"),
	name: fc.constantFrom("read", "bash"),
	arguments: fc.dictionary(fc.constantFrom("path", "command"), text, { maxKeys: 2, noNullPrototype: true }),
});

/** `MISSING` content leaves the key out; `null` is stored as `null` (both occur in old and hand-made files). */
const MISSING = Symbol("missing");
type Content = unknown;

function contentOf(value: fc.Arbitrary<unknown>): fc.Arbitrary<Content> {
	return fc.oneof(
		{ weight: 6, arbitrary: value },
		{ weight: 1, arbitrary: fc.constant(null) },
		{ weight: 1, arbitrary: fc.constant(MISSING) },
	);
}

/** The message with its keys in the order given; a `MISSING` value leaves its key out. */
function message(fields: Record<string, unknown>): Record<string, unknown> {
	return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== MISSING));
}

const timestamp = fc.integer({ min: 1_700_000_000_000, max: 1_700_000_100_000 });
const sectionName = fc.constantFrom("preamble", "tools", "cwd", "skills");
const toolName = fc.constantFrom("read", "write", "bash", "grep");

const systemMessage = fc
	.record({
		content: contentOf(fc.oneof(text, fc.array(fc.oneof(textBlock, textBlock, imageBlock), { maxLength: 3 }))),
		sections: fc.option(
			fc.dictionary(sectionName, fc.option(text, { nil: null }), { maxKeys: 3, noNullPrototype: true }),
			{ nil: MISSING },
		),
		toolsAdded: fc.option(
			fc.array(
				fc.record({
					name: toolName,
					description: text,
					parameters: fc.constantFrom({}, { type: "object", properties: { path: { type: "string" } } }),
				}),
				{ maxLength: 3 },
			),
			{ nil: MISSING },
		),
		toolsRemoved: fc.option(fc.array(fc.record({ name: toolName }), { maxLength: 2 }), { nil: MISSING }),
		timestamp,
	})
	.map((fields) => message({ role: "system", ...fields }));

const userMessage = fc
	.record({
		content: contentOf(fc.oneof(text, fc.array(fc.oneof(textBlock, textBlock, imageBlock), { maxLength: 3 }))),
		timestamp,
	})
	.map((fields) => message({ role: "user", ...fields }));

const assistantMessage = fc
	.record({
		content: contentOf(fc.array(fc.oneof(textBlock, thinkingBlock, toolCallBlock), { maxLength: 3 })),
		provider: fc.constantFrom("anthropic", "openai"),
		model: fc.constantFrom("m-1", "m-2"),
		usage: usageArbitrary,
		stopReason: fc.constantFrom("stop", "toolUse", "length", "error", "aborted"),
		thinkingLevel: fc.option(fc.constantFrom("off", "minimal", "low", "medium", "high", "xhigh"), { nil: MISSING }),
		timestamp,
	})
	.map(({ content, provider, model, usage, stopReason, thinkingLevel, timestamp }) =>
		message({
			role: "assistant",
			content,
			api: "anthropic-messages",
			provider,
			model,
			usage,
			stopReason,
			thinkingLevel,
			timestamp,
		}),
	);

const toolResultMessage = fc
	.record({
		content: contentOf(fc.array(fc.oneof(textBlock, imageBlock), { maxLength: 2 })),
		isError: fc.boolean(),
		timestamp,
	})
	.map(({ content, isError, timestamp }) =>
		message({ role: "toolResult", toolCallId: "call-1", toolName: "read", content, isError, timestamp }),
	);

const bashExecutionMessage = fc
	.record({ output: text, excludeFromContext: fc.option(fc.boolean(), { nil: MISSING }), timestamp })
	.map(({ output, excludeFromContext, timestamp }) =>
		message({
			role: "bashExecution",
			command: "ls",
			output,
			exitCode: 0,
			cancelled: false,
			truncated: false,
			excludeFromContext,
			timestamp,
		}),
	);

const customRoleMessage = fc
	.record({
		content: contentOf(fc.oneof(text, fc.array(fc.oneof(textBlock, imageBlock), { maxLength: 2 }))),
		display: fc.boolean(),
		timestamp,
	})
	.map(({ content, display, timestamp }) =>
		message({ role: "custom", customType: "ext", content, display, timestamp }),
	);

/** Summary roles stored as message entries: pi's appendMessage takes them (they are meant as entry kinds). */
const summaryRoleMessage = fc.oneof(
	fc
		.record({ summary: text, timestamp })
		.map(({ summary, timestamp }) => message({ role: "branchSummary", summary, fromId: "root", timestamp })),
	fc
		.record({ summary: text, timestamp })
		.map(({ summary, timestamp }) => message({ role: "compactionSummary", summary, tokensBefore: 5, timestamp })),
);

const messageArbitrary: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
	{ weight: 4, arbitrary: userMessage },
	{ weight: 4, arbitrary: assistantMessage },
	{ weight: 2, arbitrary: toolResultMessage },
	{ weight: 3, arbitrary: systemMessage },
	{ weight: 1, arbitrary: bashExecutionMessage },
	{ weight: 1, arbitrary: customRoleMessage },
	{ weight: 1, arbitrary: summaryRoleMessage },
);

const pick = fc.nat(1000);
const targetArbitrary: fc.Arbitrary<Target> = fc.oneof(
	{ weight: 6, arbitrary: fc.record({ among: fc.constant("branch" as const), pick }) },
	{ weight: 3, arbitrary: fc.record({ among: fc.constant("all" as const), pick }) },
	{ weight: 1, arbitrary: fc.constant({ among: "unknown" as const }) },
);

const keepArbitrary: fc.Arbitrary<Keep> = fc.oneof(
	{ weight: 6, arbitrary: fc.record({ mode: fc.constant("path" as const), back: fc.nat(6) }) },
	{ weight: 1, arbitrary: fc.constant({ mode: "none" as const }) },
	{ weight: 1, arbitrary: fc.constant({ mode: "omitted" as const }) },
	{ weight: 1, arbitrary: fc.record({ mode: fc.constant("any" as const), pick }) },
	{ weight: 1, arbitrary: fc.constant({ mode: "unknown" as const }) },
);

/** Context edit replacements: the valid shapes, and some that pi refuses (so must we). */
const replacementArbitrary: fc.Arbitrary<unknown> = fc.oneof(
	{ weight: 3, arbitrary: fc.constant(null) },
	{ weight: 3, arbitrary: fc.record({ content: text }) },
	{ weight: 2, arbitrary: fc.record({ content: fc.array(fc.oneof(textBlock, imageBlock), { maxLength: 2 }) }) },
	{ weight: 1, arbitrary: fc.record({ content: fc.array(fc.oneof(thinkingBlock, toolCallBlock), { maxLength: 2 }) }) },
	{ weight: 1, arbitrary: fc.record({ content: text, note: fc.constant("kept as given") }) },
	{
		weight: 1,
		arbitrary: fc.constantFrom({}, { content: 5 }, { content: null }, { content: undefined }, "text", 7, [], {
			other: "x",
		}),
	},
);

const details: fc.Arbitrary<unknown> = fc.option(
	fc.record({ readFiles: fc.array(fc.constantFrom("a.ts", "b.ts"), { maxLength: 2 }) }),
	{ nil: undefined },
);
const fromHook = fc.constantFrom(undefined, true, false);
const optionalUsage = fc.option(usageArbitrary, { nil: undefined });

const opKinds = fc.oneof(
	{ weight: 12, arbitrary: fc.record({ kind: fc.constant("message" as const), message: messageArbitrary }) },
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("thinking" as const),
			level: fc.constantFrom("off", "low", "high"),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("model" as const),
			provider: fc.constantFrom("anthropic", "openai"),
			modelId: fc.constantFrom("a", "b"),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("usage" as const),
			usageKind: fc.constantFrom("cache_warm", "something-new"),
			provider: fc.constantFrom("anthropic", "openai"),
			model: fc.constantFrom("m-1", "m-2"),
			usage: usageArbitrary,
			note: fc.constantFrom(undefined, "", "warmed before the reply"),
		}),
	},
	{
		weight: 3,
		arbitrary: fc.record({
			kind: fc.constant("compaction" as const),
			keep: keepArbitrary,
			summary: text,
			details,
			fromHook,
			usage: optionalUsage,
		}),
	},
	{
		weight: 4,
		arbitrary: fc.record({
			kind: fc.constant("contextEdit" as const),
			target: targetArbitrary,
			replacement: replacementArbitrary,
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("custom" as const),
			customType: fc.constantFrom("ext-a", "ext-b"),
			data: fc.jsonValue({ maxDepth: 2 }),
		}),
	},
	{
		weight: 2,
		arbitrary: fc.record({
			kind: fc.constant("customMessage" as const),
			customType: fc.constantFrom("ext-a"),
			content: fc.oneof(
				{ weight: 4, arbitrary: text },
				{ weight: 4, arbitrary: fc.array(fc.oneof(textBlock, imageBlock), { maxLength: 2 }) },
				{ weight: 1, arbitrary: fc.constant(null) },
			),
			display: fc.boolean(),
			details,
		}),
	},
	{
		weight: 2,
		arbitrary: fc.record({
			kind: fc.constant("label" as const),
			target: targetArbitrary,
			label: fc.constantFrom(undefined, "", "keep", "important", "x"),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("name" as const),
			name: fc.constantFrom("", "  Refactor  ", "Session A", "two\nlines", "\r\n lead \r\n\n trail ", "tab\tname"),
		}),
	},
	{ weight: 3, arbitrary: fc.record({ kind: fc.constant("branch" as const), target: targetArbitrary }) },
	{ weight: 1, arbitrary: fc.constant({ kind: "reset" as const }) },
	{
		weight: 2,
		arbitrary: fc.record({
			kind: fc.constant("branchSummary" as const),
			target: fc.option(targetArbitrary, { nil: null }),
			summary: fc.constantFrom("", "tried another way"),
			details,
			fromHook,
			usage: optionalUsage,
		}),
	},
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("fork" as const), target: targetArbitrary }) },
);

/** Clock steps in milliseconds: mostly forward, sometimes none or backwards. */
const clockStep = fc.oneof(
	{ weight: 6, arbitrary: fc.integer({ min: 1, max: 5000 }) },
	{ weight: 1, arbitrary: fc.constant(0) },
	{ weight: 1, arbitrary: fc.integer({ min: -5000, max: -1 }) },
);

export const op16Arbitrary: fc.Arbitrary<Op16> = fc
	.tuple(opKinds, clockStep)
	.map(([op, dt]) => ({ ...op, dt }) as Op16);

export function ops16Arbitrary(maxLength = 60): fc.Arbitrary<Op16[]> {
	return fc.array(op16Arbitrary, { minLength: 1, maxLength, size: "max" });
}

// Applying ---------------------------------------------------------------------------------------

function resolve(target: Target16, which: Target): string | undefined {
	if (which.among === "unknown") return UNKNOWN_ID;
	const ids = which.among === "branch" ? target.branchIds() : target.entryIds();
	return ids.length === 0 ? undefined : ids[which.pick % ids.length];
}

function firstKept(target: Target16, keep: Keep): string | null | undefined {
	switch (keep.mode) {
		case "path": {
			const path = target.branchIds();
			return path[Math.max(0, path.length - 1 - keep.back)] ?? null;
		}
		case "none":
			return null;
		case "omitted":
			return undefined;
		case "any":
			return resolve(target, { among: "all", pick: keep.pick }) ?? null;
		case "unknown":
			return UNKNOWN_ID;
	}
}

/** A copy for each side: neither may see the other's objects (or changes to them). */
function copy<T>(value: T): T {
	return value === undefined ? value : structuredClone(value);
}

async function appended(id: MaybePromise<string>): Promise<Outcome> {
	return { kind: "appended", id: await id };
}

async function run(target: Target16, op: Op16, index: number): Promise<Outcome> {
	switch (op.kind) {
		case "message":
			return appended(target.appendMessage(copy(op.message)));
		case "thinking":
			return appended(target.appendThinkingLevelChange(op.level));
		case "model":
			return appended(target.appendModelChange(op.provider, op.modelId));
		case "usage": {
			const usage = copy(op.usage);
			return appended(
				op.note === undefined
					? target.appendUsage(op.usageKind, op.provider, op.model, usage)
					: target.appendUsage(op.usageKind, op.provider, op.model, usage, op.note),
			);
		}
		case "compaction":
			return appended(
				target.appendCompaction(
					op.summary,
					firstKept(target, op.keep),
					1000 + index,
					copy(op.details),
					op.fromHook,
					copy(op.usage),
				),
			);
		case "contextEdit": {
			const id = resolve(target, op.target);
			return id === undefined ? { kind: "skipped" } : appended(target.appendContextEdit(id, copy(op.replacement)));
		}
		case "custom":
			return appended(target.appendCustomEntry(op.customType, copy(op.data)));
		case "customMessage":
			return appended(target.appendCustomMessageEntry(op.customType, copy(op.content), op.display, copy(op.details)));
		case "label": {
			const id = resolve(target, op.target);
			return id === undefined ? { kind: "skipped" } : appended(target.appendLabelChange(id, op.label));
		}
		case "name":
			return appended(target.appendSessionInfo(op.name));
		case "branch": {
			const id = resolve(target, op.target);
			if (id === undefined) return { kind: "skipped" };
			target.branch(id);
			return { kind: "moved" };
		}
		case "reset":
			target.resetLeaf();
			return { kind: "moved" };
		case "branchSummary": {
			const id = op.target === null ? null : resolve(target, op.target);
			if (id === undefined) return { kind: "skipped" };
			return appended(target.branchWithSummary(id, op.summary, copy(op.details), op.fromHook, copy(op.usage)));
		}
		case "fork": {
			const id = resolve(target, op.target);
			if (id === undefined) return { kind: "skipped" };
			await target.fork(id);
			return { kind: "forked", ids: target.entryIds() };
		}
	}
}

/** Apply one operation; a refusal (a throw, or a rejected append) is an outcome like any other. */
export async function applyOp16(target: Target16, op: Op16, index: number): Promise<Outcome> {
	try {
		return await run(target, op, index);
	} catch (error) {
		return { kind: "threw", message: error instanceof Error ? error.message : String(error) };
	}
}
