/**
 * Rules of the context modules that the broader tests leave open: which entry an id or the default leaf
 * names, that only the entry's `type` decides what it is (a stray field of another kind changes nothing),
 * how a string replacement fits a tool result, what `contextMessageCount` counts and which messages
 * `systemMessagesOfPath` gives.
 */
import { describe, expect, it } from "vitest";
import {
	buildContextEntries,
	buildSessionContext,
	buildSessionPath,
	contextEntriesOfPath,
	contextMessageCount,
	contextMessagesAt,
	getSessionContextSettings,
	indexEntries,
	latestEdits,
	projectContextEntry,
	systemMessagesOfPath,
} from "../src/context.ts";
import type { AgentMessage, ContextEditEntry, FileEntry, SessionEntry, SessionHeader } from "../src/index.ts";
import { SessionTree } from "../src/index.ts";
import { pi16 } from "./support/pi16.ts";

const header = {
	type: "session",
	version: 3,
	id: "s",
	timestamp: "2025-01-01T00:00:00.000Z",
	cwd: "/p",
} as SessionHeader;
const at = "2025-01-01T00:00:00.000Z";

/** An entry of any shape (damaged files included), with an id, a parent and a timestamp. */
const entry = (id: unknown, parentId: string | null, fields: Record<string, unknown>): SessionEntry =>
	({ ...fields, id, parentId, timestamp: at }) as unknown as SessionEntry;
const userEntry = (id: string, parentId: string | null, content = id) =>
	entry(id, parentId, { type: "message", message: { role: "user", content, timestamp: 1 } });
const ids = (entries: readonly SessionEntry[]) => entries.map((e) => e.id);
/** A compaction keeping from u1, with a system message entry and a custom message with a system-role field in its kept range. */
const keptRangeWithSystemFields = (): SessionEntry[] => [
	userEntry("u1", null),
	entry("cm", "u1", {
		type: "custom_message",
		customType: "ext",
		content: "shown",
		display: true,
		message: { role: "system", content: "not a prompt", timestamp: 1 },
	}),
	entry("sys", "cm", { type: "message", message: { role: "system", content: "prompt", timestamp: 1 } }),
	entry("c", "sys", { type: "compaction", summary: "sum", firstKeptEntryId: "u1", tokensBefore: 1 }),
	userEntry("u2", "c"),
];
const roles = (messages: readonly AgentMessage[]) => messages.map((m) => m.role);

