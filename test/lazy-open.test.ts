/**
 * Lazy opens against full opens. Random sessions of every entry kind (test/support/ops16.ts) with long,
 * awkward payloads (non-ASCII, escapes, control characters, base64) are written, damaged at random (lines
 * cut, lines run together after a cut one, quotes and brackets flipped, duplicated ids, lines that are no
 * entries, CRLF, a torn end), and opened both ways: every read must agree — report, entries, tree,
 * outline, each entry, its children and branch, the context, projection and context entries of every leaf,
 * and context pages from either end — and keep agreeing after appends, a branch into a new file, and a
 * reopen. Damage inside a string that leaves quotes and brackets whole is what a lazy open does not see
 * while opening (line-structure.ts): its own tests say what it does then.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import {
	Engine,
	EntryNotLoadedError,
	Session,
	type SessionEntry,
	SessionFormatError,
	SessionTree,
	type Storage,
	type StoredMessage,
} from "../src/index.ts";
import { DEFER_LINE_BYTES, lineStructure } from "../src/line-structure.ts";
import { concat } from "./support/listing-sessions.ts";
import { assistantMessage } from "./support/messages.ts";
import { applyOp16, ops16Arbitrary, type Target16 } from "./support/ops16.ts";
import { pi16 } from "./support/pi16.ts";
import { propertyRuns } from "./support/runs.ts";
import { expectSameReads } from "./support/same-reads.ts";

const NEWLINE = new Uint8Array([0x0a]);

const CWD = "/project";
const DIR = "/sessions/--project--";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"] });
	vi.setSystemTime(Date.UTC(2026, 0, 1));
});
afterEach(() => {
	vi.useRealTimers();
});

// Payloads ---------------------------------------------------------------------------------------

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/** Long strings of the kinds that sessions hold, and the characters that JSON must escape. */
const longText = fc.oneof(
	fc.string({ minLength: 40, maxLength: 900, unit: fc.constantFrom(...BASE64) }),
	fc.string({ minLength: 40, maxLength: 400, unit: "grapheme" }),
	fc.string({ minLength: 40, maxLength: 400, unit: "binary" }),
	fc.string({ minLength: 40, maxLength: 300, unit: fc.constantFrom('"', "\\", "\n", "\t", "\u0001", "é", "😀", "a") }),
	// Past `SCAN_LINE_BYTES`: a line that is scanned, not parsed.
	fc.string({ maxLength: 20, unit: "grapheme" }).map((tail) => BASE64.repeat(1100) + tail),
);

/** Pads a message's content with a long text (an image block now and then), as real sessions have. */
function padded(message: unknown, text: string, image: boolean): unknown {
	if (typeof message !== "object" || message === null) return message;
	const content = (message as { content?: unknown }).content;
	const extra = image ? { type: "image", data: text, mimeType: "image/png" } : { type: "text", text };
	if (Array.isArray(content)) return { ...message, content: [...content, extra] };
	if (typeof content === "string") return { ...message, content: content + text };
	return message;
}

/** Our tree as an ops16 target, every payload made long. */
function paddedTarget(tree: SessionTree, texts: string[]): Target16 {
	let next = 0;
	const text = () => texts[next++ % texts.length] as string;
	return {
		appendMessage: (message) => tree.appendMessage(padded(message, text(), next % 3 === 0) as StoredMessage),
		appendThinkingLevelChange: (level) => tree.appendThinkingLevelChange(level),
		appendModelChange: (provider, modelId) => tree.appendModelChange(provider, modelId),
		appendUsage: (...args) => tree.appendUsage(...args),
		appendCompaction: (summary, ...rest) => tree.appendCompaction(summary + text(), ...rest),
		appendContextEdit: (targetId, replacement) =>
			tree.appendContextEdit(targetId, padded(replacement, text(), false) as never),
		appendCustomEntry: (customType, data) => tree.appendCustomEntry(customType, { data, text: text() }),
		appendCustomMessageEntry: (customType, content, display, details) =>
			tree.appendCustomMessageEntry(customType, padded({ content }, text(), false) as never, display, details),
		appendLabelChange: (targetId, label) => tree.appendLabelChange(targetId, label),
		appendSessionInfo: (name) => tree.appendSessionInfo(name),
		branchWithSummary: (id, summary, ...rest) => tree.branchWithSummary(id, summary && summary + text(), ...rest),
		branch: (id) => tree.branch(id),
		resetLeaf: () => tree.resetLeaf(),
		fork: () => undefined,
		entryIds: () => tree.getEntries().map((entry) => entry.id),
		branchIds: () => tree.getBranch().map((entry) => entry.id),
	};
}

