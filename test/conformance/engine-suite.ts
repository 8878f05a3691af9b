/**
 * The engine conformance suite: one suite, end to end, run on every runtime (Node, Bun, Deno, Chromium),
 * in-process and through the worker, on every storage. It uses only the engine's API, so in-process and
 * remote engines are driven by the very same code, and only `toBe`, `toEqual` and `toBeNull`. Errors are
 * checked by class and fields, which must be the same through the worker as in-process.
 */
import type { Remote } from "comlink";
import { UnreadableMessageError } from "../../src/errors.ts";
import {
	type AgentMessage,
	type AssistantMessage,
	type Engine,
	EntryNotFoundError,
	InvalidArgumentError,
	InvalidContextEditError,
	type SessionEntry,
	SessionFormatError,
	SessionLockedError,
	SessionNotFoundError,
	SessionReadOnlyError,
	UnknownSessionError,
} from "../../src/index.ts";
import type { TestApi } from "../../src/testing.ts";
import { type FixtureName, sessionFixture } from "../fixtures/generate.ts";
import { type Corpus, describeWithCorpus } from "../support/corpus.ts";
import { assistantMessage, userMessage } from "../support/messages.ts";

/** An engine, in-process or remote: the same type either way. */
export type AnyEngine = Remote<Engine>;

export interface EngineFixture {
	engine: AnyEngine;
	/** A fresh, empty directory on the engine's storage for this test. */
	root: string;
	/** Called after the test. */
	cleanup?: () => Promise<void>;
}

export interface SuiteOptions {
	/** The bytes of a generated session file (`test/fixtures/sessions/`, made by `test/fixtures/generate.ts`). */
	fixture(name: FixtureName): Promise<Uint8Array>;
	/** The real pi sessions beside the repository (`test/support/corpus.ts`): migrated too when they are there. */
	corpus: Corpus;
	/** The framework's `describe.skip`: without the corpus, its tests are registered as skipped. */
	describeSkip: TestApi["describe"];
}

/** What opening an old or damaged file must give. */
interface Expected {
	entries: number;
	/** The role of the leaf context's first message. */
	firstRole?: string;
	/** How many messages the leaf context has. */
	messages?: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const user = (content: string): AgentMessage => userMessage(content, 1);
const assistant = (text: string): AssistantMessage => assistantMessage(text, { timestamp: 2 });
const header = (id: string) =>
	`{"type":"session","version":3,"id":"${id}","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}`;
const custom = (id: string, parentId: string | null) =>
	`{"type":"custom","customType":"x","id":"${id}","parentId":${parentId === null ? "null" : `"${parentId}"`},"timestamp":"2025-01-01T00:00:01.000Z"}`;

/**
 * A session file whose one entry's custom data is nested `depth` objects deep: a worker reads it, but its
 * answer may be too deep for the caller's thread to deserialise (Node, Deno) at depths a sender can
 * still serialise.
 */
export function deepSessionFile(depth: number): Uint8Array {
	const data = `${'{"c":'.repeat(depth)}0${"}".repeat(depth)}`;
	const entry = `{"type":"custom","customType":"deep","id":"aaaaaaaa","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","data":${data}}`;
	return encoder.encode(`${header("deep")}\n${entry}\n`);
}

/** How `promise` settled within `ms`: "resolved", what it rejected with, or "pending" (a hang, failing the test). */
export async function outcomeWithin(promise: Promise<unknown>, ms = 20_000): Promise<unknown> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const timeout = new Promise<string>((resolve) => {
		timer = setTimeout(() => resolve("pending"), ms);
	});
	try {
		const settled = promise.then(
			() => "resolved",
			(error: unknown) => error,
		);
		return await Promise.race([settled, timeout]);
	} finally {
		clearTimeout(timer);
	}
}

/** A value nested `depth` objects deep. */
export function deepValue(depth: number): unknown {
	let value: unknown = 0;
	for (let i = 0; i < depth; i++) value = { c: value };
	return value;
}

/** Whether a deep message's outcome (see `outcomeWithin`) is one of the ways it may settle: it arrived, or one side refused it. */
export const settledAsAllowed = (outcome: unknown): boolean =>
	outcome === "resolved" ||
	outcome instanceof UnreadableMessageError ||
	// The sending side could not serialise it (Comlink's "Unserializable return value", or a stack overflow).
	outcome instanceof TypeError ||
	outcome instanceof RangeError;

export const describeOutcome = (outcome: unknown): unknown =>
	outcome instanceof Error ? `${outcome.name}: ${outcome.message}` : outcome;

/** Error classes a caller may test for with `instanceof`; through the worker too. */
const ERROR_CLASSES = {
	EntryNotFoundError,
	InvalidArgumentError,
	InvalidContextEditError,
	SessionFormatError,
	SessionLockedError,
	SessionNotFoundError,
	SessionReadOnlyError,
	UnknownSessionError,
	DOMException,
	TypeError,
};

