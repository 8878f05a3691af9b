/** The opening policy: a pure decision from the file as read. */
import { describe, expect, it } from "vitest";
import { SessionNotFoundError } from "../src/errors.ts";
import type { ReadSession } from "../src/load.ts";
import { planOpening } from "../src/open-session.ts";

/** A file as read, with what matters to the plan. */
function readFile(fields: { changed?: boolean; fromVersion?: number; endsWithNewline?: boolean }): ReadSession {
	return {
		path: "/s/a.jsonl",
		size: 100,
		mtimeMs: 0,
		records: [],
		locations: [],
		skippedLines: [],
		diagnostics: [],
		migration: { entries: [], changed: fields.changed ?? false, fromVersion: fields.fromVersion ?? 3, warnings: [] },
		endsWithNewline: fields.endsWithNewline ?? true,
	};
}

const writable = { readOnly: false, create: false };

describe("planOpening", () => {
	it("no file: a new session when asked for, otherwise SessionNotFoundError naming the path", () => {
		expect(planOpening("/s/a.jsonl", null, { readOnly: false, create: true })).toEqual({ action: "start-new" });
		const plan = planOpening("/s/a.jsonl", null, writable);
		expect(plan.action).toBe("refuse");
		const error = plan.action === "refuse" ? plan.error : undefined;
		expect(error).toBeInstanceOf(SessionNotFoundError);
		expect((error as SessionNotFoundError).path).toBe("/s/a.jsonl");
	});

	it("an empty file gets a header; an older version is migrated; a torn end is terminated; else as it is", () => {
		expect(planOpening("/s/a.jsonl", { path: "/s/a.jsonl", size: 0, empty: true }, writable)).toEqual({
			action: "write-header",
		});
		expect(planOpening("/s/a.jsonl", readFile({ changed: true, fromVersion: 1 }), writable)).toEqual({
			action: "migrate",
			fromVersion: 1,
		});
		// A migration rewrites every line, the torn one included: it is not terminated first.
		expect(
			planOpening("/s/a.jsonl", readFile({ changed: true, fromVersion: 2, endsWithNewline: false }), writable),
		).toEqual({ action: "migrate", fromVersion: 2 });
		expect(planOpening("/s/a.jsonl", readFile({ endsWithNewline: false }), writable)).toEqual({
			action: "terminate-last-line",
		});
		expect(planOpening("/s/a.jsonl", readFile({}), writable)).toEqual({ action: "use-as-is" });
	});

	it("read-only never changes the file, whatever it holds", () => {
		const readOnly = { readOnly: true, create: false };
		for (const read of [
			{ path: "/s/a.jsonl", size: 0 as const, empty: true as const },
			readFile({ changed: true, fromVersion: 1 }),
			readFile({ endsWithNewline: false }),
		]) {
			expect(planOpening("/s/a.jsonl", read, readOnly)).toEqual({ action: "use-as-is" });
		}
	});

	it("is pure: the same file and options give the same plan", () => {
		const read = readFile({ changed: true, fromVersion: 2 });
		expect(planOpening("/s/a.jsonl", read, writable)).toEqual(planOpening("/s/a.jsonl", read, writable));
		expect(read.migration.changed).toBe(true);
	});
});

describe("opening an empty file read-only", () => {
	it("gives an empty session and leaves the file empty", async () => {
		const { createMemoryStorage } = await import("../adapters/zenfs.ts");
		const { Session } = await import("../src/session.ts");
		const storage = await createMemoryStorage();
		await storage.mkdir("/s");
		await storage.createExclusive("/s/empty.jsonl", [], false);
		const session = await Session.open(storage, "/s/empty.jsonl", { readOnly: true });
		expect(session.tree.size).toBe(0);
		expect(session.report.wroteHeader).toBe(false);
		expect((await storage.stat("/s/empty.jsonl"))?.size).toBe(0);
		await session.close();
	});
});

