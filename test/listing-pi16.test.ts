/**
 * Listing against pi 1.6.0 itself: random homes of session files as pi writes them and as they get damaged
 * (torn and joined lines, bad UTF-8, BOMs, lone carriage returns, headers without a string id, records
 * that make pi's listing fail, names and contents of every type), with ties in modification time and file
 * names shared across projects. Our `listAllSessions` and `listSessions` — read whole, and through a
 * catalog cold and warm — give pi 1.6.0's `listAll()` and `list()` row for row, in pi's order.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { listingCatalogPath } from "../src/listing-catalog.ts";
import { listAllSessions, listSessions, type SessionInfo } from "../src/index.ts";
import { comparable, sessionFileArbitrary } from "./support/listing-sessions.ts";
import { pi16 } from "./support/pi16.ts";

const piManager = pi16.SessionManager as unknown as {
	listAll(): Promise<SessionInfo[]>;
	list(cwd: string): Promise<SessionInfo[]>;
};

/** Lines pi's listing takes apart differently from a JSON reader's: each alone, or inside an entry. */
const awkwardLine = fc.constantFrom(
	'{"type":"message","id":"cr","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",\r"message":{"role":"user","content":"split by a carriage return"}}',
	'{"type":"message","id":"cr2","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"two"}}\r{"type":"message","id":"cr3","parentId":null,"timestamp":"2025-01-02T00:00:00.000Z","message":{"role":"assistant","content":"lines"}}',
	'{"type":"session_info","id":"n","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","name":5}',
	'{"type":"session_info","id":"n","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","name":"  a\\r\\nb\\tc  "}',
	'{"type":"session_info","id":"n","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","name":null}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":null}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z"}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":7},{"type":"text"},{"type":"text","text":{"a":1}},5]}}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":[null]}}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"assistant","content":{"text":"x"}}}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"toolResult","content":null}}',
	'{"type":"message","id":"m","parentId":null,"timestamp":{"toString":1},"message":{"role":"user","content":"a time that is no time"}}',
	'{"type":"message","id":"m","parentId":null,"timestamp":[2021],"message":{"role":"user","content":"an array time"}}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":"text"}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":[1]}',
	"5",
	'"a string"',
	"[]",
);

const headerLine = fc.constantFrom(
	'{"type":"session","version":3,"id":5,"timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}',
	'{"type":"session","version":3,"timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}',
	'{"type":"session","version":3,"id":{"a":[1]},"timestamp":[2020],"cwd":"/p"}',
	'{"type":"session","version":3,"id":"t","timestamp":{"toString":1},"cwd":"/p"}',
	'\ufeff{"type":"session","version":3,"id":"bom","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}',
	'{"type":"session","version":3,"id":"cr","timestamp":"2025-01-01T00:00:00.000Z",\r"cwd":"/p"}',
);

const encoder = new TextEncoder();

/** A file: a random damaged one, or one made of awkward lines after a header (maybe an awkward one). */
const fileBytes: fc.Arbitrary<Uint8Array> = fc.oneof(
	{ weight: 3, arbitrary: sessionFileArbitrary },
	{
		weight: 2,
		arbitrary: fc
			.record({
				header: fc.oneof(
					headerLine,
					fc.constant('{"type":"session","version":3,"id":"ok","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}'),
				),
				lines: fc.array(
					fc.oneof(
						awkwardLine,
						fc.constant(
							'{"type":"message","id":"u","parentId":null,"timestamp":"2025-03-01T00:00:00.000Z","message":{"role":"user","content":"plain"}}',
						),
					),
					{ maxLength: 6 },
				),
				bom: fc.boolean(),
			})
			.map(({ header, lines, bom }) => encoder.encode(`${bom ? "\ufeff" : ""}${[header, ...lines].join("\n")}\n`)),
	},
);

/** A home: files in two projects; pairs share a name across them; a few modification times, so ties. */
const home = fc.array(fc.tuple(fileBytes, fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 24 });

describe("listing as pi 1.6.0 lists", () => {
	let agentDir: string;
	let saved: string | undefined;
	beforeEach(() => {
		saved = process.env.PI_CODING_AGENT_DIR;
	});
	afterEach(() => {
		if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = saved;
	});

	it("gives pi's rows, in pi's order, for random and damaged homes: read whole, and through a catalog cold and warm", async () => {
		await fc.assert(
			fc.asyncProperty(home, async (files) => {
				agentDir = mkdtempSync(join(tmpdir(), "listing-pi16-home-"));
				process.env.PI_CODING_AGENT_DIR = agentDir;
				try {
					const root = join(agentDir, "sessions");
					const dirs = [join(root, "--p--"), join(root, "--q--")];
					for (const dir of dirs) mkdirSync(dir, { recursive: true });
					files.forEach(([bytes, time], index) => {
						const path = join(dirs[index & 1] as string, `s${index >> 1}.jsonl`);
						writeFileSync(path, bytes);
						utimesSync(path, 1_700_000_000 + time, 1_700_000_000 + time);
					});
					const storage = createNodeStorage();
					const rows = (infos: SessionInfo[]) => infos.map(comparable);
					const expected = rows(await piManager.listAll());
					expect(rows(await listAllSessions(storage, root))).toEqual(expected);
					const catalog = listingCatalogPath(agentDir);
					expect(rows(await listAllSessions(storage, root, { catalog }))).toEqual(expected);
					expect(rows(await listAllSessions(storage, root, { catalog }))).toEqual(expected);
					expect(rows(await listSessions(storage, dirs[0] as string))).toEqual(rows(await piManager.list("/p")));
				} finally {
					rmSync(agentDir, { recursive: true, force: true });
				}
			}),
			{ numRuns: 40 },
		);
	}, 120_000);
});
