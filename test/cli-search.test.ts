/**
 * `pi-sessions search`: over a generated agent directory (two projects; sessions that match, that do not,
 * that match only in what is not searched, that match only across two messages; unicode and mixed case;
 * a branched session), as a whole process on Node, Bun and Deno, and in-process: the snippet, the colour,
 * and that a warm search reads no session file whose listed text does not match.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SearchMatch, searchCommand, snippetOf } from "../adapters/cli/commands/search.ts";
import { findSession } from "../adapters/cli/find-session.ts";
import type { Places } from "../adapters/cli/places.ts";
import type { RunContext } from "../adapters/cli/run-context.ts";
import { terminalOutput } from "../adapters/cli/terminal.ts";
import { createNodeStorage } from "../adapters/node.ts";
import {
	encodeCwd,
	encodeEntry,
	type FileEntry,
	listingCatalogPathForSessionsRoot,
	sessionFileName,
} from "../src/index.ts";
import { capturedStream, RUNTIMES, runCli } from "./support/cli.ts";
import { recordingStorage } from "./support/listing-sessions.ts";

const ALPHA = "/work/alpha";
const BETA = "/work/beta";
const LONG_BEFORE = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor ".repeat(3);
const LONG_AFTER = " ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud".repeat(3);

interface Spec {
	cwd: string;
	id: string;
	/** Day of February 2026 its messages are from: the listing's order (newest first). */
	day: number;
	name?: string;
	/** [entry id, parent id (default: the entry before), message]. */
	entries: [string, string | null | undefined, Record<string, unknown>][];
}

const text = (value: string) => ({ type: "text", text: value });

const SESSIONS: Spec[] = [
	{
		cwd: ALPHA,
		id: "a1000000-0000-4000-8000-000000000001",
		day: 1,
		entries: [
			["a1000001", null, { role: "user", content: "How do I enable Dark Mode?" }],
			[
				"a1000002",
				undefined,
				{
					role: "assistant",
					content: [
						{ type: "thinking", thinking: "dark thoughts" },
						text("Add a class,"),
						text("then toggle the DARK theme."),
						{ type: "toolCall", id: "c1", name: "read", arguments: { path: "dark.css" } },
					],
				},
			],
			["a1000003", undefined, { role: "toolResult", toolCallId: "c1", toolName: "read", content: [text("dark")] }],
			["a1000004", undefined, { role: "assistant", content: [{ type: "thinking", thinking: "still dark" }] }],
			["a1000005", undefined, { role: "user", content: "thanks" }],
		],
	},
	{
		cwd: ALPHA,
		id: "a2000000-0000-4000-8000-000000000002",
		day: 3,
		name: "Café notes",
		entries: [
			["a2000001", null, { role: "user", content: "😀 Ünïcode: ÄRGER über die Straße" }],
			["a2000002", undefined, { role: "assistant", content: [text("Ärger, indeed: ärger.")] }],
		],
	},
	{
		cwd: ALPHA,
		id: "a3000000-0000-4000-8000-000000000003",
		day: 2,
		entries: [
			["a3000001", null, { role: "user", content: "nothing to see here" }],
			["a3000002", undefined, { role: "assistant", content: [text("alpha")] }],
		],
	},
	{
		cwd: BETA,
		id: "b4000000-0000-4000-8000-000000000004",
		day: 4,
		entries: [["b4000001", null, { role: "user", content: `${LONG_BEFORE}the dark\n\nside${LONG_AFTER}` }]],
	},
	{
		cwd: BETA,
		id: "b5000000-0000-4000-8000-000000000005",
		day: 5,
		// The listed text is "alpha omega": it matches, no entry does.
		entries: [
			["b5000001", null, { role: "user", content: "alpha" }],
			["b5000002", undefined, { role: "assistant", content: [text("omega")] }],
		],
	},
	{
		cwd: BETA,
		id: "b6000000-0000-4000-8000-000000000006",
		day: 6,
		name: "Branched",
		entries: [
			["b6000001", null, { role: "user", content: "pick a theme" }],
			["b6000002", "b6000001", { role: "assistant", content: [text("light or dark?")] }],
			["b6000003", "b6000002", { role: "user", content: "dark, please" }],
			["b6000004", "b6000002", { role: "user", content: "Dark. No, light." }],
		],
	},
];

let agentDir: string;
let root: string;
const pathOf = new Map<string, string>();

