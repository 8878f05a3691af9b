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
		const { isTemporaryOf } = await import("../src/storage.ts");
		expect(isTemporaryOf("a.jsonl.0123abcd.tmp", "a.jsonl")).toBe(true);
		expect(isTemporaryOf("a.jsonl.lock.0123abcd.tmp", "a.jsonl")).toBe(false);
		expect(isTemporaryOf("a.jsonl.0123ABCD.tmp", "a.jsonl")).toBe(false);
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
});
