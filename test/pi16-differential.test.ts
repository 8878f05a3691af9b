/**
 * Differential tests against pi 1.6.0, the format's contract. The same random operations (every entry kind
 * pi 1.6 writes, refusals and forks; test/support/ops16.ts) run in lockstep on pi's `SessionManager` and on
 * ours, with one pinned clock (`Date` is faked, so both sides stamp the same times), and must give:
 * - the same outcome per operation: the same entry appended, or the same refusal (same message);
 * - in memory: the same entries (same JSON, same key order), header, tree, children, branches, labels, name,
 *   leaf, entry count, and the same context, projection and context entries for every leaf (pi's functions
 *   on pi's entries against ours on ours), checked before every fork and at the end;
 * - on disk (pi's persisted `SessionManager` against our async `Session` on node storage): the file
 *   appearing at the same operation, the same lines (same key order) in every file, forks included, and
 *   each side reading the other's files to the same state and context for every leaf.
 * Ids are random on both sides: they are paired by the operation that made them and mapped pi → ours.
 * No deliberate difference shows in what pi 1.6 writes; damaged files (the last part) are where pi throws,
 * and there we give the context without the broken entry.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import {
	buildContextEntries,
	buildSessionContext,
	buildSessionProjection,
	getLatestCompactionEntry,
	Session,
	type SessionEntry,
	SessionTree,
	type StoredMessage,
	sessionEntryToContextMessages,
} from "../src/index.ts";
import { applyOp16, type Op16, type Outcome, ops16Arbitrary, type Target16, UNKNOWN_ID } from "./support/ops16.ts";
import { type Pi16SessionManager, pi16 } from "./support/pi16.ts";
import { propertyRuns } from "./support/runs.ts";

const CWD = "/project";
const scratch = mkdtempSync(join(tmpdir(), "pi16-diff-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const storage = createNodeStorage();

// Pinned clock: both sides read `Date`, which is faked; each operation advances it by its own step.
const CLOCK_START = Date.UTC(2026, 0, 1);
beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"] });
	vi.setSystemTime(CLOCK_START);
});
afterEach(() => {
	vi.useRealTimers();
});

// Ids -----------------------------------------------------------------------------------------------

/** Keys whose string values name entries (or, for headers, sessions and files). */
const ID_KEYS = new Set(["id", "parentId", "targetId", "firstKeptEntryId", "fromId", "parentSession"]);

