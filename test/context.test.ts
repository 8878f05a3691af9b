import { describe, expect, it } from "vitest";
import {
	type AgentMessage,
	buildContextEntries,
	buildSessionContext,
	getSessionContextSettings,
	type SessionEntry,
	SessionTree,
	sessionEntryToContextMessages,
} from "../src/index.ts";

const user = (content: string) => ({ role: "user" as const, content, timestamp: 1 });
const assistant = (provider: string, model: string) =>
	({
		role: "assistant",
		content: [],
		provider,
		model,
		api: "x",
		stopReason: "stop",
		timestamp: 2,
	}) as unknown as AgentMessage;
const texts = (messages: AgentMessage[]) =>
	messages.map((m) =>
		"summary" in m ? `${m.role}:${m.summary}` : `${m.role}:${typeof m.content === "string" ? m.content : ""}`,
	);

describe("context", () => {
	it("with no compaction: every message-producing entry on the path, in order", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		tree.appendMessage(user("a"));
		tree.appendCustomEntry("state", { hidden: true });
		tree.appendCustomMessageEntry("ext", "injected", true);
		tree.appendThinkingLevelChange("high");
		tree.appendMessage(user("b"));
		expect(texts(tree.buildSessionContext().messages)).toEqual(["user:a", "custom:injected", "user:b"]);
	});

	it("with compactions: the latest summary first, then from its first kept entry, then after it", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		tree.appendMessage(user("dropped"));
		const keptByFirst = tree.appendMessage(user("kept-by-first"));
		tree.appendCompaction("first", keptByFirst, 10);
		tree.appendMessage(user("x"));
		const keep = tree.appendMessage(user("keep"));
		tree.appendMessage(user("y"));
		tree.appendCompaction("second", keep, 20);
		tree.appendMessage(user("after"));
		expect(texts(tree.buildSessionContext().messages)).toEqual([
			"compactionSummary:second",
			"user:keep",
			"user:y",
			"user:after",
		]);
	});

	it("an earlier compaction inside the kept range produces no message", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		tree.appendCompaction("first", a, 1);
		tree.appendCompaction("second", a, 2);
		expect(texts(tree.buildSessionContext().messages)).toEqual(["compactionSummary:second", "user:a"]);
	});

	it("a first kept entry that is not on the path keeps nothing before the compaction", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		const other = tree.appendMessage(user("other branch"));
		tree.branch(a);
		tree.appendMessage(user("b"));
		tree.appendCompaction("sum", other, 1);
		tree.appendMessage(user("c"));
		expect(texts(tree.buildSessionContext().messages)).toEqual(["compactionSummary:sum", "user:c"]);
	});

	it("branch summaries become messages; empty ones do not", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage(user("a"));
		tree.appendMessage(user("b"));
		tree.branchWithSummary(a, "");
		tree.branchWithSummary(a, "left b");
		expect(texts(tree.buildSessionContext().messages)).toEqual(["user:a", "branchSummary:left b"]);
	});

	it("settings: last thinking level (default off) and last model change or assistant message", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		expect(getSessionContextSettings(tree.getBranch())).toEqual({ thinkingLevel: "off", model: null });
		tree.appendModelChange("openai", "gpt");
		tree.appendMessage(assistant("anthropic", "claude"));
		tree.appendThinkingLevelChange("low");
		expect(getSessionContextSettings(tree.getBranch())).toEqual({
			thinkingLevel: "low",
			model: { provider: "anthropic", modelId: "claude" },
		});
		tree.appendModelChange("google", "gemini");
		expect(tree.buildSessionContext().model).toEqual({ provider: "google", modelId: "gemini" });
	});

	it("settings before a compaction still count", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		tree.appendThinkingLevelChange("high");
		const a = tree.appendMessage(user("a"));
		tree.appendCompaction("s", a, 1);
		expect(tree.buildSessionContext().thinkingLevel).toBe("high");
	});

	it("content: null from old files becomes [] (pi passes null on)", () => {
		const entry = {
			type: "message",
			id: "aaaaaaaa",
			parentId: null,
			timestamp: "2025-01-01T00:00:00.000Z",
			message: { role: "assistant", content: null, provider: "p", model: "m", timestamp: 1 },
		} as unknown as SessionEntry;
		const [message] = sessionEntryToContextMessages(entry);
		expect(message).toMatchObject({ role: "assistant", content: [] });
		expect((entry as { message: { content: unknown } }).message.content).toBeNull(); // the entry is not changed
	});

	it("custom_message and summaries carry the entry's timestamp as epoch milliseconds", () => {
		const entries = [
			{
				type: "custom_message",
				customType: "e",
				content: "c",
				display: false,
				details: { k: 1 },
				id: "a",
				parentId: null,
				timestamp: "2025-01-01T00:00:01.000Z",
			},
		] as unknown as SessionEntry[];
		expect(sessionEntryToContextMessages(entries[0] as SessionEntry)).toEqual([
			{ role: "custom", customType: "e", content: "c", display: false, details: { k: 1 }, timestamp: 1735689601000 },
		]);
	});

	it("non-message kinds and unknown kinds produce nothing", () => {
		for (const type of ["thinking_level_change", "model_change", "custom", "label", "session_info", "future_kind"]) {
			expect(sessionEntryToContextMessages({ type, id: "a", parentId: null, timestamp: "t" } as SessionEntry)).toEqual(
				[],
			);
		}
	});

	it("buildSessionContext on raw entries: null leaf is empty, absent leaf is the last entry", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		tree.appendMessage(user("a"));
		const b = tree.appendMessage(user("b"));
		const entries = tree.getEntries();
		expect(buildSessionContext(entries, null).messages).toEqual([]);
		expect(texts(buildSessionContext(entries).messages)).toEqual(["user:a", "user:b"]);
		expect(texts(buildSessionContext(entries, "unknown").messages)).toEqual(["user:a", "user:b"]);
		expect(buildContextEntries(tree.getBranch(b)).map((e) => e.id)).toEqual(entries.map((e) => e.id));
		expect(buildSessionContext([]).messages).toEqual([]);
	});
});

describe("a message entry whose message is no message (a damaged file pi 1.6 opens)", () => {
	const entry = (message: unknown, omit = false): SessionEntry =>
		({ type: "message", id: "d", parentId: null, timestamp: "t", ...(omit ? {} : { message }) }) as SessionEntry;

	it("null or missing contributes nothing and sets nothing (pi throws reading its role)", () => {
		for (const damaged of [entry(null), entry(undefined, true)]) {
			expect(sessionEntryToContextMessages(damaged)).toEqual([]);
			expect(getSessionContextSettings([damaged])).toEqual({ thinkingLevel: "off", model: null });
			expect(buildContextEntries([damaged], "d")).toEqual([damaged]);
		}
	});

	it("a string, number, list or role-less object passes through as pi passes it", () => {
		for (const message of ["text", 42, [{ role: "user" }], { content: "no role" }]) {
			expect(sessionEntryToContextMessages(entry(message))).toEqual([message]);
			expect(buildSessionContext([entry(message)], "d").messages).toEqual([message]);
		}
	});
});
