/**
 * Old files and pi 0.73.1. The generated session files of every version (and the real corpus files, when
 * they are there: test/support/corpus.ts) must migrate to the same records and give the same tree and the
 * same context for every leaf as when pi 1.6.0 reads them, and as when pi 0.73.1 does; many trees of what
 * 0.73.1 wrote must agree with 0.73.1 too (pi 1.6.0's own trees: pi16-differential.test.ts). What 0.73.1
 * does differently from us and 1.6.0 is named where it is undone:
 * - `content: null` from old files becomes `[]` in our context (pi passes `null` on);
 * - `branch_summary.fromId` is the leaf being left in ours (DESIGN.md); pi 0.73.1 stores the branch target.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
	buildSessionContext,
	encodeEntry,
	type FileEntry,
	migrateToCurrentVersion,
	parseSessionText,
	type SessionContext,
	type SessionEntry,
	SessionTree,
	type SessionTreeNode,
} from "../src/index.ts";
import { FIXTURES_DIR, type FixtureFacts, sessionFixtures } from "./fixtures/generate.ts";
import { CORPUS_FILES, describeWithCorpus, diskCorpus } from "./support/corpus.ts";
import { mapIds, treeShape } from "./support/id-pairing.ts";
import { applyOps, opsArbitrary } from "./support/ops.ts";
import { pi, piContextAsOurs } from "./support/pi.ts";
import { pi16 } from "./support/pi16.ts";

const corpus = diskCorpus();
const scratch = mkdtempSync(join(tmpdir(), "pi-diff-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** What a file must give besides agreeing with pi: its version and the lines to skip. */
type Expected = Pick<FixtureFacts, "version" | "diagnostics">;

/** A pi that reads old files: the one people run (1.6.0, the contract) and the one that wrote many of them. */
interface Oracle {
	version: string;
	open(path: string, sessionDir: string): { getEntries(): unknown[]; getHeader(): unknown; getTree(): unknown[] };
	context(entries: SessionEntry[], leafId: string, byId: Map<string, SessionEntry>): SessionContext;
}
const ORACLES: readonly Oracle[] = [
	{
		version: "1.6.0",
		open: (path, sessionDir) => pi16.SessionManager.open(path, sessionDir),
		context: (entries, leafId, byId) => pi16.buildSessionContext(entries, leafId, byId),
	},
	{
		version: "0.73.1",
		open: (path, sessionDir) => pi.SessionManager.open(path, sessionDir),
		context: (entries, leafId, byId) => piContextAsOurs(pi.buildSessionContext(entries, leafId, byId)),
	},
];

/** Open `text` (saved as `name`) with pi and with ours: same records, tree, bytes and context for every leaf. */
function agreesWithPi(name: string, text: string, expected: Expected, oracle: Oracle): void {
	const copy = join(scratch, `pi-${oracle.version}-${name}`);
	writeFileSync(copy, text);
	const piSession = oracle.open(copy, scratch); // migrates and rewrites the copy
	const piEntries = piSession.getEntries() as unknown as SessionEntry[];

	const parsed = parseSessionText(text);
	expect(parsed.diagnostics.map(({ reason, line }) => ({ reason, line }))).toEqual(expected.diagnostics);
	const migration = migrateToCurrentVersion(parsed.entries);
	expect(migration).toMatchObject({ changed: expected.version < 3, fromVersion: expected.version, warnings: [] });
	const ours = SessionTree.fromRecords(migration.entries);
	expect(ours.diagnostics).toEqual([]);
	const ourEntries = ours.getEntries();

	// Same records in the same order; migrated ids are random on both sides, so pair them by position.
	expect(ourEntries.length).toBe(piEntries.length);
	const toOurs = new Map(piEntries.map((entry, index) => [entry.id, ourEntries[index]?.id as string]));
	const translate = (id: string) => toOurs.get(id) ?? `unknown:${id}`;
	expect(piEntries.map((entry) => mapIds(entry, translate))).toEqual(ourEntries);
	expect(ours.getHeader()).toEqual(piSession.getHeader());
	expect(treeShape(ours.getTree())).toEqual(treeShape(piSession.getTree() as SessionTreeNode[], translate));

	// Bytes: pi's rewritten file and our encoding differ only in ids.
	const ourText = [ours.getHeader(), ...ourEntries].map((entry) => encodeEntry(entry as FileEntry)).join("");
	const piText = [piSession.getHeader(), ...piEntries.map((entry) => mapIds(entry, translate))]
		.map((entry) => encodeEntry(entry as FileEntry))
		.join("");
	expect(ourText).toBe(piText);
	if (expected.version < 3) expect(readFileSync(copy, "utf8").split("\n").length).toBe(ourText.split("\n").length);
	// A clean current file is written back byte for byte as pi wrote it.
	else if (expected.diagnostics.length === 0 && !text.includes("\r")) expect(ourText).toBe(text);

	// Context for every leaf, computed by pi from pi's entries and by us from ours.
	const piById = new Map(piEntries.map((entry) => [entry.id, entry]));
	for (const piEntry of piEntries) {
		const expectedContext = oracle.context(piEntries, piEntry.id, piById);
		expect(ours.buildSessionContext(translate(piEntry.id))).toEqual(expectedContext);
	}
}

