/**
 * pi 1.6.0 as the oracle for old files: random version 1 and version 2 session files (compactions whose
 * `firstKeptEntryIndex` or `firstKeptEntryId` points anywhere, `hookMessage` and `bashExecution` roles,
 * parents missing or earlier, blank and unparsable lines, non-ASCII and long text) are read by pi 1.6.0's
 * `SessionManager.open` and by us; both must give the same records (migrated ids are random on both sides:
 * they are paired by position), the same header, the same tree and the same context for every leaf.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
	migrateToCurrentVersion,
	parseSessionText,
	type SessionEntry,
	SessionTree,
	type SessionTreeNode,
} from "../src/index.ts";
import { mapIds, treeShape } from "./support/id-pairing.ts";
import { pi16 } from "./support/pi16.ts";

const scratch = mkdtempSync(join(tmpdir(), "pi16-oracle-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const RUNS = Number(process.env.FUZZ_RUNS ?? "") || 60;

/** Text of any Unicode (astral characters too), now and then long. */
const text = fc.oneof(
	{ weight: 6, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }) },
	{ weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 60 }) },
	{ weight: 1, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 2_000, maxLength: 20_000 }) },
);

const time = (n: number) => new Date(Date.UTC(2025, 10, 1) + n * 1_000).toISOString();

/** A message of any role old pi wrote. */
const message = fc.oneof(
	fc.record({ role: fc.constant("user"), content: text }),
	fc.record({
		role: fc.constant("user"),
		content: fc.array(fc.record({ type: fc.constant("text"), text }), { minLength: 1, maxLength: 3 }),
	}),
	fc.record({
		role: fc.constant("assistant"),
		content: fc.array(fc.record({ type: fc.constant("text"), text }), { maxLength: 2 }),
		provider: fc.constant("anthropic"),
		model: fc.constantFrom("claude-sonnet-4-5", "claude-opus-4-5"),
		stopReason: fc.constant("stop"),
	}),
	fc.record({
		role: fc.constant("toolResult"),
		toolCallId: fc.constant("toolu_1"),
		toolName: fc.constant("read"),
		content: fc.array(fc.record({ type: fc.constant("text"), text }), { maxLength: 2 }),
		isError: fc.boolean(),
	}),
	fc.record({
		role: fc.constant("bashExecution"),
		command: text,
		output: text,
		exitCode: fc.integer({ min: 0, max: 2 }),
	}),
	fc.record({
		role: fc.constant("hookMessage"),
		customType: fc.constant("hook"),
		content: text,
		display: fc.boolean(),
	}),
);

/** One line's kind, before it is given its place (`at`: a random number the placing turns into an index or id). */
const step = fc.oneof(
	{ weight: 8, arbitrary: fc.record({ kind: fc.constant("message" as const), message }) },
	{
		weight: 1,
		arbitrary: fc.record({ kind: fc.constant("thinking" as const), level: fc.constantFrom("off", "low", "high") }),
	},
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("model" as const), model: fc.constantFrom("a", "b") }) },
	{
		weight: 2,
		arbitrary: fc.record({
			kind: fc.constant("compaction" as const),
			summary: text,
			at: fc.integer({ min: -3, max: 80 }),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("bad" as const),
			line: fc.constantFrom("", "  ", "{not json", "[1,2]", "42"),
		}),
	},
);

/** The line of `step` at record index `index` (header = 0), without its v2 id fields. */
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

function body(s: Step, index: number, v1: boolean, ids: string[]): Record<string, unknown> | string {
	const timestamp = time(index);
	switch (s.kind) {
		case "message":
			return { type: "message", timestamp, message: { ...s.message, timestamp: 1_760_000_000_000 + index } };
		case "thinking":
			return { type: "thinking_level_change", timestamp, thinkingLevel: s.level };
		case "model":
			return { type: "model_change", timestamp, provider: "anthropic", modelId: s.model };
		case "compaction":
			return v1
				? { type: "compaction", timestamp, summary: s.summary, firstKeptEntryIndex: s.at, tokensBefore: 100 }
				: {
						type: "compaction",
						timestamp,
						summary: s.summary,
						// Any entry of the file (earlier, later, itself), or one that is not there.
						firstKeptEntryId: s.at >= 0 ? ids[s.at % ids.length] : "gone0000",
						tokensBefore: 100,
					};
		default:
			return s.line;
	}
}