// Damage -----------------------------------------------------------------------------------------

type Damage =
	| { kind: "cut"; line: number; at: number }
	| { kind: "fuse"; line: number; at: number }
	| { kind: "byte"; line: number; at: number; byte: number }
	| { kind: "duplicate"; line: number; text: string }
	| { kind: "insert"; line: number; text: string }
	| { kind: "crlf"; line: number };

const damageArbitrary: fc.Arbitrary<Damage> = fc.oneof(
	fc.record({ kind: fc.constant("cut" as const), line: fc.nat(), at: fc.nat() }),
	fc.record({ kind: fc.constant("fuse" as const), line: fc.nat(), at: fc.nat() }),
	fc.record({
		kind: fc.constant("byte" as const),
		line: fc.nat(),
		at: fc.nat(),
		// Bytes of the structure a lazy open checks: quotes and brackets.
		byte: fc.constantFrom(0x22, 0x7b, 0x7d, 0x5b, 0x5d),
	}),
	fc.record({ kind: fc.constant("duplicate" as const), line: fc.nat(), text: fc.string({ maxLength: 60 }) }),
	fc.record({
		kind: fc.constant("insert" as const),
		line: fc.nat(),
		text: fc.constantFrom("[1,2]", "42", '{"x":1}', "not json", "", '{"type":7}', "null"),
	}),
	fc.record({ kind: fc.constant("crlf" as const), line: fc.nat() }),
);

/** The file's lines after damage (the header, line 0, is left alone: without it there is no session). */
function damaged(lines: Uint8Array[], damage: readonly Damage[]): Uint8Array[] {
	const out = [...lines];
	for (const harm of damage) {
		if (out.length < 2) break;
		const index = 1 + (harm.line % (out.length - 1));
		const line = out[index] as Uint8Array;
		switch (harm.kind) {
			case "cut":
				out[index] = line.subarray(0, harm.at % Math.max(1, line.length));
				break;
			case "fuse": {
				// A torn append, and the next line written right after it (pi repairs nothing).
				const next = out[index + 1];
				if (!next) break;
				const head = line.subarray(0, harm.at % Math.max(1, line.length));
				const fused = new Uint8Array(head.length + next.length);
				fused.set(head);
				fused.set(next, head.length);
				out.splice(index, 2, fused);
				break;
			}
			case "byte": {
				// An ASCII byte: breaking UTF-8 is damage a lazy open does not see (tested on its own below).
				const copy = line.slice();
				// Nor one of an escape: a bad escape is damage inside a string too.
				const inside = (k: number) => (copy[k] as number) >= 0x80 || inEscape(copy, k);
				let at = harm.at % Math.max(1, copy.length);
				for (let tries = 0; tries < copy.length && inside(at); tries++) at = (at + 1) % copy.length;
				if (copy.length > 0 && !inside(at)) copy[at] = harm.byte;
				out[index] = copy;
				break;
			}
			case "duplicate": {
				// The same id with other content: the first keeps it.
				let copy = line;
				try {
					const parsed = JSON.parse(decoder.decode(line)) as Record<string, unknown>;
					copy = encoder.encode(JSON.stringify({ ...parsed, extra: harm.text }));
				} catch {
					// A line damaged already is duplicated as it is.
				}
				out.splice(index + 1, 0, copy);
				break;
			}
			case "insert":
				out.splice(index, 0, encoder.encode(harm.text));
				break;
			case "crlf": {
				const copy = new Uint8Array(line.length + 1);
				copy.set(line);
				copy[line.length] = 0x0d;
				out[index] = copy;
				break;
			}
		}
	}
	return out;
}

