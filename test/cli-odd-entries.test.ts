/**
 * `pi-sessions` on a session whose entries are odd but readable: entries without their ordinary fields
 * (a compaction without a summary, a message without content or timestamp, a label without a target, a
 * model change without a provider), names of Object.prototype's members as values and keys (type
 * "constructor", role "toString", `__proto__` keys), content of odd types, numbers where strings belong,
 * and lines that hold no entry. Every read command runs on it as a whole process on Node, Bun and Deno:
 * each exits 0 and prints no TypeError. Then `stats` on a v1 file names its largest entries by the ids
 * `show` finds, and counts the unreadable lines that `check` reports.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionStats } from "../adapters/cli/commands/stats.ts";
import { RUNTIMES, runCli } from "./support/cli.ts";

const T = (second: number) => `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z`;

/** The lines of the odd session, as raw JSON (a `__proto__` key must stay a key of the line's object). */
const LINES = [
	`{"type":"session","version":3,"id":"0dd00000-0000-4000-8000-000000000001","timestamp":"${T(0)}","cwd":"/tmp/odd"}`,
	`{"type":"message","id":"a0000001","parentId":null,"timestamp":"${T(1)}","message":{"role":"user","content":"odd hello","timestamp":1}}`,
	`{"type":"constructor","id":"a0000002","parentId":"a0000001","timestamp":"${T(2)}"}`,
	// A message without content or timestamp, of the role "toString".
	`{"type":"message","id":"a0000003","parentId":"a0000002","message":{"role":"toString"}}`,
	`{"type":"compaction","id":"a0000004","parentId":"a0000003","timestamp":"${T(3)}","firstKeptEntryId":"a0000003","tokensBefore":"many"}`,
	`{"type":"branch_summary","id":"a0000005","parentId":"a0000004","timestamp":"${T(4)}","fromId":42,"summary":{"__proto__":{"polluted":true}}}`,
	`{"type":"label","id":"a0000006","parentId":"a0000005","timestamp":"${T(5)}","label":"no target"}`,
	`{"type":"model_change","id":"a0000007","parentId":"a0000006","timestamp":"${T(6)}","modelId":7}`,
	`{"type":"message","id":"a0000008","parentId":"a0000007","timestamp":123,"message":{"role":"assistant","content":{"__proto__":{"x":1}},"provider":5,"model":["m"],"errorMessage":["x"],"stopReason":null,"usage":{"input":"1","cost":null}}}`,
	`{"type":"message","id":"a0000009","parentId":"a0000008","timestamp":"${T(7)}","message":{"role":"toolResult","content":[null,5,"str",{"type":"text","text":7},{"type":"toolCall","name":{"a":1}},{"type":"image","mimeType":3},{"type":"thinking","thinking":[]}],"toolName":null,"isError":"yes"}}`,
	`{"type":"message","id":"a000000a","parentId":"a0000009","timestamp":"${T(8)}","message":{"role":"bashExecution","exitCode":"1","output":{"a":1}}}`,
	`{"type":"message","id":"a000000b","parentId":"a000000a","timestamp":"${T(9)}","message":null}`,
	`{"type":"message","id":"a000000c","parentId":"a000000b","timestamp":"${T(10)}","message":"just a string"}`,
	`{"type":"message","id":"a000000d","parentId":"a000000c","timestamp":"${T(11)}","message":{"role":42,"content":[{"type":"thinking"}]}}`,
	`{"type":"__proto__","id":"a000000e","parentId":"a000000d","timestamp":"${T(12)}","__proto__":{"polluted":true}}`,
	`{"type":"custom_message","id":"a000000f","parentId":"a000000e","timestamp":"${T(13)}","customType":{"x":1},"content":5,"display":false}`,
	`{"type":"custom","id":"a0000010","parentId":"a000000f","timestamp":"${T(14)}"}`,
	`{"type":"usage","id":"a0000011","parentId":"a0000010","timestamp":"${T(15)}","kind":null,"usage":"lots"}`,
	`{"type":"context_edit","id":"a0000012","parentId":"a0000011","timestamp":"${T(16)}","targetId":"a0000003","replacement":{"content":7}}`,
	`{"type":"session_info","id":"a0000013","parentId":"a0000012","timestamp":"${T(17)}","name":12}`,
	`{"type":"thinking_level_change","id":"a0000014","parentId":"a0000013","timestamp":"${T(18)}","thinkingLevel":5}`,
	`{"type":"message","id":"a0000015","parentId":"a0000014","timestamp":"${T(19)}","message":{"role":"branchSummary"}}`,
	`{"type":"message","id":"a0000016","parentId":"a0000015","timestamp":"${T(20)}","message":{"role":"compactionSummary","summary":5}}`,
	`{"type":"message","id":"a0000017","parentId":"a0000016","timestamp":"${T(21)}","message":{"role":"system","sections":{"a":5,"__proto__":null},"toolsAdded":"x","toolsRemoved":[null,{"name":3}],"content":{"b":1}}}`,
	`{"type":"label","id":"a0000018","parentId":"a0000017","timestamp":"${T(22)}","targetId":"a0000001","label":{"x":1}}`,
	`{"type":"message","id":"a0000019","parentId":"a0000018","timestamp":"${T(23)}","message":{"role":"custom","content":[{"type":"text","text":null}],"display":"no"}}`,
	`{"type":"message","id":"a000001a","parentId":"a0000019","timestamp":{"x":1},"message":{"role":"hasOwnProperty","content":"odd text"}}`,
	`{"type":"toString","id":"a000001b","parentId":"a000001a","timestamp":"${T(24)}","summary":"s"}`,
	// A label and a time whose own toString is no function (String() of them throws).
	`{"type":"label","id":"a000001e","parentId":"a000001b","timestamp":"${T(24)}","targetId":"a0000002","label":{"toString":1}}`,
	`{"type":"message","id":"a000001f","parentId":"a000001b","timestamp":{"toString":1,"valueOf":1},"message":{"role":"user","content":"a sibling with an odd time"}}`,
	// Lines that hold no entry, and an entry without an id (kept, not in the tree).
	"[1,2]",
	'{"notype":true}',
	"not json at all",
	`{"type":"message","parentId":"a000001b","timestamp":"${T(25)}","message":{"role":"user","content":"no id"}}`,
	`{"type":"message","id":"a000001c","parentId":"a000001b","timestamp":"${T(26)}","message":{"role":"user","content":[{"type":"text","text":"odd end"}],"timestamp":"toString"}}`,
	`{"type":"message","id":"__proto__","parentId":"a000001c","timestamp":"${T(27)}","message":{"role":"__proto__","content":"proto id"}}`,
	`{"type":"label","id":"constructor","parentId":"__proto__","timestamp":"${T(28)}","targetId":"__proto__","label":"proto label"}`,
	`{"type":"message","id":"a000001d","parentId":"constructor","timestamp":"${T(29)}","message":{"role":"assistant","content":[{"type":"toolCall","name":"t","arguments":{"__proto__":{"a":1}}},{"type":"text"}],"provider":"p","model":"m","errorMessage":"boom"}}`,
];

