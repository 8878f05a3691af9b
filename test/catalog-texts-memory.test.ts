/**
 * What a catalog's rows keep alive: the texts file is read in one range; a row's text is a view of it when
 * the rows asked for hold at least half of what was read, and a copy of its own when they hold less (a
 * listing of one project out of many must not keep every project's texts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { listAllSessions, runTask } from "../src/index.ts";
import { loadCatalog } from "../src/listing-catalog.ts";
import { allMessagesTextUtf8, listingInfo } from "../src/listing-summary.ts";

const storage = createNodeStorage();
const base = mkdtempSync(join(tmpdir(), "pi-catalog-texts-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

it("rows of most of the texts read share their bytes; rows of a few get copies", async () => {
	const root = join(base, "sessions");
	const projects = ["--a--", "--b--", "--c--", "--d--"];
	projects.forEach((project, p) => {
		mkdirSync(join(root, project), { recursive: true });
		for (let i = 0; i < 3; i++) {
			const at = new Date(Date.UTC(2026, 0, 3, p, i)).toISOString();
			const lines = [
				{ type: "session", version: 3, id: `${p}-${i}`, timestamp: at, cwd: `/${project}` },
				{
					type: "message",
					id: "m",
					parentId: null,
					timestamp: at,
					message: { role: "user", content: `${project} ${"x".repeat(2_000)}` },
				},
			];
			writeFileSync(join(root, project, `${p}-${i}.jsonl`), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
		}
	});
	const catalog = join(base, "catalog.json");
	await listAllSessions(storage, root, { catalog });

	// From the catalog's files (not the rows the listing before kept in memory).
	const all = await listAllSessions(storage, root, { catalog, keepCatalogInMemory: false });
	const allBytes = all.map((row) => allMessagesTextUtf8(row));
	expect(allBytes.every((bytes) => bytes !== undefined)).toBe(true);
	const buffers = new Set(allBytes.map((bytes) => bytes?.buffer));
	expect(buffers.size, "every text a view of one read").toBe(1);

	// Rows whose texts are the first and the last of the file: the range read between them is mostly others'.
	const { stored } = await runTask(loadCatalog(catalog), storage);
	const order = [...stored.values()].sort((a, b) => a.text.at - b.text.at).map((row) => row.path);
	const ends = new Set([order[0], order.at(-1)]);
	const { rows } = await runTask(
		loadCatalog(catalog, (path) => ends.has(path)),
		storage,
	);
	expect(rows.size).toBe(2);
	for (const row of rows.values()) {
		const info = listingInfo(row.path, row.state, row.mtimeMs, undefined);
		const bytes = info && allMessagesTextUtf8(info);
		expect(bytes?.buffer.byteLength, "a copy just the text's size").toBe(bytes?.byteLength);
		expect(info?.allMessagesText.endsWith("x".repeat(2_000))).toBe(true);
	}
});

/** A full collection, where the flag can be set (it is, in Node). */
function collectGarbage(): () => void {
	setFlagsFromString("--expose-gc");
	return runInNewContext("gc") as () => void;
}

it("a row's text, once read, no longer keeps the bytes it was decoded from", async () => {
	const root = join(base, "released");
	mkdirSync(join(root, "--p--"), { recursive: true });
	const at = new Date(Date.UTC(2026, 0, 3)).toISOString();
	const lines = [
		{ type: "session", version: 3, id: "r", timestamp: at, cwd: "/p" },
		{ type: "message", id: "m", parentId: null, timestamp: at, message: { role: "user", content: "é".repeat(50_000) } },
	];
	writeFileSync(join(root, "--p--", "r.jsonl"), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
	const gc = collectGarbage();
	const [row] = await listAllSessions(storage, root);
	const held = ((bytes) => {
		expect(bytes?.byteLength).toBe(100_000);
		return new WeakRef(bytes?.buffer as ArrayBuffer);
	})(row && allMessagesTextUtf8(row));
	expect(row?.allMessagesText).toBe("é".repeat(50_000));
	expect(row && allMessagesTextUtf8(row), "the bytes are not handed out once the text is").toBeUndefined();
	for (let i = 0; i < 3 && held.deref(); i++) {
		await new Promise((resolve) => setTimeout(resolve, 10));
		gc();
	}
	expect(held.deref(), "the bytes were collected").toBeUndefined();
	expect(row?.allMessagesText).toBe("é".repeat(50_000));
});