/** Whether byte `at` may belong to an escape (`\\n`, `\\u0001`): a backslash or one of the five after one. */
function inEscape(bytes: Uint8Array, at: number): boolean {
	for (let back = 0; back <= 5; back++) if (bytes[at - back] === 0x5c) return true;
	return false;
}

function fileOf(lines: readonly Uint8Array[], tornEnd: boolean): Uint8Array {
	return concat(lines.flatMap((line, index) => (tornEnd && index === lines.length - 1 ? [line] : [line, NEWLINE])));
}

/** A random session as its lines (only ones that parse: damage comes after). */
function sessionLines(ops: Parameters<typeof applyOp16>[1][], texts: string[]): Uint8Array[] {
	const tree = SessionTree.create({ cwd: CWD });
	const target = paddedTarget(tree, texts);
	// Sequential: the operations are synchronous on a tree.
	ops.forEach((op, index) => void applyOp16(target, op, index));
	return [tree.getHeader(), ...tree.getEntries()].map((record) => encoder.encode(JSON.stringify(record)));
}

async function write(storage: Storage, path: string, bytes: Uint8Array): Promise<void> {
	await storage.mkdir(DIR);
	await storage.createExclusive(path, [bytes], false);
}

const caseArbitrary = fc.record({
	ops: ops16Arbitrary(30),
	texts: fc.array(longText, { minLength: 1, maxLength: 8 }),
	damage: fc.array(damageArbitrary, { maxLength: 4 }),
	tornEnd: fc.boolean(),
});

describe("a lazy open", () => {
	it("agrees with a full open on every read of random, damaged sessions", async () => {
		let deferred = 0;
		const runs = propertyRuns(60);
		await fc.assert(
			fc.asyncProperty(caseArbitrary, async ({ ops, texts, damage, tornEnd }) => {
				const storage = await createMemoryStorage();
				const path = `${DIR}/s.jsonl`;
				await write(storage, path, fileOf(damaged(sessionLines(ops, texts), damage), tornEnd));
				const full = await Session.open(storage, path, { readOnly: true, load: "full" });
				const lazy = await Session.open(storage, path, { readOnly: true, load: "lazy" });
				deferred += lazy.tree.structureBetween(0, lazy.tree.size).filter((e) => lazy.tree.bodies?.isDeferred(e)).length;
				await expectSameReads(full, lazy);
			}),
			{ numRuns: runs },
		);
		// The property is about deferred entries: at least one a case on average (seen here: 5-6 a case, 21-88
		// in 12 cases, ~330 in 60; the bound was 200 in 60 and failed the mutation run's 12 cases at 21).
		expect(deferred).toBeGreaterThanOrEqual(runs);
		// 1-13 s alone; 124 s once while a mutation run shared the two cores.
	}, 300_000);

	it("takes appends, branches and a fork as a full one, and reads the same after a reopen", async () => {
		await fc.assert(
			fc.asyncProperty(caseArbitrary, ops16Arbitrary(12), async ({ ops, texts, damage }, after) => {
				const storage = await createMemoryStorage();
				const path = `${DIR}/s.jsonl`;
				await write(storage, path, fileOf(damaged(sessionLines(ops, texts), damage), false));
				const lazy = await Session.open(storage, path, { load: "lazy" });
				const target = sessionAppends(lazy, texts);
				for (const [index, op] of after.entries()) await applyOp16(target, op, index);
				await lazy.flush();
				const reopened = await Session.open(storage, path, { readOnly: true, load: "full" });
				const relazy = await Session.open(storage, path, { readOnly: true, load: "lazy" });
				await expectSameReads(reopened, relazy);
				expect(await lazy.getEntries()).toEqual(reopened.tree.getEntries());

				// A branch into a new file: its entries are the full tree's fork of the same leaf.
				const leaf = lazy.tree.getLeafId();
				if (leaf !== null && expectedForkWritten(reopened, leaf)) {
					const expected = reopened.tree.forkEntries(leaf);
					const forkPath = await lazy.createBranchedSession(leaf);
					await lazy.flush();
					const forked = await Session.open(storage, forkPath as string, { readOnly: true, load: "full" });
					const withoutLabels = (entries: SessionEntry[]) => entries.filter((entry) => entry.type !== "label");
					expect(withoutLabels(forked.tree.getEntries())).toEqual(withoutLabels(expected));
					const labelsOnPath = [...reopened.tree.getLabels()].filter(([target]) => forked.tree.getEntry(target));
					expect([...forked.tree.getLabels()]).toEqual(labelsOnPath);
				}
				await lazy.close();
			}),
			{ numRuns: propertyRuns(25) },
		);
	}, 120_000);

	it("reads old files whole (they are migrated) and the file it migrated lazily", async () => {
		const storage = await createMemoryStorage();
		const path = `${DIR}/v1.jsonl`;
		const long = "x".repeat(500);
		const v1 = [
			{ type: "session", id: "s1", timestamp: "2025-01-01T00:00:00.000Z", cwd: CWD },
			{ type: "message", timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: long } },
			{
				type: "message",
				timestamp: "2025-01-01T00:00:02.000Z",
				message: { role: "assistant", content: [{ type: "text", text: long }], provider: "p", model: "m" },
			},
		];
		await write(storage, path, encoder.encode(v1.map((record) => `${JSON.stringify(record)}\n`).join("")));
		const migrated = await Session.open(storage, path, { load: "lazy" });
		expect(migrated.report.migratedFrom?.version).toBe(1);
		expect(migrated.lazy).toBe(false);
		await migrated.close();
		const full = await Session.open(storage, path, { readOnly: true, load: "full" });
		const lazy = await Session.open(storage, path, { readOnly: true, load: "lazy" });
		await expectSameReads(full, lazy);
	});
});