function writeSession(spec: Spec): void {
	const dir = join(root, encodeCwd(spec.cwd));
	mkdirSync(dir, { recursive: true });
	const start = Date.UTC(2026, 1, spec.day, 9);
	const iso = (minute: number) => new Date(start + minute * 60_000).toISOString();
	const lines = [
		encodeEntry({ type: "session", version: 3, id: spec.id, timestamp: iso(0), cwd: spec.cwd } as FileEntry),
	];
	let previous: string | null = null;
	if (spec.name !== undefined)
		lines.push(
			encodeEntry({
				type: "session_info",
				id: "00000000",
				parentId: null,
				timestamp: iso(0),
				name: spec.name,
			} as FileEntry),
		);
	spec.entries.forEach(([id, parent, message], index) => {
		const parentId: string | null = parent === undefined ? previous : parent;
		const timestamp = iso(index + 1);
		lines.push(
			encodeEntry({
				type: "message",
				id,
				parentId,
				timestamp,
				message: { ...message, timestamp: Date.parse(timestamp) },
			} as FileEntry),
		);
		previous = id;
	});
	const path = join(dir, sessionFileName(iso(0), spec.id));
	writeFileSync(path, lines.join(""));
	pathOf.set(spec.id, path);
}

beforeAll(() => {
	agentDir = mkdtempSync(join(tmpdir(), "pi-sessions-search-"));
	root = join(agentDir, "sessions");
	for (const spec of SESSIONS) writeSession(spec);
});

afterAll(() => rmSync(agentDir, { recursive: true, force: true }));

const env = () => ({ PI_CODING_AGENT_DIR: agentDir });
const rowsOf = (stdout: string) => JSON.parse(stdout) as SearchMatch[];
const ids = (rows: SearchMatch[]) => rows.map((row) => `${row.sessionId.slice(0, 2)}:${row.entryId}`);
const matched = (row: SearchMatch) => row.snippet.slice(row.matchStart, row.matchStart + row.matchLength);

describe.each(RUNTIMES)("search on %s", (runtime) => {
	it("finds user and assistant text in every project, newest session first, entries in file order", () => {
		const run = runCli(runtime, ["search", "dark", "--all", "--json"], { env: env() });
		expect(run.stderr).toContain("6 matches in 3 sessions (6 sessions searched).");
		expect(run.status).toBe(0);
		const rows = rowsOf(run.stdout);
		// b6 (day 6), b4 (day 4), a1 (day 1); neither a thinking block, a tool call nor a tool result is searched;
		// both branches of b6 are.
		expect(ids(rows)).toEqual([
			"b6:b6000002",
			"b6:b6000003",
			"b6:b6000004",
			"b4:b4000001",
			"a1:a1000001",
			"a1:a1000002",
		]);
		for (const row of rows) expect(matched(row).toLowerCase()).toBe("dark");
		const [first] = rows;
		expect(first).toEqual({
			sessionId: "b6000000-0000-4000-8000-000000000006",
			path: pathOf.get("b6000000-0000-4000-8000-000000000006"),
			cwd: BETA,
			sessionName: "Branched",
			entryId: "b6000002",
			role: "assistant",
			timestamp: "2026-02-06T09:02:00.000Z",
			snippet: "light or dark?",
			matchStart: 9,
			matchLength: 4,
		});
		// No name: no sessionName key at all. Text blocks are joined by a space, as the listing joins them.
		expect(Object.keys(rows[4] as object)).not.toContain("sessionName");
		expect(rows[5]?.snippet).toBe("Add a class, then toggle the DARK theme.");
		expect(rows[5]?.role).toBe("assistant");
	});

	it("searches this directory's project, or --cwd's", () => {
		const alpha = runCli(runtime, ["search", "DARK", "--cwd", ALPHA, "--json"], { env: env() });
		expect(alpha.status).toBe(0);
		expect(ids(rowsOf(alpha.stdout))).toEqual(["a1:a1000001", "a1:a1000002"]);
		const here = runCli(runtime, ["search", "dark", "--json"], { env: env(), cwd: agentDir });
		expect(here.status).toBe(0);
		expect(rowsOf(here.stdout)).toEqual([]);
		expect(here.stderr).toContain("No sessions for");
	});

	it("stops at --limit and says what it left out", () => {
		const run = runCli(runtime, ["search", "dark", "--all", "--limit", "2", "--json"], { env: env() });
		expect(run.status).toBe(0);
		expect(ids(rowsOf(run.stdout))).toEqual(["b6:b6000002", "b6:b6000003"]);
		expect(run.stderr).toContain(
			"2 matches in 1 session (6 sessions searched); the limit of 2 left out more in b6000000 and 2 more sessions whose text matches",
		);
	});

	it("matches unicode case-insensitively and prints rows under their session", () => {
		const json = rowsOf(runCli(runtime, ["search", "äRGER", "--all", "--json"], { env: env() }).stdout);
		expect(ids(json)).toEqual(["a2:a2000001", "a2:a2000002"]);
		expect(json.map(matched)).toEqual(["ÄRGER", "Ärger"]);
		expect(json[0]?.snippet).toBe("😀 Ünïcode: ÄRGER über die Straße");
		const run = runCli(runtime, ["search", "äRGER", "--all"], { env: env() });
		expect(run.status).toBe(0);
		expect(run.stdout).toBe(
			[
				"a2000000  Café notes  /work/alpha",
				"  2026-02-03 09:01  a2000001  user       😀 Ünïcode: ÄRGER über die Straße",
				"  2026-02-03 09:02  a2000002  assistant  Ärger, indeed: ärger.",
				"",
			].join("\n"),
		);
	});

	it("gives no rows for a session whose listed text matches only across two messages", () => {
		const run = runCli(runtime, ["search", "alpha omega", "--all", "--json"], { env: env() });
		expect(run.status).toBe(0);
		expect(rowsOf(run.stdout)).toEqual([]);
		expect(run.stderr).toContain('No matches for "alpha omega" (6 sessions searched).');
	});

	it("refuses an empty query in one line, and says so when there are no sessions", () => {
		const empty = runCli(runtime, ["search", "", "--all"], { env: env() });
		expect(empty.status).toBe(1);
		expect(empty.stdout).toBe("");
		expect(empty.stderr.trim().split("\n")).toHaveLength(1);
		const bare = mkdtempSync(join(tmpdir(), "pi-sessions-bare-"));
		try {
			mkdirSync(join(bare, "sessions"));
			const none = runCli(runtime, ["search", "dark", "--all"], { env: { PI_CODING_AGENT_DIR: bare } });
			expect(none.status).toBe(0);
			expect(none.stdout).toBe("");
			expect(none.stderr).toContain("No sessions to search.");
		} finally {
			rmSync(bare, { recursive: true, force: true });
		}
	});
});