interface Rejection {
	name: string;
	message: string;
	/** The names of `ERROR_CLASSES` the error is an instance of. */
	classes: string[];
	error: Error & Record<string, unknown>;
}

/** The error a promise rejects with, and which of our classes it is an instance of; or "resolved". */
async function rejection(promise: Promise<unknown>): Promise<Rejection | "resolved"> {
	try {
		await promise;
		return "resolved";
	} catch (thrown) {
		const error = thrown as Error & Record<string, unknown>;
		const classes = Object.entries(ERROR_CLASSES)
			.filter(([, errorClass]) => error instanceof errorClass)
			.map(([name]) => name);
		return { name: error.name, message: error.message, classes, error };
	}
}

async function lines(engine: AnyEngine, path: string): Promise<Record<string, unknown>[]> {
	const text = decoder.decode(await engine.exportSessionFile(path));
	return text
		.split("\n")
		.filter((line) => line.trim() !== "")
		.map((line) => JSON.parse(line));
}

/**
 * Register the suite. `factory` is called for each test and gives an engine and a fresh directory.
 * @example
 * engineConformance("node, in-process", async () => ({ engine: new Engine({ ... }) as never, root }), { describe, it, expect }, options);
 */
export function engineConformance(
	name: string,
	factory: () => Promise<EngineFixture>,
	t: TestApi,
	options: SuiteOptions,
): void {
	const { expect } = t;
	const test = (title: string, body: (f: EngineFixture) => Promise<void>) =>
		t.it(title, async () => {
			const fixture = await factory();
			try {
				await body(fixture);
			} finally {
				await fixture.cleanup?.();
			}
		});

	t.describe(`engine conformance: ${name}`, () => {
		test("importSessionFile takes bytes or a Blob (a picked File), never overwrites, and exports the same bytes", async ({
			engine,
			root,
		}) => {
			const original = await options.fixture("v3-current.jsonl");
			const path = `${root}/sessions/--p--/imported.jsonl`;
			await engine.importSessionFile(path, new Blob([original as Uint8Array<ArrayBuffer>]));
			expect(await engine.exportSessionFile(path)).toEqual(original);
			const again = await rejection(engine.importSessionFile(path, encoder.encode("{}\n")));
			expect(again !== "resolved" && [again.name, again.error.code]).toEqual(["StorageError", "exists"]);
			expect(await engine.exportSessionFile(path)).toEqual(original);
		});

		test("create, append every kind, and read it back after reopening", async ({ engine, root }) => {
			const sessionDir = `${root}/sessions/--p--`;
			const created = await engine.create({ cwd: "/p", sessionDir });
			const h = created.handle;
			expect(created.entryCount).toBe(0);
			await engine.appendModelChange(h, "anthropic", "claude");
			await engine.appendThinkingLevelChange(h, "high");
			// No file before a user or assistant message (pi 1.6): exporting it is `not-found`, not an empty download.
			const notYet = await rejection(engine.exportSessionFile(created.path as string));
			expect(notYet !== "resolved" && [notYet.name, notYet.error.code]).toEqual(["StorageError", "not-found"]);
			const question = await engine.appendMessage(h, user("How do I list files?"));
			expect((await lines(engine, created.path as string)).length).toBe(4);
			const answer = await engine.appendMessage(h, assistant("Use ls."));
			expect((await lines(engine, created.path as string)).length).toBe(5);
			await engine.appendCustomEntry(h, "ext", { state: [1, 2] });
			await engine.appendCustomMessageEntry(h, "ext", "injected", true, { d: 1 });
			await engine.appendLabelChange(h, question, "start");
			await engine.appendSessionInfo(h, "Listing files");
			await engine.appendMessage(h, {
				role: "toolResult",
				toolCallId: "c1",
				toolName: "bash",
				content: [{ type: "text", text: "a b" }],
				isError: false,
				timestamp: 3,
			});
			await engine.appendMessage(h, {
				role: "bashExecution",
				command: "ls",
				output: "a b",
				exitCode: 0,
				cancelled: false,
				truncated: false,
				timestamp: 4,
			});
			const summary = await engine.summary(h);
			expect([summary.entryCount, summary.name, summary.cwd]).toEqual([10, "Listing files", "/p"]);
			const context = await engine.getContext(h);
			expect(context.messages.map((m) => m.role)).toEqual([
				"user",
				"assistant",
				"custom",
				"toolResult",
				"bashExecution",
			]);
			expect([context.thinkingLevel, context.model]).toEqual(["high", { provider: "anthropic", modelId: "claude" }]);
			const before = await engine.getBranch(h);
			await engine.close(h);
			const closed = await rejection(engine.summary(h));
			expect(closed !== "resolved" && [closed.classes, closed.name]).toEqual([
				["UnknownSessionError"],
				"UnknownSessionError",
			]);

			const reopened = await engine.open(created.path as string);
			expect(reopened.report.diagnostics).toEqual([]);
			expect(await engine.getBranch(reopened.handle)).toEqual(before);
			expect(await engine.getLabel(reopened.handle, question)).toBe("start");
			expect((await engine.getEntry(reopened.handle, answer))?.parentId).toBe(
				before.find((e: SessionEntry) => e.id === answer)?.parentId,
			);
			await engine.close(reopened.handle);
		});

		test("branch, branchWithSummary, resetLeaf, children and the outline", async ({ engine, root }) => {
			const { handle: h } = await engine.create({ cwd: "/p", sessionDir: root });
			const a = await engine.appendMessage(h, user("a"));
			const b = await engine.appendMessage(h, assistant("b"));
			await engine.branch(h, a);
			const c = await engine.appendMessage(h, user("c"));
			expect((await engine.getChildren(h, a)).map((e: SessionEntry) => e.id)).toEqual([b, c]);
			const summaryId = await engine.branchWithSummary(h, a, "left c");
			expect(await engine.getEntry(h, summaryId)).toEqual({
				...(await engine.getEntry(h, summaryId)),
				type: "branch_summary",
				parentId: a,
				fromId: c,
				summary: "left c",
			});
			expect((await engine.getContext(h)).messages.map((m) => m.role)).toEqual(["user", "branchSummary"]);
			await engine.resetLeaf(h);
			expect((await engine.getContext(h)).total).toBe(0);
			const root2 = await engine.appendMessage(h, user("new root"));
			expect((await engine.getEntry(h, root2))?.parentId).toBeNull();
			await engine.appendLabelChange(h, a, "first");
			const outline = await engine.getOutline(h);
			expect(outline.map((n) => [n.id, n.childCount, n.label ?? null])).toEqual([
				[a, 3, "first"],
				[b, 0, null],
				[c, 0, null],
				[summaryId, 0, null],
				[root2, 1, null],
				[outline[5]?.id, 0, null],
			]);
			// In pages: the same nodes, in order; a page past the end is empty.
			const pages = [
				await engine.getOutline(h, { limit: 4 }),
				await engine.getOutline(h, { offset: 4, limit: 4 }),
				await engine.getOutline(h, { offset: 8 }),
			];
			expect(pages.map((page) => page.length)).toEqual([4, 2, 0]);
			expect(pages.flat()).toEqual(outline);
			const tree = await engine.getTree(h);
			expect(tree.map((node) => node.entry.id)).toEqual([a, root2]);
			await engine.close(h);
		});

		test("compaction: the summary first, then from the first kept entry", async ({ engine, root }) => {
			const { handle: h } = await engine.create({ cwd: "/p", sessionDir: root });
			await engine.appendMessage(h, user("dropped"));
			await engine.appendMessage(h, assistant("dropped too"));
			const kept = await engine.appendMessage(h, user("kept"));
			await engine.appendMessage(h, assistant("kept too"));
			await engine.appendCompaction(h, "what came before", kept, 1234);
			await engine.appendMessage(h, user("after"));
			const page = await engine.getContext(h, { offset: 0, limit: 2 });
			expect(page.total).toBe(4);
			expect(page.messages).toEqual([
				{
					role: "compactionSummary",
					summary: "what came before",
					tokensBefore: 1234,
					timestamp: page.messages[0]?.timestamp,
				},
				user("kept"),
			]);
			expect((await engine.getContext(h, { offset: 2 })).messages.map((m) => m.role)).toEqual(["assistant", "user"]);
			await engine.close(h);
		});

		test("fork: createBranchedSession and forkFrom", async ({ engine, root }) => {
			const { handle: h, path } = await engine.create({ cwd: "/p", sessionDir: `${root}/a` });
			const a = await engine.appendMessage(h, user("a"));
			const b = await engine.appendMessage(h, assistant("b"));
			await engine.appendLabelChange(h, a, "keep");
			await engine.appendMessage(h, user("not in the fork"));
			const forkPath = await engine.createBranchedSession(h, b);
			const forked = await lines(engine, forkPath as string);
			expect(forked.map((l) => l.type)).toEqual(["session", "message", "message", "label"]);
			expect([forked[0]?.parentSession, forked[3]?.targetId, forked[3]?.label]).toEqual([path, a, "keep"]);
			await engine.close(h);
			const copy = await engine.forkFrom(path as string, "/q", `${root}/b`);
			expect([copy.cwd, copy.header.parentSession, copy.entryCount]).toEqual(["/q", path, 4]);
			await engine.close(copy.handle);
		});

		/** Import an old file and open it: migrated to v3, the original kept byte for byte as the backup. */
		const migrates = (
			title: string,
			file: string,
			bytes: () => Promise<Uint8Array>,
			version: number,
			expected: Expected,
		) =>
			test(title, async ({ engine, root }) => {
				const original = await bytes();
				const path = `${root}/sessions/--p--/${file}`;
				await engine.importSessionFile(path, original);
				const progress: number[] = [];
				const opened = await engine.open(path, {}, (done) => progress.push(done));
				expect(progress.at(-1)).toBe(original.length);
				expect([opened.entryCount, opened.report.diagnostics.length]).toEqual([expected.entries, 0]);
				expect(opened.report.migratedFrom).toEqual({ version, backupPath: `${path}.v${version}.bak` });
				const backup = await engine.exportSessionFile(`${path}.v${version}.bak`);
				expect([backup.length, decoder.decode(backup) === decoder.decode(original)]).toEqual([original.length, true]);
				const migrated = await lines(engine, path);
				expect([migrated[0]?.version, migrated.length]).toEqual([3, expected.entries + 1]);
				const context = await engine.getContext(opened.handle, { limit: 1 });
				if (expected.firstRole !== undefined) expect(context.messages[0]?.role).toBe(expected.firstRole);
				if (expected.messages !== undefined) expect(context.total).toBe(expected.messages);
				await engine.close(opened.handle);
				const again = await engine.open(path, { readOnly: true });
				expect(again.report.migratedFrom === undefined).toBe(true);
				await engine.close(again.handle);
			});
		const facts = (name: FixtureName): Expected => {
			const { entries, leafContext } = sessionFixture(name).facts;
			return { entries, firstRole: leafContext.firstRole, messages: leafContext.messages };
		};

		for (const [name, version] of [
			["v1-linear.jsonl", 1],
			["v2-branching.jsonl", 2],
		] as const) {
			migrates(
				`migrates the generated ${name} (v${version} → v3) with a backup`,
				name,
				() => options.fixture(name),
				version,
				facts(name),
			);
		}

		for (const name of ["v3-crlf.jsonl", "v3-garbage-line.jsonl", "v3-torn-last-line.jsonl"] as const) {
			test(`opens the damaged ${name}, reporting the lines it skips`, async ({ engine, root }) => {
				const original = await options.fixture(name);
				const { facts: expected } = sessionFixture(name);
				const path = `${root}/sessions/--p--/${name}`;
				await engine.importSessionFile(path, original);
				const opened = await engine.open(path);
				const found = opened.report.diagnostics.map(({ reason, line }) => ({ reason, line }));
				expect([opened.entryCount, found]).toEqual([expected.entries, expected.diagnostics]);
				expect((await engine.getContext(opened.handle, { limit: 1 })).total).toBe(expected.leafContext.messages);
				// Only a torn last line is repaired (a line feed appended); otherwise the file is left as it was.
				const torn = name === "v3-torn-last-line.jsonl";
				expect(opened.report.repairedLastLine).toBe(torn);
				const after = decoder.decode(await engine.exportSessionFile(path));
				expect(after).toBe(`${decoder.decode(original)}${torn ? "\n" : ""}`);
				await engine.close(opened.handle);
			});
		}

		describeWithCorpus({ ...t, describeSkip: options.describeSkip }, options.corpus, "the real pi corpus", () => {
			for (const [file, expected] of [
				// No compaction: every message entry (453 assistant, 373 toolResult, 88 user) is in the context.
				["pi-v1-large-session.jsonl", { entries: 1018, messages: 914 }],
				["pi-v1-before-compaction.jsonl", { entries: 1002, firstRole: "compactionSummary" }],
			] as const) {
				migrates(
					`migrates the corpus file ${file} (v1 → v3) with a backup`,
					file,
					() => options.corpus.read(file),
					1,
					expected,
				);
			}
		});

		test("list, listAll, findById, findMostRecent, continueRecent", async ({ engine, root }) => {
			const agentSessions = `${root}/sessions`;
			const made: string[] = [];
			for (const [dir, text] of [
				["--p--", "first"],
				["--p--", "second"],
				["--q--", "third"],
			] as const) {
				const { handle, path } = await engine.create({ cwd: `/${dir}`, sessionDir: `${agentSessions}/${dir}` });
				// Listing orders by the last message's time, as pi does.
				await engine.appendMessage(handle, { ...user(text), timestamp: Date.now() });
				await engine.appendMessage(handle, { ...assistant("ok"), timestamp: Date.now() });
				await engine.close(handle);
				made.push(path as string);
				await new Promise((resolve) => setTimeout(resolve, 20)); // distinct modification times
			}
			const progress: [number, number][] = [];
			const listed = await engine.list(`${agentSessions}/--p--`, (done, total) => {
				progress.push([done, total]);
			});
			expect(listed.map((info) => info.firstMessage)).toEqual(["second", "first"]);
			expect(progress.at(-1)).toEqual([2, 2]);
			expect(listed[0]?.modified instanceof Date).toBe(true);
			const recent = await engine.findMostRecent(`${agentSessions}/--p--`);
			expect(recent).toBe(made[1]);
			const continued = await engine.continueRecent("/--p--", `${agentSessions}/--p--`);
			expect(continued.path).toBe(made[1]);
			await engine.close(continued.handle);
			const aborted = new AbortController();
			aborted.abort();
			const cancelled = await rejection(engine.list(`${agentSessions}/--p--`, undefined, aborted.signal));
			expect(cancelled !== "resolved" && [cancelled.classes, cancelled.name]).toEqual([["DOMException"], "AbortError"]);
		});

		test("damaged files: torn last line, garbage, empty, foreign", async ({ engine, root }) => {
			const torn = `${root}/torn.jsonl`;
			await engine.importSessionFile(torn, encoder.encode(`${header("t")}\n${custom("aaaaaaaa", null)}\n{"type":"cus`));
			const t = await engine.open(torn);
			expect(t.report.repairedLastLine).toBe(true);
			expect(t.report.diagnostics.map((d) => [d.reason, d.line])).toEqual([["torn-last-line", 3]]);
			const after = await engine.appendCustomEntry(t.handle, "after");
			await engine.close(t.handle);
			const tornLines = decoder.decode(await engine.exportSessionFile(torn)).split("\n");
			expect(JSON.parse(tornLines[3] as string).id).toBe(after);

			const garbage = `${root}/garbage.jsonl`;
			await engine.importSessionFile(
				garbage,
				encoder.encode(`${header("g")}\nnot json\n${custom("aaaaaaaa", null)}\n`),
			);
			const g = await engine.open(garbage, { readOnly: true });
			expect([g.entryCount, g.report.diagnostics.map((d) => [d.reason, d.line])]).toEqual([1, [["invalid-json", 2]]]);
			await engine.close(g.handle);

			const empty = `${root}/empty.jsonl`;
			await engine.importSessionFile(empty, new Uint8Array(0));
			const e = await engine.open(empty, { cwd: "/e" });
			expect(e.report.wroteHeader).toBe(true);
			await engine.close(e.handle);
			expect((await lines(engine, empty))[0]?.type).toBe("session");

			const foreign = `${root}/foreign.jsonl`;
			const diary = encoder.encode("dear diary\n");
			await engine.importSessionFile(foreign, diary);
			const refused = await rejection(engine.open(foreign));
			expect(
				refused !== "resolved" && [
					refused.classes,
					refused.message.includes(`${foreign}:1`),
					refused.error.file,
					refused.error.line,
					refused.error.excerpt,
				],
			).toEqual([["SessionFormatError"], true, foreign, 1, "dear diary"]);
			expect(decoder.decode(await engine.exportSessionFile(foreign))).toBe("dear diary\n");
		});

		test("one writer per file; readers may open read-only", async ({ engine, root }) => {
			const path = `${root}/locked.jsonl`;
			await engine.importSessionFile(path, encoder.encode(`${header("l")}\n`));
			const writer = await engine.open(path);
			const second = await rejection(engine.open(path));
			const owner = second !== "resolved" ? (second.error.owner as { token?: unknown } | undefined) : undefined;
			expect(second !== "resolved" && [second.classes, second.error.path, typeof owner?.token]).toEqual([
				["SessionLockedError"],
				path,
				"string",
			]);
			const reader = await engine.open(path, { readOnly: true });
			const refused = await rejection(engine.appendMessage(reader.handle, user("no")));
			expect(refused !== "resolved" && [refused.classes, refused.name]).toEqual([
				["SessionReadOnlyError"],
				"SessionReadOnlyError",
			]);
			await engine.close(reader.handle);
			await engine.close(writer.handle);
			const next = await engine.open(path);
			await engine.close(next.handle);
		});

		test("pipelined appends keep their order", async ({ engine, root }) => {
			const { handle: h, path } = await engine.create({ cwd: "/p", sessionDir: root });
			await engine.appendMessage(h, assistant("start"));
			const ids = await Promise.all(Array.from({ length: 300 }, (_, n) => engine.appendCustomEntry(h, "n", { n })));
			await engine.flush(h);
			const written = (await lines(engine, path as string)).slice(2);
			expect(written.map((l) => l.id)).toEqual(ids);
			expect(written.map((l) => (l.data as { n: number }).n)).toEqual(ids.map((_, n) => n));
			await engine.close(h);
		});

		test("messages are written as JSON.stringify writes them; one that cannot be written fails alone", async ({
			engine,
			root,
		}) => {
			const { handle: h, path } = await engine.create({ cwd: "/p", sessionDir: root });
			await engine.appendMessage(h, assistant("start"));
			const plain = userMessage('emoji 😀, é, \u2028, "quotes", \\, a\nnewline, a lone surrogate \ud800', 1);
			const odd = { ...assistant("odd"), when: new Date(0), gone: undefined };
			const cyclic: Record<string, unknown> = { role: "user", content: "cycle", timestamp: 1 };
			cyclic.self = cyclic;
			const big = { role: "user", content: "big", timestamp: 1n };
			// Issued together: one burst (one batch through the worker).
			const outcomes = [plain, cyclic, odd, big].map((message) => rejection(engine.appendMessage(h, message as never)));
			const [first, cycle, second, bigint] = await Promise.all(outcomes);
			expect([cycle, bigint].map((r) => r !== "resolved" && r?.classes)).toEqual([
				["InvalidArgumentError", "TypeError"],
				["InvalidArgumentError", "TypeError"],
			]);
			expect([first, second]).toEqual(["resolved", "resolved"]);
			await engine.flush(h);
			const text = decoder.decode(await engine.exportSessionFile(path as string));
			const written = text.split("\n").slice(2, -1);
			expect(written.length).toBe(2);
			written.forEach((line, index) => {
				const entry = JSON.parse(line);
				expect(Object.keys(entry)).toEqual(["type", "id", "parentId", "timestamp", "message"]);
				expect(line).toBe(JSON.stringify({ ...entry, message: [plain, odd][index] }));
			});
			const branch = await engine.getBranch(h);
			expect(branch.length).toBe(3);
			expect(branch[1]?.type === "message" && branch[1].message).toEqual(plain);
			await engine.close(h);
		});

		test("calls issued without awaiting run in the order they were made", async ({ engine, root }) => {
			const { handle: h } = await engine.create({ cwd: "/p", sessionDir: root });
			const first = engine.appendMessage(h, user("one"));
			const second = engine.appendMessage(h, assistant("two"));
			const context = engine.getContext(h); // not batchable: must still see both appends
			const refused = engine.appendLabelChange(h, "no-such-entry", "x");
			const third = engine.appendMessage(h, user("three"));
			expect((await context).messages.map((m) => m.role)).toEqual(["user", "assistant"]);
			const failure = await rejection(refused);
			expect(failure !== "resolved" && [failure.classes, failure.error.entryId]).toEqual([
				["EntryNotFoundError"],
				"no-such-entry",
			]);
			const ids = [await first, await second, await third];
			expect((await engine.getBranch(h)).map((e: SessionEntry) => e.id)).toEqual(ids);
			await engine.close(h);
		});

		test("opening a large file reports progress and can be cancelled midway", async ({ engine, root }) => {
			// Short lines, each parsed whole: an open of these 19 MB takes far longer than an abort's way
			// from the callback to the worker, even where reading bytes from memory costs nothing.
			const path = `${root}/large.jsonl`;
			const pad = "x".repeat(100);
			const count = 80_000;
			const body = Array.from({ length: count }, (_, n) =>
				custom(n.toString(16).padStart(8, "0"), n === 0 ? null : (n - 1).toString(16).padStart(8, "0")).replace(
					'"customType":"x"',
					`"customType":"x","pad":"${pad}"`,
				),
			);
			await engine.importSessionFile(path, encoder.encode(`${header("big")}\n${body.join("\n")}\n`));
			const controller = new AbortController();
			const seen: { done: number; total: number }[] = [];
			const cancelled = await rejection(
				engine.open(
					path,
					{},
					(done, total) => {
						seen.push({ done, total });
						controller.abort();
					},
					controller.signal,
				),
			);
			expect(cancelled !== "resolved" && [cancelled.classes, cancelled.name]).toEqual([["DOMException"], "AbortError"]);
			const last = seen.at(-1);
			expect(last !== undefined && last.done < last.total / 2).toBe(true); // stopped well before the end
			const opened = await engine.open(path, { readOnly: true });
			expect(opened.entryCount).toBe(count);
			await engine.close(opened.handle);
			const writer = await engine.open(path); // the cancelled open released its lock
			await engine.close(writer.handle);
		});

		test("a progress callback that throws fails the call; the lock is released and the engine goes on", async ({
			engine,
			root,
		}) => {
			const path = `${root}/progress.jsonl`;
			await engine.importSessionFile(path, encoder.encode(`${header("p")}\n${custom("aaaaaaaa", null)}\n`));
			const broken = () => {
				throw new RangeError("the progress bar broke");
			};
			const opening = await rejection(engine.open(path, {}, broken));
			expect(opening !== "resolved" && [opening.name, opening.message]).toEqual([
				"RangeError",
				"the progress bar broke",
			]);
			const reopened = await engine.open(path); // the failed open released its lock
			expect(reopened.entryCount).toBe(1);
			await engine.close(reopened.handle);
			const listing = await rejection(engine.list(root, broken));
			expect(listing !== "resolved" && listing.name).toBe("RangeError");
			expect(await engine.openHandles()).toEqual([]);
		});

		test("outline of a damaged file agrees with the tree; results are copies; pages are whole numbers", async ({
			engine,
			root,
		}) => {
			const path = `${root}/damaged-outline.jsonl`;
			const lines = [
				header("o"),
				custom("aaaaaaaa", null),
				custom("bbbbbbbb", "aaaaaaaa"),
				custom("cccccccc", "zzzzzzzz"), // missing parent
				custom("bbbbbbbb", "aaaaaaaa"), // duplicate id
				custom("dddddddd", "bbbbbbbb"),
				custom("eeeeeeee", "eeeeeeee"), // its own parent
			];
			await engine.importSessionFile(path, encoder.encode(`${lines.join("\n")}\n`));
			const { handle } = await engine.open(path, { readOnly: true });
			const outline = (await engine.getOutline(handle)).map((node) => [node.id, node.parentId, node.childCount]);
			const fromTree: unknown[] = [];
			const walk = (nodes: { entry: SessionEntry; children: unknown[] }[], parentId: string | null) => {
				for (const node of nodes) {
					fromTree.push([node.entry.id, parentId, node.children.length]);
					walk(node.children as never, node.entry.id);
				}
			};
			walk(await engine.getTree(handle), null);
			const byId = (a: unknown, b: unknown) => String((a as string[])[0]).localeCompare(String((b as string[])[0]));
			expect(outline.sort(byId)).toEqual(fromTree.sort(byId));
			expect(outline.map((node) => node[0])).toEqual(["aaaaaaaa", "bbbbbbbb", "cccccccc", "dddddddd", "eeeeeeee"]);

			// What the engine hands out cannot change the session.
			const entry = (await engine.getEntry(handle, "aaaaaaaa")) as SessionEntry & { customType: string };
			entry.customType = "changed by the caller";
			const branch = await engine.getBranch(handle, "dddddddd");
			branch.length = 0;
			expect((await engine.getEntry(handle, "aaaaaaaa")) as unknown).toEqual(JSON.parse(custom("aaaaaaaa", null)));
			expect((await engine.getBranch(handle, "dddddddd")).length).toBe(3);
			await engine.close(handle);

			const { handle: h } = await engine.create({ cwd: "/p", sessionDir: root });
			for (const text of ["1", "2", "3", "4"]) await engine.appendMessage(h, user(text));
			const page = await engine.getContext(h, { offset: 2.5, limit: 1.9 });
			expect([page.offset, page.messages.length, page.total]).toEqual([2, 1, 4]);
			expect((await engine.getContext(h, { offset: 99 })).offset).toBe(4);
			const nan = await rejection(engine.getContext(h, { limit: Number.NaN }));
			expect(nan !== "resolved" && nan.name).toBe("RangeError");
			const notAFile = await rejection(engine.exportSessionFile(root));
			expect(notAFile !== "resolved" && [notAFile.name, notAFile.error.code]).toEqual(["StorageError", "io"]);
			await engine.close(h);
		});

		test("a cancelled call rejects with the signal's reason, as it is", async ({ engine, root }) => {
			const reasons = [
				undefined, // abort() without a reason: a DOMException named AbortError
				new DOMException("too slow", "TimeoutError"),
				new RangeError("not now"),
				"a plain string",
			];
			const seen: unknown[] = [];
			for (const reason of reasons) {
				const controller = new AbortController();
				controller.abort(reason);
				const failure = await engine.list(root, undefined, controller.signal).then(
					() => "resolved",
					(error: unknown) => error,
				);
				// The default reason's message differs between runtimes; the others must arrive as they were.
				const message = (error: Error) => (reason === undefined ? "(default)" : error.message);
				seen.push(
					failure instanceof Error
						? [failure instanceof DOMException, failure instanceof RangeError, failure.name, message(failure)]
						: failure,
				);
			}
			expect(seen).toEqual([
				[true, false, "AbortError", "(default)"],
				[true, false, "TimeoutError", "too slow"],
				[false, true, "RangeError", "not now"],
				"a plain string",
			]);
		});

		test("opening can be cancelled; in-memory sessions write nothing", async ({ engine, root }) => {
			const aborted = new AbortController();
			aborted.abort();
			const path = `${root}/some.jsonl`;
			await engine.importSessionFile(path, encoder.encode(`${header("c")}\n${custom("aaaaaaaa", null)}\n`));
			const cancelled = await rejection(engine.open(path, {}, undefined, aborted.signal));
			expect(cancelled !== "resolved" && [cancelled.classes, cancelled.name]).toEqual([["DOMException"], "AbortError"]);
			const unlocked = await engine.open(path); // the cancelled open released its lock
			await engine.close(unlocked.handle);

			const memory = await engine.inMemory("/m");
			await engine.appendMessage(memory.handle, user("x"));
			await engine.appendMessage(memory.handle, assistant("y"));
			expect([memory.path === undefined, (await engine.summary(memory.handle)).entryCount]).toEqual([true, 2]);
			await engine.close(memory.handle);
			expect(await engine.openHandles()).toEqual([]);
		});

		test("opening a path with no file is SessionNotFoundError and creates nothing; create: true starts a session there", async ({
			engine,
			root,
		}) => {
			const typo = `${root}/no-such-dir/sesion.jsonl`;
			const missing = await rejection(engine.open(typo));
			expect(missing !== "resolved" && [missing.classes, missing.error.path]).toEqual([["SessionNotFoundError"], typo]);
			const noDir = await rejection(engine.exportSessionFile(`${root}/no-such-dir`)); // not even the directory
			expect(noDir !== "resolved" && noDir.error.code).toBe("not-found");
			const created = await engine.open(typo, { create: true });
			await engine.appendMessage(created.handle, user("hello"));
			expect((await lines(engine, typo)).map((line) => line.type)).toEqual(["session", "message"]);
			await engine.close(created.handle);
		});

		test("getTree of a long chain (20,000 entries deep) answers, nested, with every node", async ({ engine, root }) => {
			const depth = 20_000;
			const id = (n: number) => n.toString(16).padStart(8, "0");
			const lines = [header("deep")];
			for (let n = 0; n < depth; n++) lines.push(custom(id(n), n === 0 ? null : id(n - 1)));
			const path = `${root}/deep.jsonl`;
			await engine.importSessionFile(path, encoder.encode(`${lines.join("\n")}\n`));
			const { handle } = await engine.open(path, { readOnly: true });
			const roots = await engine.getTree(handle);
			let count = 0;
			let last = "";
			for (let node = roots[0]; node; node = node.children[0]) {
				count++;
				last = node.entry.id;
			}
			expect([roots.length, count, last]).toEqual([1, depth, id(depth - 1)]);
			const flat = await engine.getFlatTree(handle);
			expect([flat.length, flat[0]?.parent, flat[depth - 1]?.parent]).toEqual([depth, -1, depth - 2]);
			await engine.close(handle);
		});

		test("pi 1.6's entry kinds: usage, context edits, system messages, retain-none compaction", async ({
			engine,
			root,
		}) => {
			const { handle, path } = await engine.create({ cwd: "/p", sessionDir: root });
			await engine.appendMessage(handle, { role: "system", content: "Be brief.", timestamp: 1 });
			const question = await engine.appendMessage(handle, user("question"));
			const answer = await engine.appendMessage(handle, assistant("a long answer"));
			const usage = assistant("x").usage;
			await engine.appendUsage(handle, "cache_warm", "anthropic", "claude", usage);
			await engine.appendContextEdit(handle, answer, { content: "short" });
			const refused = await rejection(engine.appendContextEdit(handle, question, { content: 1 } as never));
			expect(refused !== "resolved" && refused.classes).toEqual(["InvalidArgumentError", "TypeError"]);
			const notEditable = await rejection(engine.appendContextEdit(handle, "aaaaaaaa", null));
			expect(notEditable !== "resolved" && notEditable.classes).toEqual(["EntryNotFoundError"]);
			let page = await engine.getContext(handle);
			expect(page.messages.map((m) => [m.role, "content" in m ? m.content : undefined])).toEqual([
				["system", "Be brief."],
				["user", "question"],
				["assistant", [{ type: "text", text: "short" }]],
			]);
			expect(page.entryIds.slice(1)).toEqual([question, answer]);
			const compaction = await engine.appendCompaction(handle, "summary", null, 100, undefined, false, usage);
			page = await engine.getContext(handle);
			// Retain-none: the replayed system message, then the summary; nothing from before is kept.
			expect(page.messages.map((m) => m.role)).toEqual(["system", "compactionSummary"]);
			expect(page.entryIds).toEqual([compaction, compaction]);
			const written = await lines(engine, path as string);
			expect(written.map((line) => line.type)).toEqual([
				"session",
				"message",
				"message",
				"message",
				"usage",
				"context_edit",
				"compaction",
			]);
			const last = written.at(-1) as { firstKeptEntryId?: string; systemMessage?: { role: string; content: string } };
			expect([last.firstKeptEntryId, last.systemMessage?.role, last.systemMessage?.content]).toEqual([
				compaction,
				"system",
				"Be brief.",
			]);
			await engine.close(handle);
			const reopened = await engine.open(path as string, { readOnly: true });
			expect((await engine.getContext(reopened.handle)).messages.map((m) => m.role)).toEqual([
				"system",
				"compactionSummary",
			]);
			await engine.close(reopened.handle);
		});
	});
}
