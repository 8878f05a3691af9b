/**
 * pi 1.6's `list(cwd, sessionDir)` filters by cwd, then sorts; so does the facade. With an invalid
 * `modified` (a message time past the last Date) the sort's comparator gives NaN, and sorting a subset is
 * not filtering a sorted whole: this order tells the two apart (it failed when the facade filtered last).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionManager } from "../adapters/pi-compat.ts";
import * as pi16 from "../node_modules/pi-coding-agent-1.6/dist/core/session-manager.js";

const piManager = (
	pi16 as unknown as { SessionManager: { list(cwd: string, dir?: string): Promise<{ path: string }[]> } }
).SessionManager;

describe("pi-compat list(): order with an invalid date and a cwd filter", () => {
	let home: string;
	let saved: string | undefined;
	beforeEach(() => {
		saved = process.env.PI_CODING_AGENT_DIR;
		home = mkdtempSync(join(tmpdir(), "pi-compat-list-order-"));
		process.env.PI_CODING_AGENT_DIR = join(home, "agent");
	});
	afterEach(() => {
		if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = saved;
		rmSync(home, { recursive: true, force: true });
	});

	it("gives pi 1.6's order", async () => {
		const dir = join(home, "custom-dir");
		mkdirSync(dir, { recursive: true });
		const file = (cwd: string, time: number) =>
			`{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"${cwd}"}\n` +
			`{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":${time}}}\n`;
		// pi reads files by name, last first: c, b, a.
		writeFileSync(join(dir, "c.jsonl"), file("/p", 1_700_000_000_000));
		writeFileSync(join(dir, "b.jsonl"), file("/other", 1e300)); // modified: Invalid Date; filtered out
		writeFileSync(join(dir, "a.jsonl"), file("/p", 1_800_000_000_000));
		const names = (infos: { path: string }[]) => infos.map((info) => info.path.slice(info.path.lastIndexOf("/") + 1));
		const expected = names(await piManager.list("/p", dir));
		expect(expected).toEqual(["a.jsonl", "c.jsonl"]);
		expect(names(await SessionManager.list("/p", dir))).toEqual(expected);
	});
});