const IDS = LINES.flatMap((line) => {
	try {
		const id = (JSON.parse(line) as { id?: unknown; type?: unknown }).id;
		return typeof id === "string" && !id.includes("-") ? [id] : [];
	} catch {
		return [];
	}
});

let root: string;
let file: string;

beforeAll(() => {
	root = mkdtempSync(join(tmpdir(), "pi-sessions-odd-"));
	const dir = join(root, "--tmp-odd--");
	mkdirSync(dir);
	file = join(dir, "2026-01-01T00-00-00-000Z_0dd00000-0000-4000-8000-000000000001.jsonl");
	writeFileSync(file, `${LINES.join("\n")}\n`);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every read command, on the odd session. */
const READS: [name: string, args: () => string[]][] = [
	["tree", () => ["tree", file]],
	["tree --full", () => ["tree", "--full", file]],
	["tree --json", () => ["tree", "--json", file]],
	["context --json", () => ["context", "--json", file]],
	["stats", () => ["stats", file]],
	["stats --json", () => ["stats", "--json", file]],
	["ls", () => ["ls", "--all", "--dir", root]],
	["search", () => ["search", "odd", "--all", "--dir", root]],
	["search --json", () => ["search", "odd", "--all", "--json", "--dir", root]],
	["export md", () => ["export", "--format", "md", file]],
	["export html", () => ["export", "--format", "html", file]],
	["export jsonl", () => ["export", "--format", "jsonl", file]],
	["export md --leaf", () => ["export", "--format", "md", "--leaf", "a0000008", file]],
];

function expectClean(run: ReturnType<typeof runCli>, what: string): void {
	expect(`${run.stderr}${run.stdout}`, what).not.toMatch(/TypeError|is not a function|Cannot read properties/);
	expect(run.stderr, what).not.toMatch(/\bat .*:\d+:\d+/); // no stack trace
	expect(run.status, `${what}: ${run.stderr}`).toBe(0);
}

describe.each(RUNTIMES)("odd entries on %s", (runtime) => {
	it.each(READS)("%s exits 0 without a TypeError", (name, args) => {
		const run = runCli(runtime, args());
		expectClean(run, name);
		expect(run.stdout.length, name).toBeGreaterThan(0);
		// Kinds and previews are words: no function's source, no "undefined" for a field the entry lacks.
		expect(run.stdout, name).not.toMatch(/native code|undefined/);
	});

	it("context exits 0 without a TypeError, naming every role as a word", () => {
		const run = runCli(runtime, ["context", file]);
		expectClean(run, "context");
		expect(run.stdout).not.toMatch(/native code|undefined/);
	});

	it("show finds every entry", () => {
		for (const id of IDS) {
			const run = runCli(runtime, ["show", file, id]);
			expectClean(run, `show ${id}`);
			expect(run.stdout, `show ${id}`).not.toMatch(/native code/);
			const json = runCli(runtime, ["show", "--json", file, id]);
			expectClean(json, `show --json ${id}`);
			expect((JSON.parse(json.stdout) as { id: string }).id).toBe(id);
		}
	});

	it("names the odd kinds as words, and counts the lines that hold no entry as check does", () => {
		const stats = JSON.parse(runCli(runtime, ["stats", "--json", file]).stdout) as SessionStats;
		expect(Object.keys(stats.byKind)).toEqual(
			expect.arrayContaining(["constructor", "toString", "__proto__", "hasOwnProperty", "42"]),
		);
		// Type "toString" and role "toString"; type "__proto__" and role "__proto__".
		const counts: [string, number][] = [
			["constructor", 1],
			["toString", 2],
			["__proto__", 2],
			["hasOwnProperty", 1],
		];
		for (const [name, count] of counts) {
			expect(Object.hasOwn(stats.byKind, name), name).toBe(true);
			expect(stats.byKind[name]?.count, name).toBe(count);
		}
		for (const entry of stats.largest) expect(typeof entry.kind).toBe("string");
		expect(stats.unreadableLines).toBe(3);
		expect(stats.entries).toBe(LINES.length - 1 - 3);
		const check = runCli(runtime, ["check", "--json", file]);
		const problems = (JSON.parse(check.stdout) as { problems: { reason: string }[] }).problems;
		const skipped = problems.filter((problem) =>
			["invalid-json", "torn-last-line", "not-an-object", "missing-type"].includes(problem.reason),
		);
		expect(skipped.length).toBe(stats.unreadableLines);
	});
});

describe.each(RUNTIMES)("stats of a v1 file on %s", (runtime) => {
	const v1 = new URL("fixtures/sessions/v1-linear.jsonl", import.meta.url).pathname;

	it("names the largest entries by the ids that show and tree use", () => {
		const stats = JSON.parse(runCli(runtime, ["stats", "--json", v1]).stdout) as SessionStats;
		expect(stats.largest.length).toBeGreaterThan(0);
		const tree = runCli(runtime, ["tree", "--full", v1]).stdout;
		for (const entry of stats.largest) {
			expect(entry.id).toMatch(/^[0-9a-f]{8}$/);
			const show = runCli(runtime, ["show", "--json", v1, entry.id as string]);
			expect(show.status, show.stderr).toBe(0);
			expect((JSON.parse(show.stdout) as { id: string }).id).toBe(entry.id);
			expect(tree).toContain(entry.id as string);
		}
		expect(runCli(runtime, ["stats", v1]).stdout).not.toContain("(no id)");
	});
});
