/**
 * Sessions on storage, run on both adapters: lazy creation, reopening, migration with backup, damaged
 * files, locks, durability modes, forks, discovery and listing.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import {
	Engine,
	findById,
	findMostRecentSession,
	HeaderTooLongError,
	InvalidArgumentError,
	InvalidSessionPathError,
	listAllSessions,
	listSessions,
	runTask,
	Session,
	SessionClosedError,
	SessionFormatError,
	SessionLockedError,
	SessionReadOnlyError,
	type Storage,
	StorageError,
} from "../src/index.ts";
import { readSessionHeader } from "../src/load.ts";
import { FIXTURES_DIR } from "./fixtures/generate.ts";
import { describeWithCorpus, diskCorpus } from "./support/corpus.ts";
import { assistantMessage, userMessage } from "./support/messages.ts";

const corpus = diskCorpus();
const temporary: string[] = [];
afterAll(() => {
	for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

const adapters: [string, () => Promise<{ storage: Storage; root: string }>][] = [
	[
		"node",
		async () => {
			const root = mkdtempSync(join(tmpdir(), "session-test-"));
			temporary.push(root);
			return { storage: createNodeStorage(), root };
		},
	],
	["zenfs", async () => ({ storage: await createMemoryStorage(), root: "/data" })],
];

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const user = (content: string) => userMessage(content, 1);
const assistant = (text: string) => assistantMessage(text, { timestamp: 2 });
const header = (id = "s1", cwd = "/p") =>
	`{"type":"session","version":3,"id":"${id}","timestamp":"2025-01-01T00:00:00.000Z","cwd":"${cwd}"}`;
const custom = (id: string, parentId: string | null) =>
	`{"type":"custom","customType":"x","id":"${id}","parentId":${parentId === null ? null : `"${parentId}"`},"timestamp":"2025-01-01T00:00:01.000Z"}`;

/** What a call ends with, its rejection handled at once: the error, or its result as text. */
const outcome = (call: Promise<unknown>): Promise<unknown> => call.then(String, (error: unknown) => error);

/** `storage`, except that its first exclusive create of a session file fails, leaving nothing (a full disk). */
function firstCreateFails(base: Storage): Storage {
	let failures = 1;
	return {
		...base,
		createExclusive: async (target, chunks, durable) => {
			if (target.endsWith(".jsonl") && failures-- > 0) throw new StorageError("io", target, "io: no space left");
			return base.createExclusive(target, chunks, durable);
		},
	};
}

async function readText(storage: Storage, path: string): Promise<string> {
	const stat = await storage.stat(path);
	return stat ? decoder.decode(await storage.readRange(path, 0, stat.size)) : "";
}
async function write(storage: Storage, path: string, content: string | Uint8Array): Promise<void> {
	await storage.mkdir(path.slice(0, path.lastIndexOf("/")));
	await storage.replace(path, [typeof content === "string" ? encoder.encode(content) : content]);
}

/** Wrap a storage to record the write calls it receives for session files (lock files aside). */
function recording(storage: Storage): { storage: Storage; writes: { op: string; durable: boolean; bytes: number }[] } {
	const writes: { op: string; durable: boolean; bytes: number }[] = [];
	return {
		writes,
		storage: {
			...storage,
			append: async (path, data, durable, atSize) => {
				if (path.endsWith(".jsonl")) writes.push({ op: "append", durable, bytes: data.length });
				return storage.append(path, data, durable, atSize);
			},
			createExclusive: async (path, chunks, durable) => {
				const all = [...chunks]; // produced lazily: read them once, then pass them on
				if (path.endsWith(".jsonl"))
					writes.push({ op: "createExclusive", durable, bytes: all.reduce((n, c) => n + c.length, 0) });
				return storage.createExclusive(path, all, durable);
			},
		},
	};
}