/** pi's ids (and session ids and file paths) → ours, paired as the operations made them. */
class Translator {
	readonly #map = new Map<string, string>();
	add(piValue: string, ourValue: string): void {
		const known = this.#map.get(piValue);
		if (known !== undefined && known !== ourValue) throw new Error(`${piValue} paired twice`);
		this.#map.set(piValue, ourValue);
	}
	id<T extends string | null | undefined>(value: T): T {
		return (typeof value === "string" ? (this.#map.get(value) ?? value) : value) as T;
	}
	/** A copy of `value` with every id-naming field mapped, keys in their order. */
	deep<T>(value: T): T {
		if (Array.isArray(value)) return value.map((item) => this.deep(item)) as T;
		if (typeof value !== "object" || value === null) return value;
		// fromEntries (not assignment), so that a "__proto__" key in custom data stays a key.
		return Object.fromEntries(
			Object.entries(value).map(([key, item]) => [
				key,
				ID_KEYS.has(key) && typeof item === "string" ? this.id(item) : this.deep(item),
			]),
		) as T;
	}
	/** An error message with pi's entry ids in it replaced by ours. */
	message(text: string): string {
		return text.replace(/[0-9a-f]{8}(?:-[0-9a-f-]{27})?/g, (id) => this.id(id));
	}
}

const identity = new Translator();

// Targets -------------------------------------------------------------------------------------------

function piTarget(manager: Pi16SessionManager): Target16 {
	return {
		appendMessage: (message) => manager.appendMessage(message),
		appendThinkingLevelChange: (level) => manager.appendThinkingLevelChange(level),
		appendModelChange: (provider, modelId) => manager.appendModelChange(provider, modelId),
		appendUsage: (...args) => manager.appendUsage(...args).id, // pi returns the entry
		appendCompaction: (...args) => manager.appendCompaction(...args),
		appendContextEdit: (targetId, replacement) => manager.appendContextEdit(targetId, replacement),
		appendCustomEntry: (customType, data) => manager.appendCustomEntry(customType, data),
		appendCustomMessageEntry: (...args) => manager.appendCustomMessageEntry(...args),
		appendLabelChange: (targetId, label) => manager.appendLabelChange(targetId, label),
		appendSessionInfo: (name) => manager.appendSessionInfo(name),
		branch: (id) => manager.branch(id),
		resetLeaf: () => manager.resetLeaf(),
		branchWithSummary: (...args) => manager.branchWithSummary(...args),
		fork: (leafId) => {
			manager.createBranchedSession(leafId);
		},
		entryIds: () => manager.getEntries().map((entry) => entry.id),
		branchIds: () => manager.getBranch().map((entry) => entry.id),
	};
}

/** The tree-level operations every one of our targets shares. */
function treeOps(tree: () => SessionTree): Pick<Target16, "branch" | "resetLeaf" | "entryIds" | "branchIds"> {
	return {
		branch: (id) => tree().branch(id),
		resetLeaf: () => tree().resetLeaf(),
		entryIds: () =>
			tree()
				.getEntries()
				.map((entry) => entry.id),
		branchIds: () =>
			tree()
				.getBranch()
				.map((entry) => entry.id),
	};
}

/** Our in-memory tree; a fork replaces it with a tree of `forkEntries` (what pi's in-memory fork does). */
function treeTarget(holder: { tree: SessionTree }): Target16 {
	const tree = () => holder.tree;
	return {
		...treeOps(tree),
		appendMessage: (message) => tree().appendMessage(message as StoredMessage),
		appendThinkingLevelChange: (level) => tree().appendThinkingLevelChange(level),
		appendModelChange: (provider, modelId) => tree().appendModelChange(provider, modelId),
		appendUsage: (...args) => tree().appendUsage(...args),
		appendCompaction: (...args) => tree().appendCompaction(...args),
		appendContextEdit: (targetId, replacement) => tree().appendContextEdit(targetId, replacement as never),
		appendCustomEntry: (customType, data) => tree().appendCustomEntry(customType, data),
		appendCustomMessageEntry: (customType, content, display, details) =>
			tree().appendCustomMessageEntry(customType, content as never, display, details),
		appendLabelChange: (targetId, label) => tree().appendLabelChange(targetId, label),
		appendSessionInfo: (name) => tree().appendSessionInfo(name),
		branchWithSummary: (...args) => tree().branchWithSummary(...args),
		fork: (leafId) => {
			const entries = tree().forkEntries(leafId);
			holder.tree = SessionTree.fromRecords([SessionTree.create({ cwd: CWD }).getHeader(), ...entries]);
		},
	};
}

/** Our async `Session`; a fork is its `createBranchedSession` (a new file). */
function sessionTarget(holder: { session: Session }): Target16 {
	const session = () => holder.session;
	return {
		...treeOps(() => session().tree),
		appendMessage: (message) => session().appendMessage(message as StoredMessage),
		appendThinkingLevelChange: (level) => session().appendThinkingLevelChange(level),
		appendModelChange: (provider, modelId) => session().appendModelChange(provider, modelId),
		appendUsage: (...args) => session().appendUsage(...args),
		appendCompaction: (...args) => session().appendCompaction(...args),
		appendContextEdit: (targetId, replacement) => session().appendContextEdit(targetId, replacement as never),
		appendCustomEntry: (customType, data) => session().appendCustomEntry(customType, data),
		appendCustomMessageEntry: (customType, content, display, details) =>
			session().appendCustomMessageEntry(customType, content as never, display, details),
		appendLabelChange: (targetId, label) => session().appendLabelChange(targetId, label),
		appendSessionInfo: (name) => session().appendSessionInfo(name),
		branchWithSummary: (...args) => session().branchWithSummary(...args),
		fork: async (leafId) => {
			await session().createBranchedSession(leafId);
		},
	};
}

// Comparing -----------------------------------------------------------------------------------------

/** Pair what the two sides did with one operation: the same outcome, and the ids it made become a pair. */
function pairOutcomes(piOutcome: Outcome, ourOutcome: Outcome, t: Translator, where: string): void {
	if (piOutcome.kind === "threw" && ourOutcome.kind === "threw") {
		expect(t.message(piOutcome.message), `${where}: same refusal`).toBe(ourOutcome.message);
		return;
	}
	expect(ourOutcome.kind, `${where}: pi's outcome ${JSON.stringify(piOutcome)}`).toBe(piOutcome.kind);
	if (piOutcome.kind === "appended" && ourOutcome.kind === "appended") t.add(piOutcome.id, ourOutcome.id);
	if (piOutcome.kind === "forked" && ourOutcome.kind === "forked") {
		expect(ourOutcome.ids.length, `${where}: fork size`).toBe(piOutcome.ids.length);
		piOutcome.ids.forEach((id, index) => {
			t.add(id, ourOutcome.ids[index] as string);
		});
	}
}

/** pi's answer, or `THROWS` when pi throws (only damaged files make it throw). */
const THROWS = Symbol("pi throws");
function catchPi<T>(call: () => T): T | typeof THROWS {
	try {
		return call();
	} catch {
		return THROWS;
	}
}

/** An entry pi throws on when it is on the path: a message entry without a message, an edit without a replacement. */
function isBroken(entry: SessionEntry): boolean {
	if (entry.type === "message") return entry.message === null || entry.message === undefined;
	return entry.type === "context_edit" && entry.replacement === undefined;
}

/**
 * pi's answer for entries where each broken one (see `isBroken`) stands in as a harmless entry of no
 * context, with the broken entries put back in the answer: what pi's context would be without them.
 */
function withoutBroken<T>(entries: SessionEntry[], call: (entries: SessionEntry[]) => T): T {
	const originals = new Map<unknown, SessionEntry>();
	const repaired = entries.map((entry) => {
		if (!isBroken(entry)) return entry;
		const { id, parentId, timestamp } = entry;
		const stand = { type: "custom", id, parentId, timestamp, customType: "broken" } as SessionEntry;
		originals.set(stand, entry);
		return stand;
	});
	const restore = (value: unknown): unknown => {
		if (Array.isArray(value)) return value.map(restore);
		if (typeof value !== "object" || value === null) return value;
		return originals.get(value) ?? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, restore(item)]));
	};
	return restore(call(repaired)) as T;
}

