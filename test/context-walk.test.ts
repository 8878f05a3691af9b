/**
 * A whole tree builds the context of a leaf by walking back from it (src/context-walk.ts) instead of building
 * its path: the answer must be the path rule's (`contextOfPath` and friends, which the differential tests
 * hold to pi 1.6.0) for every leaf of random trees, damaged ones included, and pi 1.6.0's own on well-formed
 * ones; and the walk must stop where the context and the settings are complete.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contextEntriesOfPath, contextOfPath, projectionOfPath } from "../src/context.ts";
import type { FileEntry, SessionEntry, SessionHeader } from "../src/index.ts";
import { SessionTree } from "../src/index.ts";
import { pi16 } from "./support/pi16.ts";
import { propertyRuns } from "./support/runs.ts";

const header: SessionHeader = {
	type: "session",
	version: 3,
	id: "s",
	timestamp: "2025-01-01T00:00:00.000Z",
	cwd: "/p",
} as SessionHeader;

/** How one generated entry is made; ids and parents are resolved by position when the records are built. */
interface Spec {
	kind: number;
	/** 0: the previous entry; otherwise an earlier entry picked by this number, a root, an unknown or a later id. */
	parent: number;
	pick: number;
	variant: number;
	duplicate: boolean;
}

const specArbitrary = fc.record({
	kind: fc.nat(13),
	parent: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(40) }),
	pick: fc.nat(1000),
	variant: fc.nat(5),
	duplicate: fc.boolean(),
});

const text = (value: string) => [{ type: "text", text: value }];

/**
 * Records from specs. `damaged` allows what only a damaged file has: duplicate ids, missing or later parents,
 * messages that are null or have no content, a thinking change without a level, edits without a replacement
 * or of any entry, compactions naming any id.
 */
function recordsOf(specs: readonly Spec[], damaged: boolean): FileEntry[] {
	const ids = specs.map((_, index) => `e${index.toString(16).padStart(7, "0")}`);
	const entries: SessionEntry[] = [];
	specs.forEach((spec, index) => {
		let id = ids[index] as string;
		if (damaged && spec.duplicate && spec.variant === 0 && index > 0) id = ids[spec.pick % index] as string;
		let parentId: string | null = index === 0 ? null : (ids[index - 1] as string);
		if (spec.parent > 0 && index > 0) {
			const choice = spec.parent % 8;
			if (choice === 0) parentId = null;
			else if (damaged && choice === 1) parentId = "unknown1";
			else if (damaged && choice === 2)
				parentId = ids[Math.min(specs.length - 1, index + 1 + (spec.pick % 3))] as string;
			else parentId = ids[spec.pick % index] as string;
		}
		const any = (): string => {
			const choice = spec.pick % 10;
			if (choice === 0) return id;
			if (choice === 1) return "unknown2";
			if (choice === 2 && index + 1 < specs.length) return ids[index + 1] as string;
			return index === 0 ? id : (ids[Math.max(0, index - 1 - (spec.pick % 12))] as string);
		};
		const base = { id, parentId, timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, index)).toISOString() };
		const at = spec.pick;
		let entry: Record<string, unknown>;
		switch (spec.kind) {
			case 0:
			case 1:
				entry = { type: "message", message: { role: "user", content: `u${at}`, timestamp: at } };
				break;
			case 2:
				entry = {
					type: "message",
					message: {
						role: "assistant",
						content: text(`a${at}`),
						provider: `p${spec.variant}`,
						model: `m${at % 3}`,
						api: "x",
						stopReason: "stop",
						timestamp: at,
					},
				};
				break;
			case 3:
				entry = {
					type: "message",
					message: { role: "toolResult", toolCallId: "t", toolName: "x", content: text(`r${at}`), timestamp: at },
				};
				break;
			case 4:
				entry = { type: "message", message: { role: "system", content: `sys${at}`, timestamp: at } };
				break;
			case 5:
				entry =
					damaged && spec.variant < 2
						? { type: "thinking_level_change" }
						: { type: "thinking_level_change", thinkingLevel: ["low", "high", "off"][at % 3] };
				break;
			case 6:
				entry = { type: "model_change", provider: `q${spec.variant}`, modelId: `n${at % 4}` };
				break;
			case 7: {
				const firstKeptEntryId = damaged || spec.variant > 0 ? any() : id;
				entry = {
					type: "compaction",
					summary: `sum${at}`,
					firstKeptEntryId,
					tokensBefore: at,
					...(spec.variant % 2 ? { systemMessage: { role: "system", content: `csys${at}`, timestamp: at } } : {}),
				};
				if (damaged && spec.variant === 5) delete entry.firstKeptEntryId;
				break;
			}
			case 8: {
				const replacements = [null, { content: `edited${at}` }, { content: text(`blocks${at}`) }, { content: "s" }];
				entry = { type: "context_edit", targetId: any(), replacement: replacements[spec.variant % 4] };
				if (damaged && spec.variant === 5) delete entry.replacement;
				break;
			}
			case 9:
				entry = { type: "custom_message", customType: "c", content: `cm${at}`, display: true };
				break;
			case 10:
				entry = { type: "branch_summary", fromId: "root", summary: spec.variant ? `bs${at}` : "" };
				break;
			case 11:
				entry = { type: "label", targetId: any(), label: `l${at}` };
				break;
			case 12:
				entry = { type: "custom", customType: "state", data: at };
				break;
			default:
				// Damaged messages: none, null, no content; otherwise a user message without content.
				entry = damaged
					? ([{ type: "message" }, { type: "message", message: null }][spec.variant % 2] ?? { type: "message" })
					: { type: "message", message: { role: "user", content: [], timestamp: at } };
				if (damaged && spec.variant >= 2) entry = { type: "message", message: { role: "assistant", timestamp: at } };
		}
		entries.push({ ...entry, ...base } as SessionEntry);
	});
	return [header, ...entries];
}

