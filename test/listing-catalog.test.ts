/**
 * The listing catalog: a repeated listing reads only what changed (nothing when nothing did, the appended
 * bytes of a file that grew), a catalog that is damaged in any way is rebuilt, listings racing each other
 * leave a sound catalog, an aborted listing writes none, and pi itself lists the same with it there.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { listAllSessions, listSessions, sessionInfoTask } from "../src/catalog.ts";
import type { ListOptions, SessionInfo, Storage } from "../src/index.ts";
import {
	decodeCatalog,
	encodeCatalog,
	LISTING_CATALOG_VERSION,
	listingCatalogPath,
	listingCatalogPathForSessionsRoot,
	textsPathOf,
} from "../src/listing-catalog.ts";
import { runTask } from "../src/storage.ts";
import { comparable, concat, recordingStorage, sessionFileArbitrary } from "./support/listing-sessions.ts";
import { pi16 } from "./support/pi16.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const root = "/agent/sessions";
const catalog = listingCatalogPath("/agent");

const at = (ms: number) => new Date(Date.UTC(2025, 0, 1) + ms).toISOString();

function headerLine(id: string, ms: number, cwd = "/p"): string {
	return `${JSON.stringify({ type: "session", version: 3, id, timestamp: at(ms), cwd })}\n`;
}

function messageLine(id: string, ms: number, message: Record<string, unknown>): string {
	return `${JSON.stringify({ type: "message", id, parentId: null, timestamp: at(ms), message })}\n`;
}

/** A user question, the assistant's answer and a big tool result: the usual shape. */
function exchange(n: number, ms: number): string {
	return [
		messageLine(`u${n}`.padEnd(8, "0"), ms, { role: "user", content: `question ${n}`, timestamp: ms }),
		messageLine(`a${n}`.padEnd(8, "0"), ms + 1, {
			role: "assistant",
			content: [{ type: "text", text: `answer ${n}` }],
			timestamp: ms + 1,
		}),
		messageLine(`t${n}`.padEnd(8, "0"), ms + 2, {
			role: "toolResult",
			toolCallId: "c",
			content: [{ type: "text", text: "x".repeat(3000) }],
			timestamp: ms + 2,
		}),
	].join("");
}

async function write(storage: Storage, path: string, text: string | Uint8Array): Promise<void> {
	await storage.mkdir(path.slice(0, path.lastIndexOf("/")));
	await storage.replace(path, [typeof text === "string" ? encoder.encode(text) : text]);
}

async function append(storage: Storage, path: string, text: string): Promise<void> {
	await storage.append(path, encoder.encode(text), false);
}

/** `count` sessions over two project directories; their paths. */
async function sessions(storage: Storage, count: number, exchanges = 3): Promise<string[]> {
	const paths: string[] = [];
	for (let i = 0; i < count; i++) {
		const path = `${root}/--p${i % 2}--/2025-01-01T00-00-00-000Z_s${String(i).padStart(3, "0")}.jsonl`;
		let text = headerLine(`s${i}`, i * 1000);
		for (let n = 0; n < exchanges; n++) text += exchange(n, i * 1000 + n * 10);
		await write(storage, path, text);
		paths.push(path);
	}
	return paths;
}

/** What a listing without a catalog gives (every file read), comparable. */
async function uncached(storage: Storage, options: ListOptions = {}) {
	return (await listAllSessions(storage, root, options)).map(comparable);
}

async function fileBytes(storage: Storage, path: string = catalog): Promise<Uint8Array | null> {
	const stat = await storage.stat(path);
	return stat ? storage.readRange(path, 0, stat.size) : null;
}

/** Paths whose bytes a listing read, and from where. */
function readStarts(reads: ReturnType<typeof recordingStorage>["reads"]): Map<string, number> {
	const starts = new Map<string, number>();
	for (const [path, ranges] of reads.ranges) {
		if (path.endsWith(".jsonl")) starts.set(path, Math.min(...ranges.map(([start]) => start)));
	}
	return starts;
}

let memory: Storage;
beforeEach(async () => {
	memory = await createMemoryStorage();
});