describe("snippets", () => {
	it("keeps about 40 characters either side, on one line, and says where it cut", () => {
		const body = `${LONG_BEFORE}the dark\n\nside${LONG_AFTER}`;
		const start = body.indexOf("dark\n\nside");
		const { snippet, matchStart, matchLength } = snippetOf(body, start, "dark\n\nside".length);
		expect(snippet.slice(matchStart, matchStart + matchLength)).toBe("dark side");
		expect(snippet.startsWith("…")).toBe(true);
		expect(snippet.endsWith("…")).toBe(true);
		expect(snippet).not.toMatch(/\s\s|\n/);
		expect(matchStart).toBeLessThanOrEqual(41);
		expect(snippet.length - matchStart - matchLength).toBeLessThanOrEqual(41);
		expect(matchStart).toBeGreaterThan(28);
		// Cut between words.
		expect(snippet).toBe("…elit, sed do eiusmod tempor the dark side ut labore et dolore magna aliqua. Ut…");
	});

	it("never splits a surrogate pair", () => {
		const emoji = "😀".repeat(60);
		// The 40th code unit either side is half an emoji: it is left out.
		const { snippet, matchStart } = snippetOf(`${emoji}cxd${emoji}`, 121, 1);
		expect(snippet[matchStart]).toBe("x");
		expect(snippet).toBe(`…${"😀".repeat(19)}cxd${"😀".repeat(19)}…`);
		expect(snippetOf(`${emoji}x${emoji}`, 120, 1).snippet).toBe(`…${"😀".repeat(20)}x${"😀".repeat(20)}…`);
		expect(snippetOf("ab", 0, 2)).toEqual({ snippet: "ab", matchStart: 0, matchLength: 2 });
	});
});

/** A run context over the generated sessions, its storage recording reads, its output captured. */
function inProcess(tty = false, sessionsRoot = root) {
	const { storage, reads } = recordingStorage(createNodeStorage());
	const places: Places = {
		root: sessionsRoot,
		catalog: listingCatalogPathForSessionsRoot(sessionsRoot),
		samples: false,
	};
	const stdout = capturedStream(tty);
	const stderr = capturedStream();
	const output = terminalOutput(stdout, stderr, {});
	const context: RunContext = {
		storage,
		output,
		places: () => places,
		sessionPath: (name) => findSession(name, () => places, storage),
	};
	return { context, reads, out: stdout.chunks, notes: stderr.chunks, catalog: places.catalog as string };
}

