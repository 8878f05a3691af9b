/**
 * Damaged trees against pi 1.6.0: random current files whose entries have missing parents, parents that
 * come later in the file (cycles among them), themselves as parent, ids used twice with different
 * content, and compactions keeping from an entry off the path or from none there is. Where pi gives an
 * answer, ours is pi's; where our documented rules (README, "Where we differ from pi"; src/tree-load.ts)
 * differ, pi is asked about the file those rules make of it (which has no cycle pi would loop on):
 * - a duplicate id: the first entry keeps it, the later is not indexed: pi reads the file without the later;
 * - a parent that appears only later, or the entry itself: the entry is a root: pi reads it with no parent.
 * Our context, context entries, projection and branch at every indexed entry must then equal pi's there
 * (its entries standing for ours as written), in memory and lazily opened, and our diagnostics must name each
 * entry a rule changed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { parseSessionText, Session, type SessionEntry, SessionTree, type SessionTreeNode } from "../src/index.ts";
import { treeShape } from "./support/id-pairing.ts";
import { pi16 } from "./support/pi16.ts";

const scratch = mkdtempSync(join(tmpdir(), "pi16-damaged-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const RUNS = Number(process.env.FUZZ_RUNS ?? "") || 80;
const HEADER = {
	type: "session",
	version: 3,
	id: "5e1f3c2a-0d4b-4c6e-9a7f-1b2c3d4e5f60",
	timestamp: "2026-01-01T00:00:00.000Z",
	cwd: "/p",
};

/** Ids from a small pool, so that some are drawn twice. */
const ID_POOL = Array.from({ length: 30 }, (_, n) => (0xa0000000 + n * 0x1111).toString(16));

/** How an entry's parent is chosen: the entry before, an earlier or later one, none, a missing one, itself. */
const parentChoice = fc.oneof(
	{ weight: 6, arbitrary: fc.constant({ kind: "previous" as const }) },
	{ weight: 2, arbitrary: fc.record({ kind: fc.constant("earlier" as const), pick: fc.nat() }) },
	{ weight: 2, arbitrary: fc.record({ kind: fc.constant("later" as const), pick: fc.nat() }) },
	{ weight: 1, arbitrary: fc.constant({ kind: "none" as const }) },
	{ weight: 1, arbitrary: fc.constant({ kind: "missing" as const }) },
	{ weight: 1, arbitrary: fc.constant({ kind: "self" as const }) },
);

const entrySpec = fc.record({
	id: fc.integer({ min: 0, max: ID_POOL.length - 1 }),
	parent: parentChoice,
	kind: fc.constantFrom("user", "assistant", "compaction", "label"),
	keep: fc.oneof(fc.constant(-1), fc.nat()),
	text: fc.string({ unit: "grapheme", maxLength: 12 }),
});