describe("context.ts", () => {
	it("indexEntries: of entries sharing an id, the first keeps it", () => {
		const first = userEntry("x", null, "first");
		const second = userEntry("x", null, "second");
		expect(indexEntries([first, second]).get("x")).toBe(first);
		expect(buildSessionPath([first, second], "x")).toEqual([first]);
	});

	it("buildSessionPath: the default leaf is the last entry, and its whole parent chain is walked even when its id is taken", () => {
		// The last entry shares its id with its parent, so the index does not hold it: the walk still reaches the root.
		const root = userEntry("r", null);
		const kept = userEntry("x", "r");
		const last = userEntry("x", "x", "again");
		expect(buildSessionPath([root, kept, last])).toEqual([root, kept, last]);
	});

	it("buildSessionPath: an absent leaf is the last entry, even beside an entry without an id", () => {
		// A damaged entry without an id must not be taken for the leaf `undefined` names.
		const noId = entry(undefined, null, { type: "message", message: { role: "user", content: "no id", timestamp: 1 } });
		const last = userEntry("b", null);
		expect(buildSessionPath([noId, last])).toEqual([last]);
		expect(buildContextEntries([noId, last])).toEqual(pi16.buildContextEntries([noId, last]));
	});

	it("getSessionContextSettings: only a message entry's assistant message sets the model", () => {
		// Another kind carrying a `message` field (an extension's record) is no assistant message.
		const path = [
			entry("m", null, { type: "model_change", provider: "p", modelId: "m" }),
			entry("c", "m", {
				type: "custom",
				customType: "ext",
				message: { role: "assistant", provider: "q", model: "n", content: [], timestamp: 1 },
			}),
		];
		expect(getSessionContextSettings(path).model).toEqual({ provider: "p", modelId: "m" });
		expect(buildSessionContext(path).model).toEqual(pi16.buildSessionContext(path).model);
	});

	it("contextEntriesOfPath: of the kept range only system message entries are left out, not another kind with a system-role field", () => {
		const path = keptRangeWithSystemFields();
		expect(ids(contextEntriesOfPath(path))).toEqual(["c", "u1", "cm", "u2"]);
		expect(ids(buildContextEntries(path))).toEqual(ids(pi16.buildContextEntries(path)));
	});

	it("projectContextEntry: a string replacement becomes one text block for a tool result (which needs a list)", () => {
		const result = entry("t", null, {
			type: "message",
			message: { role: "toolResult", toolCallId: "call", toolName: "read", content: [], timestamp: 1 },
		});
		const edit = entry("e", "t", {
			type: "context_edit",
			targetId: "t",
			replacement: { content: "shorter" },
		}) as ContextEditEntry;
		const [message] = projectContextEntry(result, edit);
		expect(message).toMatchObject({ role: "toolResult", content: [{ type: "text", text: "shorter" }] });
		expect(projectContextEntry(result, edit)).toEqual(pi16.projectContextEntry(result, edit));
	});

	it("latestEdits: only context_edit entries are edits, not another kind with targetId and replacement fields", () => {
		const path = [
			userEntry("u", null),
			entry("c", "u", { type: "custom", customType: "ext", targetId: "u", replacement: null }),
		];
		expect(latestEdits(path).size).toBe(0);
		expect(roles(buildSessionContext(path).messages)).toEqual(["user"]);
	});

	it("contextMessageCount: as many as contextMessagesAt gives, without making them", () => {
		const message = (value: unknown) => entry("m", null, { type: "message", message: value });
		const missing = entry("m", null, { type: "message" });
		const compaction = (systemMessage?: unknown) =>
			entry("c", null, {
				type: "compaction",
				summary: "s",
				firstKeptEntryId: "m",
				tokensBefore: 1,
				...(systemMessage ? { systemMessage } : {}),
			});
		const edit = (replacement: unknown) =>
			entry("e", null, { type: "context_edit", targetId: "m", replacement }) as ContextEditEntry;
		const cases: [SessionEntry, number, ContextEditEntry | undefined, number][] = [
			[message({ role: "user", content: "u", timestamp: 1 }), 0, undefined, 1],
			[message(null), 0, undefined, 0],
			[missing, 0, undefined, 0],
			[message({ role: "user", content: "u", timestamp: 1 }), 0, edit(null), 0],
			[message({ role: "user", content: "u", timestamp: 1 }), 0, edit({ content: "v" }), 1],
			[entry("x", null, { type: "custom_message", customType: "c", content: "x", display: true }), 1, undefined, 1],
			[entry("b", null, { type: "branch_summary", fromId: "r", summary: "went left" }), 1, undefined, 1],
			[entry("b", null, { type: "branch_summary", fromId: "r", summary: "" }), 1, undefined, 0],
			[compaction(), 0, undefined, 1],
			[compaction({ role: "system", content: "prompt", timestamp: 1 }), 0, undefined, 2],
			// An older compaction kept in the newest one's range contributes none.
			[compaction(), 1, undefined, 0],
			[compaction({ role: "system", content: "prompt", timestamp: 1 }), 2, undefined, 0],
			[entry("l", null, { type: "label", targetId: "m", label: "l" }), 1, undefined, 0],
		];
		for (const [subject, index, withEdit, count] of cases) {
			const label = `${JSON.stringify(subject)} at ${index}`;
			expect(contextMessagesAt(subject, index, withEdit), label).toHaveLength(count);
			expect(contextMessageCount(subject, index, withEdit), label).toBe(count);
		}
	});

	it("systemMessagesOfPath: the leading compaction gives its system message, not its summary", () => {
		const prompt = { role: "system", content: "prompt", timestamp: 1 };
		const path = [
			userEntry("u1", null),
			entry("c", "u1", {
				type: "compaction",
				summary: "sum",
				firstKeptEntryId: "u1",
				tokensBefore: 1,
				systemMessage: prompt,
			}),
			entry("s", "c", { type: "message", message: { role: "system", content: "later prompt", timestamp: 2 } }),
			userEntry("u2", "s"),
		];
		expect(systemMessagesOfPath(path)).toEqual([prompt, { role: "system", content: "later prompt", timestamp: 2 }]);
		// A compaction without one gives none.
		const bare = [
			userEntry("u1", null),
			entry("c", "u1", { type: "compaction", summary: "sum", firstKeptEntryId: "u1", tokensBefore: 1 }),
		];
		expect(systemMessagesOfPath(bare)).toEqual([]);
	});

	it("systemMessagesOfPath: an older compaction kept in the newest one's range gives no system message, as in the context", () => {
		const compaction = (id: string, parentId: string, content: string) =>
			entry(id, parentId, {
				type: "compaction",
				summary: id,
				firstKeptEntryId: "u1",
				tokensBefore: 1,
				systemMessage: { role: "system", content, timestamp: 1 },
			});
		const path = [
			userEntry("u1", null),
			compaction("c1", "u1", "old prompt"),
			userEntry("u2", "c1"),
			compaction("c2", "u2", "prompt"),
		];
		expect(ids(contextEntriesOfPath(path))).toEqual(["c2", "u1", "c1", "u2"]);
		const prompt = [{ role: "system", content: "prompt", timestamp: 1 }];
		expect(systemMessagesOfPath(path)).toEqual(prompt);
		expect(buildSessionContext(path).messages.filter((message) => message.role === "system")).toEqual(prompt);
	});
});

describe("context-walk.ts", () => {
	/** A whole tree of `entries` (it builds a leaf's context by walking back from it). */
	const treeOf = (entries: SessionEntry[]) => SessionTree.fromRecords([header, ...entries] as FileEntry[]);

	it("of the kept range only system message entries are left out, not another kind with a system-role field", () => {
		const entries = keptRangeWithSystemFields();
		const tree = treeOf(entries);
		expect(ids(tree.buildContextEntries())).toEqual(["c", "u1", "cm", "u2"]);
		expect(roles(tree.buildSessionContext().messages)).toEqual(["compactionSummary", "user", "custom", "user"]);
	});

	it("only context_edit entries are edits, not another kind with targetId and replacement fields", () => {
		const tree = treeOf([
			userEntry("u", null),
			entry("c", "u", { type: "custom", customType: "ext", targetId: "u", replacement: null }),
		]);
		expect(tree.contextWalk().edits).toBeUndefined();
		expect(roles(tree.buildSessionContext().messages)).toEqual(["user"]);
	});
});