const json = (value: unknown): string => JSON.stringify(value) ?? "undefined";

/**
 * Everything readable of pi's session and ours must agree (pi's mapped to our ids). Only for a `damaged`
 * file may pi throw; there ours must give pi's answer for the entries with the broken ones left out.
 */
function expectSameState(
	pi: Pi16SessionManager,
	ours: SessionTree,
	t: Translator,
	where: string,
	damaged = false,
): void {
	const tryPi = <T>(call: () => T): T | typeof THROWS => (damaged ? catchPi(call) : call());
	const piEntries = pi.getEntries();
	const ourEntries = ours.getEntries();
	expect(
		piEntries.map((entry) => json(t.deep(entry))),
		`${where}: entries as written`,
	).toEqual(ourEntries.map((entry) => json(entry)));
	expect(t.deep(piEntries), `${where}: entries`).toEqual(ourEntries);
	expect(t.deep(pi.getHeader()), `${where}: header`).toEqual(ours.getHeader());
	expect(t.id(pi.getLeafId()), `${where}: leaf`).toBe(ours.getLeafId());
	expect(t.deep(pi.getLeafEntry()), `${where}: leaf entry`).toEqual(ours.getLeafEntry());
	expect(pi.getEntryCount(), `${where}: entry count`).toBe(ours.getEntryCount());
	const name = tryPi(() => pi.getSessionName());
	expect(ours.getSessionName(), `${where}: name`).toBe(name === THROWS ? undefined : name);
	expect(t.deep(pi.getTree()), `${where}: tree`).toEqual(ours.getTree());
	expect(t.deep(pi.getBranch()), `${where}: branch`).toEqual(ours.getBranch());
	for (const piEntry of piEntries) {
		const id = t.id(piEntry.id);
		const at = `${where}: entry ${id}`;
		expect(t.deep(pi.getEntry(piEntry.id)), `${at} getEntry`).toEqual(ours.getEntry(id));
		expect(t.deep(pi.getChildren(piEntry.id)), `${at} children`).toEqual(ours.getChildren(id));
		expect(t.deep(pi.getBranch(piEntry.id)), `${at} branch`).toEqual(ours.getBranch(id));
		expect(pi.getLabel(piEntry.id), `${at} label`).toBe(ours.getLabel(id));
		// The messages of the entry itself (pi throws on a message entry without a message: none in ours).
		const messages = tryPi(() => pi16.sessionEntryToContextMessages(piEntry));
		expect(sessionEntryToContextMessages(ours.getEntry(id) as SessionEntry), `${at} messages`).toEqual(
			messages === THROWS ? [] : t.deep(messages),
		);
	}
	expect(t.deep(pi16.getLatestCompactionEntry(piEntries)), `${where}: latest compaction`).toEqual(
		getLatestCompactionEntry(ourEntries),
	);
	expect(t.deep(pi16.getLatestCompactionEntry(pi.getBranch())), `${where}: latest compaction on the branch`).toEqual(
		getLatestCompactionEntry(ours.getBranch()),
	);

	const piOr = <T>(call: (entries: SessionEntry[]) => T): T => {
		const answer = tryPi(() => call(piEntries));
		return t.deep(answer === THROWS ? withoutBroken(piEntries, call) : answer);
	};
	// At the current leaf, through the managers' methods.
	const leaf = pi.getLeafId();
	expect(
		piOr((entries) => (entries === piEntries ? pi.buildSessionContext() : pi16.buildSessionContext(entries, leaf))),
		`${where}: context at the leaf`,
	).toEqual(ours.buildSessionContext());
	expect(
		piOr((entries) =>
			entries === piEntries ? pi.buildSessionProjection() : pi16.buildSessionProjection(entries, leaf),
		),
		`${where}: projection at the leaf`,
	).toEqual(ours.buildSessionProjection());
	expect(
		piOr((entries) => (entries === piEntries ? pi.buildContextEntries() : pi16.buildContextEntries(entries, leaf))),
		`${where}: context entries at the leaf`,
	).toEqual(ours.buildContextEntries());

	// At every leaf: pi's functions on pi's entries against ours on ours, and our tree's methods.
	for (const piLeaf of [...piEntries.map((entry) => entry.id), null, undefined, UNKNOWN_ID]) {
		const ourLeaf = t.id(piLeaf);
		const at = `${where}: leaf ${String(ourLeaf)}`;
		const context = piOr((entries) => pi16.buildSessionContext(entries, piLeaf));
		const projection = piOr((entries) => pi16.buildSessionProjection(entries, piLeaf));
		const contextEntries = piOr((entries) => pi16.buildContextEntries(entries, piLeaf));
		expect(buildSessionContext(ourEntries, ourLeaf), `${at} context`).toEqual(context);
		expect(buildSessionProjection(ourEntries, ourLeaf), `${at} projection`).toEqual(projection);
		expect(buildContextEntries(ourEntries, ourLeaf), `${at} context entries`).toEqual(contextEntries);
		// The tree's methods take undefined as "the current leaf" and an unknown id as an empty path.
		if (piLeaf === undefined || piLeaf === UNKNOWN_ID) continue;
		expect(ours.buildSessionContext(ourLeaf), `${at} tree context`).toEqual(context);
		expect(ours.buildSessionProjection(ourLeaf), `${at} tree projection`).toEqual(projection);
		expect(ours.buildContextEntries(ourLeaf), `${at} tree context entries`).toEqual(contextEntries);
	}
}