describe("listing catalog", () => {
	it("lives outside the sessions directory", () => {
		expect(listingCatalogPath("/home/me/.pi/agent")).toBe("/home/me/.pi/agent/pi-session-tree/listing-catalog.json");
		expect(listingCatalogPathForSessionsRoot("/home/me/.pi/agent/sessions/")).toBe(
			"/home/me/.pi/agent/pi-session-tree/listing-catalog.json",
		);
	});

	it("a warm listing reads no session bytes and gives the same answer", async () => {
		await sessions(memory, 12);
		const expected = await uncached(memory);
		const { storage, reads } = recordingStorage(memory);
		expect((await listAllSessions(storage, root, { catalog })).map(comparable)).toEqual(expected);
		expect(reads.sessionBytes()).toBeGreaterThan(12 * 9000);
		const written = await fileBytes(memory);
		expect(written && decodeCatalog(written)?.size).toBe(12);
		reads.clear();
		expect((await listAllSessions(storage, root, { catalog })).map(comparable)).toEqual(expected);
		expect(reads.sessionBytes()).toBe(0);
		// Nothing changed, so nothing was written.
		expect(await fileBytes(memory)).toEqual(written);
		// One directory, from the same catalog.
		reads.clear();
		const one = await listSessions(storage, `${root}/--p1--`, { catalog });
		expect(one.map(comparable)).toEqual(expected.filter((info) => (info as SessionInfo).path.includes("--p1--")));
		expect(reads.sessionBytes()).toBe(0);
	});

	it("kept in memory: a repeated listing reads no catalog bytes, until another writer changes its files", async () => {
		await sessions(memory, 12);
		const expected = await uncached(memory);
		const { storage, reads } = recordingStorage(memory);
		await listAllSessions(storage, root, { catalog });
		const catalogBytes = () =>
			[catalog, textsPathOf(catalog)].reduce(
				(sum, path) => sum + (reads.ranges.get(path) ?? []).reduce((n, [start, end]) => n + end - start, 0),
				0,
			);
		reads.clear();
		const again = await listAllSessions(storage, root, { catalog });
		expect(again.map(comparable)).toEqual(expected);
		expect([reads.sessionBytes(), catalogBytes()]).toEqual([0, 0]);
		// Asked to keep nothing, it reads the catalog's files.
		reads.clear();
		expect((await listAllSessions(storage, root, { catalog, keepCatalogInMemory: false })).map(comparable)).toEqual(
			expected,
		);
		expect(catalogBytes()).toBeGreaterThan(0);
		// Another scope (one directory) is not served from the rows of all projects kept in memory.
		await listAllSessions(storage, root, { catalog });
		reads.clear();
		const one = await listSessions(storage, `${root}/--p1--`, { catalog });
		expect(one.map(comparable)).toEqual(expected.filter((info) => (info as SessionInfo).path.includes("--p1--")));
		expect([reads.sessionBytes(), catalogBytes() > 0]).toEqual([0, true]);
		// Another writer (another storage object, as another process) rewrites the catalog with one file
		// changed: this one reads the catalog again, and the file's new content.
		await listAllSessions(storage, root, { catalog });
		const changed = (expected[3] as SessionInfo).path;
		await new Promise((resolve) => setTimeout(resolve, 5)); // a later modification time
		await append(memory, changed, exchange(20, 50));
		await listAllSessions(memory, root, { catalog });
		reads.clear();
		const after = await listAllSessions(storage, root, { catalog });
		expect(after.map(comparable)).toEqual(await uncached(memory));
		expect(catalogBytes()).toBeGreaterThan(0);
		expect(reads.sessionBytes()).toBe(0); // the other writer's row for the changed file serves
	});

	it("kept in memory: a change of the texts file alone reads the catalog again", async () => {
		await sessions(memory, 4);
		const { storage, reads } = recordingStorage(memory);
		const expected = await listAllSessions(storage, root, { catalog });
		await new Promise((resolve) => setTimeout(resolve, 5));
		await memory.append(textsPathOf(catalog), new Uint8Array(8), false);
		reads.clear();
		expect((await listAllSessions(storage, root, { catalog })).map(comparable)).toEqual(expected.map(comparable));
		expect(reads.ranges.has(catalog)).toBe(true);
	});

	it("kept in memory: a row kept is still checked against its file's stat", async () => {
		const paths = await sessions(memory, 6);
		const { storage, reads } = recordingStorage(memory);
		await listAllSessions(storage, root, { catalog });
		await new Promise((resolve) => setTimeout(resolve, 5));
		await append(memory, paths[2] as string, exchange(30, 60));
		reads.clear();
		expect((await listAllSessions(storage, root, { catalog })).map(comparable)).toEqual(await uncached(memory));
		expect([...readStarts(reads).keys()]).toEqual([paths[2]]);
		// The catalog it wrote is kept in turn: the next listing reads nothing.
		reads.clear();
		expect((await listAllSessions(storage, root, { catalog })).map(comparable)).toEqual(await uncached(memory));
		expect(reads.ranges.size).toBe(0);
	});

	it("reads only the appended bytes of files that grew", async () => {
		const paths = await sessions(memory, 10);
		await listAllSessions(memory, root, { catalog });
		const grown = [paths[1], paths[4], paths[7]] as string[];
		const sizes = new Map<string, number>();
		for (const path of grown) {
			sizes.set(path, (await memory.stat(path))?.size as number);
			await append(memory, path, exchange(9, 900_000));
		}
		// One of them gets a torn last line: it counts only once complete.
		await append(memory, grown[0] as string, '{"type":"message","id":"torn0000","parentId":null,"time');
		const { storage, reads } = recordingStorage(memory);
		const listed = (await listAllSessions(storage, root, { catalog })).map(comparable);
		expect(listed).toEqual(await uncached(memory));
		const starts = readStarts(reads);
		expect([...starts.keys()].sort()).toEqual([...grown].sort());
		for (const path of grown) expect(starts.get(path)).toBe((sizes.get(path) as number) - 4096);
		expect(reads.sessionBytes()).toBeLessThan(3 * (4096 + 10_000) + 100);
		const info = listed.find((i) => (i as SessionInfo).path === grown[0]) as SessionInfo;
		expect(info.messageCount).toBe(12);
		expect(info.allMessagesText.endsWith("question 9 answer 9")).toBe(true);

		// The torn line completed by the next append (into one unreadable line), then a new line.
		await append(memory, grown[0] as string, `stamp":"x"}\n${exchange(10, 910_000)}`);
		reads.clear();
		expect((await listAllSessions(storage, root, { catalog })).map(comparable)).toEqual(await uncached(memory));
		expect([...readStarts(reads).keys()]).toEqual([grown[0]]);
	});

	it("a last line without its line feed counts, and counts once when the file grows", async () => {
		const [path] = await sessions(memory, 1, 3);
		const last = messageLine("last0000", 5000, { role: "user", content: "no line feed yet", timestamp: 5000 });
		await append(memory, path as string, last.slice(0, -1));
		const first = await listAllSessions(memory, root, { catalog });
		expect(first[0]?.messageCount).toBe(10);
		expect(first[0]?.allMessagesText.endsWith("no line feed yet")).toBe(true);
		await append(memory, path as string, `\n${exchange(5, 6000)}`);
		const { storage, reads } = recordingStorage(memory);
		const grown = await listAllSessions(storage, root, { catalog });
		expect(grown.map(comparable)).toEqual(await uncached(memory));
		expect(grown[0]?.messageCount).toBe(13);
		expect(readStarts(reads).get(path as string)).toBeGreaterThan(0);
	});

	it("reads a replaced, truncated or rewritten file whole", async () => {
		const paths = await sessions(memory, 4);
		await listAllSessions(memory, root, { catalog });
		const [bigger, smaller, sameSize] = paths as [string, string, string];
		// Bigger, but not by appending: the bytes before the old end differ.
		await write(
			memory,
			bigger,
			headerLine("other", 5) + exchange(7, 5) + exchange(8, 6) + exchange(9, 7) + exchange(10, 8),
		);
		await write(memory, smaller, headerLine("short", 6) + exchange(1, 6));
		const old = decoder.decode((await fileBytes(memory, sameSize)) as Uint8Array);
		await new Promise((resolve) => setTimeout(resolve, 5)); // a later modification time
		await write(memory, sameSize, old.replace("question 1", "QUESTION 1"));
		const { storage, reads } = recordingStorage(memory);
		expect((await listAllSessions(storage, root, { catalog })).map(comparable)).toEqual(await uncached(memory));
		const starts = readStarts(reads);
		expect([...starts.keys()].sort()).toEqual([bigger, smaller, sameSize].sort());
		for (const start of starts.values()) expect(start).toBe(0);
		// A removed file's row goes; a warm listing after all that reads nothing.
		await memory.remove(bigger);
		await listAllSessions(memory, root, { catalog });
		expect(decodeCatalog((await fileBytes(memory)) as Uint8Array)?.has(bigger)).toBe(false);
		reads.clear();
		await listAllSessions(storage, root, { catalog });
		expect(reads.sessionBytes()).toBe(0);
	});

	it("rebuilds a catalog that is garbage, truncated, of another version, tampered with or badly shaped", async () => {
		const paths = await sessions(memory, 5);
		const expected = await uncached(memory);
		await listAllSessions(memory, root, { catalog });
		const good = (await fileBytes(memory)) as Uint8Array;
		const newline = good.indexOf(0x0a);
		const header = JSON.parse(decoder.decode(good.subarray(0, newline)));
		const rows = JSON.parse(decoder.decode(good.subarray(newline + 1)));
		const withHeader = (fields: Record<string, unknown>, body: Uint8Array = good.subarray(newline + 1)) =>
			concat([encoder.encode(`${JSON.stringify({ ...header, ...fields })}\n`), body]);
		const flipped = good.slice();
		flipped[flipped.length - 20] = (flipped[flipped.length - 20] as number) ^ 0x01;
		const damaged: [string, Uint8Array][] = [
			["garbage", encoder.encode("garbage\u0000\u0001 not a catalog")],
			["empty", new Uint8Array(0)],
			["truncated", good.subarray(0, good.length - 100)],
			["truncated header", good.subarray(0, newline - 3)],
			["another version", withHeader({ version: LISTING_CATALOG_VERSION + 1 })],
			["another format", withHeader({ format: "something else" })],
			["a flipped bit", flipped],
			["not UTF-8", withHeader({}, Uint8Array.of(0xff, 0xfe))],
		];
		for (const [name, bytes] of damaged) {
			await write(memory, catalog, bytes);
			const { storage, reads } = recordingStorage(memory);
			expect((await listAllSessions(storage, root, { catalog })).map(comparable), name).toEqual(expected);
			expect(readStarts(reads).size, name).toBe(5);
			expect(decodeCatalog((await fileBytes(memory)) as Uint8Array)?.size, name).toBe(5);
		}
		// Rows of the wrong shape, in a file whose checksum is right: only their files are read again.
		const badRows = structuredClone(rows);
		badRows[0].size = "12";
		badRows[1].state.messageCount = -1;
		badRows[2].state.phase = "maybe";
		badRows[3] = null;
		const [headerBytes, bodyBytes] = encodeCatalog(badRows.filter(Boolean).concat([{ path: 5 }]));
		await write(memory, catalog, concat([headerBytes as Uint8Array, bodyBytes as Uint8Array]));
		expect(decodeCatalog((await fileBytes(memory)) as Uint8Array)?.size).toBe(1);
		const { storage, reads } = recordingStorage(memory);
		expect((await listAllSessions(storage, root, { catalog })).map(comparable)).toEqual(expected);
		expect(readStarts(reads).size).toBe(4);
		expect(readStarts(reads).has(rows[4].path)).toBe(false);
		// A catalog that is a directory, or unreadable: listed all the same.
		await memory.remove(catalog);
		await memory.mkdir(catalog);
		expect((await listAllSessions(memory, root, { catalog })).map(comparable)).toEqual(expected);
		expect(paths).toHaveLength(5);
	});

	it("never trusts a row over a fresh stat: rows of a row's files are checked, wrong ones are read again", async () => {
		const paths = await sessions(memory, 3);
		const expected = await uncached(memory);
		await listAllSessions(memory, root, { catalog });
		const rows = [...(decodeCatalog((await fileBytes(memory)) as Uint8Array) as Map<string, unknown>).values()];
		// A sound row that lies about its file's size: the file is read, the lie gone.
		(rows[0] as { size: number }).size += 1;
		await write(memory, catalog, concat(encodeCatalog(rows as never)));
		const { storage, reads } = recordingStorage(memory);
		expect((await listAllSessions(storage, root, { catalog })).map(comparable)).toEqual(expected);
		expect([...readStarts(reads).keys()]).toEqual([(rows[0] as { path: string }).path]);
		expect(paths).toHaveLength(3);
	});

	it("keeps text limits apart: a row cut shorter than asked is read again", async () => {
		const [path] = await sessions(memory, 1, 6);
		const { storage, reads } = recordingStorage(memory);
		const full = await listAllSessions(storage, root, {});
		const cut = await listAllSessions(storage, root, { catalog, allMessagesTextLimit: 10 });
		expect(cut[0]?.allMessagesText).toBe(full[0]?.allMessagesText.slice(0, 10));
		reads.clear();
		expect((await listAllSessions(storage, root, { catalog, allMessagesTextLimit: 5 }))[0]?.allMessagesText).toBe(
			full[0]?.allMessagesText.slice(0, 5),
		);
		expect(reads.sessionBytes()).toBe(0);
		expect((await listAllSessions(storage, root, { catalog }))[0]?.allMessagesText).toBe(full[0]?.allMessagesText);
		expect(reads.sessionBytes()).toBeGreaterThan(0);
		// Now whole in the catalog: any limit is served from it, appends included.
		reads.clear();
		expect((await listAllSessions(storage, root, { catalog, allMessagesTextLimit: 7 }))[0]?.allMessagesText).toBe(
			full[0]?.allMessagesText.slice(0, 7),
		);
		expect(reads.sessionBytes()).toBe(0);
		await append(memory, path as string, exchange(99, 99_000));
		const grown = await listAllSessions(storage, root, { catalog, allMessagesTextLimit: 1000 });
		expect(grown.map(comparable)).toEqual(await uncached(memory, { allMessagesTextLimit: 1000 }));
		expect(grown[0]?.allMessagesText.endsWith("question 99 answer 99")).toBe(true);
	});

	it("folds appends exactly as a full read, wherever the file is cut (property)", async () => {
		const path = `${root}/--p--/s.jsonl`;
		await fc.assert(
			fc.asyncProperty(
				sessionFileArbitrary,
				fc.array(fc.tuple(fc.nat(), fc.integer({ min: -1, max: 2 })), { maxLength: 3 }),
				async (bytes, cuts) => {
					const storage = await createMemoryStorage();
					// Anywhere, or at a line end: just before its line feed, or just after.
					const lineEnds: number[] = [];
					for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) lineEnds.push(i);
					const pointOf = ([n, near]: [number, number]) =>
						near === 2 || lineEnds.length === 0
							? n % (bytes.length + 1)
							: (lineEnds[n % lineEnds.length] as number) + near + 1;
					const points = [...new Set(cuts.map(pointOf))]
						.filter((p) => p >= 0 && p <= bytes.length)
						.sort((a, b) => a - b);
					let written = 0;
					for (const point of [...points, bytes.length]) {
						if (written === 0) await write(storage, path, bytes.subarray(0, point));
						else await storage.append(path, bytes.subarray(written, point), false);
						written = point;
						const listed = await listSessions(storage, `${root}/--p--`, { catalog });
						const full = await runTask(sessionInfoTask(path), storage);
						expect(listed.map(comparable)).toEqual(full ? [comparable(full)] : []);
					}
				},
			),
			{ numRuns: 300 },
		);
	});

	it("keeps the rows of other directories when listing one, and drops rows of files gone from it", async () => {
		const paths = await sessions(memory, 6);
		await listAllSessions(memory, root, { catalog });
		const [gone] = paths.filter((path) => path.includes("--p0--"));
		await memory.remove(gone as string);
		await listSessions(memory, `${root}/--p0--`, { catalog });
		const rows = decodeCatalog((await fileBytes(memory)) as Uint8Array) as Map<string, unknown>;
		expect([...rows.keys()].sort()).toEqual(paths.filter((path) => path !== gone).sort());
	});

	it("two listings racing each other leave a sound catalog, and later listings stay right", async () => {
		const dir = mkdtempSync(join(tmpdir(), "listing-race-"));
		try {
			const sessionsRoot = `${dir.replaceAll("\\", "/")}/sessions`;
			const path = listingCatalogPathForSessionsRoot(sessionsRoot);
			// Two "processes": two storages over the same files.
			const [first, second] = [createNodeStorage(), createNodeStorage()];
			const files: string[] = [];
			for (let i = 0; i < 8; i++) {
				const file = `${sessionsRoot}/--p${i % 2}--/2025-01-01T00-00-00-000Z_r${i}.jsonl`;
				await write(first, file, headerLine(`r${i}`, i) + exchange(0, i));
				files.push(file);
			}
			for (let round = 0; round < 6; round++) {
				for (const file of files.filter((_, i) => (i + round) % 3 === 0))
					await append(first, file, exchange(round + 1, round * 100));
				const options = { catalog: path, concurrency: 2 };
				const [all, one, again] = await Promise.all([
					listAllSessions(first, sessionsRoot, options),
					listSessions(second, `${sessionsRoot}/--p1--`, options),
					listAllSessions(second, sessionsRoot, options),
				]);
				const truth = (await listAllSessions(first, sessionsRoot)).map(comparable);
				expect(all.map(comparable)).toEqual(truth);
				expect(again.map(comparable)).toEqual(truth);
				expect(one.map(comparable)).toEqual(truth.filter((info) => (info as SessionInfo).path.includes("--p1--")));
				expect(decodeCatalog((await fileBytes(first, path)) as Uint8Array)).not.toBeNull();
				expect((await listAllSessions(second, sessionsRoot, options)).map(comparable)).toEqual(truth);
			}
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	it("an aborted listing rejects and writes no catalog", async () => {
		await sessions(memory, 6);
		const controller = new AbortController();
		const listing = listAllSessions(memory, root, {
			catalog,
			concurrency: 1,
			signal: controller.signal,
			onProgress: (loaded) => loaded === 2 && controller.abort(),
		});
		await expect(listing).rejects.toThrow();
		expect(await memory.stat(catalog)).toBeNull();
		const aborted = new AbortController();
		aborted.abort();
		await expect(listAllSessions(memory, root, { catalog, signal: aborted.signal })).rejects.toThrow();
		expect(await memory.stat(catalog)).toBeNull();
		// A later listing still writes one.
		await listAllSessions(memory, root, { catalog });
		expect(decodeCatalog((await fileBytes(memory)) as Uint8Array)?.size).toBe(6);
	});

	it("progress still carries sorted partial results", async () => {
		await sessions(memory, 5);
		await listAllSessions(memory, root, { catalog });
		const seen: [number, number, number | undefined][] = [];
		await listAllSessions(memory, root, {
			catalog,
			publishEvery: 2,
			onProgress: (loaded, total, found) => {
				if (found) {
					const times = found.map((info) => info.modified.getTime());
					expect(times).toEqual([...times].sort((a, b) => b - a));
				}
				seen.push([loaded, total, found?.length]);
			},
		});
		expect(seen).toEqual([
			[1, 5, 1],
			[2, 5, 2],
			[3, 5, undefined],
			[4, 5, 4],
			[5, 5, 5],
		]);
	});
});

describe("the catalog's texts file", () => {
	const texts = textsPathOf(catalog);
	const textOf = (infos: SessionInfo[]) =>
		infos.reduce((sum, info) => sum + encoder.encode(info.allMessagesText).length, 0);

	it("holds the texts beside the rows, and a warm listing decodes a text only when it is read", async () => {
		await sessions(memory, 4);
		const expected = await uncached(memory);
		await listAllSessions(memory, root, { catalog });
		expect(texts).toBe("/agent/pi-session-tree/listing-catalog.texts");
		const main = decoder.decode((await fileBytes(memory)) as Uint8Array);
		expect(main).not.toContain("answer 1"); // the rows name their texts, they do not hold them
		expect(decoder.decode((await fileBytes(memory, texts)) as Uint8Array)).toContain("question 0 answer 0");
		const warm = await listAllSessions(memory, root, { catalog });
		const info = warm[0] as SessionInfo;
		// Decoded when read, by an accessor: copies, JSON and assignments see a string, and so does a frozen row.
		expect(Object.getOwnPropertyDescriptor(info, "allMessagesText")?.get).toBeTypeOf("function");
		const frozen = Object.freeze(warm[3] as SessionInfo);
		expect(frozen.allMessagesText).toBe((expected[3] as SessionInfo).allMessagesText);
		expect(structuredClone(warm).map(comparable)).toEqual(expected);
		expect(info.allMessagesText).toBe((expected[0] as SessionInfo).allMessagesText);
		expect(JSON.parse(JSON.stringify(warm[1])).allMessagesText).toBe((expected[1] as SessionInfo).allMessagesText);
		(warm[2] as SessionInfo).allMessagesText = "changed";
		expect((warm[2] as SessionInfo).allMessagesText).toBe("changed");
		expect(Object.keys(info)).toEqual(Object.keys(expected[0] as object));
	});

	it("is trusted unhashed only if unchanged after it was read too: a rewrite in between is caught", async () => {
		// On disk: a texts file the catalog's header vouches for (its own write read back) is read unhashed.
		const dir = mkdtempSync(join(tmpdir(), "listing-texts-race-"));
		try {
			const sessionsRoot = join(dir, "sessions");
			const diskCatalog = join(dir, "catalog", "listing-catalog.json");
			const disk = createNodeStorage();
			for (let i = 0; i < 4; i++)
				await write(disk, join(sessionsRoot, "--p--", `s${i}.jsonl`), headerLine(`s${i}`, i) + exchange(i, i * 10));
			const expected = (await listAllSessions(disk, sessionsRoot)).map(comparable);
			await listAllSessions(disk, sessionsRoot, { catalog: diskCatalog });
			const diskTexts = textsPathOf(diskCatalog);
			let raced = false;
			const racing: Storage = {
				...disk,
				readRange: async (path, start, end) => {
					if (path === diskTexts && !raced) {
						raced = true;
						// Another listing rewrites the file now: the same bytes in another order, the same size. Past
						// the file system's clock tick (a few ms), so that its modification time differs: a rewrite of
						// the same size within one tick is what no stat can tell apart.
						await new Promise((resolve) => setTimeout(resolve, 25));
						const old = (await fileBytes(disk, diskTexts)) as Uint8Array;
						const half = Math.floor(old.length / 8) * 4;
						await disk.replace(diskTexts, [old.subarray(half), old.subarray(0, half)]);
					}
					return disk.readRange(path, start, end);
				},
			};
			const warm = await listAllSessions(racing, sessionsRoot, { catalog: diskCatalog });
			expect(raced).toBe(true);
			expect(warm.map(comparable)).toEqual(expected);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	it("a damaged, truncated or missing texts file: only the rows whose texts are gone are read again", async () => {
		const paths = await sessions(memory, 4);
		const expected = await uncached(memory);
		const damages: [string, (good: Uint8Array) => Uint8Array | null, number][] = [
			[
				"a flipped byte",
				(good) => {
					const flipped = good.slice();
					const at = decoder.decode(good).indexOf("question 2 answer 2");
					flipped[at] = (flipped[at] as number) ^ 0x01;
					return flipped;
				},
				1,
			],
			["truncated", (good) => good.subarray(0, good.length - 8), 1],
			["missing", () => null, 4],
			["garbage", (good) => encoder.encode("x".repeat(good.length)), 4],
		];
		for (const [name, damage, reread] of damages) {
			await memory.remove(catalog);
			await memory.remove(texts);
			await listAllSessions(memory, root, { catalog });
			const bytes = damage((await fileBytes(memory, texts)) as Uint8Array);
			await new Promise((resolve) => setTimeout(resolve, 2)); // a later modification time
			if (bytes) await write(memory, texts, bytes);
			else await memory.remove(texts);
			const { storage, reads } = recordingStorage(memory);
			expect((await listAllSessions(storage, root, { catalog })).map(comparable), name).toEqual(expected);
			expect(readStarts(reads).size, name).toBe(reread);
			// And sound after it: nothing read.
			reads.clear();
			expect((await listAllSessions(storage, root, { catalog })).map(comparable), name).toEqual(expected);
			expect(reads.sessionBytes(), name).toBe(0);
		}
		expect(paths).toHaveLength(4);
	});

	it("keeps texts that UTF-8 cannot hold (a lone surrogate) as they are", async () => {
		const path = `${root}/--p--/2025-01-01T00-00-00-000Z_lone.jsonl`;
		const text = "lone \\ud800 and a pair \\ud83d\\ude00"; // JSON escapes
		await write(
			memory,
			path,
			`${headerLine("lone", 0)}{"type":"message","id":"m1","parentId":null,"timestamp":"${at(1)}","message":{"role":"user","content":"${text}","timestamp":1}}\n`,
		);
		const expected = await uncached(memory);
		expect((expected[0] as SessionInfo).allMessagesText).toBe("lone \ud800 and a pair \u{1f600}");
		await listAllSessions(memory, root, { catalog });
		const { storage, reads } = recordingStorage(memory);
		expect((await listAllSessions(storage, root, { catalog })).map(comparable)).toEqual(expected);
		expect(reads.sessionBytes()).toBe(0);
	});

	it("keeps bytes that are not UTF-8, and a text's BOM, as a full read decodes them, cold and warm", async () => {
		const path = `${root}/--p--/2025-01-01T00-00-00-000Z_bytes.jsonl`;
		const line = (id: string, text: Uint8Array, role = "user") =>
			concat([
				encoder.encode(
					`{"type":"message","id":"${id}","parentId":null,"timestamp":"${at(1)}","message":{"role":"${role}","content":[{"type":"text","text":"`,
				),
				text,
				encoder.encode('"}],"timestamp":1}}\n'),
			]);
		await write(
			memory,
			path,
			concat([
				encoder.encode(headerLine("bytes", 0)),
				line("m1", Uint8Array.of(0xef, 0xbb, 0xbf, 0x61)), // a BOM, then "a"
				line("m2", Uint8Array.of(0x62, 0xff, 0xe2, 0x82), "assistant"), // "b", a stray byte, a torn character
				line("m3", Uint8Array.of(0xc3, 0xa9, 0x5c, 0x6e, 0xf0, 0x9f, 0x98, 0x80)), // "é", an escape, an emoji
			]),
		);
		const full = await runTask(sessionInfoTask(path), memory);
		expect(full?.allMessagesText).toBe("\ufeffa b\ufffd\ufffd é\n\u{1f600}");
		expect((await uncached(memory))[0]).toEqual(comparable(full));
		await listAllSessions(memory, root, { catalog });
		const { storage, reads } = recordingStorage(memory);
		expect((await listAllSessions(storage, root, { catalog })).map(comparable)).toEqual([comparable(full)]);
		expect(reads.sessionBytes()).toBe(0);
	});

	it("grows by the texts of changed rows, and is written again before it is mostly stale", async () => {
		const [path] = await sessions(memory, 2, 40);
		await listAllSessions(memory, root, { catalog });
		const sizes: number[] = [];
		for (let n = 0; n < 30; n++) {
			const big = { role: "user", content: `${n} ${"long ".repeat(4000)}`, timestamp: 100_000 + n };
			await append(memory, path as string, messageLine(`b${n}`.padEnd(8, "0"), 100_000 + n, big));
			const listed = await listAllSessions(memory, root, { catalog });
			expect(listed.map(comparable)).toEqual(await uncached(memory));
			sizes.push((await memory.stat(texts))?.size ?? 0);
		}
		// Each listing appended the changed session's whole text; some wrote the file again, smaller.
		expect(sizes.some((size, i) => i > 0 && size < (sizes[i - 1] as number))).toBe(true);
		const live = textOf(await listAllSessions(memory, root, {}));
		for (const size of sizes) expect(size).toBeLessThanOrEqual(2 * live + (1 << 20) + 64);
	});
});

type PiInfo = SessionInfo;
const piManager = pi16.SessionManager as unknown as {
	listAll(): Promise<PiInfo[]>;
	list(cwd: string): Promise<PiInfo[]>;
};

describe("pi 1.6 with our catalog beside its sessions", () => {
	let agentDir: string;
	let saved: string | undefined;
	beforeEach(() => {
		agentDir = mkdtempSync(join(tmpdir(), "listing-pi16-"));
		saved = process.env.PI_CODING_AGENT_DIR;
		process.env.PI_CODING_AGENT_DIR = agentDir;
	});
	afterEach(() => {
		if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = saved;
		rmSync(agentDir, { recursive: true, force: true });
	});

	it("gives pi's modified time for headers and entries whose times are not strings", async () => {
		const storage = createNodeStorage();
		const dir = join(agentDir, "sessions", "--p--");
		await storage.mkdir(dir);
		const header = (id: string, timestamp: unknown) =>
			`${JSON.stringify({ type: "session", version: 3, id, timestamp, cwd: "/p" })}\n`;
		const user = (timestamp: unknown) =>
			`${JSON.stringify({ type: "message", id: "m", parentId: null, timestamp, message: { role: "user", content: "hi" } })}\n`;
		const files: Record<string, string> = {
			"number-header": header("number-header", 2020),
			"missing-header": header("missing-header", undefined),
			"number-entry": header("number-entry", "2025-01-01T00:00:00.000Z") + user(5),
			"true-entry": header("true-entry", "2025-01-01T00:00:00.000Z") + user(true),
		};
		for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, `${name}.jsonl`), text);
		const byId = (infos: SessionInfo[]) =>
			Object.fromEntries(infos.map((info) => [info.id, [info.modified.getTime(), info.created.getTime()]]));
		const expected = byId(await piManager.listAll());
		expect(Object.keys(expected).sort()).toEqual(Object.keys(files).sort());
		expect(byId(await listAllSessions(storage, join(agentDir, "sessions")))).toEqual(expected);
	});

	it("lists the same before and after the catalog is written, and as we do", async () => {
		const storage = createNodeStorage();
		const sessionsRoot = join(agentDir, "sessions").replaceAll("\\", "/");
		for (const [i, cwd] of ["/home/me/project", "/srv/other", "/home/me/project"].entries()) {
			const dir = join(sessionsRoot, `--${cwd.slice(1).replaceAll("/", "-")}--`);
			await storage.mkdir(dir);
			writeFileSync(
				join(dir, `2025-01-0${i + 1}T00-00-00-000Z_p${i}.jsonl`),
				headerLine(`p${i}`, i, cwd) + exchange(i, i * 10),
			);
		}
		const before = { all: await piManager.listAll(), one: await piManager.list("/home/me/project") };
		expect(before.all).toHaveLength(3);
		const ours = await listAllSessions(storage, sessionsRoot, { catalog: listingCatalogPath(agentDir) });
		expect(await storage.stat(join(agentDir, "pi-session-tree", "listing-catalog.json"))).not.toBeNull();
		const after = { all: await piManager.listAll(), one: await piManager.list("/home/me/project") };
		expect(after.all.map(comparable)).toEqual(before.all.map(comparable));
		expect(after.one.map(comparable)).toEqual(before.one.map(comparable));
		expect(ours.map(comparable)).toEqual(before.all.map(comparable));
		// And warm, still the same.
		const warm = await listAllSessions(storage, sessionsRoot, { catalog: listingCatalogPath(agentDir) });
		expect(warm.map(comparable)).toEqual(before.all.map(comparable));
	});
});