describe.each(adapters)("sessions on %s storage", (_name, setup) => {
	it("creates no file until the first user or assistant message (pi 1.6), then writes everything with one exclusive create", async () => {
		const { storage: base, root } = await setup();
		const { storage, writes } = recording(base);
		const session = await Session.create(storage, { cwd: "/p", sessionDir: `${root}/s` });
		expect(session.path).toMatch(/\/s\/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl$/);
		await session.appendModelChange("anthropic", "claude");
		await session.appendMessage({ role: "system", content: "You are terse.", timestamp: 1 });
		expect(await storage.stat(session.path as string)).toBeNull();
		await session.appendMessage(user("hi"));
		expect(writes.map((w) => w.op)).toEqual(["createExclusive"]);
		await session.appendMessage(assistant("hello"));
		expect(writes.map((w) => w.op)).toEqual(["createExclusive", "append"]);
		const lines = (await readText(storage, session.path as string)).split("\n");
		expect(lines.map((l) => (l ? JSON.parse(l).type : ""))).toEqual([
			"session",
			"model_change",
			"message",
			"message",
			"message",
			"",
		]);
		await session.close();
	});

	it("reopens with the same tree, leaf and context, and appends at the end", async () => {
		const { storage, root } = await setup();
		const session = await Session.create(storage, { cwd: "/p", sessionDir: root });
		const first = await session.appendMessage(user("a"));
		await session.appendMessage(assistant("b"));
		await session.appendLabelChange(first, "start");
		await session.appendSessionInfo("Named");
		session.branch(first);
		const side = await session.appendMessage(user("side"));
		await session.close();
		const reopened = await Session.open(storage, session.path as string);
		expect(reopened.tree.getEntries()).toEqual(session.tree.getEntries());
		expect(reopened.tree.getLeafId()).toBe(side); // the last entry, as in pi
		expect(reopened.tree.getLabel(first)).toBe("start");
		expect(reopened.tree.getSessionName()).toBe("Named");
		expect(reopened.tree.buildSessionContext()).toEqual(session.tree.buildSessionContext());
		expect(reopened.report).toMatchObject({ diagnostics: [], repairedLastLine: false, created: false });
		const next = await reopened.appendMessage(assistant("c"));
		expect(JSON.parse((await readText(storage, session.path as string)).trim().split("\n").pop() as string).id).toBe(
			next,
		);
		await reopened.close();
	});

	/** Migrate a v1 file's bytes: atomically, the original kept as a backup, idempotent. */
	const migratesV1 = async (original: Buffer) => {
		const { storage, root } = await setup();
		const path = `${root}/v1.jsonl`;
		await write(storage, path, original);
		const session = await Session.open(storage, path);
		expect(session.report.migratedFrom).toEqual({ version: 1, backupPath: `${path}.v1.bak` });
		const backup = await storage.readRange(`${path}.v1.bak`, 0, original.length + 1);
		expect(Buffer.from(backup).equals(original)).toBe(true);
		const migrated = await readText(storage, path);
		expect(JSON.parse(migrated.split("\n")[0] as string)).toMatchObject({ type: "session", version: 3 });
		expect(migrated.split("\n").length).toBe(original.toString().trimEnd().split("\n").length + 1);
		expect((await storage.list(root)).map((e) => e.name).sort()).toEqual([
			"v1.jsonl",
			"v1.jsonl.lock",
			"v1.jsonl.v1.bak",
		]);
		await session.close();
		const again = await Session.open(storage, path);
		expect(again.report.migratedFrom).toBeUndefined();
		expect(again.tree.getEntries()).toEqual(session.tree.getEntries());
		await again.close();
	};

	it("after a failed write, the engine's close reports it once, releases the lock and forgets the handle", async () => {
		const { storage: base, root } = await setup();
		let failAppends = false;
		const storage: Storage = {
			...base,
			append: async (path, data, durable, atSize) => {
				if (failAppends && path.endsWith(".jsonl")) throw new StorageError("io", path, "io: no space left");
				return base.append(path, data, durable, atSize);
			},
		};
		const engine = new Engine({ storage, agentDir: `${root}/agent` });
		const { handle, path } = await engine.create({ cwd: "/p", sessionDir: root });
		await engine.appendMessage(handle, user("written"));
		failAppends = true;
		await expect(engine.appendMessage(handle, assistant("lost"))).rejects.toBeInstanceOf(StorageError);
		await expect(engine.close(handle)).rejects.toBeInstanceOf(StorageError); // the failure, reported
		expect(await engine.openHandles()).toEqual([]); // and the handle is gone: no close that rejects forever
		await engine.closeAll(); // nothing left to fail
		expect(await base.stat(`${path}.lock`)).toBeNull();
		failAppends = false;
		const reopened = await engine.open(path as string); // the lock was released
		expect((await engine.summary(reopened.handle)).entryCount).toBe(1);
		await engine.close(reopened.handle);
	});

	it("migrates a v1 file atomically and keeps the original as a backup", async () => {
		await migratesV1(readFileSync(new URL("v1-linear.jsonl", FIXTURES_DIR)));
	});

	describeWithCorpus({ describe, it, describeSkip: describe.skip }, corpus, "the real pi corpus", () => {
		it("migrates its large v1 file atomically and keeps the original as a backup", async () => {
			await migratesV1(Buffer.from(corpus.readSync("pi-v1-large-session.jsonl")));
		});
	});

	it("keeps skipped lines in a migration rewrite, and never overwrites an earlier backup", async () => {
		const { storage, root } = await setup();
		const path = `${root}/v2.jsonl`;
		const v2 = `${header().replace('"version":3', '"version":2')}\n${custom("aaaaaaaa", null)}\nnot json at all\n${custom("bbbbbbbb", "aaaaaaaa")}\n`;
		await write(storage, path, v2);
		await write(storage, `${path}.v2.bak`, "an older backup");
		const session = await Session.open(storage, path);
		expect(session.report.migratedFrom?.backupPath).toBe(`${path}.v2.1.bak`);
		expect(await readText(storage, `${path}.v2.bak`)).toBe("an older backup");
		expect((await readText(storage, path)).split("\n")[2]).toBe("not json at all");
		expect(session.report.diagnostics.map((d) => [d.reason, d.line])).toEqual([["invalid-json", 3]]);
		await session.close();
	});

	it("a migration while another program appends (pi takes no lock) loses nothing: it reads again", async () => {
		const { storage: base, root } = await setup();
		const path = `${root}/v2-busy.jsonl`;
		const v2 = `${header().replace('"version":3', '"version":2')}\n${custom("aaaaaaaa", null)}\n`;
		const late = `${custom("bbbbbbbb", "aaaaaaaa")}\n`;
		let appendedMeanwhile = false;
		const appendLate = async () => {
			if (appendedMeanwhile) return;
			appendedMeanwhile = true;
			await base.append(path, encoder.encode(late), false);
		};
		const storage: Storage = {
			...base,
			// With hard links, "pi" appends just before the rewrite replaces the file (after every check); without,
			// while the backup copy is being written.
			replace: async (target, chunks) => {
				if (target === path) await appendLate();
				return base.replace(target, chunks);
			},
			createExclusive: async (target, chunks, durable) => {
				if (target.includes(".bak.")) await appendLate();
				return base.createExclusive(target, chunks, durable);
			},
		};
		await write(base, path, v2);
		const session = await Session.open(storage, path);
		expect(appendedMeanwhile).toBe(true);
		expect(session.tree.getEntries().map((entry) => entry.id)).toEqual(["aaaaaaaa", "bbbbbbbb"]);
		expect(session.report.migratedFrom).toEqual({ version: 2, backupPath: `${path}.v2.bak` });
		expect(await readText(base, `${path}.v2.bak`)).toBe(v2 + late);
		const lines = (await readText(base, path)).split("\n").filter(Boolean);
		expect(lines.map((line) => JSON.parse(line).id)).toEqual([JSON.parse(header()).id, "aaaaaaaa", "bbbbbbbb"]);
		expect((await base.list(root)).map((e) => e.name).sort()).toEqual([
			"v2-busy.jsonl",
			"v2-busy.jsonl.lock",
			"v2-busy.jsonl.v2.bak",
		]);
		await session.close();
	});

	it("a migration whose rewrite fails leaves the original as it was, and no backup", async () => {
		const { storage: base, root } = await setup();
		const path = `${root}/v2-rewrite-fails.jsonl`;
		const v2 = `${header().replace('"version":3', '"version":2')}\n${custom("aaaaaaaa", null)}\n`;
		await write(base, path, v2);
		const storage: Storage = {
			...base,
			replace: async (target) => {
				throw new StorageError("io", target, "io: no space left");
			},
		};
		await expect(Session.open(storage, path)).rejects.toBeInstanceOf(StorageError);
		expect(await readText(base, path)).toBe(v2);
		expect((await base.list(root)).map((e) => e.name)).toEqual(["v2-rewrite-fails.jsonl"]);
	});

	it("a backup copy (no hard links) that fails midway leaves no partial .bak and the original as it was", async () => {
		const { storage: base, root } = await setup();
		const path = `${root}/v2-full-disk.jsonl`;
		const v2 = `${header().replace('"version":3', '"version":2')}\n${custom("aaaaaaaa", null)}\n`;
		await write(base, path, v2);
		const storage: Storage = {
			...base,
			link: async (from) => {
				throw new StorageError("unsupported", from, "unsupported: no hard links");
			},
			append: async (target, data, durable, atSize) => {
				if (target.includes(".bak.")) throw new StorageError("io", target, "io: no space left");
				return base.append(target, data, durable, atSize);
			},
		};
		await expect(Session.open(storage, path)).rejects.toBeInstanceOf(StorageError);
		expect(await readText(base, path)).toBe(v2);
		expect((await base.list(root)).map((e) => e.name)).toEqual(["v2-full-disk.jsonl"]);
		const session = await Session.open(base, path); // and it can be opened (and migrated) afterwards
		expect(session.report.migratedFrom?.backupPath).toBe(`${path}.v2.bak`);
		await session.close();
	});

	it("a failure to create the lock (out of file descriptors) leaves another writer's live lock alone", async () => {
		const { storage: base, root } = await setup();
		const path = `${root}/emfile.jsonl`;
		await write(base, path, `${header()}\n`);
		const other = await Session.open(base, path); // the live writer
		const lockBefore = await readText(base, `${path}.lock`);
		const storage: Storage = {
			...base,
			createExclusive: async (target, chunks, durable) => {
				if (target.endsWith(".lock")) throw new StorageError("io", target, "io: EMFILE: too many open files");
				return base.createExclusive(target, chunks, durable);
			},
		};
		await expect(Session.open(storage, path)).rejects.toThrow(/EMFILE/);
		expect(await readText(base, `${path}.lock`)).toBe(lockBefore);
		await expect(Session.open(base, path)).rejects.toBeInstanceOf(SessionLockedError);
		await other.close();
	});

	it("a new session whose file cannot be created at first keeps what it acknowledged and creates it later", async () => {
		const { storage: base, root } = await setup();
		const storage = firstCreateFails(base);
		const session = await Session.create(storage, { cwd: "/p", sessionDir: root });
		const model = await session.appendModelChange("anthropic", "claude"); // acknowledged: no file yet, as pi
		await expect(session.appendMessage(userMessage("first", 1))).rejects.toThrow(/no space left/);
		expect(await base.stat(session.path as string)).toBeNull();
		const second = await session.appendMessage(userMessage("second", 2)); // the next write creates the file
		await session.close();
		const ids = (await readText(base, session.path as string))
			.split("\n")
			.filter(Boolean)
			.slice(1)
			.map((line) => JSON.parse(line).id);
		expect(ids[0]).toBe(model);
		expect(ids.at(-1)).toBe(second);
		expect(ids).toHaveLength(3); // the message whose write was refused is in the session, and written with it
	});

	it("close() writes a new session whose first create failed, or reports why not", async () => {
		const { storage: base, root } = await setup();
		const storage = firstCreateFails(base);
		const session = await Session.create(storage, { cwd: "/p", sessionDir: root });
		await expect(session.appendMessage(userMessage("only", 1))).rejects.toThrow(/no space left/);
		await session.close();
		const lines = (await readText(base, session.path as string)).split("\n").filter(Boolean);
		expect(lines).toHaveLength(2);
	});

	it("repairs a torn last line with a newline so the next append stands on its own line", async () => {
		const { storage, root } = await setup();
		const path = `${root}/torn.jsonl`;
		await write(storage, path, `${header()}\n${custom("aaaaaaaa", null)}\n{"type":"custom","id":"bb`);
		const session = await Session.open(storage, path);
		expect(session.report.repairedLastLine).toBe(true);
		expect(session.report.diagnostics.map((d) => [d.reason, d.line])).toEqual([["torn-last-line", 3]]);
		const id = await session.appendCustomEntry("after");
		await session.close();
		const text = await readText(storage, path);
		expect(text.endsWith("\n")).toBe(true);
		const reopened = await Session.open(storage, path, { readOnly: true });
		expect(reopened.tree.getEntry(id)?.parentId).toBe("aaaaaaaa");
		expect(reopened.report.diagnostics.map((d) => [d.reason, d.line])).toEqual([["invalid-json", 3]]);
	});

	it("terminates a valid last line that lacks a newline", async () => {
		const { storage, root } = await setup();
		const path = `${root}/unterminated.jsonl`;
		await write(storage, path, `${header()}\n${custom("aaaaaaaa", null)}`);
		const session = await Session.open(storage, path);
		expect([session.report.repairedLastLine, session.report.diagnostics, session.tree.size]).toEqual([true, [], 1]);
		await session.appendCustomEntry("next");
		await session.close();
		expect(
			(await readText(storage, path))
				.split("\n")
				.filter(Boolean)
				.map((l) => JSON.parse(l).type),
		).toEqual(["session", "custom", "custom"]);
	});

	it.each([
		[
			"garbage line in the middle",
			`${header()}\n${custom("aaaaaaaa", null)}\n<<garbage>>\n${custom("bbbbbbbb", "aaaaaaaa")}\n`,
			[["invalid-json", 3]],
			2,
		],
		["CRLF line ends", `${header()}\r\n${custom("aaaaaaaa", null)}\r\n`, [], 1],
		["a BOM", `\uFEFF${header()}\n${custom("aaaaaaaa", null)}\n`, [], 1],
		["header only", `${header()}\n`, [], 0],
		[
			"a parentId cycle",
			`${header()}\n${custom("aaaaaaaa", "bbbbbbbb")}\n${custom("bbbbbbbb", "aaaaaaaa")}\n`,
			[["forward-parent", 2]],
			2,
		],
		[
			"a duplicate id",
			`${header()}\n${custom("aaaaaaaa", null)}\n${custom("aaaaaaaa", null)}\n`,
			[["duplicate-id", 3]],
			2,
		],
	])("opens a file with %s and reports what it skipped", async (_case, content, reasons, size) => {
		const { storage, root } = await setup();
		const path = `${root}/case.jsonl`;
		await write(storage, path, content);
		const session = await Session.open(storage, path);
		expect(session.report.diagnostics.map((d) => [d.reason, d.line])).toEqual(reasons);
		expect(session.tree.size).toBe(size);
		expect(await readText(storage, path)).toBe(content); // nothing to repair: untouched
		await session.close();
	});

	it("reports invalid UTF-8 lines (read with U+FFFD and kept, as pi 1.6 reads them)", async () => {
		const { storage, root } = await setup();
		const path = `${root}/utf8.jsonl`;
		const bytes = new Uint8Array([
			...encoder.encode(`${header()}\n{"type":"custom","id":"aaaaaaaa","parentId":null,"x":"`),
			0xff,
			0xfe,
			...encoder.encode('"}\n'),
		]);
		await write(storage, path, bytes);
		const session = await Session.open(storage, path);
		expect(session.report.diagnostics.map((d) => [d.reason, d.line])).toEqual([["invalid-utf8", 2]]);
		expect(session.tree.getEntry("aaaaaaaa")).toMatchObject({ x: "\uFFFD\uFFFD" });
		await session.close();
	});

	it("gives an empty file a fresh header", async () => {
		const { storage, root } = await setup();
		const path = `${root}/empty.jsonl`;
		await write(storage, path, "");
		const session = await Session.open(storage, path, { cwd: "/work" });
		expect(session.report.wroteHeader).toBe(true);
		expect(JSON.parse(await readText(storage, path))).toMatchObject({ type: "session", version: 3, cwd: "/work" });
		await session.appendMessage(user("first"));
		expect((await readText(storage, path)).trim().split("\n")).toHaveLength(2); // an existing file is appended to at once
		await session.close();
	});

	it.each([
		["a foreign file", "hello, this is my diary\nline two\n"],
		["JSON that is not a session", '{"type":"message","id":"a"}\n'],
		["a torn header", '{"type":"session","id":"x","timest'],
	])("refuses %s with a SessionFormatError naming file and line, and leaves it untouched", async (_case, content) => {
		const { storage, root } = await setup();
		const path = `${root}/foreign.jsonl`;
		await write(storage, path, content);
		const error = await Session.open(storage, path).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(SessionFormatError);
		expect(error).toMatchObject({ file: path, line: 1 });
		expect(await readText(storage, path)).toBe(content);
		expect(await storage.stat(`${path}.lock`)).toBeNull(); // the lock taken for opening was released
	});

	it("header discovery reads at most 1 MiB; a longer header line is named as such and a full open still works", async () => {
		const { storage, root } = await setup();
		const path = `${root}/big-header.jsonl`;
		const big = `{"type":"session","version":3,"id":"big","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","pad":"${"x".repeat(2 << 20)}"}`;
		await write(storage, path, `${big}\n${custom("aaaaaaaa", null)}\n`);
		await expect(runTask(readSessionHeader(path), storage)).rejects.toBeInstanceOf(HeaderTooLongError);
		expect(await runTask(readSessionHeader(`${root}/big-header.jsonl`, 4 << 20), storage)).toMatchObject({ id: "big" });
		const session = await Session.open(storage, path);
		expect([session.tree.getSessionId(), session.tree.size]).toEqual(["big", 1]);
		await session.close();
		expect(await runTask(findMostRecentSession(root), storage)).toBe(path);
	});

	it("blank and unparsable lines before the header are skipped, by discovery and by opening (as pi 1.6)", async () => {
		const { storage, root } = await setup();
		const path = `${root}/garbage-first.jsonl`;
		await write(storage, path, `\nnot json\n{"type":"sess\n${header("late")}\n${custom("aaaaaaaa", null)}\n`);
		expect(await runTask(readSessionHeader(path), storage)).toMatchObject({ id: "late" });
		const session = await Session.open(storage, path, { readOnly: true });
		expect([session.tree.getSessionId(), session.tree.size]).toEqual(["late", 1]);
		expect(session.report.diagnostics.map((d) => [d.line, d.reason])).toEqual([
			[2, "invalid-json"],
			[3, "invalid-json"],
		]);
		// A first record that is not a header is no session, for both.
		const foreign = `${root}/foreign-first.jsonl`;
		await write(storage, foreign, `not json\n${custom("aaaaaaaa", null)}\n${header("x")}\n`);
		expect(await runTask(readSessionHeader(foreign), storage)).toBeNull();
		await expect(Session.open(storage, foreign, { readOnly: true })).rejects.toBeInstanceOf(SessionFormatError);
	});

	it("one writer per file: a second writer gets SessionLockedError, a reader may open read-only", async () => {
		const { storage, root } = await setup();
		const path = `${root}/locked.jsonl`;
		await write(storage, path, `${header()}\n`);
		const writer = await Session.open(storage, path);
		const error = await Session.open(storage, path).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(SessionLockedError);
		expect((error as SessionLockedError).owner?.token).toBe(await lockToken(storage, path));
		const reader = await Session.open(storage, path, { readOnly: true });
		await expect(reader.appendMessage(user("no"))).rejects.toBeInstanceOf(SessionReadOnlyError);
		expect(reader.tree.size).toBe(0);
		await writer.close();
		expect(await storage.stat(`${path}.lock`)).toBeNull();
		const next = await Session.open(storage, path);
		await next.close();
	});

	it("durability fsync: one write per append, each fsynced", async () => {
		const { storage: base, root } = await setup();
		const { storage, writes } = recording(base);
		const session = await Session.create(storage, { cwd: "/p", sessionDir: root, durability: "fsync" });
		await session.appendMessage(assistant("a"));
		await Promise.all(Array.from({ length: 20 }, (_, n) => session.appendCustomEntry("x", { n })));
		expect(writes).toHaveLength(21);
		expect(writes.every((w) => w.durable)).toBe(true);
		expect(session.tree.size).toBe(21);
		await session.close();
	});

	it.each([
		["none", false],
		["group", true],
	] as const)(
		"durability %s: appends issued together share one write (durable = %s), in order",
		async (durability, durable) => {
			const { storage: base, root } = await setup();
			const { storage, writes } = recording(base);
			const session = await Session.create(storage, { cwd: "/p", sessionDir: root, durability });
			await session.appendMessage(assistant("a"));
			const ids = await Promise.all(Array.from({ length: 200 }, (_, n) => session.appendCustomEntry("x", { n })));
			expect(writes.length).toBeLessThanOrEqual(3);
			expect(writes.every((w) => w.durable === durable)).toBe(true);
			const fileIds = (await readText(storage, session.path as string))
				.trim()
				.split("\n")
				.slice(2)
				.map((l) => JSON.parse(l).id);
			expect(fileIds).toEqual(ids);
			// An append issued on its own is written on its own.
			await session.appendCustomEntry("alone");
			expect(writes.at(-1)?.bytes).toBeLessThan(200);
			await session.close();
		},
	);

	it("createBranchedSession writes the path with its labels to a new file and moves the lock there", async () => {
		const { storage, root } = await setup();
		const session = await Session.create(storage, { cwd: "/p", sessionDir: root });
		const a = await session.appendMessage(user("a"));
		const b = await session.appendMessage(assistant("b"));
		await session.appendLabelChange(a, "keep");
		await session.appendMessage(user("dropped"));
		const source = session.path as string;
		const forked = await session.createBranchedSession(b);
		expect(forked).not.toBe(source);
		expect(session.header.parentSession).toBe(source);
		const lines = (await readText(storage, forked as string))
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l));
		expect(lines.map((l) => l.type)).toEqual(["session", "message", "message", "label"]);
		expect(lines[3]).toMatchObject({ targetId: a, label: "keep", parentId: b });
		const sourceWriter = await Session.open(storage, source); // the source's lock was released
		await sourceWriter.close();
		await session.close();
	});

	it.each(["none", "fsync", "group"] as const)(
		"createBranchedSession switches at once (%s): appends made before it go to the old file, after it to the new",
		async (durability) => {
			const { storage, root } = await setup();
			const session = await Session.create(storage, { cwd: "/p", sessionDir: root, durability });
			const a = await session.appendMessage(user("a"));
			const b = await session.appendMessage(assistant("b"));
			const source = session.path as string;
			// Nothing awaited: one append before the branch, one right after it.
			const before = session.appendMessage(user("before the branch"));
			const branching = session.createBranchedSession(b);
			const after = session.appendMessage(user("after the branch"));
			const [beforeId, forked, afterId] = await Promise.all([before, branching, after]);
			const idsIn = async (path: string) =>
				(await readText(storage, path))
					.trim()
					.split("\n")
					.map((line) => JSON.parse(line).id)
					.slice(1);
			expect(await idsIn(source)).toEqual([a, b, beforeId]);
			expect(await idsIn(forked as string)).toEqual([a, b, afterId]);
			expect(session.tree.getBranch().map((entry) => entry.id)).toEqual([a, b, afterId]);
			await session.close();
			const reopened = await Session.open(storage, forked as string);
			expect(reopened.tree.getLeafId()).toBe(afterId);
			await reopened.close();
			await (await Session.open(storage, source)).close(); // both locks were released
		},
	);

	it("an entry that cannot be written as JSON is refused alone; the session goes on", async () => {
		const { storage, root } = await setup();
		const session = await Session.create(storage, { cwd: "/p", sessionDir: root });
		const a = session.appendMessage(user("a"));
		const bad = session.appendCustomEntry("x", { big: 1n });
		const b = session.appendMessage(assistant("b"));
		const cyclic: Record<string, unknown> = {};
		cyclic.self = cyclic;
		const alsoBad = session.appendCustomEntry("x", cyclic);
		const c = session.appendMessage(user("c"));
		const refused = await bad.then(
			() => undefined,
			(error: Error) => error,
		);
		expect(refused).toBeInstanceOf(InvalidArgumentError);
		expect(refused?.message).toMatch(/cannot append this custom entry: it cannot be written as JSON/);
		await expect(alsoBad).rejects.toBeInstanceOf(InvalidArgumentError);
		const ids = await Promise.all([a, b, c]);
		expect(session.tree.getBranch().map((entry) => entry.id)).toEqual(ids);
		await session.close();
		const reopened = await Session.open(storage, session.path as string, { readOnly: true });
		expect(reopened.tree.getEntries().map((entry) => entry.id)).toEqual(ids);
		expect(reopened.report.diagnostics).toEqual([]);
	});

	it("a closed session takes no more changes, even those made while it closes", async () => {
		const { storage, root } = await setup();
		const session = await Session.create(storage, { cwd: "/p", sessionDir: root });
		const ids = [await session.appendMessage(user("a")), await session.appendMessage(assistant("b"))];
		const closing = session.close();
		const during = outcome(session.appendMessage(user("during close")));
		await closing;
		const after = outcome(session.appendMessage(user("after close")));
		expect(await during).toBeInstanceOf(SessionClosedError);
		expect(await after).toBeInstanceOf(SessionClosedError);
		await expect(session.createBranchedSession(ids[0] as string)).rejects.toBeInstanceOf(SessionClosedError);
		const reopened = await Session.open(storage, session.path as string);
		expect(reopened.tree.getEntries().map((entry) => entry.id)).toEqual(ids);
		await reopened.close();
	});

	it("a branch whose earlier write failed: close still releases the old file's lock", async () => {
		const { storage: base, root } = await setup();
		let failNext = false;
		const storage: Storage = {
			...base,
			append: async (path, data, durable, atSize) => {
				if (failNext && path.endsWith(".jsonl")) {
					failNext = false;
					throw new StorageError("io", path, "io: injected");
				}
				return base.append(path, data, durable, atSize);
			},
		};
		const session = await Session.create(storage, { cwd: "/p", sessionDir: root });
		await session.appendMessage(user("a"));
		const b = await session.appendMessage(assistant("b"));
		const source = session.path as string;
		failNext = true;
		const failing = outcome(session.appendMessage(user("fails")));
		const branching = outcome(session.createBranchedSession(b));
		expect(await failing).toBeInstanceOf(StorageError);
		expect(await branching).toBeInstanceOf(StorageError);
		await session.close().catch(() => undefined); // reports the failed write
		const reopened = await Session.open(storage, source); // not SessionLockedError
		await reopened.close();
	});

	it("closing releases the lock only once its file is gone: an opener meanwhile is refused, not let in", async () => {
		const { storage: base, root } = await setup();
		let slowRemove = false;
		const storage: Storage = {
			...base,
			remove: async (path) => {
				if (slowRemove && path.endsWith(".lock")) await new Promise((resolve) => setTimeout(resolve, 50));
				return base.remove(path);
			},
		};
		const first = await Session.create(storage, { cwd: "/p", sessionDir: root });
		await first.appendMessage(user("a"));
		await first.appendMessage(assistant("b"));
		const path = first.path as string;
		slowRemove = true;
		const closing = first.close();
		await new Promise((resolve) => setTimeout(resolve, 5));
		await expect(Session.open(storage, path)).rejects.toBeInstanceOf(SessionLockedError);
		await closing;
		slowRemove = false;
		const second = await Session.open(storage, path);
		await expect(Session.open(storage, path)).rejects.toBeInstanceOf(SessionLockedError);
		await second.close();
	});

	it("forkFrom copies the whole history into another project's directory", async () => {
		const { storage, root } = await setup();
		const session = await Session.create(storage, { cwd: "/p", sessionDir: `${root}/a` });
		await session.appendMessage(user("a"));
		await session.appendMessage(assistant("b"));
		await session.close();
		const fork = await Session.forkFrom(storage, session.path as string, "/q", `${root}/b`);
		expect(fork.header).toMatchObject({ cwd: "/q", parentSession: session.path });
		expect(fork.tree.getEntries()).toEqual(session.tree.getEntries());
		expect(fork.path?.startsWith(`${root}/b/`)).toBe(true);
		await fork.close();
	});

	it("rejects session ids that could escape the sessions directory", async () => {
		const { storage, root } = await setup();
		for (const id of ["../x", "a/b", "..", ".hidden", "", "a\\b"]) {
			await expect(Session.create(storage, { cwd: "/p", sessionDir: root, id })).rejects.toBeInstanceOf(
				InvalidSessionPathError,
			);
			await expect(runTask(findById(root, id), storage)).rejects.toBeInstanceOf(InvalidSessionPathError);
		}
	});

	it("finds the most recent session (optionally by cwd) and sessions by id; lists with progress", async () => {
		const { storage, root } = await setup();
		const sessionsRoot = `${root}/sessions`;
		const made: Session[] = [];
		for (const [cwd, text] of [
			["/p", "first question"],
			["/other", "elsewhere"],
			["/p", "second question"],
		] as const) {
			const session = await Session.create(storage, { cwd, sessionDir: `${sessionsRoot}/--p--` });
			await session.appendMessage(user(text));
			await session.appendMessage(assistant("answer"));
			await session.appendSessionInfo(text === "elsewhere" ? "Other" : "");
			await session.close();
			made.push(session);
			await new Promise((resolve) => setTimeout(resolve, 15)); // distinct modification times
		}
		const dir = `${sessionsRoot}/--p--`;
		expect(await runTask(findMostRecentSession(dir), storage)).toBe(made[2]?.path);
		expect(await runTask(findMostRecentSession(dir, "/other"), storage)).toBe(made[1]?.path);
		expect(await runTask(findMostRecentSession(`${root}/none`), storage)).toBeNull();
		expect(await runTask(findById(sessionsRoot, made[1]?.tree.getSessionId() as string), storage)).toBe(made[1]?.path);
		expect(await runTask(findById(sessionsRoot, "01234567-89ab-7def-8123-456789abcdef"), storage)).toBeNull();

		const progress: [number, number][] = [];
		const infos = await listSessions(storage, dir, { onProgress: (loaded, total) => progress.push([loaded, total]) });
		expect(infos.map((i) => i.path).sort()).toEqual(made.map((s) => s.path).sort());
		expect(progress.at(-1)).toEqual([3, 3]);
		const other = infos.find((i) => i.cwd === "/other");
		expect(other).toMatchObject({
			name: "Other",
			messageCount: 2,
			firstMessage: "elsewhere",
			allMessagesText: "elsewhere answer",
		});
		expect((await listAllSessions(storage, sessionsRoot)).length).toBe(3);
	});

	it("listing: an odd message entry, a file where a project directory should be, any concurrency", async () => {
		const { storage, root } = await setup();
		const sessionsRoot = `${root}/sessions`;
		const odd = `${sessionsRoot}/--p--/2025-01-01T00-00-00-000Z_odd.jsonl`;
		const message = (id: string, parent: string | null, body: string) =>
			`{"type":"message","id":"${id}","parentId":${parent ? `"${parent}"` : null},"timestamp":"2025-01-01T00:00:01.000Z","message":${body}}`;
		await write(
			storage,
			odd,
			`${[header("odd"), message("aaaaaaaa", null, '"not an object"'), message("bbbbbbbb", "aaaaaaaa", JSON.stringify(user("hi")))].join("\n")}\n`,
		);
		await write(storage, `${sessionsRoot}/--not-a-directory--`, "plain file\n");
		for (const concurrency of [undefined, 0, 0.5, Number.NaN, -1]) {
			const infos = await listAllSessions(storage, sessionsRoot, { concurrency });
			expect(infos.map((info) => [info.path, info.messageCount, info.firstMessage])).toEqual([[odd, 2, "hi"]]);
		}
	});

	it('a header whose version is the text "3" is read as version 3, as pi does: no migration', async () => {
		const { storage, root } = await setup();
		const path = `${root}/v.jsonl`;
		const content = `${header("v").replace('"version":3', '"version":"3"')}\n${custom("aaaaaaaa", null)}\n${custom("bbbbbbbb", null)}\n`;
		await write(storage, path, content);
		const session = await Session.open(storage, path);
		expect(session.report.migratedFrom).toBeUndefined();
		expect(session.tree.getTree().map((node) => node.entry.id)).toEqual(["aaaaaaaa", "bbbbbbbb"]); // two roots kept
		await session.close();
		expect(await readText(storage, path)).toBe(content);
	});

	it("listing can be cancelled", async () => {
		const { storage, root } = await setup();
		const session = await Session.create(storage, { cwd: "/p", sessionDir: root });
		await session.appendMessage(assistant("a"));
		await session.close();
		const controller = new AbortController();
		controller.abort();
		await expect(listSessions(storage, root, { signal: controller.signal })).rejects.toThrow();
	});
});

