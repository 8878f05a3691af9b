/**
 * A last line without `\n` is repaired only when it is nobody else's: a file left unchanged for a moment
 * (`settleMs`). Another program still writing its line when a session is opened for writing (a child
 * process here, writing half a line, pausing, then finishing) keeps its line whole; a torn tail left alone
 * is no entry, and the next append still starts on a line of its own. An old torn tail is terminated as
 * before. (pi 1.6.0, the oracle, terminates at once on every load and so splits such a line.)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createNodeLocks, createNodeStorage, createNodeSyncStorage } from "../adapters/node.ts";
import { Session } from "../src/index.ts";
import { openSessionFile } from "../src/open-session.ts";
import { runTaskSync } from "../src/storage.ts";
import { pi16 } from "./support/pi16.ts";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const storage = createNodeStorage();
const locks = createNodeLocks(storage);
const header = JSON.stringify({
	type: "session",
	version: 3,
	id: "s1",
	timestamp: new Date(0).toISOString(),
	cwd: "/p",
});
const entry = (id: string, parentId: string | null, data = "x") =>
	JSON.stringify({ type: "custom", id, parentId, timestamp: new Date(0).toISOString(), customType: "t", data });
const FIRST = entry("aaaaaaaa", null);
const THEIRS = entry("bbbbbbbb", "aaaaaaaa", "written by another program, in two writes");

function sessionFile(content: string): string {
	const dir = mkdtempSync(join(tmpdir(), "pst-torn-"));
	dirs.push(dir);
	const path = join(dir, "s.jsonl");
	writeFileSync(path, content);
	return path;
}

/**
 * A writer without a lock (as pi): appends each of `parts` in its own write, `pauseMs` apart, saying
 * `wrote <n>` after each; the exclusive create of `create` first, when given.
 */
function slowWriter(path: string, parts: readonly string[], pauseMs: number, create = false): ChildProcess {
	const script = `
		const fs = require("node:fs");
		const [path, parts, pause, create] = [process.argv[1], JSON.parse(process.argv[2]), Number(process.argv[3]), process.argv[4] === "1"];
		const fd = fs.openSync(path, create ? "wx" : "a");
		let n = 0;
		const next = () => {
			fs.writeSync(fd, parts[n]);
			console.log("wrote " + ++n);
			if (n < parts.length) setTimeout(next, pause); else fs.closeSync(fd);
		};
		if (create) { console.log("wrote 0"); setTimeout(next, pause); } else next();
	`;
	return spawn(process.execPath, ["-e", script, path, JSON.stringify(parts), String(pauseMs), create ? "1" : "0"], {
		stdio: ["ignore", "pipe", "inherit"],
	});
}

function said(child: ChildProcess, line: string): Promise<void> {
	return new Promise((resolve, reject) => {
		let seen = "";
		child.stdout?.on("data", (chunk: Buffer) => {
			seen += chunk.toString();
			if (seen.split("\n").includes(line)) resolve();
		});
		child.on("exit", () => reject(new Error(`the writer exited before saying "${line}": ${seen}`)));
	});
}

function exited(child: ChildProcess): Promise<void> {
	return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.on("exit", () => resolve())));
}