/** Whether a fork of `leaf` is written: only with a user or assistant message on its path (as pi 1.6). */
function expectedForkWritten(session: Session, leaf: string): boolean {
	return session.tree
		.getBranch(leaf)
		.some((entry) => entry.type === "message" && ["user", "assistant"].includes(entry.message?.role as string));
}

/** The appends of `session` in ops16's shape, payloads made long as in `paddedTarget`. */
function sessionAppends(session: Session, texts: string[]): Target16 {
	let next = 0;
	const text = () => texts[next++ % texts.length] as string;
	return {
		appendMessage: (message) => session.appendMessage(padded(message, text(), next % 2 === 0) as StoredMessage),
		appendThinkingLevelChange: (level) => session.appendThinkingLevelChange(level),
		appendModelChange: (provider, modelId) => session.appendModelChange(provider, modelId),
		appendUsage: (...args) => session.appendUsage(...args),
		appendCompaction: (summary, ...rest) => session.appendCompaction(summary + text(), ...rest),
		appendContextEdit: (targetId, replacement) =>
			session.appendContextEdit(targetId, padded(replacement, text(), false) as never),
		appendCustomEntry: (customType, data) => session.appendCustomEntry(customType, data),
		appendCustomMessageEntry: (customType, content, display, details) =>
			session.appendCustomMessageEntry(customType, content as never, display, details),
		appendLabelChange: (targetId, label) => session.appendLabelChange(targetId, label),
		appendSessionInfo: (name) => session.appendSessionInfo(name),
		branchWithSummary: (...args) => session.branchWithSummary(...args),
		branch: (id) => session.branch(id),
		resetLeaf: () => session.resetLeaf(),
		fork: () => undefined, // forks are tested on their own below
		entryIds: () => session.tree.structureBetween(0, session.tree.size).map((entry) => entry.id),
		branchIds: () => session.tree.structureOfBranch().map((entry) => entry.id),
	};
}

