/**
 * Listing against pi 1.6.0 itself: random homes of session files as pi writes them and as they get damaged
 * (torn and joined lines, bad UTF-8, headers without a string id, names, contents and times of odd
 * types), with ties in modification time and file names shared across projects. Our `listAllSessions`
 * and `listSessions` — read whole, and through a catalog cold and warm — give pi 1.6.0's `listAll()` and
 * `list()` row for row, in pi's order. Where README's table of differences from pi says we list otherwise
 * (pi leaves a session out on one bad record), each difference is shown against pi here too.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { SessionManager } from "../adapters/pi-compat.ts";
import { listAllSessions, listSessions, type SessionInfo } from "../src/index.ts";
import { listingCatalogPath } from "../src/listing-catalog.ts";
import { comparable, sessionFileArbitrary } from "./support/listing-sessions.ts";
import { pi16 } from "./support/pi16.ts";

const piManager = pi16.SessionManager as unknown as {
	listAll(): Promise<SessionInfo[]>;
	list(cwd: string, sessionDir?: string): Promise<SessionInfo[]>;
};

/** Lines that test pi's rules where they are odd (none of them is a documented difference). */
const awkwardLine = fc.constantFrom(
	'{"type":"session_info","id":"n","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","name":"  spaced\tname  "}',
	'{"type":"session_info","id":"n","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","name":null}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":7},{"type":"text"},{"type":"text","text":{"a":1}},{"type":"text","text":[1,[2]]},5]}}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"toolResult","content":null}}',
	'{"type":"message","id":"m","parentId":null,"timestamp":[2021],"message":{"role":"user","content":"an array time"}}',
	'{"type":"message","id":"m","parentId":null,"timestamp":{"a":1},"message":{"role":"assistant","content":"an object time"}}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":"text"}',
	'{"type":"message","id":"m","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":[1]}',
	"5",
	'"a string"',
	"[]",
);

/** Headers pi lists though their id is no string, or their time no time. */
const headerLine = fc.constantFrom(
	'{"type":"session","version":3,"id":5,"timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}',
	'{"type":"session","version":3,"timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}',
	'{"type":"session","version":3,"id":{"a":[1]},"timestamp":[2020],"cwd":"/p"}',
	'{"type":"session","version":3,"id":null,"timestamp":{"a":1},"cwd":"/p"}',
	'{"type":"session","version":3,"id":"ok","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}',
);

/** `new Date(value)` does not throw (it does for an object whose own `toString` is no function). */
function isDateArgument(value: unknown): boolean {
	try {
		new Date(value as never);
		return true;
	} catch {
		return false;
	}
}

/** `String(value)` does not throw. */
function isStringable(value: unknown): boolean {
	try {
		String(value);
		return true;
	} catch {
		return false;
	}
}

/**
 * Whether a file holds something README's "differences from pi" table lists for listings, where we list
 * on purpose otherwise than pi 1.6 (which leaves the session out, or reads lines otherwise): a BOM, a
 * carriage return inside a line, a name that is no string or has line breaks, a message entry without a
 * message, user or assistant content that is neither a string nor an array or holds a null block or a
 * text `String` cannot convert, a time `Date` cannot take. Checked over every line (more than pi reads).
 */
function hasDocumentedDifference(bytes: Uint8Array): boolean {
	if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return true;
	for (const raw of new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes).split("\n")) {
		const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
		if (line.includes("\r")) return true;
		let value: unknown;
		try {
			value = JSON.parse(line);
		} catch {
			continue;
		}
		if (!value || typeof value !== "object") continue;
		const record = value as { type?: unknown; name?: unknown; message?: unknown; timestamp?: unknown };
		if (!isDateArgument(record.timestamp)) return true;
		if (record.type === "session_info" && record.name !== undefined && record.name !== null) {
			if (typeof record.name !== "string" || /[\r\n]/.test(record.name)) return true;
		}
		if (record.type !== "message") continue;
		const message = record.message as { role?: unknown; content?: unknown } | null | undefined;
		if (message === null || message === undefined) return true;
		if (typeof message !== "object" || !("content" in message)) continue;
		if (message.role !== "user" && message.role !== "assistant") continue;
		const { content } = message;
		if (typeof content === "string") continue;
		if (!Array.isArray(content)) return true;
		for (const block of content) {
			if (block === null || block === undefined) return true;
			if (block.type === "text" && !isStringable(block.text)) return true;
		}
	}
	return false;
}

const encoder = new TextEncoder();