describe("another program writing its last line while a session is opened for writing", () => {
	it("finishes it whole: the tail is left alone, and the append after it stands on its own line", async () => {
		const path = sessionFile(`${header}\n${FIRST}\n`);
		const half = THEIRS.length >> 1;
		const writer = slowWriter(path, [THEIRS.slice(0, half), `${THEIRS.slice(half)}\n`], 1500);
		await said(writer, "wrote 1");
		const session = await Session.open(storage, path, { locks, settleMs: 10_000 });
		expect(session.report).toMatchObject({ repairedLastLine: false, tornTailLeft: true });
		expect(session.report.diagnostics.map((d) => [d.reason, d.line])).toEqual([["torn-last-line", 3]]);
		expect(session.tree.getEntries().map((e) => e.id)).toEqual(["aaaaaaaa"]); // the half line is no entry
		await exited(writer);
		const ours = await session.appendCustomEntry("ours");
		await session.close();
		const lines = readFileSync(path, "utf8").split("\n");
		expect(lines.slice(0, 3)).toEqual([header, FIRST, THEIRS]);
		expect(lines.length).toBe(5);
		expect(JSON.parse(lines[3] as string).id).toBe(ours);
		const reopened = await Session.open(storage, path, { readOnly: true });
		expect(reopened.report.diagnostics).toEqual([]);
		expect(reopened.tree.getEntries().map((e) => e.id)).toEqual(["aaaaaaaa", "bbbbbbbb", ours]);
	}, 20_000);

	it("with the default moment too (a writer pausing 150 ms)", async () => {
		const path = sessionFile(`${header}\n${FIRST}\n`);
		const writer = slowWriter(path, [THEIRS.slice(0, 10), `${THEIRS.slice(10)}\n`], 150);
		await said(writer, "wrote 1");
		const session = await Session.open(storage, path, { locks });
		await exited(writer);
		await session.appendCustomEntry("ours");
		await session.close();
		expect(readFileSync(path, "utf8").split("\n")[2]).toBe(THEIRS);
	});

	it("a writer that dies mid-line after the open: the next append starts a new line, the half line stays unreadable", async () => {
		const path = sessionFile(`${header}\n${FIRST}\n`);
		const writer = slowWriter(path, [THEIRS.slice(0, 10), THEIRS.slice(10, 20)], 1000);
		await said(writer, "wrote 1");
		const session = await Session.open(storage, path, { locks, settleMs: 10_000 });
		expect(session.report.tornTailLeft).toBe(true);
		await exited(writer); // gone with its line half written
		const ours = await session.appendCustomEntry("ours");
		await session.close();
		const lines = readFileSync(path, "utf8").split("\n");
		expect(lines.slice(0, 3)).toEqual([header, FIRST, THEIRS.slice(0, 20)]);
		expect(JSON.parse(lines[3] as string).id).toBe(ours);
		const reopened = await Session.open(storage, path, { readOnly: true });
		expect(reopened.report.diagnostics.map((d) => [d.reason, d.line])).toEqual([["invalid-json", 3]]);
		expect(reopened.tree.getEntry(ours)?.parentId).toBe("aaaaaaaa");
	}, 20_000);

	it("a file being created (empty for a moment, as pi's exclusive create then its lines): no header is put in", async () => {
		const dir = mkdtempSync(join(tmpdir(), "pst-torn-"));
		dirs.push(dir);
		const path = join(dir, "new.jsonl");
		const writer = slowWriter(path, [`${header}\n${FIRST}\n`], 1000, true);
		await said(writer, "wrote 0");
		const session = await Session.open(storage, path, { locks, settleMs: 10_000 });
		expect(session.report.wroteHeader).toBe(false);
		expect(session.tree.getEntries().map((e) => e.id)).toEqual(["aaaaaaaa"]);
		await session.close();
		await exited(writer);
		expect(readFileSync(path, "utf8")).toBe(`${header}\n${FIRST}\n`);
	}, 20_000);

	it("pi 1.6.0, the oracle, splits that line: it terminates the tail at once on load", async () => {
		const path = sessionFile(`${header}\n${FIRST}\n`);
		const writer = slowWriter(path, [THEIRS.slice(0, 10), `${THEIRS.slice(10)}\n`], 500);
		await said(writer, "wrote 1");
		pi16.SessionManager.open(path);
		await exited(writer);
		expect(readFileSync(path, "utf8").split("\n").slice(2, 4)).toEqual([THEIRS.slice(0, 10), THEIRS.slice(10)]);
	});
});

describe("a torn tail that nobody writes", () => {
	it("older than the moment: terminated at once, as before", async () => {
		const path = sessionFile(`${header}\n${FIRST}\n{"type":"cus`);
		const old = new Date(Date.now() - 60_000);
		utimesSync(path, old, old);
		const started = performance.now();
		const session = await Session.open(storage, path, { locks, settleMs: 30_000 });
		expect(performance.now() - started).toBeLessThan(10_000);
		await session.close();
		expect(session.report).toMatchObject({ repairedLastLine: true });
		expect(session.report.tornTailLeft).toBeUndefined();
		expect(readFileSync(path, "utf8").endsWith('{"type":"cus\n')).toBe(true);
	});

	it("younger: watched until it is that old, then terminated", async () => {
		const path = sessionFile(`${header}\n${FIRST}`);
		const started = performance.now();
		const session = await Session.open(storage, path, { locks, settleMs: 200 });
		const waited = performance.now() - started;
		await session.close();
		expect(session.report.repairedLastLine).toBe(true);
		expect(waited).toBeGreaterThanOrEqual(150);
		expect(readFileSync(path, "utf8")).toBe(`${header}\n${FIRST}\n`);
	});

	it("dated in the future (clocks apart): watched for the moment from now, then terminated", async () => {
		const path = sessionFile(`${header}\n${FIRST}`);
		const later = new Date(Date.now() + 3600_000);
		utimesSync(path, later, later);
		const session = await Session.open(storage, path, { locks, settleMs: 100 });
		await session.close();
		expect(session.report.repairedLastLine).toBe(true);
		expect(statSync(path).size).toBe(`${header}\n${FIRST}\n`.length);
	});

	it("a moment that is no number of milliseconds is refused", async () => {
		const path = sessionFile(`${header}\n${FIRST}`);
		await expect(Session.open(storage, path, { locks, settleMs: -1 })).rejects.toThrow(RangeError);
	});
});

describe("the settle watch on a storage fast enough to look thousands of times a millisecond (the synchronous one)", () => {
	const dir = mkdtempSync(join(tmpdir(), "torn-tail-sync-"));
	afterAll(() => rmSync(dir, { recursive: true, force: true }));

	it("repairs a young torn tail nobody writes once it has settled, instead of giving up by the count of looks", () => {
		const path = join(dir, "torn.jsonl");
		writeFileSync(path, `${header}\n{"type":"cus`);
		const core = runTaskSync(openSessionFile(path, {}), createNodeSyncStorage());
		expect(core.report.repairedLastLine).toBe(true);
		expect(core.report.tornTailLeft).toBeFalsy();
		expect(readFileSync(path, "utf8").endsWith("\n")).toBe(true);
	});

	it("gives a young empty file its header after a long settle, instead of failing as if it kept changing", () => {
		const path = join(dir, "empty.jsonl");
		writeFileSync(path, "");
		const core = runTaskSync(openSessionFile(path, { settleMs: 1500 }), createNodeSyncStorage());
		expect(core.report.wroteHeader).toBe(true);
	});
});