describe("a lazily opened session's tree", () => {
	it("refuses a synchronous read of a body it has not decoded, with a typed error naming entry and file", async () => {
		const storage = await createMemoryStorage();
		const path = `${DIR}/s.jsonl`;
		const tree = SessionTree.create({ cwd: CWD });
		const id = tree.appendMessage({ role: "user", content: "y".repeat(1000), timestamp: 1 });
		await write(
			storage,
			path,
			encoder.encode([tree.getHeader(), ...tree.getEntries()].map((r) => `${JSON.stringify(r)}\n`).join("")),
		);
		const session = await Session.open(storage, path, { readOnly: true, load: "lazy" });
		expect(() => session.tree.getEntry(id)).toThrow(EntryNotLoadedError);
		expect(() => session.tree.buildSessionContext()).toThrow(expect.objectContaining({ entryId: id, file: path }));
		// Structure is at hand without decoding.
		expect(session.tree.getLeafId()).toBe(id);
		expect(session.outline()[0]).toMatchObject({ id, type: "message", role: "user" });
		expect(await session.getEntry(id)).toEqual(tree.getEntry(id));
	});

	it("says the file changed under it when a deferred line no longer holds its entry", async () => {
		const storage = await createMemoryStorage();
		const path = `${DIR}/s.jsonl`;
		const tree = SessionTree.create({ cwd: CWD });
		const id = tree.appendMessage({ role: "user", content: "y".repeat(1000), timestamp: 1 });
		const text = [tree.getHeader(), ...tree.getEntries()].map((r) => `${JSON.stringify(r)}\n`).join("");
		await write(storage, path, encoder.encode(text));
		const session = await Session.open(storage, path, { readOnly: true, load: "lazy" });
		await storage.replace(path, [encoder.encode(text.replace(id, "zzzzzzzz"))]);
		const failure = await session.getEntry(id).catch((error: unknown) => error);
		expect(failure).toBeInstanceOf(SessionFormatError);
		expect(failure).toMatchObject({ file: path, line: 2 });
	});

	it("is what the engine opens by default, and its pages from the end equal a full open's", async () => {
		const storage = await createMemoryStorage();
		const engine = new Engine({ storage, agentDir: "/pi/agent" });
		const { handle, path } = await engine.create({ cwd: CWD });
		for (let index = 0; index < 40; index++) {
			await engine.appendMessage(handle, {
				role: "user",
				content: `question ${index} ${"q".repeat(300)}`,
				timestamp: index,
			});
			await engine.appendMessage(handle, assistantMessage(`answer ${index} ${"a".repeat(300)}`, { timestamp: index }));
		}
		await engine.close(handle);
		const lazy = await engine.open(path as string, { readOnly: true });
		const full = await engine.open(path as string, { readOnly: true, load: "full" });
		const last = await engine.getContext(lazy.handle, { last: 5 });
		expect(last.total).toBe(80);
		expect(last.offset).toBe(75);
		expect(last).toEqual(await engine.getContext(full.handle, { last: 5 }));
		const older = await engine.getContext(lazy.handle, { offset: last.offset - 5, limit: 5 });
		expect(older).toEqual(await engine.getContext(full.handle, { offset: 70, limit: 5 }));
		expect(await engine.getTree(lazy.handle)).toEqual(await engine.getTree(full.handle));
	});
});