describe("temporary files a killed writer left", () => {
	it("are removed by the next writer to open the session; other files are not", async () => {
		const { createMemoryStorage } = await import("../adapters/zenfs.ts");
		const { Session } = await import("../src/session.ts");
		const { temporaryOf } = await import("../src/storage.ts");
		expect(temporaryOf("a.jsonl.0123abcd.tmp")).toEqual({ of: "a.jsonl", part: "file" });
		expect(temporaryOf("a.jsonl.lock.0123abcd.tmp")?.part).toBe("lock");
		expect(temporaryOf("a.jsonl.0123ABCD.tmp")).toBeUndefined();
		const storage = await createMemoryStorage();
		await storage.mkdir("/s");
		const header = '{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n';
		await storage.createExclusive("/s/a.jsonl", [new TextEncoder().encode(header)], false);
		for (const name of ["a.jsonl.0123abcd.tmp", "a.jsonl.v1.bak", "b.jsonl.0123abcd.tmp", "a.jsonl.notes"]) {
			await storage.createExclusive(`/s/${name}`, [], false);
		}
		const reader = await Session.open(storage, "/s/a.jsonl", { readOnly: true });
		expect((await storage.list("/s")).length).toBe(5); // a reader changes nothing
		await reader.close();
		const session = await Session.open(storage, "/s/a.jsonl");
		const names = (await storage.list("/s")).map((entry) => entry.name).sort();
		expect(names).toEqual(["a.jsonl", "a.jsonl.lock", "a.jsonl.notes", "a.jsonl.v1.bak", "b.jsonl.0123abcd.tmp"]);
		await session.close();
	});

	it("tells a temporary's file and kind by its name", async () => {
		const { temporaryOf } = await import("../src/storage.ts");
		expect(temporaryOf("a.jsonl.0123abcd.tmp")).toEqual({ of: "a.jsonl", part: "file" });
		expect(temporaryOf("a.jsonl.lock.0123abcd.tmp")).toEqual({ of: "a.jsonl", part: "lock" });
		expect(temporaryOf("a.jsonl.lock.takeover.0123abcd.tmp")).toEqual({ of: "a.jsonl", part: "lock" });
		expect(temporaryOf("a.jsonl.v1.bak.0123abcd.tmp")).toEqual({ of: "a.jsonl", part: "backup" });
		expect(temporaryOf("a.jsonl.v2.3.bak.0123abcd.tmp")).toEqual({ of: "a.jsonl", part: "backup" });
		expect(temporaryOf("a.jsonl.v1.bak")).toBeUndefined();
		expect(temporaryOf("a.jsonl.0123ABCD.tmp")).toBeUndefined();
		expect(temporaryOf("a.jsonl.123abcd.tmp")).toBeUndefined();
	});

	it("a lock's temporary once older than a moment, and a killed fork's (no lock, a minute old); not another live session's", async () => {
		const { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } = await import("node:fs");
		const { tmpdir } = await import("node:os");
		const { join } = await import("node:path");
		const { createNodeStorage } = await import("../adapters/node.ts");
		const { Session } = await import("../src/session.ts");
		const dir = mkdtempSync(join(tmpdir(), "leftovers-"));
		try {
			const header = '{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n';
			writeFileSync(join(dir, "a.jsonl"), header);
			const ages: Record<string, number> = {
				"a.jsonl.lock.0000000a.tmp": 1, // another taker's, being written now: kept
				"a.jsonl.lock.0000000b.tmp": 20, // a killed taker's: removed
				"a.jsonl.lock.takeover.0000000c.tmp": 20, // removed
				"a.jsonl.v1.bak.0000000d.tmp": 1, // a backup copy of this file's: only its lock holder writes one
				"c.jsonl.0000000e.tmp": 120, // a killed fork's: removed
				"c.jsonl.0000000f.tmp": 5, // maybe being written: kept
				"d.jsonl.00000010.tmp": 120, // d is locked: its writer's, kept
				"d.jsonl.lock": 1,
				"notes.txt.00000011.tmp": 120, // not a session's: kept
			};
			for (const [name, seconds] of Object.entries(ages)) {
				writeFileSync(join(dir, name), "");
				const at = new Date(Date.now() - seconds * 1000);
				utimesSync(join(dir, name), at, at);
			}
			const session = await Session.open(createNodeStorage(), join(dir, "a.jsonl"));
			await session.close();
			expect(readdirSync(dir).sort()).toEqual([
				"a.jsonl",
				"a.jsonl.lock.0000000a.tmp",
				"c.jsonl.0000000f.tmp",
				"d.jsonl.00000010.tmp",
				"d.jsonl.lock",
				"notes.txt.00000011.tmp",
			]);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