/** A file: a random damaged one, or awkward lines after a header; none with a documented difference. */
const fileBytes: fc.Arbitrary<Uint8Array> = fc
	.oneof(
		{ weight: 3, arbitrary: sessionFileArbitrary },
		{
			weight: 2,
			arbitrary: fc
				.record({
					header: headerLine,
					lines: fc.array(
						fc.oneof(
							awkwardLine,
							fc.constant(
								'{"type":"message","id":"u","parentId":null,"timestamp":"2025-03-01T00:00:00.000Z","message":{"role":"user","content":"plain"}}',
							),
						),
						{ maxLength: 6 },
					),
				})
				.map(({ header, lines }) => encoder.encode(`${[header, ...lines].join("\n")}\n`)),
		},
	)
	.filter((bytes) => !hasDocumentedDifference(bytes));

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
					// A directory not cwd's own: pi filters by cwd before it sorts, and so does the facade.
					const other = dirs[1] as string;
					expect(rows(await SessionManager.list("/p", other))).toEqual(rows(await piManager.list("/p", other)));
				} finally {
					rmSync(agentDir, { recursive: true, force: true });
				}
			}),
			{ numRuns: 40 },
		);
	}, 120_000);

	it("differs from pi 1.6.0 only as README's table says: each documented difference against pi", async () => {
		agentDir = mkdtempSync(join(tmpdir(), "listing-pi16-differences-"));
		process.env.PI_CODING_AGENT_DIR = agentDir;
		try {
			const dir = join(agentDir, "sessions", "--p--");
			mkdirSync(dir, { recursive: true });
			const header = '{"type":"session","version":3,"id":"h","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}';
			const entry = (fields: string) =>
				`{"type":"message","id":"m","parentId":null,"timestamp":"2025-02-01T00:00:00.000Z",${fields}}`;
			const user = entry('"message":{"role":"user","content":"hello"}');
			const cases: Record<string, { text: string; pi: Partial<SessionInfo> | null; ours: Partial<SessionInfo> }> = {
				"name-with-line-breaks": {
					text: `${header}\n{"type":"session_info","id":"n","parentId":null,"timestamp":"t","name":" a\\r\\nb "}\n`,
					pi: { name: "a\r\nb" },
					ours: { name: "a b" },
				},
				"name-not-a-string": {
					text: `${header}\n${user}\n{"type":"session_info","id":"n","parentId":null,"timestamp":"t","name":5}\n`,
					pi: null,
					ours: { name: undefined, messageCount: 1, firstMessage: "hello" },
				},
				"content-null": {
					text: `${header}\n${entry('"message":{"role":"user","content":null}')}\n${user}\n`,
					pi: null,
					ours: { messageCount: 2, allMessagesText: "hello" },
				},
				"null-block": {
					text: `${header}\n${entry('"message":{"role":"assistant","content":[null,{"type":"text","text":"kept"}]}')}\n`,
					pi: null,
					ours: { messageCount: 1, allMessagesText: "kept" },
				},
				"message-null": {
					text: `${header}\n${entry('"message":null')}\n${user}\n`,
					pi: null,
					ours: { messageCount: 2, firstMessage: "hello" },
				},
				bom: { text: `\ufeff${header}\n${user}\n`, pi: null, ours: { id: "h", messageCount: 1 } },
				"carriage-return-inside-a-line": {
					text: `${header.replace(',"cwd"', ',\r"cwd"')}\n${user}\n`,
					pi: null,
					ours: { id: "h", cwd: "/p", messageCount: 1 },
				},
				"time-that-is-no-time": {
					text: `${header}\n${user.replace('"2025-02-01T00:00:00.000Z"', '{"toString":1}')}\n`,
					pi: null,
					ours: { messageCount: 1, modified: new Date("2025-01-01T00:00:00.000Z") },
				},
			};
			for (const [name, { text }] of Object.entries(cases)) writeFileSync(join(dir, `${name}.jsonl`), text);
			const byName = (infos: SessionInfo[]) =>
				new Map(infos.map((info) => [info.path.slice(info.path.lastIndexOf("/") + 1, -".jsonl".length), info]));
			const pi = byName(await piManager.listAll());
			const ours = byName(await listAllSessions(createNodeStorage(), join(agentDir, "sessions")));
			for (const [name, expected] of Object.entries(cases)) {
				const piRow = pi.get(name);
				expect([name, piRow && expected.pi ? pick(piRow, expected.pi) : (piRow ?? null)]).toEqual([name, expected.pi]);
				expect([name, pick(ours.get(name), expected.ours)]).toEqual([name, expected.ours]);
			}
		} finally {
			rmSync(agentDir, { recursive: true, force: true });
		}
	});
});

/** The fields of `info` that `like` names. */
function pick(info: SessionInfo | undefined, like: Partial<SessionInfo>): Partial<SessionInfo> | undefined {
	if (!info) return undefined;
	return Object.fromEntries(Object.keys(like).map((key) => [key, info[key as keyof SessionInfo]]));
}