describe("the structure of a line", () => {
	const entryArbitrary = fc.record({
		type: fc.constantFrom("message", "custom", "custom_message", "branch_summary", "context_edit"),
		id: fc.string({ maxLength: 10 }),
		text: longText,
		role: fc.constantFrom("user", "assistant", "toolResult"),
	});
	const lineOf = ({ type, id, text, role }: { type: string; id: string; text: string; role: string }) =>
		encoder.encode(
			JSON.stringify({
				type,
				id,
				parentId: null,
				timestamp: "t",
				message: { role, content: [{ type: "text", text }], provider: "p", model: "m" },
				summary: text,
				replacement: { content: text },
				data: { text },
			}).padEnd(DEFER_LINE_BYTES, " "),
		);

	it("of a whole entry holds its kind, ids, time and role as JSON.parse reads them", () => {
		fc.assert(
			fc.property(entryArbitrary, (entry) => {
				const bytes = lineOf(entry);
				const whole = JSON.parse(decoder.decode(bytes));
				const structure = lineStructure(bytes) as unknown as Record<string, unknown>;
				expect(structure).toBeDefined();
				expect(structure).toMatchObject({ type: whole.type, id: whole.id, parentId: null, timestamp: "t" });
				if (whole.type === "message")
					expect(structure.message).toEqual({
						role: entry.role,
						...(entry.role === "assistant" ? { provider: "p", model: "m" } : {}),
					});
				if (whole.type === "context_edit") expect(structure.replacement).toEqual({});
				if (whole.type === "branch_summary") expect(structure.summary).toBe("~");
			}),
			{ numRuns: propertyRuns(500) },
		);
	});

	it("is refused for a line cut anywhere, two lines run together, or a quote or bracket flipped into invalid JSON", () => {
		fc.assert(
			fc.property(
				entryArbitrary,
				entryArbitrary,
				fc.nat(),
				fc.nat(),
				fc.constantFrom(0x22, 0x7b, 0x7d, 0x5b, 0x5d),
				(a, b, at, flip, byte) => {
					const first = lineOf(a);
					const cut = first.subarray(0, 1 + (at % (first.length - 1))); // strictly inside the line
					expect(lineStructure(cut)).toBeUndefined();
					const fused = new Uint8Array([...cut, ...lineOf(b)]);
					expect(lineStructure(fused)).toBeUndefined();
					const flipped = first.slice();
					// Not in an escape: a bad escape is damage inside a string (tested below).
					let where = flip % flipped.length;
					while (where < flipped.length - 1 && inEscape(flipped, where)) where++;
					flipped[where] = byte;
					let parses = true;
					try {
						JSON.parse(decoder.decode(flipped));
					} catch {
						parses = false;
					}
					if (!parses) expect(lineStructure(flipped)).toBeUndefined();
				},
			),
			{ numRuns: propertyRuns(1500) },
		);
	});
});

describe("a branch of a lazily opened session continued in a new file", () => {
	it("holds its entries whole once written, so the old file may go", async () => {
		const storage = await createMemoryStorage();
		const writer = await Session.create(storage, { cwd: CWD, sessionDir: DIR });
		for (let index = 0; index < 20; index++) {
			await writer.appendMessage({ role: "user", content: `question ${index} ${"q".repeat(400)}`, timestamp: index });
		}
		await writer.close();
		const source = writer.path as string;
		const lazy = await Session.open(storage, source, { load: "lazy" });
		const leaf = lazy.tree.getLeafId() as string;
		const forkPath = (await lazy.createBranchedSession(leaf)) as string;
		await lazy.flush();
		expect(lazy.lazy).toBe(false);
		await storage.remove(source);
		const written = await Session.open(storage, forkPath, { readOnly: true, load: "full" });
		expect(await lazy.getEntries()).toEqual(written.tree.getEntries());
		expect(lazy.tree.buildSessionContext()).toEqual(written.tree.buildSessionContext());
		await lazy.close();
	});
});

describe("lines a lazy open reads as a full one does, though they are unusual", () => {
	it("keys written with escapes, and duplicate keys, give the same tree and context", async () => {
		const long = "z".repeat(300);
		const lines = [
			'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}',
			`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"${long}","timestamp":1}}`,
			`{"type":"message","id":"b","parent\\u0049d":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"${long}","timestamp":2}}`,
			`{"type":"message","i\\u0064":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"${long}","timestamp":3}}`,
			`{"type":"message","id":"d","parentId":"a","parent\\u0049d":"b","timestamp":"2026-01-01T00:00:04.000Z","message":{"rol\\u0065":"system","content":"${long}","timestamp":4}}`,
			`{"type":"message","id":"e","parentId":"d","parentId":"b","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"${long}","timestamp":5}}`,
		];
		const storage = await createMemoryStorage();
		const path = `${DIR}/s.jsonl`;
		await write(storage, path, encoder.encode(lines.map((line) => `${line}\n`).join("")));
		const full = await Session.open(storage, path, { readOnly: true, load: "full" });
		const lazy = await Session.open(storage, path, { readOnly: true, load: "lazy" });
		// The escaped keys really are the keys they spell (a full open reads them so).
		expect(full.tree.getParentId("b")).toBe("a");
		expect(full.tree.getEntry("d")).toMatchObject({ parentId: "b", message: { role: "system" } });
		await expectSameReads(full, lazy);
	});
});