/** Move the pinned clock by the operation's step. */
function tick(op: Op16): void {
	vi.setSystemTime(Date.now() + op.dt);
}

const isConversation = (entry: SessionEntry) =>
	entry.type === "message" && (entry.message?.role === "user" || entry.message?.role === "assistant");

// In memory -------------------------------------------------------------------------------------------

describe("pi 1.6 in memory: same operations, same sessions", () => {
	it("every operation, refusal and fork gives the same state and context for every leaf", async () => {
		const counts = { runs: 0, ops: 0, refusals: 0, forks: 0, edits: 0, compactions: 0 };
		await fc.assert(
			fc.asyncProperty(ops16Arbitrary(60), async (ops) => {
				vi.setSystemTime(CLOCK_START);
				const pi = pi16.SessionManager.inMemory(CWD);
				const holder = { tree: SessionTree.create({ cwd: CWD }) };
				const piSide = piTarget(pi);
				const ourSide = treeTarget(holder);
				const t = new Translator();
				t.add(pi.getSessionId(), holder.tree.getSessionId());
				for (const [index, op] of ops.entries()) {
					const where = `op ${index} (${op.kind})`;
					tick(op);
					// pi's in-memory fork drops the session it came from: compare it before it goes.
					if (op.kind === "fork") expectSameState(pi, holder.tree, t, `${where}, before`);
					const piOutcome = await applyOp16(piSide, op, index);
					const ourOutcome = await applyOp16(ourSide, op, index);
					pairOutcomes(piOutcome, ourOutcome, t, where);
					if (ourOutcome.kind === "forked") t.add(pi.getSessionId(), holder.tree.getSessionId());
					counts.ops++;
					if (ourOutcome.kind === "threw") counts.refusals++;
					if (ourOutcome.kind === "forked") counts.forks++;
					if (ourOutcome.kind === "appended" && op.kind === "contextEdit") counts.edits++;
					if (ourOutcome.kind === "appended" && op.kind === "compaction") counts.compactions++;
				}
				expectSameState(pi, holder.tree, t, "at the end");
				counts.runs++;
			}),
			{ numRuns: propertyRuns(300) },
		);
		// The generator reaches what it is for (figures for 300 runs, in proportion, rounded down, when fewer run).
		const share = counts.runs / 300;
		expect(counts.refusals).toBeGreaterThanOrEqual(Math.floor(301 * share));
		expect(counts.forks).toBeGreaterThanOrEqual(Math.floor(81 * share));
		expect(counts.edits).toBeGreaterThanOrEqual(Math.floor(101 * share));
		expect(counts.compactions).toBeGreaterThanOrEqual(Math.floor(301 * share));
	});
});

