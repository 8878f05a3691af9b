/**
 * Deep and huge values (issue 14): a line nested deeper than `MAX_NESTING_DEPTH` is skipped on read with
 * a `too-deep` diagnostic naming its line (JSON.parse reads it, but no copy of it could be made or sent),
 * left in the file as it is, and refused on append; a line longer than `maxLineBytes` is skipped with a
 * `too-long` diagnostic and never held in memory; `maxEntries` refuses a file with more records.
 * Every operation is tried on both load modes, in process and through the worker.
 */
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { startEngineWorker } from "../adapters/worker.ts";
import { InvalidArgumentError } from "../src/errors.ts";
import {
	DEFAULT_MAX_LINE_BYTES,
	Engine,
	MAX_NESTING_DEPTH,
	Session,
	type SessionEntry,
	SessionLimitError,
} from "../src/index.ts";
import { RawLineSplitter } from "../src/jsonl.ts";
import { lineStructure } from "../src/line-structure.ts";

const storage = createNodeStorage();
const TIME = "2026-01-01T00:00:00.000Z";
const DEEP_ID = "aaaaaaaa";
const CHILD_ID = "bbbbbbbb";

function header(version?: number): string {
	return JSON.stringify({ type: "session", ...(version ? { version } : {}), id: "s1", timestamp: TIME, cwd: "/p" });
}

/** A message line whose whole line nests `depth` levels (entry, message, then arrays). */
function deepLine(depth: number, withIds = true): string {
	const arrays = depth - 2;
	const content = "[".repeat(arrays) + "]".repeat(arrays);
	const ids = withIds ? `"id":"${DEEP_ID}","parentId":null,` : "";
	return `{"type":"message",${ids}"timestamp":"${TIME}","message":{"role":"user","content":${content},"timestamp":1}}`;
}

function childLine(parentId: string): string {
	return JSON.stringify({
		type: "message",
		id: CHILD_ID,
		parentId,
		timestamp: TIME,
		message: { role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 },
	});
}

let dir: string;
beforeAll(() => {
	dir = mkdtempSync(join(tmpdir(), "pi-deep-"));
});
afterAll(() => {
	rmSync(dir, { recursive: true, force: true });
});

let files = 0;
function sessionFile(lines: string[], name = `s${files++}.jsonl`): string {
	const path = join(dir, name);
	writeFileSync(path, `${lines.join("\n")}\n`);
	return path;
}

const KEPT = MAX_NESTING_DEPTH;
const DEPTHS = [KEPT, KEPT + 1, 5_000, 50_000, 500_000];

