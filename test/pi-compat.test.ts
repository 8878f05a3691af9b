/**
 * The pi-compatible `SessionManager` facade (adapters/pi-compat.ts) and our async `Session` against pi 1.6.0's
 * own `SessionManager` (and, for files it wrote, pi 0.73.1's), on real files in temporary directories:
 * 1. files written by us open in pi with the same entries, leaf, tree, labels, name and contexts;
 * 2. files written by pi (incl. its forks) open in ours the same way;
 * 3. the same operations on both produce byte-identical files up to ids, timestamps and the deliberate
 *    differences of README's "Where we differ from pi" table (each named where it is undone);
 * 4. the facade has every public method of pi's class, with the same arity;
 * 5. the facade's own guarantees: in-memory sessions never write, continueRecent, list, locks.
 * Nothing here touches ~/.pi: every directory is explicit, and PI_CODING_AGENT_DIR points at a temp dir.
 */

import { execFileSync } from "node:child_process";
import fsModule, {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { homedir, tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import * as facade from "../adapters/pi-compat.ts";
import { SessionManager } from "../adapters/pi-compat.ts";
import * as pi16 from "../node_modules/pi-coding-agent-1.6/dist/core/session-manager.js";
import {
	type AgentMessage,
	type ImageContent,
	Session,
	SessionClosedError,
	type SessionContext,
	type SessionEntry,
	SessionLockedError,
	type SessionTreeNode,
	type TextContent,
} from "../src/index.ts";
import { applyOps, type Op, opsArbitrary } from "./support/ops.ts";
import { pi as pi073 } from "./support/pi.ts";

/** pi 1.6.0, the oracle of this suite, with its types loosened to ours (the shapes are the same). */
const pi = {
	SessionManager: pi16.SessionManager,
	buildSessionContext: pi16.buildSessionContext as unknown as (
		entries: SessionEntry[],
		leafId?: string | null,
	) => SessionContext,
};
type PiSessionManager = ReturnType<typeof pi.SessionManager.create>;

const storage = createNodeStorage();
const scratch = mkdtempSync(join(tmpdir(), "pi-compat-"));
const agentDir = join(scratch, "agent");
const savedAgentDir = process.env.PI_CODING_AGENT_DIR;

beforeAll(() => {
	mkdirSync(agentDir);
	process.env.PI_CODING_AGENT_DIR = agentDir;
});
afterAll(() => {
	if (savedAgentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
	else process.env.PI_CODING_AGENT_DIR = savedAgentDir;
	rmSync(scratch, { recursive: true, force: true });
});

let dirCount = 0;
function freshDir(prefix: string): string {
	const dir = join(scratch, `${prefix}-${++dirCount}`);
	mkdirSync(dir);
	return dir;
}

function defined<T>(value: T | undefined | null, what: string): T {
	if (value === undefined || value === null) throw new Error(`${what} is missing`);
	return value;
}

// Messages ------------------------------------------------------------------------------------------

const usage = {
	input: 10,
	output: 5,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 15,
	cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.3 },
};
const user = (text: string, timestamp: number): AgentMessage => ({ role: "user", content: text, timestamp });
const assistant = (text: string, timestamp: number, provider = "anthropic", model = "claude-x"): AgentMessage => ({
	role: "assistant",
	content: [
		{ type: "thinking", thinking: "let me think" },
		{ type: "text", text },
		{ type: "toolCall", id: "call-1", name: "bash", arguments: { command: "ls" } },
	],
	api: "messages",
	provider,
	model,
	usage,
	stopReason: "toolUse",
	timestamp,
});
const toolResult = (text: string, timestamp: number): AgentMessage => ({
	role: "toolResult",
	toolCallId: "call-1",
	toolName: "bash",
	content: [{ type: "text", text }],
	details: { exitCode: 0 },
	isError: false,
	timestamp,
});
const bash = (output: string, timestamp: number): AgentMessage => ({
	role: "bashExecution",
	command: "ls -la",
	output,
	exitCode: 0,
	cancelled: false,
	truncated: false,
	timestamp,
});
const customMessage = (text: string, timestamp: number): AgentMessage => ({
	role: "custom",
	customType: "ext-msg",
	content: text,
	display: true,
	details: { from: "extension" },
	timestamp,
});

// One scenario with every entry kind, run on pi, the facade and the async Session ---------------------

type MaybePromise<T> = T | Promise<T>;

/** pi's appending API; our async `Session` returns promises, pi and the facade return values. */
interface ScenarioTarget {
	appendMessage(message: never): MaybePromise<string>;
	appendThinkingLevelChange(level: string): MaybePromise<string>;
	appendModelChange(provider: string, modelId: string): MaybePromise<string>;
	appendCompaction(
		summary: string,
		firstKeptEntryId: string,
		tokensBefore: number,
		details?: unknown,
		fromHook?: boolean,
	): MaybePromise<string>;
	appendCustomEntry(customType: string, data?: unknown): MaybePromise<string>;
	appendCustomMessageEntry(
		customType: string,
		content: string | (TextContent | ImageContent)[],
		display: boolean,
		details?: unknown,
	): MaybePromise<string>;
	appendSessionInfo(name: string): MaybePromise<string>;
	appendLabelChange(targetId: string, label: string | undefined): MaybePromise<string>;
	branchWithSummary(id: string | null, summary: string, details?: unknown, fromHook?: boolean): MaybePromise<string>;
	branch(id: string): void;
	resetLeaf(): void;
	createBranchedSession(leafId: string): MaybePromise<string | undefined>;
}

/** Points of the scenario; the file exists from the first user message on (pi 1.6). */
type Stage = "nothing-yet" | "only-user-messages" | "before-assistant" | "after-assistant";

interface ScenarioResult {
	/** Ids by step name. */
	ids: Record<string, string>;
	/** Steps appended to the source file, in order (the fork's own steps excluded). */
	sourceSteps: string[];
	/** The fork's file (undefined in memory). */
	forkPath: string | undefined;
	/** Ours: the leaf each branch summary left, by the summary's id. */
	fromIds: Map<string, string>;
}

/** A name with line breaks: pi 1.6 and ours make each run of them one space and trim (pi 0.73.1 only trimmed). */
const MULTILINE_NAME = "  Line one\n  line two \r\n";
const MULTILINE_NAME_AS_WRITTEN = "Line one   line two";

/**
 * Every entry kind, every message role, labels set and cleared, names set, cleared and multi-line, two
 * compactions, branches, a reset leaf, branch summaries from an entry and from before the first entry, and a
 * fork (createBranchedSession) of a path with labels in the middle, continued in the fork. Messages are
 * timestamped from `base`, so two runs with the same base append equal messages.
 */
async function runScenario(
	target: ScenarioTarget,
	base: number,
	checkpoint: (stage: Stage) => MaybePromise<void> = () => {},
): Promise<ScenarioResult> {
	let clock = base;
	const at = () => (clock += 1000);
	const ids: Record<string, string> = {};
	const steps: string[] = [];
	const step = async (name: string, append: () => MaybePromise<string>) => {
		ids[name] = await append();
		steps.push(name);
		return ids[name] as string;
	};
	const id = (name: string) => defined(ids[name], name);

	await checkpoint("nothing-yet");
	await step("u1", () => target.appendMessage(user("hello", at()) as never));
	await checkpoint("only-user-messages");
	await step("mc1", () => target.appendModelChange("anthropic", "claude-x"));
	await step("tl1", () => target.appendThinkingLevelChange("high"));
	await step("ce1", () => target.appendCustomEntry("ext-a", { phase: "setup", list: [1, "two", null] }));
	await checkpoint("before-assistant");
	await step("a1", () => target.appendMessage(assistant("hi there", at()) as never));
	await checkpoint("after-assistant");
	await step("t1", () => target.appendMessage(toolResult("file.txt", at()) as never));
	await step("b1", () => target.appendMessage(bash("total 0", at()) as never));
	await step("c1", () => target.appendMessage(customMessage("from an extension", at()) as never));
	await step("l1", () => target.appendLabelChange(id("u1"), "start"));
	await step("cm1", () => target.appendCustomMessageEntry("ext-msg", "shown", true, { a: 1 }));
	await step("cm2", () =>
		target.appendCustomMessageEntry(
			"ext-msg",
			[
				{ type: "text", text: "hidden" },
				{ type: "image", data: "aGk=", mimeType: "image/png" },
			],
			false,
		),
	);
	await step("n1", () => target.appendSessionInfo(MULTILINE_NAME));
	await step("comp1", () =>
		target.appendCompaction("summary of the start", id("a1"), 1234, { files: ["a.ts"] }, false),
	);
	await step("u2", () => target.appendMessage(user("after compaction", at()) as never));
	await step("a2", () => target.appendMessage(assistant("continuing", at()) as never));
	target.branch(id("t1"));
	await step("u3", () => target.appendMessage(user("alternative", at()) as never));
	await step("l2", () => target.appendLabelChange(id("u3"), "alt"));
	await step("a3", () => target.appendMessage(assistant("alternative answer", at()) as never));
	await step("bs1", () => target.branchWithSummary(id("a1"), "left the alternative", { reason: "test" }, true));
	await step("u4", () => target.appendMessage(user("after the summary", at()) as never));
	await step("l3", () => target.appendLabelChange(id("u1"), undefined)); // clears "start"
	await step("l4", () => target.appendLabelChange(id("a2"), "")); // clears a label that was never set
	await step("l5", () => target.appendLabelChange(id("a1"), "kept"));
	await step("a4", () => target.appendMessage(assistant("answer four", at()) as never));
	await step("n2", () => target.appendSessionInfo("")); // clears the name
	target.resetLeaf();
	await step("u5", () => target.appendMessage(user("a new root", at()) as never));
	await step("a5", () => target.appendMessage(assistant("answer five", at()) as never));
	await step("bs2", () => target.branchWithSummary(null, "started over"));
	await step("mc2", () => target.appendModelChange("openai", "gpt-y"));
	await step("n3", () => target.appendSessionInfo("  Final name  "));
	await step("tl2", () => target.appendThinkingLevelChange("low"));
	await step("a6", () => target.appendMessage(assistant("answer six", at(), "openai", "gpt-y") as never));
	await step("comp2", () => target.appendCompaction("second summary", id("mc2"), 99));
	await step("u6", () => target.appendMessage(user("last in the source", at()) as never));
	target.branch(id("u2")); // the leaf is not the last entry when the source is left
	const sourceSteps = [...steps];

	// Fork of u1 mc1 tl1 ce1 a1 bs1 u4 [l3 l4 l5] a4: the labels in the middle are dropped, "kept" is re-added.
	const forkPath = await target.createBranchedSession(id("a4"));
	await step("fu", () => target.appendMessage(user("in the fork", at()) as never));
	await step("fa", () => target.appendMessage(assistant("fork answer", at()) as never));
	await step("fl", () => target.appendLabelChange(id("u4"), "fork-label"));

	const fromIds = new Map([
		[id("bs1"), id("a3")],
		[id("bs2"), id("a5")],
	]);
	return { ids, sourceSteps, forkPath, fromIds };
}

// Views: what pi, the facade and our Session see in one file ---------------------------------------------

interface View {
	meta: { cwd: string; sessionId: string; file: string | undefined; sessionDir: string };
	header: unknown;
	entries: SessionEntry[];
	leafId: string | null;
	leafContext: SessionContext;
	tree: SessionTreeNode[];
	name: string | undefined;
	label(id: string): string | undefined;
	branch(id: string): string[];
	children(id: string): string[];
	context(leafId: string | null): SessionContext;
}

const idsOf = (entries: { id: string }[]): string[] => entries.map((entry) => entry.id);

/** A view through pi's SessionManager API, which pi's manager and our facade both have. */
function managerView(manager: ManagerApi, context: View["context"]): View {
	return {
		meta: {
			cwd: manager.getCwd(),
			sessionId: manager.getSessionId(),
			file: manager.getSessionFile(),
			sessionDir: manager.getSessionDir(),
		},
		header: manager.getHeader(),
		entries: manager.getEntries(),
		leafId: manager.getLeafId(),
		leafContext: manager.buildSessionContext(),
		tree: manager.getTree(),
		name: manager.getSessionName(),
		label: (id) => manager.getLabel(id),
		branch: (id) => idsOf(manager.getBranch(id)),
		children: (id) => idsOf(manager.getChildren(id)),
		context,
	};
}

type ManagerApi = Pick<
	SessionManager,
	| "getCwd"
	| "getSessionId"
	| "getSessionFile"
	| "getSessionDir"
	| "getHeader"
	| "getEntries"
	| "getLeafId"
	| "buildSessionContext"
	| "getTree"
	| "getSessionName"
	| "getLabel"
	| "getBranch"
	| "getChildren"
>;

function piView(manager: PiSessionManager): View {
	const api = manager as unknown as ManagerApi;
	const entries = api.getEntries();
	// pi's exported function, as the brief of this suite asks.
	return managerView(api, (leafId) => pi.buildSessionContext(entries, leafId));
}

function sessionView(session: Session): View {
	const tree = session.tree;
	return {
		meta: { cwd: tree.getCwd(), sessionId: tree.getSessionId(), file: session.path, sessionDir: session.sessionDir },
		header: tree.getHeader(),
		entries: tree.getEntries(),
		leafId: tree.getLeafId(),
		leafContext: tree.buildSessionContext(),
		tree: tree.getTree(),
		name: tree.getSessionName(),
		label: (id) => tree.getLabel(id),
		branch: (id) => idsOf(tree.getBranch(id)),
		children: (id) => idsOf(tree.getChildren(id)),
		context: (leafId) => tree.buildSessionContext(leafId),
	};
}

/** The facade through pi's API only; `context` moves its leaf (call it after everything else is read). */
function facadeView(manager: SessionManager): View {
	return managerView(manager, (leafId) => {
		if (leafId === null) manager.resetLeaf();
		else manager.branch(leafId);
		return manager.buildSessionContext();
	});
}

function expectSameView(actual: View, expected: View): void {
	expect(expected.entries.length).toBeGreaterThan(0);
	expect(actual.meta).toEqual(expected.meta);
	expect(actual.header).toEqual(expected.header);
	expect(actual.entries).toEqual(expected.entries);
	expect(actual.leafId).toBe(expected.leafId);
	expect(actual.leafContext).toEqual(expected.leafContext);
	// toEqual treats pi's `label: undefined` keys as absent, as ours omit them.
	expect(actual.tree).toStrictEqual(expected.tree); // label keys too, present as undefined, as pi has them
	expect(actual.name).toBe(expected.name);
	for (const { id } of expected.entries) {
		expect(actual.label(id), `label of ${id}`).toBe(expected.label(id));
		expect(actual.branch(id), `branch of ${id}`).toEqual(expected.branch(id));
		expect(actual.children(id), `children of ${id}`).toEqual(expected.children(id));
	}
	for (const { id } of expected.entries) {
		expect(actual.context(id), `context at ${id}`).toEqual(expected.context(id));
	}
	expect(actual.context(null)).toEqual(expected.context(null));
}

/** Facts of the scenario's source file, whoever wrote it and whoever reads it. */
function expectScenarioSource(view: View, result: ScenarioResult): void {
	const id = (name: string) => defined(result.ids[name], name);
	expect(idsOf(view.entries)).toEqual(result.sourceSteps.map(id));
	expect(view.leafId).toBe(id("u6")); // an opened file's leaf is its last entry
	expect(view.tree.map((root) => root.entry.id)).toEqual([id("u1"), id("u5"), id("bs2")]);
	expect(view.name).toBe("Final name");
	expect(view.label(id("u1"))).toBeUndefined();
	expect(view.label(id("u3"))).toBe("alt");
	expect(view.label(id("a1"))).toBe("kept");
	expect(view.label(id("a2"))).toBeUndefined();
	const atU2 = view.context(id("u2"));
	expect(atU2.messages.map((message) => message.role)).toEqual([
		"compactionSummary",
		"assistant",
		"toolResult",
		"bashExecution",
		"custom",
		"custom",
		"custom",
		"user",
	]);
	expect(atU2).toMatchObject({ thinkingLevel: "high", model: { provider: "anthropic", modelId: "claude-x" } });
	const atU6 = view.context(id("u6"));
	expect(atU6.messages.map((message) => message.role)).toEqual(["compactionSummary", "assistant", "user"]);
	expect(atU6).toMatchObject({ thinkingLevel: "low", model: { provider: "openai", modelId: "gpt-y" } });
	expect(view.context(id("u4")).messages.map((message) => message.role)).toEqual([
		"user",
		"assistant",
		"branchSummary",
		"user",
	]);
}

/** Facts of the scenario's fork file; `orphanedByPi` when pi wrote it (README: pi leaves a dangling parentId). */
function expectScenarioFork(view: View, result: ScenarioResult, sourcePath: string, orphanedByPi: boolean): void {
	const id = (name: string) => defined(result.ids[name], name);
	const kinds = view.entries.map((entry) => (entry.type === "label" ? `label:${entry.targetId}` : entry.id));
	expect(kinds).toEqual([
		...["u1", "mc1", "tl1", "ce1", "a1", "bs1", "u4", "a4"].map(id),
		`label:${id("a1")}`,
		...["fu", "fa"].map(id),
		`label:${id("u4")}`,
	]);
	expect((view.header as { parentSession?: string }).parentSession).toBe(sourcePath);
	expect(view.label(id("a1"))).toBe("kept");
	expect(view.label(id("u4"))).toBe("fork-label");
	expect(view.label(id("u1"))).toBeUndefined();
	expect(view.name).toBeUndefined();
	const a4 = defined(
		view.entries.find((entry) => entry.id === id("a4")),
		"a4",
	);
	if (orphanedByPi) {
		expect(a4.parentId).toBe(id("l5"));
		expect(view.tree.map((root) => root.entry.id)).toEqual([id("u1"), id("a4")]);
	} else {
		expect(a4.parentId).toBe(id("u4"));
		expect(view.tree.map((root) => root.entry.id)).toEqual([id("u1")]);
	}
}

const BASE = 1_750_000_000_000;

describe("files written by us open in pi", () => {
	it("async Session (node storage): source, fork and forkFrom", async () => {
		const dir = freshDir("ours-session");
		const session = await Session.create(storage, { cwd: "/project", sessionDir: dir });
		let source = "";
		const result = await runScenario(session, BASE, (stage) => {
			const path = defined(session.path, "path");
			expect(existsSync(path), stage).toBe(stage !== "nothing-yet");
			if (stage === "only-user-messages") source = path;
		});
		const fork = defined(result.forkPath, "fork");
		expect(session.path).toBe(fork);
		const liveForkEntries = session.tree.getEntries();
		await session.close();

		const elsewhere = freshDir("ours-forkfrom");
		const forkedFrom = await Session.forkFrom(storage, source, "/elsewhere", elsewhere);
		const forkedFromPath = defined(forkedFrom.path, "forkFrom path");
		await forkedFrom.close();

		for (const path of [source, fork, forkedFromPath]) {
			const piManager = pi.SessionManager.open(path);
			const ours = await Session.open(storage, path, { readOnly: true });
			expect(ours.report.diagnostics).toEqual([]);
			expectSameView(piView(piManager), sessionView(ours));
		}
		expect(pi.SessionManager.open(fork).getEntries()).toEqual(liveForkEntries);
		expectScenarioSource(piView(pi.SessionManager.open(source)), result);
		expectScenarioFork(piView(pi.SessionManager.open(fork)), result, source, false);
		const forkedFromView = piView(pi.SessionManager.open(forkedFromPath));
		expect(forkedFromView.header).toMatchObject({ cwd: "/elsewhere", parentSession: source });
		expect(forkedFromView.entries).toEqual(pi.SessionManager.open(source).getEntries());
	});

	it("facade SessionManager: source and fork", async () => {
		const dir = freshDir("ours-facade");
		const manager = SessionManager.create("/project", dir);
		let source = "";
		const result = await runScenario(manager, BASE, (stage) => {
			const path = defined(manager.getSessionFile(), "path");
			expect(existsSync(path), stage).toBe(stage !== "nothing-yet");
			if (stage === "only-user-messages") source = path;
		});
		const fork = defined(result.forkPath, "fork");
		expect(manager.getSessionFile()).toBe(fork);
		const liveForkEntries = manager.getEntries();
		manager.close();

		for (const path of [source, fork]) {
			const reopened = SessionManager.open(path);
			try {
				expectSameView(piView(pi.SessionManager.open(path)), facadeView(reopened));
			} finally {
				reopened.close();
			}
		}
		expect(pi.SessionManager.open(fork).getEntries()).toEqual(liveForkEntries);
		expectScenarioSource(piView(pi.SessionManager.open(source)), result);
		expectScenarioFork(piView(pi.SessionManager.open(fork)), result, source, false);
	});
});

describe("files written by pi open in ours", () => {
	// pi 0.73.1 wrote the file at the first assistant message, kept a dangling parentId in forks, and recorded
	// the branch target as a summary's fromId; those files must open here with pi 1.6's reading of them.
	const writers = [
		{ version: "1.6.0", manager: pi.SessionManager, firstFile: "only-user-messages", orphanedFork: false },
		{ version: "0.73.1", manager: pi073.SessionManager, firstFile: "after-assistant", orphanedFork: true },
	] as const;
	for (const writer of writers) {
		it(`pi ${writer.version}: create + every entry kind, createBranchedSession and forkFrom`, async () => {
			const dir = freshDir(`pi-${writer.version}-written`);
			const piManager = writer.manager.create("/project", dir) as unknown as PiSessionManager;
			let source = "";
			let exists = false;
			const result = await runScenario(piManager, BASE, (stage) => {
				const path = defined(piManager.getSessionFile(), "path");
				exists ||= stage === writer.firstFile;
				expect(existsSync(path), stage).toBe(exists);
				if (stage === writer.firstFile) source = path;
			});
			const fork = defined(result.forkPath, "fork");
			const forkedFrom = defined(
				writer.manager.forkFrom(source, "/elsewhere", freshDir("pi-forkfrom")).getSessionFile(),
				"forkFrom",
			);

			for (const path of [source, fork, forkedFrom]) {
				const bytes = readFileSync(path);
				const expected = piView(pi.SessionManager.open(path));
				const session = await Session.open(storage, path); // for writing: locks, would repair or migrate
				try {
					expectSameView(sessionView(session), expected);
					expect(session.report).toMatchObject({ repairedLastLine: false, wroteHeader: false, created: false });
					expect(session.report.migratedFrom).toBeUndefined();
					// pi 0.73.1's fork keeps a4's parentId pointing at a dropped label: reported, a4 is a root, as in pi.
					const orphan = writer.orphanedFork && path === fork;
					expect(session.report.diagnostics.map((d) => d.reason)).toEqual(orphan ? ["missing-parent"] : []);
				} finally {
					await session.close();
				}
				const manager = SessionManager.open(path);
				try {
					expectSameView(facadeView(manager), expected);
				} finally {
					manager.close();
				}
				expect(readFileSync(path).equals(bytes), `${path} unchanged by opening`).toBe(true);
			}
			expectScenarioSource(piView(pi.SessionManager.open(source)), result);
			expectScenarioFork(piView(pi.SessionManager.open(fork)), result, source, writer.orphanedFork);
			expect(pi.SessionManager.open(forkedFrom).getHeader()).toMatchObject({
				cwd: "/elsewhere",
				parentSession: source,
			});
		});
	}
});

// Same operations, same bytes ------------------------------------------------------------------------------

interface FilePair {
	pi: string;
	ours: string;
}

type JsonRecord = Record<string, unknown>;

function readRecords(path: string): JsonRecord[] {
	const text = readFileSync(path, "utf8");
	expect(text.endsWith("\n"), `${path} ends with a newline`).toBe(true);
	return text
		.slice(0, -1)
		.split("\n")
		.map((line) => {
			const record = JSON.parse(line) as JsonRecord;
			// Each line is exactly the JSON encoding of its record (key order kept by JSON.parse), so comparing
			// re-encoded normalized records below compares the files byte for byte outside the normalized fields.
			expect(JSON.stringify(record)).toBe(line);
			return record;
		});
}

const ID_FIELDS = ["id", "parentId", "targetId", "firstKeptEntryId", "fromId"] as const;

/**
 * pi's files and ours, pair by pair, must be the same lines once ids are mapped position-wise and
 * timestamps blanked. The normalized fields keep their place in the line.
 */
function expectSameFiles(pairs: readonly FilePair[]): void {
	const files = pairs.map((pair) => ({ pi: readRecords(pair.pi), ours: readRecords(pair.ours) }));
	const ids = new Map<string, string>();
	for (const file of files) {
		expect(file.pi.length).toBe(file.ours.length);
		file.pi.forEach((record, index) => {
			if (index === 0) return;
			const piId = record.id as string;
			const ourId = file.ours[index]?.id as string;
			if (ids.has(piId)) expect(ids.get(piId), `id ${piId} paired consistently`).toBe(ourId);
			ids.set(piId, ourId);
		});
	}
	const paths = new Map(pairs.map((pair) => [pair.pi, pair.ours]));
	/** Header: id and timestamp blanked; pi's `parentSession` (a pi file) mapped to the paired file of ours. */
	const header = (record: JsonRecord, side: "pi" | "ours"): JsonRecord => {
		const out: JsonRecord = { ...record, id: "<session id>", timestamp: "<time>" };
		if (side === "pi" && typeof out.parentSession === "string") {
			out.parentSession = paths.get(out.parentSession) ?? "<unknown path>";
		}
		return out;
	};
	/** Timestamps blanked, also inside a compaction's system message (pi stamps it with the compaction's time). */
	const blankTimes = (out: JsonRecord): JsonRecord => {
		out.timestamp = "<time>";
		if (typeof out.systemMessage === "object" && out.systemMessage !== null) {
			out.systemMessage = { ...(out.systemMessage as JsonRecord), timestamp: "<time>" };
		}
		return out;
	};

	for (const file of files) {
		const piLines = file.pi.map((record, index) => {
			if (index === 0) return JSON.stringify(header(record, "pi"));
			const out = { ...record };
			for (const key of ID_FIELDS) {
				const value = out[key];
				// A branch summary made before any entry comes from "root", on both sides.
				if (typeof value === "string" && value !== "root") out[key] = ids.get(value) ?? `<unknown ${value}>`;
			}
			return JSON.stringify(blankTimes(out));
		});
		const ourLines = file.ours.map((record, index) =>
			JSON.stringify(index === 0 ? header(record, "ours") : blankTimes({ ...record })),
		);
		expect(ourLines).toEqual(piLines);
	}
}

const jsonlIn = (dir: string) => readdirSync(dir).filter((name) => name.endsWith(".jsonl"));

describe("same operations on pi and on the facade write the same files", () => {
	it("the scenario: source and fork are the same lines up to ids, timestamps and the named differences", async () => {
		const dirA = freshDir("bytes-pi");
		const dirB = freshDir("bytes-ours");
		const piManager = pi.SessionManager.create("/project", dirA);
		const ours = SessionManager.create("/project", dirB);
		try {
			const sources: Partial<FilePair> = {};
			const piResult = await runScenario(piManager, BASE, (stage) => {
				// File timing: nothing is written until the first user message, then everything at once.
				expect(jsonlIn(dirA), `pi at ${stage}`).toHaveLength(stage === "nothing-yet" ? 0 : 1);
				if (stage === "only-user-messages") sources.pi = defined(piManager.getSessionFile(), "pi file");
			});
			const ourResult = await runScenario(ours, BASE, (stage) => {
				expect(jsonlIn(dirB), `ours at ${stage}`).toHaveLength(stage === "nothing-yet" ? 0 : 1);
				if (stage === "only-user-messages") sources.ours = defined(ours.getSessionFile(), "our file");
			});
			expect(jsonlIn(dirA)).toHaveLength(2);
			expect(jsonlIn(dirB)).toHaveLength(2);
			expectSameFiles([
				{ pi: defined(sources.pi, "pi source"), ours: defined(sources.ours, "our source") },
				{ pi: defined(piResult.forkPath, "pi fork"), ours: defined(ourResult.forkPath, "our fork") },
			]);
			// What pi 0.73.1 wrote differently, both now write as pi 1.6 does.
			const ourSource = readRecords(defined(sources.ours, "our source"));
			expect(ourSource.find((record) => record.id === ourResult.ids.n1)?.name).toBe(MULTILINE_NAME_AS_WRITTEN);
			const piSource = readRecords(defined(sources.pi, "pi source"));
			expect(piSource.find((record) => record.id === piResult.ids.n1)?.name).toBe(MULTILINE_NAME_AS_WRITTEN);
			expect(ourSource.find((record) => record.id === ourResult.ids.bs1)?.fromId).toBe(ourResult.ids.a3);
			expect(piSource.find((record) => record.id === piResult.ids.bs1)?.fromId).toBe(piResult.ids.a3);
			const ourFork = readRecords(defined(ourResult.forkPath, "our fork"));
			const piFork = readRecords(defined(piResult.forkPath, "pi fork"));
			expect(ourFork.find((record) => record.id === ourResult.ids.a4)?.parentId).toBe(ourResult.ids.u4);
			expect(piFork.find((record) => record.id === piResult.ids.a4)?.parentId).toBe(piResult.ids.u4);

			// Reopened files are appended to the same way (no rewrite, one line per entry).
			ours.close();
			const source = { pi: defined(sources.pi, "pi source"), ours: defined(sources.ours, "our source") };
			const piReopened = pi.SessionManager.open(source.pi);
			const ourReopened = SessionManager.open(source.ours);
			try {
				const more: Op[] = [
					{ kind: "message", role: "user", text: "reopened", nullContent: false },
					{ kind: "message", role: "assistant", text: "reopened", nullContent: false },
					{ kind: "label", target: 0, label: "again" },
					{ kind: "branch", target: 0 },
					{ kind: "branchSummary", target: 1, summary: "tried another way" },
					{ kind: "compaction", keepBack: 2, summary: "compacted again" },
					{ kind: "reset" },
					{ kind: "message", role: "user", text: "a root again", nullContent: false },
				];
				expect(applyOps(piReopened, more)).toHaveLength(6);
				expect(applyOps(ourReopened, more)).toHaveLength(6);
				expectSameFiles([source]);
			} finally {
				ourReopened.close();
			}
		} finally {
			ours.close();
		}
	});

	it("generated operations, then a fork continued with an assistant message", () => {
		const start: Op[] = [{ kind: "message", role: "user", text: "start", nullContent: false }];
		const reply: Op[] = [{ kind: "message", role: "assistant", text: "reply", nullContent: false }];
		fc.assert(
			fc.property(opsArbitrary, fc.nat(), (ops, forkPick) => {
				const dirA = freshDir("fuzz-pi");
				const dirB = freshDir("fuzz-ours");
				const piManager = pi.SessionManager.create("/project", dirA);
				const ours = SessionManager.create("/project", dirB);
				const target = ours;
				try {
					expect(jsonlIn(dirA)).toEqual([]);
					expect(jsonlIn(dirB)).toEqual([]);
					applyOps(piManager, start);
					applyOps(target, start);
					const piIds = applyOps(piManager, [...reply, ...ops]);
					const ourIds = applyOps(target, [...reply, ...ops]);
					expect(jsonlIn(dirA)).toHaveLength(1);
					expect(jsonlIn(dirB)).toHaveLength(1);
					const source = {
						pi: defined(piManager.getSessionFile(), "pi file"),
						ours: defined(ours.getSessionFile(), "our file"),
					};
					const forkAt = forkPick % piIds.length;
					piManager.createBranchedSession(defined(piIds[forkAt], "pi fork leaf"));
					ours.createBranchedSession(defined(ourIds[forkAt], "our fork leaf"));
					applyOps(piManager, reply);
					applyOps(target, reply);
					const fork = {
						pi: defined(piManager.getSessionFile(), "pi fork"),
						ours: defined(ours.getSessionFile(), "our fork"),
					};
					expect(fork.pi).not.toBe(source.pi);
					expectSameFiles([source, fork]);
				} finally {
					ours.close();
					rmSync(dirA, { recursive: true, force: true });
					rmSync(dirB, { recursive: true, force: true });
				}
			}),
			{ numRuns: 50 },
		);
	});
});

// API parity ---------------------------------------------------------------------------------------------

/** pi 0.73.1's public instance methods; a pi upgrade that adds one fails here until the facade has it. */
const PI_INSTANCE_METHODS = [
	"appendCompaction",
	"appendContextEdit",
	"appendCustomEntry",
	"appendCustomMessageEntry",
	"appendLabelChange",
	"appendMessage",
	"appendModelChange",
	"appendSessionInfo",
	"appendThinkingLevelChange",
	"appendUsage",
	"branch",
	"branchWithSummary",
	"buildContextEntries",
	"buildSessionContext",
	"buildSessionProjection",
	"createBranchedSession",
	"getBranch",
	"getChildren",
	"getCwd",
	"getEntries",
	"getEntry",
	"getEntryCount",
	"getHeader",
	"getLabel",
	"getLeafEntry",
	"getLeafId",
	"getSessionDir",
	"getSessionFile",
	"getSessionId",
	"getSessionName",
	"getTree",
	"isPersisted",
	"newSession",
	"resetLeaf",
	"setSessionFile",
	"usesDefaultSessionDir",
];
const PI_STATIC_METHODS = ["continueRecent", "create", "findById", "forkFrom", "inMemory", "list", "listAll", "open"];

/** Own function-valued properties, without the constructor and `_`-prefixed (private by convention) names. */
function publicMethods(object: object): Map<string, number> {
	const methods = new Map<string, number>();
	for (const name of Object.getOwnPropertyNames(object).sort()) {
		const value: unknown = Object.getOwnPropertyDescriptor(object, name)?.value;
		if (name !== "constructor" && !name.startsWith("_") && typeof value === "function") methods.set(name, value.length);
	}
	return methods;
}

describe("API parity with pi's SessionManager", () => {
	it("pi's method lists are the ones this suite knows", () => {
		expect([...publicMethods(pi.SessionManager.prototype).keys()]).toEqual(PI_INSTANCE_METHODS);
		expect([...publicMethods(pi.SessionManager).keys()]).toEqual(PI_STATIC_METHODS);
	});

	it("every instance method exists on the facade with pi's arity", () => {
		const piMethods = publicMethods(pi.SessionManager.prototype);
		const ours = publicMethods(SessionManager.prototype);
		for (const name of PI_INSTANCE_METHODS) {
			expect(ours.has(name), `SessionManager.prototype.${name}`).toBe(true);
			expect(ours.get(name), `arity of ${name}`).toBe(piMethods.get(name));
		}
	});

	it("every static method exists on the facade with pi's arity", () => {
		const piMethods = publicMethods(pi.SessionManager);
		const ours = publicMethods(SessionManager);
		for (const name of PI_STATIC_METHODS) {
			expect(ours.has(name), `SessionManager.${name}`).toBe(true);
			expect(ours.get(name), `arity of ${name}`).toBe(piMethods.get(name));
		}
	});

	it("the session-manager functions pi 1.6 exports are exported by the facade with pi's arity", () => {
		const piModule = pi16 as unknown as Record<string, unknown>;
		const ours = facade as unknown as Record<string, unknown>;
		const functions = Object.keys(piModule).filter(
			(name) => name !== "SessionManager" && typeof piModule[name] === "function",
		);
		expect(functions.sort()).toEqual([
			"assertValidSessionId",
			"buildContextEntries",
			"buildSessionContext",
			"buildSessionProjection",
			"findMostRecentSession",
			"getDefaultSessionDir",
			"getLatestCompactionEntry",
			"loadEntriesFromFile",
			"migrateSessionEntries",
			"parseSessionEntries",
			"projectContextEntry",
			"sessionEntryToContextMessages",
		]);
		for (const name of functions) {
			expect(typeof ours[name], name).toBe("function");
			expect((ours[name] as () => void).length, `arity of ${name}`).toBe((piModule[name] as () => void).length);
		}
		expect(facade.CURRENT_SESSION_VERSION).toBe(piModule.CURRENT_SESSION_VERSION);
	});

	// pi's package root exports getLatestCompactionEntry next to SessionManager and buildSessionContext.
	it("exports getLatestCompactionEntry like pi's package root, with the same answers", async () => {
		const piModule = pi16 as unknown as { getLatestCompactionEntry: (entries: unknown[]) => unknown };
		const manager = SessionManager.inMemory("/p");
		expect(facade.getLatestCompactionEntry(manager.getEntries())).toBeNull();
		const first = manager.appendMessage(user("a", 1));
		manager.appendCompaction("one", first, 10);
		manager.appendMessage(user("b", 2));
		const second = manager.appendCompaction("two", first, 20);
		manager.appendMessage(user("c", 3));
		const entries = manager.getEntries();
		expect(facade.getLatestCompactionEntry(entries)?.id).toBe(second);
		expect(facade.getLatestCompactionEntry(entries)).toBe(piModule.getLatestCompactionEntry(entries));
		manager.close();
	});
});

// The facade's own guarantees ---------------------------------------------------------------------------------

function filesUnder(dir: string): string[] {
	return (readdirSync(dir, { recursive: true }) as string[]).sort();
}

describe("facade specifics", () => {
	it("inMemory() never writes, not even on forks and new sessions", async () => {
		const cwd = freshDir("in-memory-cwd");
		const before = filesUnder(scratch);
		const manager = SessionManager.inMemory(cwd);
		expect(manager.isPersisted()).toBe(false);
		expect(manager.getSessionFile()).toBeUndefined();
		expect(manager.getSessionDir()).toBe("");
		const result = await runScenario(manager, BASE);
		expect(result.forkPath).toBeUndefined();
		// In memory the fork replaces the session, as in pi.
		expect(manager.getEntries().map((entry) => entry.id)).toContain(result.ids.fu);
		expect(manager.getHeader()?.parentSession).toBeUndefined();
		expect(manager.newSession()).toBeUndefined();
		expect(manager.getEntries()).toEqual([]);
		manager.appendMessage(user("again", 1));
		manager.appendMessage(assistant("again", 2));
		manager.close();
		expect(filesUnder(scratch)).toEqual(before);

		// pi's in-memory session ends the same scenario with as many entries of the same kinds.
		const piManager = pi.SessionManager.inMemory(cwd);
		await runScenario(piManager, BASE);
		const again = SessionManager.inMemory(cwd);
		await runScenario(again, BASE);
		expect(again.getEntries().map((entry) => entry.type)).toEqual(piManager.getEntries().map((entry) => entry.type));
		again.close();
		expect(filesUnder(scratch)).toEqual(before);
	});

	it("continueRecent() opens the most recently modified session, like pi", () => {
		const dir = freshDir("recent");
		const paths: string[] = [];
		for (const text of ["one", "two", "three"]) {
			const manager = SessionManager.create("/project", dir);
			manager.appendMessage(user(text, BASE));
			manager.appendMessage(assistant(text, BASE + 1));
			paths.push(defined(manager.getSessionFile(), "file"));
			manager.close();
		}
		const garbage = join(dir, "zzz-not-a-session.jsonl");
		writeFileSync(garbage, "not json\n");
		const seconds = BASE / 1000;
		const touch = (order: string[]) =>
			order.forEach((path, index) => {
				utimesSync(path, seconds + index * 100, seconds + index * 100);
			});

		for (const newest of [1, 0, 2]) {
			const newestPath = defined(paths[newest], "newest");
			// The invalid file is the newest of all; both skip it.
			touch([...paths.filter((path) => path !== newestPath), newestPath, garbage]);
			const piManager = pi.SessionManager.continueRecent("/project", dir);
			const manager = SessionManager.continueRecent("/project", dir);
			try {
				expect(manager.getSessionFile()).toBe(newestPath);
				expect(piManager.getSessionFile()).toBe(newestPath);
				expect(manager.getEntries()).toEqual(piManager.getEntries());
				expect(manager.getCwd()).toBe("/project");
				expect(facade.findMostRecentSession(dir)).toBe(newestPath);
			} finally {
				manager.close();
			}
		}
	});

	it("continueRecent() starts a new session when the directory has none, like pi", () => {
		const empty = freshDir("recent-empty");
		const missing = join(scratch, "recent-missing", "sessions");
		for (const dir of [empty, missing]) {
			const manager = SessionManager.continueRecent("/project", dir); // ours first: it must create `missing`
			const piManager = pi.SessionManager.continueRecent("/project", dir);
			try {
				const file = defined(manager.getSessionFile(), "file");
				expect(dirname(file)).toBe(dir);
				expect(dirname(defined(piManager.getSessionFile(), "pi file"))).toBe(dir);
				expect(existsSync(file)).toBe(false);
				expect(manager.getEntries()).toEqual([]);
				expect(manager.getSessionDir()).toBe(dir);
				expect(existsSync(dir)).toBe(true);
				manager.appendMessage(user("first", BASE));
				manager.appendMessage(assistant("first", BASE + 1));
				expect(existsSync(file)).toBe(true);
			} finally {
				manager.close();
			}
		}
	});

	it("list() gives pi's SessionInfo for the same files", async () => {
		const dir = freshDir("list");
		const ours = SessionManager.create("/project", dir);
		const ourResult = await runScenario(ours, BASE);
		ours.close();
		const piManager = pi.SessionManager.create("/project", dir);
		const piResult = await runScenario(piManager, BASE + 100_000);
		const forked = pi.SessionManager.forkFrom(defined(piResult.forkPath, "pi fork"), "/elsewhere", dir);
		forked.appendMessage(user("after forkFrom", BASE + 150_000) as never); // so it is not tied with its source
		const spaced = pi.SessionManager.create("/other", dir);
		spaced.appendSessionInfo("  Spaced  ");
		spaced.appendMessage({
			role: "user",
			content: [{ type: "image", data: "aGk=", mimeType: "image/png" }],
			timestamp: BASE + 200_000,
		} as never);
		spaced.appendMessage(assistant("only an answer", BASE + 201_000) as never);
		const header = { type: "session", version: 3, id: "header-only", timestamp: "2025-06-01T00:00:00.000Z", cwd: "/p" };
		writeFileSync(join(dir, "2025-06-01T00-00-00-000Z_header-only.jsonl"), `${JSON.stringify(header)}\n`);
		writeFileSync(join(dir, "empty.jsonl"), "");
		writeFileSync(join(dir, "garbage.jsonl"), "not json\n");

		const piProgress: [number, number][] = [];
		const ourProgress: [number, number][] = [];
		const expected = await pi.SessionManager.list("/project", dir, (loaded, total) => piProgress.push([loaded, total]));
		const actual = await SessionManager.list("/project", dir, (loaded, total) => ourProgress.push([loaded, total]));
		// pi's SessionInfo fields, compared one by one (ours may carry more).
		const keys = [
			"path",
			"id",
			"cwd",
			"name",
			"parentSessionPath",
			"created",
			"modified",
			"messageCount",
			"firstMessage",
			"allMessagesText",
		] as const;
		const fields = (infos: typeof actual) =>
			infos.map((info) => Object.fromEntries(keys.map((key) => [key, info[key]])));
		expect(fields(actual)).toEqual(fields(expected as typeof actual));
		// A directory that is not pi's default for the cwd lists only the sessions started in that cwd (pi 1.6).
		expect(actual.map((info) => info.cwd)).toEqual(["/project", "/project", "/project", "/project"]);
		expect(ourProgress).toHaveLength(jsonlIn(dir).length);
		expect(ourProgress.at(-1)).toEqual(piProgress.at(-1));
		// listAll(dir) lists them all, whatever their cwd.
		const all = await SessionManager.listAll(dir);
		expect(fields(all)).toEqual(fields((await pi.SessionManager.listAll(dir)) as typeof actual));
		expect(all).toHaveLength(7); // the empty and the garbage file are no sessions
		expect(all.map((info) => info.name)).toContain("Spaced");
		expect(all.filter((info) => info.parentSessionPath !== undefined)).toHaveLength(3);
		expect(ourResult.forkPath).toBeDefined();
	});

	// A user/assistant message without `content` is no activity in pi's getLastActivityTime; nor in ours.
	it("list(): a message without content is no activity, as in pi", async () => {
		const dir = freshDir("list-no-content");
		const header = { type: "session", version: 3, id: "no-content", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" };
		const entries = [
			{ type: "message", id: "aaaaaaaa", parentId: null, timestamp: "2025-01-02T00:00:00.000Z" },
			{ type: "message", id: "bbbbbbbb", parentId: "aaaaaaaa", timestamp: "2025-01-03T00:00:00.000Z" },
		];
		const messages = [
			{ role: "user", content: "hi", timestamp: Date.parse("2025-01-02T00:00:00.000Z") },
			{ role: "assistant", timestamp: Date.parse("2025-01-05T00:00:00.000Z") },
		];
		const lines = [header, ...entries.map((entry, index) => ({ ...entry, message: messages[index] }))];
		writeFileSync(join(dir, "no-content.jsonl"), lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
		const expected = await pi.SessionManager.list("/p", dir);
		expect(expected.map((info) => info.modified.toISOString())).toEqual(["2025-01-02T00:00:00.000Z"]);
		expect(await SessionManager.list("/p", dir)).toEqual(expected);
	});

	it("default layout under PI_CODING_AGENT_DIR: same directory, listAll() like pi's", async () => {
		const piManager = pi.SessionManager.create("/home/me/project");
		const manager = SessionManager.create("/home/me/project");
		try {
			expect(manager.getSessionDir()).toBe(piManager.getSessionDir());
			expect(manager.getSessionDir()).toBe(join(agentDir, "sessions", "--home-me-project--"));
			expect(facade.getDefaultSessionDir("/home/me/project")).toBe(piManager.getSessionDir());
			piManager.appendMessage(user("from pi", BASE) as never);
			piManager.appendMessage(assistant("pi", BASE + 1_000) as never);
			manager.appendMessage(user("from ours", BASE + 2_000));
			manager.appendMessage(assistant("ours", BASE + 3_000));
			const other = SessionManager.create("/srv/other");
			other.appendMessage(user("elsewhere", BASE + 4_000));
			other.appendMessage(assistant("elsewhere", BASE + 5_000));
			other.close();
			const expected = await pi.SessionManager.listAll();
			const actual = await SessionManager.listAll();
			expect(actual).toHaveLength(3);
			expect(actual).toEqual(expected);
			expect(await SessionManager.list("/home/me/project")).toEqual(await pi.SessionManager.list("/home/me/project"));
		} finally {
			manager.close();
		}
	});

	it("newSession() and setSessionFile() switch files and release the previous writer lock", async () => {
		const dir = freshDir("switch");
		const manager = SessionManager.create("/project", dir);
		try {
			manager.appendMessage(user("first", BASE));
			manager.appendMessage(assistant("first", BASE + 1));
			const first = defined(manager.getSessionFile(), "first");
			const firstEntries = manager.getEntries();
			await expect(Session.open(storage, first)).rejects.toBeInstanceOf(SessionLockedError);

			const second = defined(manager.newSession({ id: "second-session" }), "second");
			expect(second).not.toBe(first);
			expect(manager.getSessionFile()).toBe(second);
			expect(manager.getSessionId()).toBe("second-session");
			expect(manager.getEntries()).toEqual([]);
			const reopenedFirst = await Session.open(storage, first); // released by newSession()
			await reopenedFirst.close();
			await expect(Session.open(storage, second, { create: true })).rejects.toBeInstanceOf(SessionLockedError);
			manager.appendMessage(user("second", BASE + 2));
			manager.appendMessage(assistant("second", BASE + 3));
			expect(existsSync(second)).toBe(true);

			manager.setSessionFile(first);
			expect(manager.getSessionFile()).toBe(first);
			expect(manager.getEntries()).toEqual(firstEntries);
			const reopenedSecond = await Session.open(storage, second); // released by setSessionFile()
			expect(reopenedSecond.tree.getEntries()).toHaveLength(2);
			await reopenedSecond.close();
			await expect(Session.open(storage, first)).rejects.toBeInstanceOf(SessionLockedError);
		} finally {
			manager.close();
		}
		const afterClose = await Session.open(storage, defined(manager.getSessionFile(), "file"));
		await afterClose.close();
	});

	// Reloading the current file must not trip over our own writer lock; pi reloads it.
	it("setSessionFile() of the current file reloads it, as in pi", () => {
		const dir = freshDir("reload");
		const piManager = pi.SessionManager.create("/project", dir);
		const manager = SessionManager.create("/project", dir);
		try {
			for (const target of [piManager, manager]) {
				target.appendMessage(user("hi", BASE) as never);
				target.appendMessage(assistant("hi", BASE + 1) as never);
				target.resetLeaf();
			}
			piManager.setSessionFile(defined(piManager.getSessionFile(), "pi file"));
			expect(piManager.getLeafId()).toBe(piManager.getEntries()[1]?.id);
			manager.setSessionFile(defined(manager.getSessionFile(), "file"));
			expect(manager.getLeafId()).toBe(manager.getEntries()[1]?.id);
		} finally {
			manager.close();
		}
	});

	it("managers of one process share a file (as in pi); another process is refused until the last lets go", () => {
		const dir = freshDir("locked");
		const first = SessionManager.create("/project", dir);
		first.appendMessage(user("hi", BASE));
		const path = defined(first.getSessionFile(), "file");
		// Code written for pi opens files it already has open and never closes them: that works here too.
		const second = SessionManager.open(path);
		const third = SessionManager.continueRecent("/project", dir);
		expect(third.getSessionFile()).toBe(path);
		second.appendMessage(assistant("from the second", BASE + 1));
		first.appendMessage(user("from the first", BASE + 2));
		third.appendMessage(user("from the third", BASE + 3));
		// Each append is whole lines: every line parses, and pi reads all four entries.
		const lines = readFileSync(path, "utf8").trimEnd().split("\n");
		expect(lines.map((line) => JSON.parse(line).type)).toEqual(["session", "message", "message", "message", "message"]);
		expect(pi.SessionManager.open(path).getEntries()).toHaveLength(4);

		const childOpens = (): string => {
			const script = join(dir, "open-in-child.ts");
			const facadeUrl = new URL("../adapters/pi-compat.ts", import.meta.url).href;
			writeFileSync(
				script,
				`import { SessionManager } from ${JSON.stringify(facadeUrl)};\n` +
					`try { SessionManager.open(${JSON.stringify(path)}).close(); console.log("opened"); }\n` +
					`catch (error) { console.log(error.name + ": " + error.message); }\n`,
			);
			return execFileSync(process.execPath, ["--import", "tsx", script], { encoding: "utf8" }).trim();
		};
		const refused = childOpens();
		expect(refused).toMatch(/^SessionLockedError: .* is locked by pid \d+ on /);
		// The advice names what this facade offers to read without writing.
		expect(refused).toContain("SessionManager.inMemory(cwd, undefined, loadEntriesFromFile(path))");
		const reader = SessionManager.inMemory("/project", undefined, facade.loadEntriesFromFile(path));
		expect(reader.getEntries()).toEqual(pi.SessionManager.open(path).getEntries());
		expect(reader.getSessionFile()).toBeUndefined();

		first.close();
		second.close();
		expect(childOpens()).toMatch(/^SessionLockedError/); // the third still holds it
		third.close();
		expect(childOpens()).toBe("opened");
		expect(existsSync(`${path}.lock`)).toBe(false);
	});

	it("edge cases where pi has an answer, answered as pi does", () => {
		const dir = freshDir("edges");
		const both = <T>(make: (manager: typeof SessionManager) => T): [T, T] => [
			make(SessionManager),
			make(pi.SessionManager as unknown as typeof SessionManager),
		];
		// A path in a directory that does not exist yet: created, and the session written there.
		const nested = both((M) => {
			const path = join(dir, M === SessionManager ? "ours" : "pis", "new", "s.jsonl");
			const manager = M.open(path);
			manager.appendMessage(user("hi", BASE));
			manager.appendMessage(assistant("hello", BASE + 1));
			(manager as Partial<SessionManager>).close?.();
			return readFileSync(path, "utf8").trim().split("\n").length;
		});
		expect(nested).toEqual([3, 3]);
		// An empty file, and a header without cwd: this process's working directory.
		writeFileSync(join(dir, "empty.jsonl"), "");
		const empty = SessionManager.open(join(dir, "empty.jsonl"));
		expect(empty.getCwd()).toBe(process.cwd());
		expect(empty.getHeader()?.cwd).toBe(process.cwd());
		empty.close();
		writeFileSync(
			join(dir, "nocwd.jsonl"),
			'{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00.000Z"}\n',
		);
		const [ourCwd, piCwd] = both((M) => M.open(join(dir, "nocwd.jsonl"), undefined).getCwd());
		expect(ourCwd).toBe(piCwd);
		// getBranch(null) from a loose caller: the leaf's path, as pi.
		const [ours, theirs] = both((M) => {
			const manager = M.inMemory("/p");
			manager.appendMessage(user("a", BASE));
			manager.appendMessage(assistant("b", BASE + 1));
			return manager.getBranch(null as unknown as string).length;
		});
		expect(ours).toBe(theirs);
	});

	it("an in-memory manager switched to a file reads it and writes nothing, not even a lock", () => {
		const dir = freshDir("memory-file");
		const source = pi.SessionManager.create("/project", dir);
		source.appendMessage(user("hi", BASE) as never);
		source.appendMessage(assistant("hello", BASE + 1) as never);
		const path = defined(source.getSessionFile(), "file");
		const before = readFileSync(path, "utf8");
		const missing = join(dir, "missing.jsonl");
		for (const M of [SessionManager, pi.SessionManager as unknown as typeof SessionManager]) {
			const manager = M.inMemory("/project");
			manager.setSessionFile(path);
			expect(manager.getEntries()).toHaveLength(2);
			manager.appendMessage(user("more", BASE + 2));
			expect([manager.getSessionFile(), manager.isPersisted()]).toEqual([path, false]);
			manager.setSessionFile(missing);
			manager.appendMessage(user("x", BASE + 3));
			manager.appendMessage(assistant("y", BASE + 4));
			expect(manager.getSessionFile()).toBe(missing);
		}
		expect(readFileSync(path, "utf8")).toBe(before);
		expect(readdirSync(dir).sort()).toEqual([path.slice(dir.length + 1)]);
	});

	it("after close(), appends throw SessionClosedError instead of writing without the lock", () => {
		const manager = SessionManager.create("/project", freshDir("closed"));
		manager.appendMessage(user("hi", BASE));
		manager.appendMessage(assistant("hello", BASE + 1));
		manager.close();
		expect(() => manager.appendMessage(user("late", BASE + 2))).toThrow(SessionClosedError);
		expect(readFileSync(defined(manager.getSessionFile(), "file"), "utf8").trim().split("\n")).toHaveLength(3);
	});
});

describe("pi 1.6's additions answer as pi 1.6 does", () => {
	const system = (sections: Record<string, string | null>, timestamp: number): AgentMessage =>
		({ role: "system", content: "", sections, toolsAdded: [{ name: "read", description: "r" }], timestamp }) as never;

	it("usage, context edits, system messages, retain-none compaction, usage on summaries, entry count", () => {
		const managers = [SessionManager.inMemory("/p"), pi.SessionManager.inMemory("/p") as unknown as SessionManager];
		const results = managers.map((manager) => {
			manager.appendMessage(system({ preamble: "You are terse.", tools: "<tools/>" }, BASE));
			const question = manager.appendMessage(user("question", BASE + 1));
			const answer = manager.appendMessage(assistant("answer", BASE + 2));
			const usageEntry = manager.appendUsage("cache_warm", "anthropic", "claude", usage, "warm-up");
			manager.appendContextEdit(answer, { content: "shorter answer" });
			manager.appendContextEdit(question, null);
			manager.appendMessage(system({ tools: null, skills: "<skills/>" }, BASE + 3));
			manager.appendCompaction("all of it", null, 500, undefined, false, usage);
			manager.appendMessage(user("after", BASE + 4));
			manager.branchWithSummary(answer, "left", undefined, false, usage);
			const refusals = [
				() => manager.appendContextEdit(usageEntry.id, null), // left behind by the branch summary
				() => manager.appendContextEdit(defined(manager.getBranch()[0], "root").id, null), // a system message
				() => manager.appendContextEdit("missing0", null),
				() => manager.appendContextEdit(question, { content: 42 } as never),
			].map((call) => {
				try {
					call();
					return "appended";
				} catch (error) {
					return (error as Error).message;
				}
			});
			const entries = manager.getEntries();
			const strip = (value: unknown) =>
				JSON.parse(
					JSON.stringify(value, (key, v) =>
						key === "id" ||
						key === "parentId" ||
						key === "targetId" ||
						key === "firstKeptEntryId" ||
						key === "fromId" ||
						key === "timestamp"
							? "<x>"
							: v,
					),
				);
			return {
				usageEntry: strip(usageEntry),
				refusals: refusals.map((message) => message.replace(/[0-9a-f]{8}/g, "<id>")),
				count: manager.getEntryCount(),
				entries: strip(entries),
				projection: strip(manager.buildSessionProjection()),
				contextEntries: strip(manager.buildContextEntries()),
				context: strip(manager.buildSessionContext()),
				// The retain-none compaction keeps nothing: its firstKeptEntryId is its own id.
				retainNone: entries.some((entry) => entry.type === "compaction" && entry.firstKeptEntryId === entry.id),
			};
		});
		expect(results[0]).toEqual(results[1]);
		expect(results[0]?.retainNone).toBe(true);
		expect(results[0]?.refusals).toEqual([
			"Entry <id> is not on the active branch",
			"Entry <id> does not contribute editable model content",
			"Entry missing0 not found",
			"Context edit replacement must be null or contain string/array content",
		]);
		for (const manager of managers) manager.close?.();
	});

	it("inMemory from entries, forkFrom and create with options, findById, usesDefaultSessionDir, cwd resolved", () => {
		const dir = freshDir("api16");
		const source = SessionManager.create("/project", dir, { id: "source-1" });
		source.appendMessage(user("hi", BASE));
		const path = defined(source.getSessionFile(), "file");
		expect(path.endsWith("_source-1.jsonl")).toBe(true);
		for (const M of [SessionManager, pi.SessionManager as unknown as typeof SessionManager]) {
			expect(M.findById("/project", "source-1", dir)).toBe(path);
			expect(M.findById("/other", "source-1", dir)).toBeUndefined(); // a custom directory: only the cwd's sessions
			expect(M.findById("/project", "nothing", dir)).toBeUndefined();
			const restored = M.inMemory("/elsewhere", undefined, facade.loadEntriesFromFile(path));
			expect([restored.getSessionId(), restored.getEntryCount(), restored.getCwd()]).toEqual([
				"source-1",
				1,
				"/elsewhere",
			]);
			const fresh = M.inMemory("relative/dir", { id: "mem-1" });
			expect([fresh.getSessionId(), fresh.getCwd(), fresh.usesDefaultSessionDir()]).toEqual([
				"mem-1",
				resolve("relative/dir"),
				false,
			]);
			expect(() => M.create("/project", dir, { id: "../escape" })).toThrow();
			expect(() => M.create("/project", dir, { id: "ends-with-dash-" })).toThrow();
			const home = M.create("~/proj");
			expect(home.getCwd()).toBe(join(homedir(), "proj"));
			expect(home.usesDefaultSessionDir()).toBe(true);
			expect(home.getSessionDir()).toBe(
				join(agentDir, "sessions", `--${join(homedir(), "proj").slice(1).replaceAll("/", "-")}--`),
			);
			const forked = M.forkFrom(path, "/target", freshDir("forked"), {
				id: `fork-${M === SessionManager ? "ours" : "pi"}`,
			});
			expect(forked.getSessionId()).toMatch(/^fork-/);
			expect(forked.getHeader()).toMatchObject({ cwd: "/target", parentSession: path });
			forked.close?.();
			home.close?.();
		}
		source.close();
	});

	it("list() reports partial results as they come and can be cancelled, like pi", async () => {
		const dir = freshDir("partial");
		for (let n = 0; n < 12; n++) {
			const manager = SessionManager.create("/project", dir);
			manager.appendMessage(user(`session ${n}`, BASE + n * 1000));
			manager.close();
		}
		const seen = { ours: [] as (number | undefined)[], pi: [] as (number | undefined)[] };
		const ours = await SessionManager.list("/project", dir, (_loaded, _total, sessions) =>
			seen.ours.push(sessions?.length),
		);
		const theirs = await pi.SessionManager.list("/project", dir, (_loaded, _total, sessions) =>
			seen.pi.push(sessions?.length),
		);
		expect(ours.map((info) => info.path)).toEqual(theirs.map((info) => info.path));
		// Published after the first, every tenth and the last file, each the sessions found so far.
		expect(seen.ours.filter((n) => n !== undefined)).toEqual(seen.pi.filter((n) => n !== undefined));
		const controller = new AbortController();
		controller.abort();
		await expect(SessionManager.list("/project", dir, undefined, controller.signal)).rejects.toThrow();
		await expect(SessionManager.listAll(dir, controller.signal)).rejects.toThrow();
	});
});

describe("where we differ from pi 1.6.0 on purpose (README's table), side by side", () => {
	const fixture = (name: string) => new URL(`./fixtures/sessions/${name}`, import.meta.url);

	it("loadEntriesFromFile never writes: pi terminates a torn last line while it reads", () => {
		const dir = freshDir("torn-read");
		const [ours, theirs] = ["ours.jsonl", "pi.jsonl"].map((name) => {
			const path = join(dir, name);
			writeFileSync(path, readFileSync(fixture("v3-torn-last-line.jsonl")));
			return path;
		}) as [string, string];
		const before = readFileSync(ours);
		expect(facade.loadEntriesFromFile(ours)).toEqual(pi16.loadEntriesFromFile(theirs));
		expect(readFileSync(ours).equals(before)).toBe(true);
		expect(readFileSync(theirs).length).toBe(before.length + 1); // pi appended "\n"
	});

	it("forkFrom of a v1 file: ours migrates first; pi copies v1 entries (no ids) under a v3 header", () => {
		const dir = freshDir("fork-v1");
		const source = join(dir, "v1.jsonl");
		writeFileSync(source, readFileSync(fixture("v1-linear.jsonl")));
		const ours = SessionManager.forkFrom(source, "/target", join(dir, "ours"));
		const theirs = pi.SessionManager.forkFrom(source, "/target", join(dir, "pi"));
		expect(ours.getEntries().every((entry) => /^[0-9a-f]{8}$/.test(entry.id))).toBe(true);
		expect(theirs.getEntries().some((entry) => entry.id === undefined)).toBe(true);
		expect(ours.buildSessionContext().messages.length).toBeGreaterThan(theirs.buildSessionContext().messages.length);
		ours.close();
	});

	it("a context edit without a replacement (a damaged file) is no edit; pi throws building the context", () => {
		const manager = SessionManager.inMemory("/p");
		const question = manager.appendMessage(user("question", BASE));
		const entries = [
			...manager.getEntries(),
			{
				type: "context_edit",
				id: "e0000001",
				parentId: question,
				timestamp: new Date(BASE).toISOString(),
				targetId: question,
			},
		] as SessionEntry[];
		expect(facade.buildSessionContext(entries).messages).toEqual([user("question", BASE)]);
		expect(() => pi16.buildSessionContext(entries as never)).toThrow(TypeError);
		manager.close();
	});

	it("a session name that is not a string is no name; pi's getSessionName throws on it", () => {
		const dir = freshDir("odd-name");
		const path = join(dir, "named.jsonl");
		const lines = readFileSync(fixture("v3-current.jsonl"), "utf8").trimEnd().split("\n");
		const last = JSON.parse(lines.at(-1) as string) as { id: string };
		lines.push(
			JSON.stringify({
				type: "session_info",
				id: "n0000001",
				parentId: last.id,
				timestamp: "2025-01-01T00:00:00.000Z",
				name: 42,
			}),
		);
		writeFileSync(path, `${lines.join("\n")}\n`);
		const ours = SessionManager.open(path);
		expect(ours.getSessionName()).toBeUndefined();
		expect(() => pi.SessionManager.open(path).getSessionName()).toThrow(TypeError);
		ours.close();
	});

	it("session ids longer than a file name allows are refused when given; pi accepts them and fails at the write", () => {
		const long = `a${"b".repeat(240)}`;
		expect(() => facade.assertValidSessionId(long)).toThrow(/at most 200 characters/);
		expect(() => pi16.assertValidSessionId(long)).not.toThrow();
	});
});

describe("review findings, answered as pi 1.6.0 answers", () => {
	const managers = () => [
		{ name: "ours", M: SessionManager },
		{ name: "pi", M: pi.SessionManager as unknown as typeof SessionManager },
	];

	it("open() of a new file with a relative or ~ cwd override writes it resolved in the header", () => {
		for (const { name, M } of managers()) {
			const dir = freshDir(`cwd-override-${name}`);
			for (const [file, override, expected] of [
				["rel.jsonl", "rel/dir", resolve("rel/dir")],
				["home.jsonl", "~/proj", join(homedir(), "proj")],
			] as const) {
				const manager = M.open(join(dir, file), undefined, override);
				manager.appendMessage(user("hi", BASE));
				expect(JSON.parse(readFileSync(join(dir, file), "utf8").split("\n")[0] as string).cwd, name).toBe(expected);
				manager.close?.();
			}
		}
	});

	it("an empty sessionDir means pi's default directory, not the working directory", async () => {
		for (const { name, M } of managers()) {
			const manager = M.create(`/empty-dir-${name}`, "");
			manager.appendMessage(user("hi", BASE));
			expect(manager.getSessionDir(), name).toBe(getDefault(`/empty-dir-${name}`));
			expect(manager.usesDefaultSessionDir(), name).toBe(true);
			manager.close?.();
		}
		const ours = (await SessionManager.listAll("")).map((info) => info.path).sort();
		const theirs = (await pi.SessionManager.listAll("")).map((info) => info.path).sort();
		expect(ours).toEqual(theirs);
		expect(ours.length).toBeGreaterThan(0);
	});

	it("a failed append is taken back: the manager goes on as if it had not been made", () => {
		for (const { name, M } of managers()) {
			const path = join(freshDir(`rollback-${name}`), "shared.jsonl");
			const first = M.open(path);
			const second = M.open(path); // both start a new session at the path; the first to write wins
			first.appendMessage(user("first", BASE));
			expect(() => second.appendMessage(user("second", BASE + 1)), name).toThrow(/EEXIST|exists/);
			expect([second.getEntries().length, second.getLeafId(), second.getEntryCount()], name).toEqual([0, null, 0]);
			const label = second.appendModelChange("anthropic", "claude"); // not written yet: no conversation
			expect(
				second.getEntries().map((entry) => entry.id),
				name,
			).toEqual([label]);
			first.close?.();
			second.close?.();
		}
	});

	it("a fork whose file cannot be written leaves the manager in its session, lock and all", () => {
		const dir = freshDir("fork-fails");
		const manager = SessionManager.create("/project", dir);
		const question = manager.appendMessage(user("hi", BASE));
		const source = defined(manager.getSessionFile(), "file");
		// A full disk for new session files: creating one fails (its lock file can still be made).
		const openSync = fsModule.openSync;
		fsModule.openSync = ((path: string, flags: string, ...rest: never[]) => {
			// The session file itself, or the temporary file it is written to before it is linked into place.
			if (flags === "wx" && /\.jsonl(\.[0-9a-f]{8}\.tmp)?$/.test(path))
				throw Object.assign(new Error("ENOSPC: no space left"), { code: "ENOSPC" });
			return openSync(path, flags, ...rest);
		}) as typeof openSync;
		syncBuiltinESMExports();
		try {
			expect(() => manager.createBranchedSession(question)).toThrow(/ENOSPC/);
		} finally {
			fsModule.openSync = openSync;
			syncBuiltinESMExports();
		}
		expect(manager.getSessionFile()).toBe(source);
		manager.appendMessage(assistant("still here", BASE + 1));
		expect(readFileSync(source, "utf8").trim().split("\n")).toHaveLength(3);
		// Only the source's lock: the fork's was released when its file could not be written.
		expect(readdirSync(dir).filter((name) => name.endsWith(".lock"))).toEqual([`${source.slice(dir.length + 1)}.lock`]);
		manager.close();
		expect(readdirSync(dir).filter((name) => name.endsWith(".lock"))).toEqual([]);
	});

	it("after a write cut short, the next append starts on a line of its own: nothing fuses, the history stays whole", () => {
		const dir = freshDir("short-write");
		const manager = SessionManager.create("/project", dir);
		const question = manager.appendMessage(user("hi", BASE));
		const path = defined(manager.getSessionFile(), "file");
		// The disk fills up halfway through the next append: half its line is in the file, then ENOSPC.
		const writeSync = fsModule.writeSync;
		fsModule.writeSync = ((fd: number, data: Uint8Array, offset = 0) => {
			writeSync(fd, data, offset, Math.max(1, (data.length - offset) >> 1));
			throw Object.assign(new Error("ENOSPC: no space left"), { code: "ENOSPC" });
		}) as unknown as typeof writeSync;
		syncBuiltinESMExports();
		try {
			expect(() => manager.appendMessage(assistant("cut short", BASE + 1))).toThrow(/ENOSPC/);
		} finally {
			fsModule.writeSync = writeSync;
			syncBuiltinESMExports();
		}
		expect(manager.getLeafId()).toBe(question); // taken back out
		const answer = manager.appendMessage(assistant("whole", BASE + 2));
		manager.close();
		const reopened = SessionManager.open(path);
		// The half line is skipped (reported); the answer is a child of the question, on its own line.
		expect(reopened.getBranch(answer).map((entry) => entry.id)).toEqual([question, answer]);
		expect(reopened.getEntries().map((entry) => entry.id)).toEqual([question, answer]);
		expect(
			pi.SessionManager.open(path)
				.getEntries()
				.map((entry) => entry.id),
		).toEqual([question, answer]);
		reopened.close();
	});

	it("JSON that is not an object before the header makes no session, for opening, finding and listing", async () => {
		const dir = freshDir("not-object-first");
		const header = { type: "session", version: 3, id: "late-header", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" };
		const path = join(dir, "2025-01-01T00-00-00-000Z_late-header.jsonl");
		writeFileSync(path, `{}\n${JSON.stringify(header)}\n`);
		for (const { name, M } of managers()) {
			expect(() => M.open(path), name).toThrow();
			expect(M.findById("/p", "late-header", dir), name).toBeUndefined();
			expect(await M.listAll(dir), name).toEqual([]);
		}
		const falsy = join(dir, "falsy-first.jsonl");
		writeFileSync(falsy, `null\n${JSON.stringify({ ...header, id: "after-null" })}\n`);
		expect(facade.loadEntriesFromFile(falsy)).toEqual(pi16.loadEntriesFromFile(falsy)); // pi skips null as blank
	});

	it("listAll() follows a project directory that is a symbolic link", async () => {
		const elsewhere = freshDir("linked-target");
		const manager = SessionManager.create("/linked", elsewhere);
		manager.appendMessage(user("hi", BASE));
		manager.close();
		const link = join(agentDir, "sessions", "--linked-project--");
		mkdirSync(dirname(link), { recursive: true });
		symlinkSync(elsewhere, link);
		try {
			const ours = (await SessionManager.listAll()).filter((info) => info.cwd === "/linked");
			const theirs = (await pi.SessionManager.listAll()).filter((info) => info.cwd === "/linked");
			expect(ours.map((info) => info.id)).toEqual(theirs.map((info) => info.id));
			expect(ours).toHaveLength(1);
		} finally {
			rmSync(link);
		}
	});

	it("a relative PI_CODING_AGENT_DIR: its default directory is still the default (no cwd filter)", () => {
		const saved = process.env.PI_CODING_AGENT_DIR;
		process.env.PI_CODING_AGENT_DIR = relative(process.cwd(), join(agentDir, "relative-agent"));
		try {
			const defaultDir = getDefault("/proj");
			writeFileSync(
				join(defaultDir, "2025-01-01T00-00-00-000Z_other-cwd.jsonl"),
				`${JSON.stringify({ type: "session", version: 3, id: "other-cwd", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/else" })}\n`,
			);
			for (const { name, M } of managers()) {
				expect(M.findById("/proj", "other-cwd", defaultDir), name).toBe(
					join(defaultDir, "2025-01-01T00-00-00-000Z_other-cwd.jsonl"),
				);
			}
		} finally {
			process.env.PI_CODING_AGENT_DIR = saved;
		}
	});
});

/** pi's default directory for a cwd (created), by pi 1.6.0 itself. */
function getDefault(cwd: string): string {
	return pi16.getDefaultSessionDir(cwd);
}