/** The record index (header = 0) of each migrated compaction's first kept entry. */
function firstKeptIndices(text: string): number[] {
	const { entries } = migrateToCurrentVersion(parseSessionText(text).entries);
	const ids = entries.map((entry) => entry.id);
	return entries
		.filter((entry) => entry.type === "compaction")
		.map((entry) => ids.indexOf((entry as { firstKeptEntryId: string }).firstKeptEntryId));
}

describe("generated session files: our migration and context equal pi's", () => {
	for (const oracle of ORACLES) {
		for (const { name, facts } of sessionFixtures()) {
			it(`${name} (v${facts.version}), read by pi ${oracle.version}`, () => {
				agreesWithPi(name, readFileSync(new URL(name, FIXTURES_DIR), "utf8"), facts, oracle);
			});
		}
	}

	it("keeps v1 compactions' first kept entry where pi puts it", () => {
		const v1 = sessionFixtures().find((fixture) => fixture.facts.version === 1);
		const text = readFileSync(new URL(v1?.name as string, FIXTURES_DIR), "utf8");
		// v1 indices count the header as record 0, and so do the migrated records.
		expect(firstKeptIndices(text)).toEqual(v1?.facts.firstKeptEntryIndices);
	});
});

describeWithCorpus(
	{ describe, it, describeSkip: describe.skip },
	corpus,
	"corpus files: our migration and context equal pi's",
	() => {
		for (const oracle of ORACLES) {
			for (const file of CORPUS_FILES) {
				it(`${file}, read by pi ${oracle.version}`, () => {
					agreesWithPi(file, corpus.readTextSync(file), { version: 1, diagnostics: [] }, oracle);
				});
			}
		}

		it("keeps v1 compactions' first kept entry where pi puts it", () => {
			// Index 293 is the 293rd entry after the header.
			expect(firstKeptIndices(corpus.readTextSync("pi-v1-before-compaction.jsonl"))).toEqual([293, 551]);
		});
	},
);