// On disk ---------------------------------------------------------------------------------------------

/** The files a side wrote, in the order its sessions came (the first one, then one per fork). */
function track(files: string[], path: string | undefined): void {
	if (path !== undefined && files[files.length - 1] !== path) files.push(path);
}

/** pi's file's lines in our ids: each line parsed, mapped and encoded again (keys keep their order). */
function linesInOurIds(text: string, t: Translator): string[] {
	return text.split("\n").map((line) => (line === "" ? line : JSON.stringify(t.deep(JSON.parse(line)))));
}

describe("pi 1.6 on disk: same operations, same files", () => {
	it("files appear at the same operation and hold the same lines; each side reads the other's files alike", async () => {
		const counts = { runs: 0, files: 0, lines: 0, createdLater: 0 };
		await fc.assert(
			fc.asyncProperty(ops16Arbitrary(40), async (ops) => {
				vi.setSystemTime(CLOCK_START);
				const dir = mkdtempSync(join(scratch, "run-"));
				const pi = pi16.SessionManager.create(CWD, join(dir, "pi"));
				const holder = { session: await Session.create(storage, { cwd: CWD, sessionDir: join(dir, "ours") }) };
				const piSide = piTarget(pi);
				const ourSide = sessionTarget(holder);
				const t = new Translator();
				const piFiles: string[] = [];
				const ourFiles: string[] = [];
				const pairSession = () => {
					t.add(pi.getSessionId(), holder.session.header.id);
					t.add(pi.getSessionFile() as string, holder.session.path as string);
					track(piFiles, pi.getSessionFile());
					track(ourFiles, holder.session.path);
				};
				pairSession();
				try {
					for (const [index, op] of ops.entries()) {
						const where = `op ${index} (${op.kind})`;
						tick(op);
						const piOutcome = await applyOp16(piSide, op, index);
						const ourOutcome = await applyOp16(ourSide, op, index);
						pairOutcomes(piOutcome, ourOutcome, t, where);
						pairSession();
						// The file appears with the first user or assistant message, on both sides at once.
						const piExists = existsSync(pi.getSessionFile() as string);
						expect(existsSync(holder.session.path as string), `${where}: file exists`).toBe(piExists);
						expect(piExists, `${where}: pi's rule`).toBe(pi.getEntries().some(isConversation));
					}
					expectSameState(pi, holder.session.tree, t, "at the end");
				} finally {
					await holder.session.close();
				}

				expect(ourFiles.length).toBe(piFiles.length);
				for (const [index, piFile] of piFiles.entries()) {
					const ourFile = ourFiles[index] as string;
					expect(existsSync(ourFile), `file ${index} exists`).toBe(existsSync(piFile));
					if (!existsSync(piFile)) continue;
					const piText = readFileSync(piFile, "utf8");
					const ourText = readFileSync(ourFile, "utf8");
					expect(linesInOurIds(piText, t), `file ${index}: same lines`).toEqual(ourText.split("\n"));
					counts.files++;
					counts.lines += ourText.split("\n").length - 1;

					// Each side opens the other's file (and its own) to the same state, for every leaf.
					const piReadsOurs = pi16.SessionManager.open(ourFile);
					const oursReadsPi = await Session.open(storage, piFile, { readOnly: true });
					const oursReadsOurs = await Session.open(storage, ourFile, { readOnly: true });
					const piReadsPi = pi16.SessionManager.open(piFile);
					expect(oursReadsPi.report.diagnostics).toEqual([]);
					expectSameState(piReadsOurs, oursReadsOurs.tree, identity, `file ${index} (ours)`);
					expectSameState(piReadsPi, oursReadsPi.tree, identity, `file ${index} (pi's)`);
					// Reading changed neither file.
					expect(readFileSync(piFile, "utf8")).toBe(piText);
					expect(readFileSync(ourFile, "utf8")).toBe(ourText);
				}
				if (piFiles.length > 1) counts.createdLater++;
				counts.runs++;
				rmSync(dir, { recursive: true, force: true });
			}),
			{ numRuns: propertyRuns(80) },
		);
		// Figures for 80 runs, in proportion, rounded down, when fewer run.
		const share = counts.runs / 80;
		expect(counts.files).toBeGreaterThanOrEqual(Math.floor(61 * share));
		// A file created later is rare: a run of a fifth of the cases (the mutation run's) may see none.
		if (share >= 1) expect(counts.createdLater).toBeGreaterThan(5);
	});
});

