/**
 * entryKind, entryPreview and messageText are total: whatever an entry holds (a field missing or of any
 * type, `__proto__` / `constructor` / `toString` as keys or values, objects whose `toString` is no
 * function), they give a string and never throw. Examples of the odd cases a review found, then properties
 * over fast-check's `anything` and over JSON text read back with `JSON.parse` (what a session file gives).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fieldText } from "../src/entry-text.ts";
import {
	type AgentMessage,
	entryKind,
	entryPreview,
	messageText,
	type OutlineNode,
	type SessionEntry,
} from "../src/index.ts";

const kind = (node: unknown) => entryKind(node as Pick<OutlineNode, "type" | "role">);
const preview = (entry: unknown) => entryPreview(entry as SessionEntry);
const text = (message: unknown) => messageText(message as AgentMessage);

describe("entryKind", () => {
	it("names the known kinds and roles", () => {
		expect(kind({ type: "message", role: "user" })).toBe("user");
		expect(kind({ type: "message", role: "toolResult" })).toBe("tool result");
		expect(kind({ type: "message" })).toBe("message");
		expect(kind({ type: "branch_summary" })).toBe("branch summary");
		expect(kind({ type: "something_new" })).toBe("something_new");
	});

	it("reads names of Object.prototype's members as the words they are", () => {
		for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) {
			expect(kind({ type: name })).toBe(name);
			expect(kind({ type: "message", role: name })).toBe(name);
		}
	});

	it("gives a string for a type or role that is not one", () => {
		expect(kind({ type: 7 })).toBe("7");
		expect(kind({})).toBe("entry");
		expect(kind({ type: { toString: 1 } })).toBe("entry");
		expect(kind({ type: "message", role: 42 })).toBe("42");
		expect(kind({ type: "message", role: { toString: 1 } })).toBe("message");
		expect(kind(null)).toBe("entry");
	});
});

describe("entryPreview", () => {
	it("gives empty text for the fields an entry lacks", () => {
		expect(preview({ type: "compaction", id: "a", parentId: null })).toBe("");
		expect(preview({ type: "branch_summary", summary: { __proto__: 1 } })).toBe("");
		expect(preview({ type: "label", label: "x" })).toBe("“x” on ?");
		expect(preview({ type: "label" })).toBe("label cleared on ?");
		expect(preview({ type: "model_change", modelId: "gpt-5" })).toBe("gpt-5");
		expect(preview({ type: "model_change", provider: "openai", modelId: 5 })).toBe("openai/5");
		expect(preview({ type: "usage", kind: null, model: "m" })).toBe("m");
		expect(preview({ type: "thinking_level_change", thinkingLevel: { toString: 1 } })).toBe("");
		expect(preview({ type: "session_info", name: 12 })).toBe("12");
		expect(preview({ type: "custom", customType: ["x"] })).toBe("");
		expect(preview({ type: "message" })).toBe("");
		expect(preview({ type: "message", message: "a string" })).toBe("");
		expect(preview({ type: "message", message: { role: "user" } })).toBe("");
		expect(preview({ type: "constructor" })).toBe("");
	});

	it("shows a label that is set, of any type, as the tree keeps it", () => {
		expect(preview({ type: "label", targetId: "abc", label: { toString: 1 } })).toBe('“{"toString":1}” on abc');
		expect(preview({ type: "label", targetId: "abc", label: 3 })).toBe("“3” on abc");
	});
});

describe("messageText", () => {
	it("gives the text of odd content", () => {
		expect(text({ role: "toString" })).toBe("");
		expect(text({ role: "user", content: { __proto__: { x: 1 } } })).toBe("");
		expect(text({ role: "user", content: [null, 5, "s", { type: "text", text: 7 }, { type: "text" }] })).toBe("7");
		expect(text({ role: "assistant", content: [{ type: "toolCall", name: { a: 1 } }, { type: "thinking" }] })).toBe(
			"→ ({})\n[thinking] ",
		);
		expect(text({ role: "assistant", content: [], errorMessage: ["x"] })).toBe("");
		expect(text({ role: "assistant", content: "a", errorMessage: "boom", stopReason: null })).toBe("a\n[: boom]");
		expect(text({ role: "toolResult", toolName: null, content: 5 })).toBe(": ");
		expect(text({ role: "bashExecution" })).toBe("$ \n");
		expect(text({ role: "compactionSummary", summary: 5 })).toBe("5");
		expect(text({ role: "branchSummary" })).toBe("");
		expect(text(null)).toBe("");
		expect(text("just a string")).toBe("");
		const cyclic: Record<string, unknown> = {};
		cyclic.self = cyclic;
		expect(text({ role: "assistant", content: [{ type: "toolCall", name: "t", arguments: cyclic }] })).toBe("→ t()");
	});
});

describe("fieldText", () => {
	it("writes out strings, numbers and booleans, and nothing else", () => {
		expect(fieldText("a")).toBe("a");
		expect(fieldText(0)).toBe("0");
		expect(fieldText(false)).toBe("false");
		expect(fieldText(null)).toBe("");
		expect(fieldText(undefined)).toBe("");
		expect(fieldText({ toString: () => "no" })).toBe("");
		expect(fieldText(["a"])).toBe("");
	});
});

// --- properties ---

const FIELDS = [
	"type",
	"role",
	"message",
	"content",
	"summary",
	"label",
	"targetId",
	"provider",
	"modelId",
	"model",
	"thinkingLevel",
	"name",
	"customType",
	"kind",
	"text",
	"thinking",
	"arguments",
	"command",
	"output",
	"toolName",
	"isError",
	"errorMessage",
	"stopReason",
	"timestamp",
];
const PROTOTYPE_NAMES = ["__proto__", "constructor", "toString", "valueOf", "hasOwnProperty", "prototype"];
const TYPES = [
	"message",
	"compaction",
	"branch_summary",
	"label",
	"model_change",
	"thinking_level_change",
	"session_info",
	"custom",
	"custom_message",
	"usage",
	"context_edit",
];
const ROLES = ["user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary"];
const BLOCK_TYPES = ["text", "thinking", "toolCall", "image"];

/** Keys and string values an entry is likely to have, and the names of Object.prototype's members. */
const word = fc.oneof(fc.string(), fc.constantFrom(...FIELDS, ...PROTOTYPE_NAMES, ...TYPES, ...ROLES, ...BLOCK_TYPES));