describe("generated trees: same operations, same results as pi", () => {
	it("context for every leaf equals pi's buildSessionContext on the same entries", () => {
		fc.assert(
			fc.property(opsArbitrary, (ops) => {
				const tree = SessionTree.create({ cwd: "/project" });
				applyOps(tree, ops);
				const entries = tree.getEntries();
				for (const leaf of [...entries.map((entry) => entry.id), null, undefined]) {
					const expected = piContextAsOurs(pi.buildSessionContext(entries, leaf));
					expect(buildSessionContext(entries, leaf)).toEqual(expected);
					if (leaf) expect(tree.buildSessionContext(leaf)).toEqual(expected);
				}
				expect(tree.buildSessionContext()).toEqual(piContextAsOurs(pi.buildSessionContext(entries, tree.getLeafId())));
			}),
			{ numRuns: 300 },
		);
	});

	it("tree, children, branches, labels, name, leaf and forks equal pi's SessionManager", () => {
		fc.assert(
			fc.property(opsArbitrary, fc.nat(), (ops, forkPick) => {
				const ours = SessionTree.create({ cwd: "/project" });
				const piSession = pi.SessionManager.inMemory("/project");
				const ourIds = applyOps(ours, ops);
				const piIds = applyOps(piSession, ops);
				expect(piIds.length).toBe(ourIds.length);
				const toOurs = new Map(piIds.map((id, index) => [id, ourIds[index] as string]));
				const translate = (id: string) => toOurs.get(id) ?? `unknown:${id}`;
				const comparable = (entry: SessionEntry) => {
					const { timestamp, fromId, ...rest } = entry;
					return rest;
				};

				const piEntries = piSession.getEntries() as unknown as SessionEntry[];
				for (const entry of piEntries) {
					// pi 0.73.1 records the branch target as fromId; ours records the leaf being left (DESIGN.md).
					if (entry.type === "branch_summary") expect(entry.fromId).toBe(entry.parentId ?? "root");
				}
				expect(piEntries.map((entry) => comparable(mapIds(entry, translate)))).toEqual(
					ours.getEntries().map(comparable),
				);
				expect(ours.getLeafId()).toBe(
					piSession.getLeafId() === null ? null : translate(piSession.getLeafId() as string),
				);
				expect(ours.getSessionName()).toBe(piSession.getSessionName());
				expect(treeShape(ours.getTree())).toEqual(treeShape(piSession.getTree() as SessionTreeNode[], translate));
				for (const piId of piIds) {
					const id = translate(piId);
					expect(ours.getChildren(id).map((entry) => entry.id)).toEqual(
						piSession.getChildren(piId).map((entry) => translate(entry.id)),
					);
					expect(ours.getBranch(id).map((entry) => entry.id)).toEqual(
						piSession.getBranch(piId).map((entry) => translate(entry.id)),
					);
					expect(ours.getLabel(id)).toBe(piSession.getLabel(piId));
				}

				if (piIds.length === 0) return;
				// Fork (createBranchedSession): pi's in-memory mode replaces its session with the fork's entries.
				const forkPiId = piIds[forkPick % piIds.length] as string;
				const forked = ours.forkEntries(translate(forkPiId));
				piSession.createBranchedSession(forkPiId);
				const piFork = piSession.getEntries() as unknown as SessionEntry[];
				const summary = (entries: SessionEntry[], map: (id: string) => string) =>
					entries.map((entry) =>
						entry.type === "label"
							? { type: "label", targetId: map(entry.targetId), label: entry.label }
							: { type: entry.type, id: map(entry.id) },
					);
				expect(summary(forked, (id) => id)).toEqual(summary(piFork, translate));
				// pi 0.73.1 keeps the parentId of an entry whose parent was a dropped label, orphaning it;
				// ours re-links it to the entry before it (checked below), so only pi's fork can have dangling parents.
				const piForkIds = new Set(piFork.map((entry) => entry.id));
				const droppedLabelOnPath = ours
					.getBranch(translate(forkPiId))
					.some((entry, index, path) => entry.type !== "label" && path[index - 1]?.type === "label");
				expect(piFork.some((entry) => entry.parentId !== null && !piForkIds.has(entry.parentId))).toBe(
					droppedLabelOnPath,
				);
				// Re-added labels chain after the path and keep the label's own timestamp.
				for (const [index, entry] of forked.entries()) {
					if (index > 0) expect(entry.parentId).toBe(forked[index - 1]?.id);
					if (entry.type === "label") expect(entry.timestamp).toBe(ours.getLabels().get(entry.targetId)?.timestamp);
				}
			}),
			{ numRuns: 300 },
		);
	});
});