// Damaged files pi 1.6 opens ----------------------------------------------------------------------------

const headerLine = `{"type":"session","version":3,"id":"damaged","timestamp":"2026-01-01T00:00:00.000Z","cwd":"${CWD}"}`;

function line(record: Record<string, unknown>): string {
	return JSON.stringify(record);
}
function messageLine(id: string, parentId: string | null, message: unknown, omitMessage = false): string {
	const entry: Record<string, unknown> = { type: "message", id, parentId, timestamp: "2026-01-01T00:00:01.000Z" };
	if (!omitMessage) entry.message = message;
	return line(entry);
}
const userMessage = (text: string) => ({ role: "user", content: text, timestamp: 1 });
const assistantMessage = (text: string) => ({
	role: "assistant",
	content: [{ type: "text", text }],
	api: "anthropic-messages",
	provider: "anthropic",
	model: "m-1",
	usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { total: 0 } },
	stopReason: "stop",
	timestamp: 2,
});

/**
 * A session around one damaged line `d1` (a child of `a2`): entries before and after it, a compaction
 * keeping from it, a context edit naming it, a branch off it; so every rule that meets it is exercised.
 */
function sessionAround(damaged: string): string {
	return `${[
		headerLine,
		messageLine("a1", null, userMessage("first")),
		messageLine("a2", "a1", assistantMessage("reply")),
		damaged,
		messageLine("a3", "d1", userMessage("after the damage")),
		line({
			type: "context_edit",
			id: "e1",
			parentId: "a3",
			timestamp: "2026-01-01T00:00:02.000Z",
			targetId: "d1",
			replacement: { content: "edited" },
		}),
		line({
			type: "compaction",
			id: "c1",
			parentId: "e1",
			timestamp: "2026-01-01T00:00:03.000Z",
			summary: "so far",
			firstKeptEntryId: "d1",
			tokensBefore: 10,
		}),
		messageLine("a4", "c1", userMessage("after the compaction")),
		messageLine("b1", "d1", userMessage("a branch off the damage")),
		line({
			type: "label",
			id: "l1",
			parentId: "b1",
			timestamp: "2026-01-01T00:00:04.000Z",
			targetId: "d1",
			label: "x",
		}),
	].join("\n")}\n`;
}

/** Open `bytes` with pi and with ours (each its own copy) and expect the same session for every leaf. */
async function expectSameOpening(
	name: string,
	bytes: string | Uint8Array,
): Promise<{ pi: Pi16SessionManager; ours: Session }> {
	const piPath = join(scratch, `${name}.pi.jsonl`);
	const ourPath = join(scratch, `${name}.ours.jsonl`);
	writeFileSync(piPath, bytes);
	writeFileSync(ourPath, bytes);
	const pi = pi16.SessionManager.open(piPath);
	const ours = await Session.open(storage, ourPath);
	await ours.close();
	expectSameState(pi, ours.tree, identity, name, true);
	// Both repaired the file the same way (at most a newline added at its end).
	expect(readFileSync(ourPath)).toEqual(readFileSync(piPath));
	return { pi, ours };
}