const anything = fc.anything({
	key: word,
	values: [word, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined)],
	maxDepth: 3,
	withNullPrototype: true,
	withBigInt: true,
	withBoxedValues: true,
	withDate: true,
	withMap: true,
	withSet: true,
	withObjectString: true,
	withTypedArray: true,
	withSparseArray: true,
});

/** A content block whose type is one of those read, with fields of any value. */
const block = fc.oneof(
	anything,
	fc.record(
		{ type: fc.oneof(fc.constantFrom(...BLOCK_TYPES), anything), text: anything, thinking: anything, name: anything },
		{ requiredKeys: ["type"] },
	),
);

const message = fc.oneof(
	anything,
	fc.record(
		{
			role: fc.oneof(fc.constantFrom(...ROLES, ...PROTOTYPE_NAMES), anything),
			content: fc.oneof(anything, fc.array(block, { maxLength: 4 })),
			summary: anything,
			command: anything,
			output: anything,
			toolName: anything,
			isError: anything,
			errorMessage: anything,
			stopReason: anything,
		},
		{ requiredKeys: ["role"] },
	),
);

const entry = fc.oneof(
	anything,
	fc.record(
		{
			type: fc.oneof(fc.constantFrom(...TYPES, ...PROTOTYPE_NAMES), anything),
			message,
			summary: anything,
			label: anything,
			targetId: anything,
			provider: anything,
			modelId: anything,
			thinkingLevel: anything,
			name: anything,
			customType: anything,
			kind: anything,
			model: anything,
		},
		{ requiredKeys: ["type"] },
	),
);

/** JSON text of an entry, as a session file's line holds it: keys such as `__proto__` are own keys once parsed. */
const jsonEntry = fc
	.tuple(
		fc.constantFrom(...TYPES, ...PROTOTYPE_NAMES),
		fc.constantFrom(...ROLES, ...PROTOTYPE_NAMES),
		fc.dictionary(word, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
		fc.dictionary(word, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
	)
	.map(([type, role, fields, messageFields]) => {
		const quote = JSON.stringify;
		const pairs = (record: Record<string, unknown>) =>
			Object.keys(record).map((key) => `${quote(key)}:${quote(record[key]) ?? "null"}`);
		const inner = [`"role":${quote(role)}`, ...pairs(messageFields)].join(",");
		const outer = [`"type":${quote(type)}`, `"message":{${inner}}`, ...pairs(fields)].join(",");
		return JSON.parse(`{${outer}}`) as unknown;
	});

const isText = (value: unknown) => typeof value === "string";

describe("properties", () => {
	it("entryKind is a string for any node", () => {
		fc.assert(
			fc.property(fc.oneof(entry, message, fc.record({ type: anything, role: anything })), (node) => {
				expect(isText(kind(node))).toBe(true);
			}),
			{ numRuns: 2000 },
		);
	});

	it("entryPreview is a string for any entry", () => {
		fc.assert(
			fc.property(fc.oneof(entry, jsonEntry), (value) => {
				expect(isText(preview(value))).toBe(true);
				expect(isText(kind({ type: (value as { type?: unknown })?.type, role: undefined }))).toBe(true);
			}),
			{ numRuns: 2000 },
		);
	});

	it("messageText is a string for any message", () => {
		fc.assert(
			fc.property(
				fc.oneof(
					message,
					jsonEntry.map((value) => (value as { message: unknown }).message),
				),
				(value) => {
					expect(isText(text(value))).toBe(true);
				},
			),
			{ numRuns: 2000 },
		);
	});
});