describe("a compaction appended to a session whose system message an edit removed", () => {
	it("replays the system messages as pi 1.6 does, whole or lazy", async () => {
		const lines = [
			{ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" },
			{
				type: "message",
				id: "a",
				parentId: null,
				timestamp: "2026-01-01T00:00:01.000Z",
				message: { role: "system", content: "OLD PROMPT", timestamp: 1 },
			},
			{
				type: "message",
				id: "b",
				parentId: "a",
				timestamp: "2026-01-01T00:00:02.000Z",
				message: { role: "user", content: "q".repeat(400), timestamp: 2 },
			},
			{
				type: "context_edit",
				id: "c",
				parentId: "b",
				timestamp: "2026-01-01T00:00:03.000Z",
				targetId: "a",
				replacement: null,
			},
		];
		const text = lines.map((line) => `${JSON.stringify(line)}\n`).join("");
		const scratch = mkdtempSync(join(tmpdir(), "lazy-compaction-"));
		try {
			const file = join(scratch, "s.jsonl");
			writeFileSync(file, text);
			const pi = pi16.SessionManager.open(file, scratch);
			const piCompaction = pi.getEntry(pi.appendCompaction("sum", "b", 10)) as { systemMessage?: unknown };
			for (const load of ["full", "lazy"] as const) {
				const storage = await createMemoryStorage();
				const path = `${DIR}/s.jsonl`;
				await write(storage, path, encoder.encode(text));
				const session = await Session.open(storage, path, { load });
				const id = await session.appendCompaction("sum", "b", 10);
				const ours = (await session.getEntry(id)) as { systemMessage?: unknown };
				expect(ours.systemMessage, load).toEqual(piCompaction.systemMessage);
				await session.close();
			}
		} finally {
			rmSync(scratch, { recursive: true, force: true });
		}
	});
});

describe("damage inside a string, which a lazy open does not see while opening", () => {
	async function openBoth(damage: (line: Uint8Array) => Uint8Array) {
		const storage = await createMemoryStorage();
		const path = `${DIR}/s.jsonl`;
		const tree = SessionTree.create({ cwd: CWD });
		const first = tree.appendMessage({ role: "user", content: `before ${"a".repeat(400)}`, timestamp: 1 });
		const damaged = tree.appendMessage({ role: "user", content: `damaged ${"b".repeat(400)}`, timestamp: 2 });
		const lines: Uint8Array[] = [tree.getHeader(), ...tree.getEntries()].map((record) =>
			encoder.encode(JSON.stringify(record)),
		);
		lines[2] = damage(lines[2] as Uint8Array);
		await write(storage, path, fileOf(lines, false));
		const full = await Session.open(storage, path, { readOnly: true, load: "full" });
		const lazy = await Session.open(storage, path, { readOnly: true, load: "lazy" });
		return { path, first, damaged, full, lazy };
	}
	const at = (line: Uint8Array, byte: number) => {
		const copy = line.slice();
		copy[copy.length - 100] = byte;
		return copy;
	};

	it("a raw control character or a bad escape: indexed, and reading its body names the line", async () => {
		const { path, first, damaged, full, lazy } = await openBoth((line) => at(line, 0x01));
		expect(full.tree.getEntry(damaged)).toBeUndefined();
		expect(full.report.diagnostics.map((d) => d.reason)).toEqual(["invalid-json"]);
		expect(lazy.tree.getLeafId()).toBe(damaged);
		expect(await lazy.getEntry(first)).toEqual(full.tree.getEntry(first));
		const failure = await lazy.getEntry(damaged).catch((error: unknown) => error);
		expect(failure).toBeInstanceOf(SessionFormatError);
		expect(failure).toMatchObject({ file: path, line: 3, message: expect.stringContaining('load: "full"') });
	});

	it("bytes that are not UTF-8: the same entry as a full open reads, without the diagnostic", async () => {
		const { damaged, full, lazy } = await openBoth((line) => at(line, 0xff));
		expect(full.report.diagnostics.map((d) => d.reason)).toEqual(["invalid-utf8"]);
		expect(lazy.report.diagnostics).toEqual([]);
		expect(await lazy.getEntry(damaged)).toEqual(full.tree.getEntry(damaged));
	});
});