describe("damaged files pi 1.6 opens open here with pi's context (without the broken entry where pi throws)", () => {
	it.each([
		["a number", 5, true],
		["an object", { first: "x" }, true],
		["null", null, false],
		["true", true, true],
		["a list", ["x"], true],
	])("a session_info whose name is %s", async (_case, name, piThrows) => {
		const text = sessionAround(
			line({ type: "session_info", id: "d1", parentId: "a2", timestamp: "2026-01-01T00:00:01.000Z", name }),
		);
		const { pi, ours } = await expectSameOpening(`name-${_case.replace(/ /g, "-")}`, text);
		// pi's getSessionName calls the name's trim; ours has no name, as for null.
		expect(catchPi(() => pi.getSessionName()) === THROWS).toBe(piThrows);
		expect(ours.report.diagnostics).toEqual([]);
		expect(ours.tree.getSessionName()).toBeUndefined();
		expect(ours.tree.getRoots().map((entry) => entry.id)).toEqual(["a1"]);
		// A later name is read as usual.
		const renamed = `${text}${line({ type: "session_info", id: "n2", parentId: "l1", timestamp: "2026-01-01T00:00:05.000Z", name: "later" })}\n`;
		const again = await expectSameOpening(`name-${_case.replace(/ /g, "-")}-renamed`, renamed);
		expect(again.pi.getSessionName()).toBe("later");
		expect(again.ours.tree.getSessionName()).toBe("later");
	});

	it.each([
		["null", messageLine("d1", "a2", null), true],
		["missing", messageLine("d1", "a2", undefined, true), true],
		["a string", messageLine("d1", "a2", "just text"), false],
		["a number", messageLine("d1", "a2", 42), false],
		["a list", messageLine("d1", "a2", [{ role: "user" }]), false],
		["an object without a role", messageLine("d1", "a2", { content: "no role" }), false],
	])("a message entry whose message is %s", async (_case, damaged, piThrows) => {
		const { pi, ours } = await expectSameOpening(`message-${_case.replace(/ /g, "-")}`, sessionAround(damaged));
		// pi throws for every leaf whose path has the entry (it reads the message's role), answers for the others.
		expect(catchPi(() => pi16.buildSessionContext(pi.getEntries(), "a4")) === THROWS).toBe(piThrows);
		expect(catchPi(() => pi16.buildSessionContext(pi.getEntries(), "a2")) === THROWS).toBe(false);
		expect(ours.report.diagnostics).toEqual([]);
		expect(ours.tree.getRoots().map((entry) => entry.id)).toEqual(["a1"]);
		expect(ours.tree.getBranch("a4").map((entry) => entry.id)).toEqual(["a1", "a2", "d1", "a3", "e1", "c1", "a4"]);
		// The rest of the session is in the context: the compaction, then what follows.
		const texts = ours.tree
			.buildSessionContext("a4")
			.messages.filter((message) => (message as { role?: unknown }).role === "user")
			.map((message) => (message as { content: string }).content);
		expect(texts).toEqual(["after the damage", "after the compaction"]);
	});

	const at = { id: "d1", parentId: "a2", timestamp: "2026-01-01T00:00:01.000Z" };
	it.each([
		["a context edit without a replacement", { type: "context_edit", ...at, targetId: "a1" }],
		["a context edit whose replacement is a string", { type: "context_edit", ...at, targetId: "a1", replacement: "x" }],
		[
			"a context edit whose content is a number",
			{ type: "context_edit", ...at, targetId: "a1", replacement: { content: 5 } },
		],
		["a context edit without a target", { type: "context_edit", ...at, replacement: null }],
		["a label without a target", { type: "label", ...at, label: "x" }],
		["a label that is a number", { type: "label", ...at, targetId: "a1", label: 5 }],
		["a compaction without firstKeptEntryId", { type: "compaction", ...at, summary: "s", tokensBefore: 1 }],
		[
			"a compaction whose systemMessage is null",
			{ type: "compaction", ...at, summary: "s", tokensBefore: 1, firstKeptEntryId: "a1", systemMessage: null },
		],
		["a custom_message without content", { type: "custom_message", ...at, customType: "x", display: true }],
		["a branch_summary without a summary", { type: "branch_summary", ...at, fromId: "a1" }],
		["a session_info without a name", { type: "session_info", ...at }],
		[
			"a system message whose content is a number",
			{ type: "message", ...at, message: { role: "system", content: 5, timestamp: 1 } },
		],
		[
			"an assistant message without provider or model",
			{ type: "message", ...at, message: { role: "assistant", content: [], timestamp: 1 } },
		],
		["a thinking level change without a level", { type: "thinking_level_change", ...at }],
		["a model change without provider or model", { type: "model_change", ...at }],
		[
			"an entry whose timestamp is a number",
			{ type: "custom_message", ...at, timestamp: 5, customType: "x", content: "c", display: true },
		],
		["an entry of a kind we do not know", { type: "future_kind", ...at, payload: [1] }],
	])("%s", async (_case, damaged) => {
		const { ours } = await expectSameOpening(`other-${_case.replace(/ /g, "-")}`, sessionAround(line(damaged)));
		expect(ours.report.diagnostics).toEqual([]);
		expect(ours.tree.getEntry("a4")?.parentId).toBe("c1");
	});

	const encoder = new TextEncoder();
	/** A user message line whose text has `bad` bytes in the middle. */
	function badBytesLine(id: string, parentId: string, bad: number[]): Uint8Array {
		const [before, after] = messageLine(id, parentId, userMessage("BAD")).split("BAD") as [string, string];
		return new Uint8Array([...encoder.encode(before), 0x61, ...bad, 0x62, ...encoder.encode(after)]);
	}
	function withBadLine(bad: number[], terminated = true): Uint8Array {
		const [before, after] = sessionAround("@DAMAGED@").split("@DAMAGED@") as [string, string];
		const bytes = new Uint8Array([
			...encoder.encode(before),
			...badBytesLine("d1", "a2", bad),
			...encoder.encode(after),
		]);
		return terminated ? bytes : bytes.subarray(0, bytes.length - 1);
	}

	const badSequences: [string, number[]][] = [
		["a lone continuation byte", [0x80]],
		["a bad continuation", [0xc3, 0x28]],
		["a truncated 3-byte sequence", [0xe2, 0x82]],
		["a truncated 4-byte sequence", [0xf0, 0x9f, 0x98]],
		["an overlong slash", [0xc0, 0xaf]],
		["an overlong 3-byte NUL", [0xe0, 0x80, 0x80]],
		["a lone high surrogate", [0xed, 0xa0, 0x80]],
		["a lone low surrogate", [0xed, 0xbf, 0xbf]],
		["a surrogate pair encoded as two", [0xed, 0xa0, 0xbd, 0xed, 0xb2, 0xa9]],
		["a code point above U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
		["0xFF and 0xFE", [0xff, 0xfe]],
	];

	it.each(badSequences)("a message line with %s, read with U+FFFD and kept", async (_case, bad) => {
		const { ours } = await expectSameOpening(`utf8-${_case.replace(/ /g, "-")}`, withBadLine(bad));
		expect(ours.report.diagnostics.map((d) => [d.reason, d.line])).toEqual([["invalid-utf8", 4]]);
		expect(ours.tree.getRoots().map((entry) => entry.id)).toEqual(["a1"]);
		const content = (ours.tree.getEntry("d1") as { message: { content: string } }).message.content;
		expect(content).toBe(Buffer.from([0x61, ...bad, 0x62]).toString("utf8"));
		expect(content).toContain("\uFFFD");
	});

	it("bad bytes in the last line, unterminated: kept when the line is whole (as pi), torn when cut short", async () => {
		const lastLine = (bytes: Uint8Array) =>
			new Uint8Array([
				...encoder.encode(`${headerLine}\n${messageLine("a1", null, userMessage("first"))}\n`),
				...bytes,
			]);
		const whole = lastLine(badBytesLine("d1", "a1", [0xff]));
		const { ours: kept } = await expectSameOpening("utf8-unterminated-whole", whole);
		expect(kept.report.diagnostics.map((d) => d.reason)).toEqual(["invalid-utf8"]);
		expect(kept.report.repairedLastLine).toBe(true);
		expect(kept.tree.getLeafId()).toBe("d1");

		// Cut inside a character: torn (pi skips it too, as it does not parse).
		const character = encoder.encode("🚀");
		const cut = lastLine(new Uint8Array([...encoder.encode('{"type":"custom","data":"'), ...character.subarray(0, 2)]));
		const { ours: torn } = await expectSameOpening("utf8-unterminated-torn", cut);
		expect(torn.report.diagnostics.map((d) => d.reason)).toEqual(["torn-last-line"]);
		expect(torn.tree.getLeafId()).toBe("a1");
	});

	it("a header line with bad bytes is read as pi reads it", async () => {
		const [before, after] = headerLine.split('"cwd"') as [string, string];
		const bytes = new Uint8Array([
			...encoder.encode(`${before}"note":"`),
			0xc3,
			0x28,
			...encoder.encode(`","cwd"${after}\n${messageLine("a1", null, userMessage("first"))}\n`),
		]);
		const { ours } = await expectSameOpening("utf8-header", bytes);
		expect(ours.header.note).toBe("\uFFFD(");
		expect(ours.report.diagnostics.map((d) => [d.reason, d.line])).toEqual([["invalid-utf8", 1]]);
	});
});