/** Every id of the tree, and the leaves that are no id: the default, none, and an unknown one. */
function leavesOf(tree: SessionTree): (string | null | undefined)[] {
	return [undefined, null, "unknown3", ...tree.getEntries().map((entry) => entry.id)];
}

describe("the context read back from the leaf", () => {
	it("is the path rule's at every leaf of random trees, damaged ones included", () => {
		fc.assert(
			fc.property(fc.array(specArbitrary, { maxLength: 60 }), fc.boolean(), (specs, damaged) => {
				const tree = SessionTree.fromRecords(recordsOf(specs, damaged));
				for (const leaf of leavesOf(tree)) {
					const path = tree.structureOfPath(leaf);
					expect(tree.buildSessionContext(leaf), `context at ${leaf}`).toEqual(contextOfPath(path));
					expect(tree.buildSessionProjection(leaf), `projection at ${leaf}`).toEqual(projectionOfPath(path));
					expect(tree.buildContextEntries(leaf), `entries at ${leaf}`).toEqual(contextEntriesOfPath(path));
				}
			}),
			{ numRuns: propertyRuns(300) },
		);
	});

	it("is pi 1.6.0's at every leaf of random well-formed trees", () => {
		fc.assert(
			fc.property(fc.array(specArbitrary, { maxLength: 60 }), (specs) => {
				const records = recordsOf(specs, false);
				const entries = records.slice(1) as SessionEntry[];
				const tree = SessionTree.fromRecords(records);
				expect(tree.diagnostics).toEqual([]);
				// Not an unknown id: the tree's methods give the empty path for it, pi's functions the last entry's.
				for (const leaf of leavesOf(tree).filter((leaf) => leaf !== "unknown3")) {
					expect(tree.buildSessionContext(leaf), `context at ${leaf}`).toEqual(pi16.buildSessionContext(entries, leaf));
					expect(tree.buildSessionProjection(leaf), `projection at ${leaf}`).toEqual(
						pi16.buildSessionProjection(entries, leaf),
					);
					expect(tree.buildContextEntries(leaf), `entries at ${leaf}`).toEqual(pi16.buildContextEntries(entries, leaf));
				}
			}),
			{ numRuns: propertyRuns(200) },
		);
	});

	it("reads nothing before the latest compaction's first kept entry once the settings are found", () => {
		/** A tree whose entries before the kept one count every read of their fields in `reads`. */
		const watchedTree = (thinkingAfter: boolean) => {
			const tree = SessionTree.create({ cwd: "/p" });
			tree.appendThinkingLevelChange("low");
			const early = new Set<string>();
			for (let i = 0; i < 50; i++) early.add(tree.appendMessage({ role: "user", content: `old${i}`, timestamp: i }));
			const kept = tree.appendMessage({ role: "user", content: "kept", timestamp: 50 });
			tree.appendMessage({ role: "system", content: "prompt", timestamp: 51 } as never);
			tree.appendCompaction("summary", kept, 100);
			tree.appendModelChange("p", "m");
			if (thinkingAfter) tree.appendThinkingLevelChange("high");
			tree.appendMessage({ role: "user", content: "new", timestamp: 52 });
			const counter = { reads: 0 };
			const watch = (entry: SessionEntry): SessionEntry =>
				new Proxy(entry, {
					get(target, key, receiver) {
						counter.reads++;
						return Reflect.get(target, key, receiver);
					},
				});
			const records = [tree.getHeader(), ...tree.getEntries().map((e) => (early.has(e.id) ? watch(e) : e))];
			const copy = SessionTree.fromRecords(records);
			counter.reads = 0;
			return { tree, copy, counter };
		};
		const found = watchedTree(true);
		const context = found.copy.buildSessionContext();
		expect(found.counter.reads).toBe(0);
		expect(context).toEqual(found.tree.buildSessionContext());
		expect(context.thinkingLevel).toBe("high");
		expect(context.model).toEqual({ provider: "p", modelId: "m" });
		expect(context.messages.map((message) => message.role)).toEqual(["system", "compactionSummary", "user", "user"]);
		// Without a thinking level change after the first kept entry, the walk goes back to the root for it.
		const back = watchedTree(false);
		expect(back.copy.buildSessionContext().thinkingLevel).toBe("low");
		expect(back.counter.reads).toBeGreaterThan(0);
	});

	it("follows appends, branches, context edits and compactions", () => {
		const tree = SessionTree.create({ cwd: "/p" });
		const a = tree.appendMessage({ role: "user", content: "a", timestamp: 1 });
		const check = () =>
			expect(tree.buildSessionContext()).toEqual(pi16.buildSessionContext(tree.getEntries(), tree.getLeafId()));
		check();
		const b = tree.appendMessage({ role: "user", content: "b", timestamp: 2 });
		check();
		tree.appendContextEdit(a, { content: "a, edited" });
		check();
		tree.branch(b);
		check();
		tree.appendContextEdit(a, null);
		check();
		tree.appendCompaction("sum", b, 5);
		check();
		tree.appendContextEdit(b, { content: "b, edited" });
		check();
		tree.resetLeaf();
		expect(tree.buildSessionContext()).toEqual({ messages: [], thinkingLevel: "off", model: null });
		tree.branch(a);
		check();
	});
});