/** The entries of a file from their specs (content always differs: each text carries its position). */
function entriesOf(specs: readonly Spec[]): Record<string, unknown>[] {
	const ids = specs.map((spec) => ID_POOL[spec.id] as string);
	return specs.map((spec, n) => {
		const id = ids[n] as string;
		const parentId = (() => {
			const { parent } = spec;
			switch (parent.kind) {
				case "previous":
					return n === 0 ? null : (ids[n - 1] as string);
				case "earlier":
					return n === 0 ? null : (ids[parent.pick % n] as string);
				case "later":
					return n === specs.length - 1 ? null : (ids[n + 1 + (parent.pick % (specs.length - n - 1))] as string);
				case "none":
					return null;
				case "missing":
					return "00000000";
				default:
					return id;
			}
		})();
		const timestamp = new Date(Date.UTC(2026, 0, 1) + n * 1_000).toISOString();
		const base = { type: "message", id, parentId, timestamp };
		const text = `${n}: ${spec.text}`;
		switch (spec.kind) {
			case "user":
				return { ...base, message: { role: "user", content: text, timestamp: n } };
			case "assistant":
				return {
					...base,
					message: { role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m", timestamp: n },
				};
			case "compaction":
				// Keeping from any entry of the file (on the path or off it), or from one there is not.
				return {
					type: "compaction",
					id,
					parentId,
					timestamp,
					summary: text,
					firstKeptEntryId: spec.keep < 0 ? "11111111" : ids[spec.keep % ids.length],
					tokensBefore: 10,
				};
			default:
				return { type: "label", id, parentId, timestamp, targetId: ids[spec.keep % ids.length], label: text };
		}
	});
}

type Spec = typeof entrySpec extends fc.Arbitrary<infer T> ? T : never;

const damagedFile = fc.array(entrySpec, { minLength: 1, maxLength: 30 });

/**
 * The file our rules make for pi: later duplicates left out, an entry whose parent is itself or appears
 * only later (after the first-keeps-it rule) given no parent; and which entries those are.
 */
function asOurRulesRead(entries: readonly Record<string, unknown>[]): {
	entries: Record<string, unknown>[];
	duplicates: number[];
	madeRoots: number[];
} {
	const seen = new Set<string>();
	const kept: Record<string, unknown>[] = [];
	const duplicates: number[] = [];
	const madeRoots: number[] = [];
	entries.forEach((entry, index) => {
		const id = entry.id as string;
		if (seen.has(id)) {
			duplicates.push(index);
			return;
		}
		const parentId = entry.parentId as string | null;
		const forward =
			parentId !== null && (parentId === id || (!seen.has(parentId) && entries.some((e) => e.id === parentId)));
		seen.add(id);
		if (forward) madeRoots.push(index);
		kept.push(forward ? { ...entry, parentId: null } : entry);
	});
	return { entries: kept, duplicates, madeRoots };
}

let files = 0;

async function agrees(entries: Record<string, unknown>[]): Promise<void> {
	const text = [HEADER, ...entries].map((record) => `${JSON.stringify(record)}\n`).join("");
	const ruled = asOurRulesRead(entries);
	const path = join(scratch, `d${files++}.jsonl`);
	writeFileSync(path, [HEADER, ...ruled.entries].map((record) => `${JSON.stringify(record)}\n`).join(""));
	const pi = pi16.SessionManager.open(path, scratch);

	const ours = SessionTree.fromRecords(parseSessionText(text).entries);
	// Read lazily too: its context reads go another way (the path of structures, bodies read when asked).
	const original = join(scratch, `d${files++}.jsonl`);
	writeFileSync(original, text);
	const lazy = await Session.open(createNodeStorage(), original, { readOnly: true, load: "lazy" });
	try {
		await expectSame(entries, ruled, pi, ours, lazy);
	} finally {
		await lazy.close();
	}
}

/**
 * Our reads (in memory, and lazy through the session's asynchronous reads, which decode the bodies they
 * need: a line of 256 bytes or more is deferred) against pi's of the file as ruled, at every indexed entry
 * and of the whole tree.
 */
async function expectSame(
	entries: Record<string, unknown>[],
	ruled: ReturnType<typeof asOurRulesRead>,
	pi: ReturnType<typeof pi16.SessionManager.open>,
	ours: SessionTree,
	lazy: Session,
): Promise<void> {
	const piEntries = pi.getEntries() as unknown as SessionEntry[];
	expect(ours.getEntries()).toEqual(entries);
	// Every rule applied is reported, on the line of the entry it applied to (the header is line 1).
	const lines = (reasons: string[]) =>
		ours.diagnostics.filter((d) => reasons.includes(d.reason)).map((d) => d.line - 2);
	expect(lines(["duplicate-id"])).toEqual(ruled.duplicates);
	expect(lines(["self-parent", "forward-parent"])).toEqual(ruled.madeRoots);

	const piById = new Map(piEntries.map((entry) => [entry.id, entry]));
	// pi's answers hold entries of the file as ruled (some copied): each stands for the entry as written.
	const written = new Map(entries.map((entry) => [entry.id as string, entry] as const).reverse());
	const ruledText = new Map(ruled.entries.map((entry) => [entry.id as string, JSON.stringify(entry)] as const));
	const asWritten = (value: unknown): unknown => {
		if (Array.isArray(value)) return value.map(asWritten);
		if (typeof value !== "object" || value === null) return value;
		const id = (value as { id?: unknown }).id;
		if (typeof id === "string" && ruledText.get(id) === JSON.stringify(value)) return written.get(id);
		return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, asWritten(item)]));
	};
	for (const entry of ruled.entries) {
		const id = entry.id as string;
		const expected = pi16.buildSessionContext(piEntries, id, piById);
		expect(ours.buildSessionContext(id), `context at ${id}`).toEqual(expected);
		expect(ours.buildContextEntries(id), `context entries at ${id}`).toEqual(
			asWritten(pi16.buildContextEntries(piEntries, id)),
		);
		expect(ours.buildSessionProjection(id), `projection at ${id}`).toEqual(
			asWritten(pi16.buildSessionProjection(piEntries, id)),
		);
		expect(
			ours.getBranch(id).map((e) => e.id),
			`branch of ${id}`,
		).toEqual(pi.getBranch(id).map((e) => e.id));
		expect(await lazy.buildSessionContext(id), `lazy context at ${id}`).toEqual(expected);
		expect(await lazy.buildContextEntries(id), `lazy context entries at ${id}`).toEqual(ours.buildContextEntries(id));
		expect(await lazy.buildSessionProjection(id), `lazy projection at ${id}`).toEqual(ours.buildSessionProjection(id));
	}
	// The tree, with the labels that resolved (a label entry's own place in it included).
	expect(treeShape(ours.getTree())).toEqual(treeShape(pi.getTree() as SessionTreeNode[]));
	expect(treeShape(await lazy.getTree())).toEqual(treeShape(ours.getTree()));
}

describe("damaged trees: pi 1.6.0's context, or pi's on the file our documented rules make", () => {
	it("missing, later and self parents, cycles, duplicate ids, compactions keeping from off the path or nothing", async () => {
		await fc.assert(
			fc.asyncProperty(damagedFile, (specs) => agrees(entriesOf(specs))),
			{ numRuns: RUNS },
		);
	}, 120_000);
});