async function lockToken(storage: Storage, path: string): Promise<string> {
	return JSON.parse(await readText(storage, `${path}.lock`)).token;
}

it("on disk, a session file that is a symbolic link is listed and found (as pi does)", async () => {
	const dir = mkdtempSync(join(tmpdir(), "session-symlink-"));
	try {
		const storage = createNodeStorage();
		const real = await Session.create(storage, { cwd: "/p", sessionDir: `${dir}/elsewhere` });
		await real.appendMessage(user("linked"));
		await real.appendMessage(assistant("answer"));
		await real.close();
		const link = `${dir}/sessions/2030-01-01T00-00-00-000Z_linked.jsonl`;
		mkdirSync(`${dir}/sessions`);
		symlinkSync(real.path as string, link);
		expect((await listSessions(storage, `${dir}/sessions`)).map((info) => info.path)).toEqual([link]);
		expect(await runTask(findMostRecentSession(`${dir}/sessions`), storage)).toBe(link);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

it("on disk, a migrated file keeps its permissions (a private session stays private)", async () => {
	const dir = mkdtempSync(join(tmpdir(), "session-mode-"));
	try {
		const path = join(dir, "private.jsonl");
		writeFileSync(path, `${header().replace('"version":3', '"version":2')}\n${custom("aaaaaaaa", null)}\n`);
		chmodSync(path, 0o600);
		const session = await Session.open(createNodeStorage(), path);
		expect(session.report.migratedFrom?.version).toBe(2);
		await session.close();
		expect(statSync(path).mode & 0o777).toBe(0o600);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

// pi 1.6 opens these files, so we must; and we never write a message entry pi could not read back. (The
// same damaged files are compared with pi 1.6's own reading, leaf by leaf, in test/pi16-differential.test.ts.)
describe.each(adapters)(
	"damaged entries pi 1.6 opens, and messages we refuse to write, on %s storage",
	(_name, setup) => {
		const entry = (id: string, parentId: string | null, fields: Record<string, unknown>) =>
			JSON.stringify({ type: "message", id, parentId, timestamp: "2025-01-01T00:00:01.000Z", ...fields });
		const around = (damaged: string) =>
			`${header()}\n${entry("aaaaaaaa", null, { message: user("first") })}\n${damaged}\n${entry("cccccccc", "bbbbbbbb", { message: user("after") })}\n`;
		const info = (name: unknown) =>
			JSON.stringify({ type: "session_info", id: "bbbbbbbb", parentId: "aaaaaaaa", timestamp: "t", name });

		it.each([
			["a session_info whose name is a number", info(5), 2],
			["a session_info whose name is an object", info({ text: "x" }), 2],
			["a session_info whose name is null", info(null), 2],
			["a message entry whose message is null", entry("bbbbbbbb", "aaaaaaaa", { message: null }), 2],
			["a message entry without a message", entry("bbbbbbbb", "aaaaaaaa", {}), 2],
			["a message entry whose message is a string", entry("bbbbbbbb", "aaaaaaaa", { message: "text" }), 3],
			["a message entry whose message is a number", entry("bbbbbbbb", "aaaaaaaa", { message: 7 }), 3],
		])("opens a file with %s: the rest stays on its chain and in the context", async (_case, damaged, messages) => {
			const { storage, root } = await setup();
			const path = `${root}/damaged.jsonl`;
			const content = around(damaged);
			await write(storage, path, content);
			const session = await Session.open(storage, path);
			await session.close();
			expect(session.report.diagnostics).toEqual([]);
			expect(session.tree.getBranch().map((e) => e.id)).toEqual(["aaaaaaaa", "bbbbbbbb", "cccccccc"]);
			expect(session.tree.getSessionName()).toBeUndefined();
			// The broken entry contributes what pi gives for it (a string or number passes through), or nothing
			// where pi throws (no message at all).
			expect(session.tree.buildSessionContext().messages).toHaveLength(messages);
			expect(session.tree.buildSessionContext().messages.at(-1)).toEqual(user("after"));
			expect(await readText(storage, path)).toBe(content);
		});

		it("opens a file with bad UTF-8 bytes inside a message: read with U+FFFD, kept, reported; the rest follows", async () => {
			const { storage, root } = await setup();
			const path = `${root}/utf8-message.jsonl`;
			const [before, after] = entry("bbbbbbbb", "aaaaaaaa", { message: user("@") }).split("@") as [string, string];
			const bytes = new Uint8Array([
				...encoder.encode(`${header()}\n${entry("aaaaaaaa", null, { message: user("first") })}\n${before}`),
				0xe2,
				0x28,
				0xa1,
				...encoder.encode(`${after}\n${entry("cccccccc", "bbbbbbbb", { message: user("after") })}\n`),
			]);
			await write(storage, path, bytes);
			const session = await Session.open(storage, path);
			await session.close();
			expect(session.report.diagnostics.map((d) => [d.reason, d.line, d.byteOffset])).toEqual([
				["invalid-utf8", 3, header().length + 1 + entry("aaaaaaaa", null, { message: user("first") }).length + 1],
			]);
			expect(session.tree.getBranch().map((e) => e.id)).toEqual(["aaaaaaaa", "bbbbbbbb", "cccccccc"]);
			expect(session.tree.buildSessionContext().messages.map((m) => (m as { content: string }).content)).toEqual([
				"first",
				"\uFFFD(\uFFFD",
				"after",
			]);
			const stored = await storage.readRange(path, 0, bytes.length + 1);
			expect(stored).toEqual(bytes); // the file is left as it was
		});

		const notObjects: [string, unknown][] = [
			["null", null],
			["undefined", undefined],
			["a string", "hi"],
			["a number", 5],
			["an array", [user("x")]],
			["true", true],
			["an object written as null (its toJSON)", { role: "user", toJSON: () => null }],
		];

		it("Session.appendMessage refuses a message that is not an object, before and after the file exists; nothing is written", async () => {
			const { storage, root } = await setup();
			const session = await Session.create(storage, { cwd: "/p", sessionDir: `${root}/refused` });
			const path = session.path as string;
			for (const [what, message] of notObjects) {
				await expect(session.appendMessage(message as never), what).rejects.toBeInstanceOf(InvalidArgumentError);
			}
			expect(() => session.changeEncodedMessage("user", encoder.encode("null"))).toThrow(InvalidArgumentError);
			expect(() => session.changeEncodedMessage("user", encoder.encode('"hi"'))).toThrow(InvalidArgumentError);
			await session.flush();
			expect(session.tree.size).toBe(0);
			expect(await storage.stat(path)).toBeNull();

			const hi = await session.appendMessage(user("hi"));
			const written = await readText(storage, path);
			for (const [what, message] of notObjects) {
				await expect(session.appendMessage(message as never), what).rejects.toBeInstanceOf(InvalidArgumentError);
			}
			// A context edit's replacement without string or array content: pi's refusal, typed.
			for (const replacement of [{}, { content: 5 }, "text"]) {
				await expect(session.appendContextEdit(hi, replacement as never)).rejects.toBeInstanceOf(InvalidArgumentError);
			}
			await session.appendMessage(assistant("still fine"));
			await session.close();
			expect(session.tree.getEntries().map((e) => e.type)).toEqual(["message", "message"]);
			const lines = (await readText(storage, path)).split("\n");
			expect(lines.slice(0, 2).join("\n")).toBe(written.trimEnd());
			expect(lines.map((l) => (l ? JSON.parse(l).message?.role : ""))).toEqual([undefined, "user", "assistant", ""]);
		});

		it("the engine refuses it too, called directly or in a batch (plain or as encoded bytes); nothing is written", async () => {
			const { Engine } = await import("../src/engine.ts");
			const { runBatch } = await import("../adapters/worker-batch.ts");
			const { isBatchFailure } = await import("../adapters/worker-wire.ts");
			const { storage, root } = await setup();
			const engine = new Engine({ storage, agentDir: `${root}/agent` });
			const { handle, path } = await engine.create({ cwd: "/p" });
			for (const [what, message] of notObjects) {
				await expect(engine.appendMessage(handle, message as never), what).rejects.toBeInstanceOf(InvalidArgumentError);
			}
			expect(await storage.stat(path as string)).toBeNull();
			await engine.appendMessage(handle, user("hi"));
			const written = await readText(storage, path as string);

			const encoded = encoder.encode('null"hi"5[]');
			const results = await runBatch(
				engine,
				[
					...notObjects.map(([, message]) => ({ method: "appendMessage", args: [handle, message] })),
					{ method: "appendEncodedMessages", args: [handle, 0, [4, 8, 9, 11], ["user", "user", "user", "user"]] },
				],
				encoded,
			);
			expect(results).toHaveLength(notObjects.length + 4);
			expect(results.every((result) => isBatchFailure(result))).toBe(true);
			await engine.flush(handle);
			expect(await readText(storage, path as string)).toBe(written);
			expect(await engine.getBranch(handle)).toHaveLength(1);
			await engine.close(handle);
		});
	},
);