describe("a line nested deeper than MAX_NESTING_DEPTH", () => {
	for (const depth of DEPTHS) {
		const kept = depth <= KEPT;
		describe(`${depth} levels`, () => {
			let path: string;
			beforeAll(() => {
				path = sessionFile([header(3), deepLine(depth), childLine(DEEP_ID)]);
			});

			for (const load of ["full", "lazy"] as const) {
				it(`opens ${load}: ${kept ? "kept" : "skipped with a too-deep diagnostic naming its line"}; every read and the engine's copies work`, async () => {
					const session = await Session.open(storage, path, { load, readOnly: true });
					const reasons = session.report.diagnostics.map((d) => `${d.reason}:${d.line}`);
					if (kept) expect(reasons).toEqual([]);
					else {
						expect(reasons).toContain("too-deep:2");
						const diagnostic = session.report.diagnostics.find((d) => d.reason === "too-deep");
						expect(diagnostic?.byteOffset).toBe(header(3).length + 1);
					}
					expect((await session.getEntry(DEEP_ID)) !== undefined).toBe(kept);
					expect((await session.getEntry(CHILD_ID))?.id).toBe(CHILD_ID);
					await session.buildSessionContext();
					await session.contextPage({ last: 10 });

					const engine = new Engine({ storage, agentDir: dir });
					const { handle } = await engine.open(path, { load, readOnly: true });
					expect((await engine.getContext(handle)).messages.length).toBe(kept ? 2 : 1);
					expect((await engine.getEntry(handle, DEEP_ID)) !== undefined).toBe(kept);
					await engine.getBranch(handle);
					await engine.getTree(handle);
					await engine.getFlatTree(handle);
					expect((await engine.getDiagnostics(handle)).some((d) => d.reason === "too-deep")).toBe(!kept);
					await engine.close(handle);
				});
			}

			it("forks (Session.forkFrom and the engine's) and branches into a new file, both load modes; the source is untouched", async () => {
				const before = readFileSync(path);
				const fork = await Session.forkFrom(storage, path, "/q", join(dir, `fork-${depth}`));
				expect(fork.tree.size).toBe(kept ? 2 : 1);
				await fork.close();
				const engine = new Engine({ storage, agentDir: dir });
				const forked = await engine.forkFrom(path, "/q", join(dir, `fork-engine-${depth}`));
				expect(forked.entryCount).toBe(kept ? 2 : 1);
				await engine.close(forked.handle);
				for (const load of ["full", "lazy"] as const) {
					const session = await Session.open(storage, path, { load });
					try {
						const branched = await session.createBranchedSession(CHILD_ID);
						const reopened = await Session.open(storage, branched as string, { readOnly: true });
						expect(reopened.report.diagnostics).toEqual([]);
						expect(reopened.tree.size).toBe(kept ? 2 : 1);
					} finally {
						await session.close();
					}
				}
				expect(readFileSync(path).equals(before)).toBe(true);
				const exported = await engine.exportSessionFile(path);
				expect(Buffer.from(exported).equals(before)).toBe(true);
			});

			it("migrates a v1 file holding it: one backup, the line carried over byte for byte, again and again", async () => {
				const v1 = sessionFile([header(), deepLine(depth, false)], `v1-${depth}.jsonl`);
				const original = readFileSync(v1, "utf8");
				for (let attempt = 0; attempt < 3; attempt++) {
					const session = await Session.open(storage, v1);
					expect(session.report.diagnostics.some((d) => d.reason === "too-deep")).toBe(!kept);
					await session.close();
				}
				const backups = readdirSync(dir).filter(
					(name) => name.startsWith(`v1-${depth}.jsonl.`) && name.endsWith(".bak"),
				);
				expect(backups).toEqual([`v1-${depth}.jsonl.v1.bak`]);
				expect(readFileSync(join(dir, backups[0] as string), "utf8")).toBe(original);
				const migrated = readFileSync(v1, "utf8").split("\n");
				expect(JSON.parse(migrated[0] as string).version).toBe(3);
				if (!kept) expect(migrated[1]).toBe(deepLine(depth, false));
			});
		});
	}

	it("the lazy walk, in WebAssembly and in JavaScript, defers a line of the limit and not one past it", () => {
		const encoder = new TextEncoder();
		for (const walker of ["wasm", "javascript"] as const) {
			expect(lineStructure(encoder.encode(deepLine(KEPT)), walker)?.id).toBe(DEEP_ID);
			expect(lineStructure(encoder.encode(deepLine(KEPT + 1)), walker)).toBeUndefined();
			expect(lineStructure(encoder.encode(deepLine(70_000)), walker)).toBeUndefined();
		}
	});

	it("is refused on append (an InvalidArgumentError, nothing written), in process and through the worker", async () => {
		const nested = (levels: number): unknown => {
			let value: unknown = [];
			for (let level = 1; level < levels; level++) value = [value];
			return value;
		};
		const session = await Session.create(storage, { cwd: "/p", sessionDir: join(dir, "appends") });
		// The entry and its message are two levels: content of KEPT - 2 makes a line of KEPT.
		await session.appendMessage({ role: "user", content: nested(KEPT - 2) as never, timestamp: 1 });
		await expect(
			session.appendMessage({ role: "user", content: nested(KEPT - 1) as never, timestamp: 1 }),
		).rejects.toBeInstanceOf(InvalidArgumentError);
		await expect(
			session.appendMessage({ role: "user", content: nested(5_000) as never, timestamp: 1 }),
		).rejects.toBeInstanceOf(InvalidArgumentError);
		await session.close();
		const reopened = await Session.open(storage, session.path as string, { readOnly: true });
		expect(reopened.tree.size).toBe(1);
		expect(reopened.report.diagnostics).toEqual([]);

		const { engine, terminate } = await startEngineWorker({ storage: "node", agentDir: dir });
		try {
			const { handle } = await engine.create({ cwd: "/p", sessionDir: join(dir, "worker-appends") });
			await engine.appendMessage(handle, { role: "user", content: nested(KEPT - 2) as never, timestamp: 1 });
			await expect(
				engine.appendMessage(handle, { role: "user", content: nested(KEPT - 1) as never, timestamp: 1 }),
			).rejects.toBeInstanceOf(InvalidArgumentError);
			expect((await engine.getContext(handle)).messages.length).toBe(1);
			await engine.close(handle);
		} finally {
			await terminate();
		}
	});

	it("through the worker: reads of each load mode answer (the deep line skipped), none fails to cross", async () => {
		const { engine, terminate } = await startEngineWorker({ storage: "node", agentDir: dir });
		try {
			for (const depth of [KEPT, KEPT + 1, 5_000, 50_000]) {
				const path = sessionFile([header(3), deepLine(depth), childLine(DEEP_ID)]);
				for (const load of ["full", "lazy"] as const) {
					const { handle } = await engine.open(path, { load, readOnly: true });
					expect((await engine.getContext(handle)).messages.length).toBe(depth <= KEPT ? 2 : 1);
					expect((await engine.getEntry(handle, DEEP_ID)) !== undefined).toBe(depth <= KEPT);
					await engine.getBranch(handle);
					await engine.getTree(handle);
					await engine.close(handle);
				}
			}
		} finally {
			await terminate();
		}
	});
});