/** A whole v1 or v2 file from its steps: v2 parents are the entry before, an earlier one, or missing. */
const oldFile = fc
	.record({
		version: fc.constantFrom(1, 2),
		steps: fc.array(step, { minLength: 1, maxLength: 40 }),
		parents: fc.array(fc.integer({ min: -8, max: 40 }), { minLength: 40, maxLength: 40 }),
	})
	.map(({ version, steps, parents }) => {
		const header = {
			type: "session",
			...(version === 2 ? { version: 2 } : {}),
			id: "0b7e6c1e-2f4d-4a51-9c3e-8d1f0a6b2c47",
			timestamp: time(0),
			cwd: "/home/dev/projects/ü-app",
		};
		const lines = [JSON.stringify(header)];
		const idOf = (n: number) => (0x10000000 + n * 7_919).toString(16);
		const allIds = steps.map((_, n) => idOf(n));
		const ids: string[] = [];
		steps.forEach((s, n) => {
			const line = body(s, n + 1, version === 1, allIds);
			if (typeof line === "string") {
				lines.push(line);
				return;
			}
			if (version === 2) {
				const id = idOf(n);
				const pick = parents[n] as number;
				const parentId =
					ids.length === 0 ? null : pick < 0 ? (pick < -4 ? "missing0" : null) : (ids.at(-1 - (pick % 3)) ?? null);
				lines.push(JSON.stringify({ type: line.type, id, parentId, ...line }));
				ids.push(id);
			} else lines.push(JSON.stringify(line));
		});
		return `${lines.join("\n")}\n`;
	});

let files = 0;

/** Whether `line` is JSON but not an object (a number, an array, a string). */
function isJsonNotObject(line: string): boolean {
	try {
		const value: unknown = JSON.parse(line);
		return typeof value !== "object" || value === null || Array.isArray(value);
	} catch {
		return false;
	}
}

/** pi 1.6.0's session of `text`, written to a file of its own. */
function piOpen(text: string) {
	const path = join(scratch, `s${files++}.jsonl`);
	writeFileSync(path, text);
	return pi16.SessionManager.open(path, scratch);
}

/**
 * Read `text` with pi 1.6.0 and with us: the same records, header, tree and context for every leaf. A line
 * that is JSON but no object (`42`, `[1,2]`) is where the two differ, as documented (README, "Where we
 * differ from pi"): we skip it with a `not-an-object` diagnostic naming it; pi keeps it as an entry, or
 * (a number in a v1 file, where its migration sets an id on every record) throws a TypeError. So ours is
 * compared with pi's reading of the file without those lines, and pi's of the whole file is checked too.
 */
function agrees(text: string): void {
	const lines = text.split("\n");
	const skipped = lines.flatMap((line, index) => (isJsonNotObject(line) ? [index + 1] : []));
	const diagnostics = parseSessionText(text).diagnostics.filter((d) => d.reason === "not-an-object");
	expect(diagnostics.map((d) => d.line)).toEqual(skipped);
	const piSession = piOpen(lines.filter((line) => !isJsonNotObject(line)).join("\n"));
	if (skipped.length > 0) {
		try {
			const whole = piOpen(text).getEntries().length;
			expect(whole, "pi keeps each such line as an entry").toBe(piSession.getEntries().length + skipped.length);
		} catch (error) {
			// Only its v1 migration throws, setting an id on a number (an array takes one).
			expect(error, "pi throws only a TypeError").toBeInstanceOf(TypeError);
			expect(JSON.parse(lines[0] as string).version, "pi throws only on a v1 file").toBeUndefined();
			expect(lines.some((line) => typeof (isJsonNotObject(line) && JSON.parse(line)) === "number")).toBe(true);
		}
	}
	const piEntries = piSession.getEntries() as unknown as SessionEntry[];
	const ours = SessionTree.fromRecords(migrateToCurrentVersion(parseSessionText(text).entries).entries);
	const ourEntries = ours.getEntries();
	expect(ourEntries.length).toBe(piEntries.length);
	const toOurs = new Map(piEntries.map((entry, index) => [entry.id, ourEntries[index]?.id as string]));
	// pi draws v1 ids at random: two alike would make the pairing by id ambiguous (see BENCHMARKS.md).
	expect(toOurs.size, "pi drew an id twice").toBe(piEntries.length);
	const translate = (id: string) => toOurs.get(id) ?? id;
	// A v2 file's ids are its own: both sides keep them.
	if (JSON.parse(lines[0] as string).version === 2) {
		for (const [theirs, mine] of toOurs) expect(mine, "a v2 id is kept").toBe(theirs);
	}
	expect(piEntries.map((entry) => mapIds(entry, translate))).toEqual(ourEntries);
	expect(ours.getHeader()).toEqual(piSession.getHeader());
	expect(treeShape(ours.getTree())).toEqual(treeShape(piSession.getTree() as SessionTreeNode[], translate));
	const piById = new Map(piEntries.map((entry) => [entry.id, entry]));
	for (const piEntry of piEntries) {
		const context = pi16.buildSessionContext(piEntries, piEntry.id, piById);
		expect(ours.buildSessionContext(translate(piEntry.id)), `context of ${piEntry.id}`).toEqual(context);
	}
}

describe("random old files: pi 1.6.0 and ours migrate and read them alike", () => {
	it("v1 and v2 files with compactions pointing anywhere, old roles, bad lines, any text", () => {
		fc.assert(
			fc.property(oldFile, (text) => agrees(text)),
			{ numRuns: RUNS },
		);
	}, 120_000);
});
