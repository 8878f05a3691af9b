/**
 * The generated session files (test/fixtures/generate.ts) that the tests use in place of the real corpus:
 * the committed files are exactly what the generator makes, each has what its version should have, and
 * loading each gives the facts the generator worked out from how it built it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { migrateToCurrentVersion, parseSessionText, SessionTree } from "../src/index.ts";
import { FIXTURE_NAMES, FIXTURES_DIR, type FixtureName, sessionFixture, sessionFixtures } from "./fixtures/generate.ts";

type Json = Record<string, unknown>;
const read = (name: FixtureName): string => readFileSync(new URL(name, FIXTURES_DIR), "utf8");
/** The records of a fixture's well-formed lines. */
const records = (name: FixtureName): Json[] =>
	read(name)
		.split("\n")
		.filter((line) => line.trim() !== "")
		.flatMap((line) => {
			try {
				return [JSON.parse(line) as Json];
			} catch {
				return [];
			}
		});
const roles = (list: Json[]): unknown[] =>
	list.filter((r) => r.type === "message").map((r) => (r.message as { role: string }).role);
const types = (list: Json[]): unknown[] => list.map((r) => r.type);

describe("generated session files", () => {
	it("the committed files are byte for byte what the generator makes (else: npx tsx test/fixtures/generate.ts)", () => {
		const onDisk = readdirSync(FIXTURES_DIR).filter((file) => file.endsWith(".jsonl"));
		expect(onDisk.sort()).toEqual([...FIXTURE_NAMES].sort());
		for (const { name, text } of sessionFixtures()) {
			expect(readFileSync(new URL(name, FIXTURES_DIR)).equals(Buffer.from(text, "utf8")), name).toBe(true);
		}
		expect(sessionFixtures()).toEqual(sessionFixtures()); // no clock, no unseeded randomness
	});

	it("v1-linear: no version, pi's old header fields, no ids, every old record kind", () => {
		const [header, ...entries] = records("v1-linear.jsonl") as [Json, ...Json[]];
		expect(Object.keys(header)).toEqual([
			"type",
			"id",
			"timestamp",
			"cwd",
			"provider",
			"modelId",
			"thinkingLevel",
			"branchedFrom",
		]);
		expect(entries.some((entry) => "id" in entry || "parentId" in entry)).toBe(false);
		expect(new Set(roles(entries))).toEqual(
			new Set(["user", "assistant", "toolResult", "bashExecution", "hookMessage"]),
		);
		expect(new Set(types(entries))).toEqual(
			new Set(["message", "thinking_level_change", "model_change", "compaction"]),
		);
		// firstKeptEntryIndex counts the file's records, the header being record 0: it points at a user message.
		const all = [header, ...entries];
		const indices = entries.filter((e) => e.type === "compaction").map((e) => e.firstKeptEntryIndex as number);
		expect(indices).toEqual(sessionFixture("v1-linear.jsonl").facts.firstKeptEntryIndices);
		expect(indices.map((index) => (all[index]?.message as Json | undefined)?.role)).toEqual(["user", "user"]);
	});

	it("v2-branching: ids and parent ids, a branch, a hook message, a compaction by id", () => {
		const [header, ...entries] = records("v2-branching.jsonl") as [Json, ...Json[]];
		expect(header.version).toBe(2);
		expect(entries.every((entry) => typeof entry.id === "string" && "parentId" in entry)).toBe(true);
		expect(roles(entries)).toContain("hookMessage");
		const compaction = entries.find((entry) => entry.type === "compaction");
		expect(entries.some((entry) => entry.id === compaction?.firstKeptEntryId)).toBe(true);
		expect(sessionFixture("v2-branching.jsonl").facts.branchPoints).toBe(1);
	});

	it("v3-current: labels (one cleared), a name, custom entries and messages, a branch summary", () => {
		const [header, ...entries] = records("v3-current.jsonl") as [Json, ...Json[]];
		expect(header.version).toBe(3);
		expect(new Set(types(entries))).toEqual(
			new Set([
				"message",
				"session_info",
				"label",
				"custom",
				"custom_message",
				"branch_summary",
				"model_change",
				"thinking_level_change",
				"compaction",
			]),
		);
		expect(entries.filter((entry) => entry.type === "label").map((entry) => "label" in entry)).toEqual([
			true,
			true,
			false,
		]);
		expect(roles(entries)).not.toContain("hookMessage");
	});

	it("the damaged variants: CRLF line ends, a line that is not JSON, a last line cut short", () => {
		const crlf = read("v3-crlf.jsonl");
		expect(crlf.replaceAll("\r\n", "\n")).toBe(read("v3-current.jsonl"));
		const garbage = read("v3-garbage-line.jsonl").split("\n");
		expect(garbage.filter((line) => line !== "").length).toBe(read("v3-current.jsonl").split("\n").length);
		const torn = read("v3-torn-last-line.jsonl");
		expect(torn.endsWith("\n")).toBe(false);
		expect(read("v3-current.jsonl").startsWith(torn)).toBe(true);
	});

	for (const name of FIXTURE_NAMES) {
		it(`${name}: loading gives the generator's facts`, () => {
			const { facts } = sessionFixture(name);
			const parsed = parseSessionText(read(name));
			expect(parsed.diagnostics.map(({ reason, line }) => ({ reason, line }))).toEqual(facts.diagnostics);
			const migration = migrateToCurrentVersion(parsed.entries);
			expect([migration.fromVersion, migration.warnings]).toEqual([facts.version, []]);
			const tree = SessionTree.fromRecords(migration.entries);
			expect([tree.diagnostics, tree.getEntries().length]).toEqual([[], facts.entries]);
			const branchPoints = tree.getEntries().filter((entry) => tree.getChildren(entry.id).length > 1);
			expect(branchPoints.length).toBe(facts.branchPoints);
			const context = tree.buildSessionContext();
			expect({
				roles: context.messages.map((message) => message.role),
				thinkingLevel: context.thinkingLevel,
				model: context.model,
			}).toEqual({
				roles: facts.leafContext.roles,
				thinkingLevel: facts.leafContext.thinkingLevel,
				model: facts.leafContext.model,
			});
		});
	}
});