describe("a line longer than maxLineBytes", () => {
	const LIMIT = 1000;
	const bigEntry = (id: string, parentId: string | null, bytes: number): string => {
		const base = JSON.stringify({ type: "custom", id, parentId, timestamp: TIME, customType: "x", data: "" });
		return base.replace('"data":""', `"data":"${"z".repeat(bytes - base.length)}"`);
	};

	it("is skipped and reported (file, line, byte offset) in both load modes; the rest is read; a line of the limit is read", async () => {
		const lines = [
			header(3),
			bigEntry("11111111", null, LIMIT),
			bigEntry("22222222", "11111111", LIMIT + 1),
			childLine("11111111"),
		];
		const path = sessionFile(lines);
		for (const load of ["full", "lazy"] as const) {
			const session = await Session.open(storage, path, { load, readOnly: true, maxLineBytes: LIMIT });
			const diagnostic = session.report.diagnostics.find((d) => d.reason === "too-long");
			expect(diagnostic).toMatchObject({
				line: 3,
				byteOffset: header(3).length + LIMIT + 2,
				excerpt: expect.stringMatching(/^\{"type":"custom","id":"22222222"/),
			});
			expect((await session.getEntries()).map((e: SessionEntry) => e.id)).toEqual(["11111111", CHILD_ID]);
			expect(((await session.getEntry("11111111")) as { data: string }).data.length).toBeGreaterThan(800);
		}
		// A writing open of a current file keeps it as it is (nothing is rewritten).
		const before = readFileSync(path);
		const writer = await Session.open(storage, path, { maxLineBytes: LIMIT });
		await writer.close();
		expect(readFileSync(path).equals(before)).toBe(true);
	});

	it("counts a CR before the line feed out of the line, and cuts an oversized line's head whatever the chunks", () => {
		const encoder = new TextEncoder();
		const text = `${"a".repeat(LIMIT)}\r\n${"b".repeat(LIMIT + 1)}\r\n${"c".repeat(5 * LIMIT)}`;
		const bytes = encoder.encode(text);
		for (const chunk of [1, 7, 999, 1000, 1001, 4096]) {
			const splitter = new RawLineSplitter({ maxLineBytes: LIMIT });
			const lines = [];
			for (let at = 0; at < bytes.length; at += chunk)
				lines.push(...[...splitter.push(bytes.subarray(at, at + chunk))].map((l) => ({ ...l, bytes: l.bytes.length })));
			lines.push(...[...splitter.end()].map((l) => ({ ...l, bytes: l.bytes.length })));
			expect(lines.map((l) => [l.line, l.byteOffset, l.byteLength, l.bytes, l.oversized ?? false])).toEqual([
				[1, 0, LIMIT + 2, LIMIT, false],
				[2, LIMIT + 2, LIMIT + 3, 324, true],
				[3, 2 * LIMIT + 5, 5 * LIMIT, 324, true],
			]);
		}
	});

	it("makes a writing open of a v1 file holding one refuse to migrate (SessionLimitError naming the line), the file untouched, no backup", async () => {
		const path = sessionFile(
			[header(), bigEntry("x", null, LIMIT + 50).replace(/"id":"x","parentId":null,/, "")],
			"v1-long.jsonl",
		);
		const before = readFileSync(path);
		for (let attempt = 0; attempt < 2; attempt++) {
			const error = await Session.open(storage, path, { maxLineBytes: LIMIT }).catch((e: unknown) => e);
			expect(error).toBeInstanceOf(SessionLimitError);
			expect(error).toMatchObject({ limit: "line-bytes", max: LIMIT, line: 2, byteOffset: header().length + 1 });
		}
		expect(readFileSync(path).equals(before)).toBe(true);
		expect(readdirSync(dir).filter((name) => name.startsWith("v1-long.jsonl."))).toEqual([]);
		// Read-only, it opens, the line reported.
		const reader = await Session.open(storage, path, { maxLineBytes: LIMIT, readOnly: true });
		expect(reader.report.diagnostics.map((d) => d.reason)).toEqual(["too-long"]);
	});

	it("the engine passes its limits to opens and forks, in process and in the worker", async () => {
		const path = sessionFile([header(3), bigEntry("11111111", null, LIMIT + 1), childLine("11111111")]);
		const engine = new Engine({ storage, agentDir: dir, limits: { maxLineBytes: LIMIT } });
		const { handle, report } = await engine.open(path, { readOnly: true });
		expect(report.diagnostics.map((d) => d.reason)).toEqual(["too-long", "missing-parent"]);
		await engine.close(handle);
		const forked = await engine.forkFrom(path, "/q", join(dir, "fork-long"));
		expect(forked.entryCount).toBe(1);
		await engine.close(forked.handle);
		const { engine: remote, terminate } = await startEngineWorker({
			storage: "node",
			agentDir: dir,
			limits: { maxLineBytes: LIMIT },
		});
		try {
			const opened = await remote.open(path, { readOnly: true });
			expect(opened.report.diagnostics.map((d) => d.reason)).toEqual(["too-long", "missing-parent"]);
		} finally {
			await terminate();
		}
	});

	it(`at the default limit (${DEFAULT_MAX_LINE_BYTES} bytes, V8's longest string): a line past it is skipped, the file opens`, async () => {
		// A sparse file: the long line is a hole of zero bytes, so nothing big is written.
		const path = join(dir, "huge.jsonl");
		const first = `${header(3)}\n`;
		const last = `\n${childLine("11111111").replace('"parentId":"11111111"', '"parentId":null')}\n`;
		const size = DEFAULT_MAX_LINE_BYTES + 1000;
		const fd = openSync(path, "w");
		writeSync(fd, first, 0);
		writeSync(fd, last, first.length + size);
		closeSync(fd);
		for (const load of ["full", "lazy"] as const) {
			const session = await Session.open(storage, path, { load, readOnly: true });
			expect(session.report.diagnostics).toEqual([
				expect.objectContaining({ reason: "too-long", line: 2, byteOffset: first.length }),
			]);
			expect(session.tree.size).toBe(1);
		}
		rmSync(path);
	}, 60_000);
});

describe("maxEntries", () => {
	const entry = (n: number) =>
		JSON.stringify({
			type: "label",
			id: `0000000${n}`,
			parentId: n === 0 ? null : `0000000${n - 1}`,
			timestamp: TIME,
			targetId: "00000000",
			label: "x",
		});
	const lines = [header(3), ...Array.from({ length: 9 }, (_, n) => entry(n))];

	it("refuses a file with more records (SessionLimitError naming the line), in both load modes, the engine and the worker; a file of the limit opens", async () => {
		const path = sessionFile(lines);
		for (const load of ["full", "lazy"] as const) {
			await expect(Session.open(storage, path, { load, readOnly: true, maxEntries: 10 })).resolves.toBeDefined();
			const error = await Session.open(storage, path, { load, maxEntries: 5 }).catch((e: unknown) => e);
			expect(error).toBeInstanceOf(SessionLimitError);
			expect(error).toMatchObject({ limit: "entries", max: 5, line: 6 });
		}
		const engine = new Engine({ storage, agentDir: dir, limits: { maxEntries: 5 } });
		await expect(engine.open(path)).rejects.toBeInstanceOf(SessionLimitError);
		await expect(engine.forkFrom(path, "/q", join(dir, "fork-many"))).rejects.toBeInstanceOf(SessionLimitError);
		const { engine: remote, terminate } = await startEngineWorker({
			storage: "node",
			agentDir: dir,
			limits: { maxEntries: 5 },
		});
		try {
			await expect(remote.open(path)).rejects.toBeInstanceOf(SessionLimitError);
		} finally {
			await terminate();
		}
		// The refused opens let go of the lock: a writer can open it.
		const writer = await Session.open(storage, path);
		await writer.close();
	});
});
