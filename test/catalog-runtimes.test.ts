/**
 * A listing catalog one runtime wrote serves the others: Deno's `stat` gives whole milliseconds where Node
 * and Bun give fractions, and a catalog was once read again in full (every session file) whenever the
 * runtime changed. Each runtime lists cold through the CLI; the next one's listing must read no session
 * file, and leave the catalog as it was.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { listAllSessions, listingCatalogPath } from "../src/index.ts";
import { sameModificationTime } from "../src/listing-catalog.ts";
import { RUNTIMES, runCli } from "./support/cli.ts";
import { recordingStorage } from "./support/listing-sessions.ts";

const base = mkdtempSync(join(tmpdir(), "pi-catalog-runtimes-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function writeHome(name: string): { agentDir: string; root: string } {
	const agentDir = join(base, name);
	const dir = join(agentDir, "sessions", "--work--");
	mkdirSync(dir, { recursive: true });
	for (let i = 0; i < 4; i++) {
		const at = new Date(Date.UTC(2026, 0, 2, 8, i)).toISOString();
		const lines = [
			{ type: "session", version: 3, id: `r${i}`, timestamp: at, cwd: "/work" },
			{
				type: "message",
				id: `m${i}`,
				parentId: null,
				timestamp: at,
				message: { role: "user", content: `hello ${i} "é"` },
			},
		];
		writeFileSync(
			join(dir, `${at.replace(/[:.]/g, "-")}_r${i}.jsonl`),
			`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`,
		);
	}
	return { agentDir, root: join(agentDir, "sessions") };
}

describe("a catalog across runtimes", () => {
	it("compares a whole millisecond with a fraction of the same millisecond as the same time", () => {
		expect(sameModificationTime(1000.25, 1000.25)).toBe(true);
		expect(sameModificationTime(1000.25, 1000)).toBe(true);
		expect(sameModificationTime(1000, 1000.999)).toBe(true);
		expect(sameModificationTime(1000.25, 1000.5)).toBe(false); // both fractions: exact
		expect(sameModificationTime(1000, 1001)).toBe(false);
		expect(sameModificationTime(1001, 1000.5)).toBe(false);
	});

	for (const writer of RUNTIMES) {
		it(`a catalog ${writer} wrote serves Node, Bun and Deno without reading a session file`, async () => {
			const { agentDir, root } = writeHome(`by-${writer}`);
			const env = { PI_CODING_AGENT_DIR: agentDir };
			const cold = runCli(writer, ["ls", "--all", "--json"], { env });
			expect(cold.status, cold.stderr).toBe(0);
			const catalog = listingCatalogPath(agentDir);
			const written = readFileSync(catalog);
			const writtenAt = statSync(catalog).mtimeMs;

			const { storage, reads } = recordingStorage(createNodeStorage());
			const rows = await listAllSessions(storage, root, { catalog });
			expect(reads.sessionBytes(), `Node read session files from ${writer}'s catalog`).toBe(0);
			expect(`${JSON.stringify(rows, null, 2)}\n`).toBe(cold.stdout);

			for (const reader of RUNTIMES) {
				const warm = runCli(reader, ["ls", "--all", "--json"], { env });
				expect(warm.status, warm.stderr).toBe(0);
				expect(warm.stdout, `${reader} after ${writer}`).toBe(cold.stdout);
				// Served as it was: a listing that read files again would have written the catalog again.
				expect(readFileSync(catalog).equals(written), `${reader} after ${writer}: the catalog`).toBe(true);
				expect(statSync(catalog).mtimeMs, `${reader} after ${writer}`).toBe(writtenAt);
			}
		});
	}
});