describe("search in-process", () => {
	it("opens only the sessions whose listed text matches once the catalog is warm", async () => {
		const cold = inProcess();
		rmSync(cold.catalog, { force: true });
		await searchCommand(cold.context, "dark", { all: true, limit: 50, json: true });
		expect(existsSync(cold.catalog)).toBe(true);
		// Cold: every session file was read (to list it).
		expect([...cold.reads.ranges.keys()].filter((path) => path.endsWith(".jsonl")).sort()).toEqual(
			[...pathOf.values()].sort(),
		);

		const warm = inProcess();
		await searchCommand(warm.context, "dark", { all: true, limit: 50, json: true });
		expect(ids(JSON.parse(warm.out.join("")) as SearchMatch[])).toHaveLength(6);
		const read = [...warm.reads.ranges.keys()].filter((path) => path.endsWith(".jsonl")).sort();
		const matching = ["a1", "b4", "b6"].map(
			(prefix) => pathOf.get(SESSIONS.find((spec) => spec.id.startsWith(prefix))?.id as string) as string,
		);
		expect(read).toEqual(matching.sort());

		// A session whose listed text matches but whose entries do not is opened, and gives nothing.
		const across = inProcess();
		await searchCommand(across.context, "alpha omega", { all: true, limit: 50, json: true });
		expect(JSON.parse(across.out.join(""))).toEqual([]);
		expect([...across.reads.ranges.keys()].filter((path) => path.endsWith(".jsonl"))).toEqual([
			pathOf.get("b5000000-0000-4000-8000-000000000005"),
		]);
	});

	it("does not open the sessions past the limit", async () => {
		const run = inProcess();
		await searchCommand(run.context, "dark", { all: true, limit: 1, json: true });
		expect(ids(JSON.parse(run.out.join("")) as SearchMatch[])).toEqual(["b6:b6000002"]);
		expect([...run.reads.ranges.keys()].filter((path) => path.endsWith(".jsonl"))).toEqual([
			pathOf.get("b6000000-0000-4000-8000-000000000006"),
		]);
	});

	it("highlights the match in colour on a terminal", async () => {
		const run = inProcess(true);
		await searchCommand(run.context, "ärger", { all: true, limit: 50, json: false });
		const printed = run.out.join("");
		// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for escape sequences
		expect(printed).toMatch(/\x1b\[[0-9;]*mÄRGER\x1b\[[0-9;]*m/);
		// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for escape sequences
		expect(printed).toMatch(/\x1b\[[0-9;]*mÄrger\x1b\[[0-9;]*m/);
		expect(run.notes.join("")).toBe("2 matches in 1 session (6 sessions searched).\n");
	});

	it("reads a big session lazily and finds the same", async () => {
		const dir = mkdtempSync(join(tmpdir(), "pi-sessions-search-big-"));
		try {
			const big = "x".repeat(5 << 20);
			const lines = [
				{
					type: "session",
					version: 3,
					id: "c7000000-0000-4000-8000-000000000007",
					timestamp: "2026-03-01T00:00:00.000Z",
					cwd: "/big",
				},
				{
					type: "message",
					id: "c7000001",
					parentId: null,
					timestamp: "2026-03-01T00:00:01.000Z",
					message: { role: "user", content: "read the big file", timestamp: 1 },
				},
				{
					type: "message",
					id: "c7000002",
					parentId: "c7000001",
					timestamp: "2026-03-01T00:00:02.000Z",
					message: {
						role: "toolResult",
						toolCallId: "c",
						toolName: "read",
						content: [text(`BIG ${big}`)],
						timestamp: 2,
					},
				},
				{
					type: "message",
					id: "c7000003",
					parentId: "c7000002",
					timestamp: "2026-03-01T00:00:03.000Z",
					message: { role: "assistant", content: [text(`a big one: ${big.slice(0, 100)}`)], timestamp: 3 },
				},
			];
			mkdirSync(join(dir, "sessions", encodeCwd("/big")), { recursive: true });
			writeFileSync(
				join(dir, "sessions", encodeCwd("/big"), "2026-03-01T00-00-00-000Z_c7000000-0000-4000-8000-000000000007.jsonl"),
				lines.map((line) => encodeEntry(line as FileEntry)).join(""),
			);
			const run = inProcess(false, join(dir, "sessions"));
			await searchCommand(run.context, "big", { all: true, limit: 50, json: true });
			const rows = JSON.parse(run.out.join("")) as SearchMatch[];
			expect(ids(rows)).toEqual(["c7:c7000001", "c7:c7000003"]);
			expect(rows[1]?.snippet).toBe(`a big one: ${"x".repeat(34)}…`);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	it("takes the query as text, not as a pattern", async () => {
		const run = inProcess();
		await searchCommand(run.context, "DARK?", { all: true, limit: 50, json: true });
		expect(ids(JSON.parse(run.out.join("")) as SearchMatch[])).toEqual(["b6:b6000002"]);
		await expect(searchCommand(run.context, "", { all: true, limit: 50, json: true })).rejects.toThrow(
			"give the text to look for",
		);
	});
});
