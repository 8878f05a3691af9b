/**
 * Reading a session file (src/load.ts) through its module API: the ranges it asks the storage for, what
 * it keeps of each line, which files it refuses and how it names them, its limits, and reading only the
 * header. A storage of one file in memory, run synchronously, so that each range the read asks for is
 * seen as it asks (`runTask` would read ahead of it).
 */
import { describe, expect, it } from "vitest";
import { SessionFormatError } from "../src/jsonl.ts";
import {
	HeaderTooLongError,
	type ReadOptions,
	type ReadSession,
	readSessionFile,
	readSessionHeader,
	SessionLimitError,
} from "../src/load.ts";
import { type FileStat, runTaskSync, StorageError, type SyncStorage } from "../src/storage.ts";

const MiB = 1 << 20;
const KiB = 1 << 10;
const PATH = "/s/a.jsonl";
const encoder = new TextEncoder();
const header = (id: unknown = "s1", version = 3) =>
	JSON.stringify({ type: "session", version, id, timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" });
const custom = (id: string, parentId: string | null, data = "d") =>
	JSON.stringify({ type: "custom", customType: "x", data, id, parentId, timestamp: "2025-01-01T00:00:01.000Z" });

/** A storage holding one file at `PATH` (`stat` may say otherwise of it), logging each range read. */
function oneFile(content: string | Uint8Array, stat: Partial<FileStat> = {}) {
	const bytes = typeof content === "string" ? encoder.encode(content) : content;
	const reads: [number, number][] = [];
	const storage = {
		stat: () => ({ size: bytes.length, mtimeMs: 7, isFile: true, isDirectory: false, ...stat }),
		readRange: (_path: string, start: number, end: number) => {
			reads.push([start, end]);
			return bytes.slice(start, end);
		},
	} as unknown as SyncStorage;
	return { storage, reads };
}

function read(content: string | Uint8Array, options: ReadOptions = {}): ReadSession {
	const result = runTaskSync(readSessionFile(PATH, options), oneFile(content).storage);
	if (!result || "empty" in result) throw new Error("expected a session");
	return result;
}

/** What reading `content` throws (fails the test when it throws nothing). */
function refusal(content: string | Uint8Array, options: ReadOptions = {}): unknown {
	try {
		runTaskSync(readSessionFile(PATH, options), oneFile(content).storage);
	} catch (error) {
		return error;
	}
	throw new Error("expected the read to throw");
}

const headerOf = (content: string, limit?: number) =>
	runTaskSync(readSessionHeader(PATH, limit), oneFile(content).storage);

describe("load.ts: readSessionFile, ranges", () => {
	it("reads a full open in 1 MiB ranges, a lazy one in a hundredth of the file rounded to a power of two, from 1 to 8 MiB", () => {
		// The size is what stat says: the range asked for first depends only on it (the file ends early here).
		const first = (size: number, load?: "lazy" | "full") => {
			const { storage, reads } = oneFile(`${header()}\n`, { size });
			runTaskSync(readSessionFile(PATH, { load }), storage);
			return (reads[0] as [number, number])[1];
		};
		expect(first(400 * MiB)).toBe(MiB);
		expect(first(400 * MiB, "full")).toBe(MiB);
		expect(first(400 * MiB, "lazy")).toBe(4 * MiB);
		expect(first(10 * MiB, "lazy")).toBe(MiB);
		expect(first(10_000 * MiB, "lazy")).toBe(8 * MiB);
	});

	it("stops at the first range shorter than asked for: that is the end of the file", () => {
		const content = `${header()}\n${custom("a", null)}\n`;
		const { storage, reads } = oneFile(content);
		runTaskSync(readSessionFile(PATH, { chunkBytes: 64 }), storage);
		const expected: [number, number][] = [];
		for (let start = 0; start < content.length; start += 64) expected.push([start, start + 64]);
		expect(reads).toEqual(expected);
	});

	it("still sees the final newline of a file whose size is a whole number of ranges", () => {
		const content = `${header()}\n${custom("a", null)}\n`;
		const result = read(content, { chunkBytes: content.length });
		expect([result.size, result.endsWithNewline, result.records.length]).toEqual([content.length, true, 2]);
	});

	it("reports progress after each range, against the file's size", () => {
		const content = `${header()}\n${custom("a", null)}\n`;
		const progress: [number, number][] = [];
		read(content, { chunkBytes: 100, onProgress: (loaded, total) => progress.push([loaded, total]) });
		const expected: [number, number][] = [];
		for (let loaded = 100; loaded < content.length; loaded += 100) expected.push([loaded, content.length]);
		expected.push([content.length, content.length]);
		expect(progress).toEqual(expected);
	});
});

describe("load.ts: readSessionFile, what is no session file", () => {
	it("an empty file is an empty session", () => {
		expect(runTaskSync(readSessionFile(PATH), oneFile("").storage)).toEqual({ path: PATH, size: 0, empty: true });
	});

	it("a directory, or anything else that is not a regular file, is refused without being read", () => {
		const content = `${header()}\n`;
		for (const [stat, what] of [
			[{ isFile: false, isDirectory: true }, "a directory"],
			[{ isFile: false, isDirectory: false }, "not a regular file"],
		] as const) {
			const { storage, reads } = oneFile(content, stat);
			let error: unknown;
			try {
				runTaskSync(readSessionFile(PATH), storage);
			} catch (caught) {
				error = caught;
			}
			expect(error).toBeInstanceOf(StorageError);
			expect((error as StorageError).code).toBe("not-a-file");
			expect((error as Error).message).toContain(`${PATH}: ${what};`);
			expect(reads).toEqual([]);
		}
	});

	it("a file of blank lines only is no session, named at its first line", () => {
		const error = refusal("\n   \n\n");
		expect(error).toBeInstanceOf(SessionFormatError);
		expect(error).toMatchObject({ file: PATH, line: 1, byteOffset: 0, excerpt: "" });
		expect((error as Error).message).toContain("not a pi session: the first line is not a session header");
	});

	it("a file of skipped lines only is no session, named by the first of them", () => {
		const error = refusal("\n\nnot json\nnor this\n");
		expect(error).toBeInstanceOf(SessionFormatError);
		expect(error).toMatchObject({ file: PATH, line: 3, byteOffset: 2, excerpt: "not json" });
		expect((error as Error).message).toBe(
			`${PATH}:3: not a pi session: the first line is not a session header; the file was left untouched ("not json")`,
		);
	});

	it("a file whose only non-blank line is over maxLineBytes is no session, named by that line", () => {
		const long = custom("a", null, "x".repeat(400));
		const error = refusal(`\n${long}\nnot json\n`, { maxLineBytes: 200 });
		expect(error).toBeInstanceOf(SessionFormatError);
		expect(error).toMatchObject({ line: 2, byteOffset: 1, excerpt: `${long.slice(0, 80)}…` });
	});

	it("the first record must be a valid header: of type session, with a string id", () => {
		for (const first of [custom("a", null), header(5)]) {
			const error = refusal(`\n${first}\n${header()}\n`);
			expect(error).toBeInstanceOf(SessionFormatError);
			expect(error).toMatchObject({ line: 2, byteOffset: 1, excerpt: `${first.slice(0, 80)}…` });
		}
	});

	it("before the header, JSON that pi takes as a record (not an object, or no type) makes the file no session", () => {
		for (const first of ["[1]", "1", '"x"', "true", "{}", '{"id":"a"}']) {
			const error = refusal(`null\n${first}\n${header()}\n`);
			expect(error).toBeInstanceOf(SessionFormatError);
			expect(error).toMatchObject({ line: 2, byteOffset: 5, excerpt: first });
		}
	});

	it("before the header, lines pi skips too are skipped: null, false, 0, an empty string, bad JSON", () => {
		const result = read(`null\nfalse\n0\n""\n{oops\n${header()}\n`);
		expect(result.records).toEqual([JSON.parse(header())]);
		expect(result.diagnostics.map((diagnostic) => [diagnostic.reason, diagnostic.line])).toEqual([
			["not-an-object", 1],
			["not-an-object", 2],
			["not-an-object", 3],
			["not-an-object", 4],
			["invalid-json", 5],
		]);
		expect(result.skippedLines.map((line) => line.text)).toEqual(["null", "false", "0", '""', "{oops"]);
	});

	it("before the header, an entry nested too deep to copy is skipped like a line that does not parse", () => {
		// Only JSON that is no object or has no type is pi's record among the lines we skip (isRecordToPi).
		const deep = `{"type":"custom","data":${"[".repeat(1001)}${"]".repeat(1001)}}`;
		const result = read(`${deep}\n${header()}\n`);
		expect(result.records).toEqual([JSON.parse(header())]);
		expect(result.diagnostics.map((diagnostic) => [diagnostic.reason, diagnostic.line])).toEqual([["too-deep", 1]]);
	});
});

describe("load.ts: readSessionFile, what is kept of a session", () => {
	it("keeps each record's line, byte offset and excerpt, and nothing skipped of a clean file", () => {
		const lines = [header(), custom("a", null), custom("b", "a")];
		const result = read(`${lines.join("\n")}\n`);
		let byteOffset = 0;
		const locations = lines.map((line, index) => {
			const location = { line: index + 1, byteOffset, excerpt: `${line.slice(0, 80)}…` };
			byteOffset += line.length + 1;
			return location;
		});
		expect(result.locations).toEqual(locations);
		expect([result.skippedLines, result.diagnostics, result.endsWithNewline]).toEqual([[], [], true]);
	});

	it("skips a line over maxLineBytes, saying where the whole of it is, and reads the rest", () => {
		const long = custom("b", "a", "x".repeat(400));
		const lines = [header(), custom("a", null), long, custom("c", "a")];
		const result = read(`${lines.join("\n")}\n`, { maxLineBytes: 300 });
		const byteOffset = `${lines[0]}\n${lines[1]}\n`.length;
		expect(result.records.map((record) => (record as { id: string }).id)).toEqual(["s1", "a", "c"]);
		expect(result.skippedLines).toEqual([
			{ afterRecords: 2, text: expect.any(String), oversized: { line: 3, byteOffset, limit: 300 } },
		]);
		expect(long.startsWith(result.skippedLines[0]?.text ?? "-")).toBe(true);
		expect(result.diagnostics.map((diagnostic) => [diagnostic.reason, diagnostic.line, diagnostic.byteOffset])).toEqual(
			[["too-long", 3, byteOffset]],
		);
	});

	it("refuses a file with more records than maxEntries at the first record over it", () => {
		const lines = [header(), custom("a", null), custom("b", "a"), custom("c", "b")];
		const content = `${lines.join("\n")}\n`;
		const error = refusal(content, { maxEntries: 3 });
		expect(error).toBeInstanceOf(SessionLimitError);
		const byteOffset = content.indexOf(lines[3] as string);
		expect(error).toMatchObject({ path: PATH, limit: "entries", max: 3, line: 4, byteOffset });
		expect((error as Error).message).toBe(`${PATH}:4: the session holds more than 3 records (at byte ${byteOffset})`);
		// As many records as the limit, or no limit, read the file.
		expect(read(content, { maxEntries: 4 }).records.length).toBe(4);
		expect(read(content).records.length).toBe(4);
	});

	it("indexing while reading locates a malformed entry's diagnostic at its line and byte offset", () => {
		const lines = [header(), custom("a", null), custom("a", null)];
		const content = `${lines.join("\n")}\n`;
		const result = read(content, { index: true });
		expect(result.tree?.diagnostics).toEqual([
			expect.objectContaining({
				reason: "duplicate-id",
				line: 3,
				byteOffset: content.lastIndexOf(lines[2] as string),
				excerpt: `${(lines[2] as string).slice(0, 80)}…`,
			}),
		]);
	});

	it("indexes only a file whose header is current: an older one is collected whole, to be migrated", () => {
		// A second header line of the current version later in the file does not make it current.
		const lines = [header("s1", 2), custom("a", null), header("s2", 3), custom("b", "a")];
		const result = read(`${lines.join("\n")}\n`, { index: true });
		expect(result.tree).toBeUndefined();
		expect(result.records.length).toBe(4);
	});

	it("a lazy read skips a line over maxLineBytes even when its start is a whole entry", () => {
		// Trailing blanks are JSON whitespace: the head kept of the line (324 bytes) is one whole object.
		const entry = custom("b", "a", "x".repeat(200));
		const lines = [header(), custom("a", null), `${entry}${" ".repeat(600)}`, custom("c", "a")];
		const result = read(`${lines.join("\n")}\n`, { load: "lazy", index: true, maxLineBytes: 500 });
		expect(result.tree?.size).toBe(2);
		expect(result.tree?.getEntries().map((record) => record.id)).toEqual(["a", "c"]);
		expect(result.diagnostics.map((diagnostic) => [diagnostic.reason, diagnostic.line])).toEqual([["too-long", 3]]);
	});
});

describe("load.ts: readSessionFile, indexing as it reads", () => {
	it("a tree's diagnostic quotes the entry's line as written, not the entry as JSON would write it again", () => {
		// Spaces after the colons: JSON.stringify of the entry would drop them.
		const orphan = '{"type": "custom", "customType": "x", "data": "d", "id": "b", "parentId": "zz", "timestamp": "t"}';
		const content = `${header()}\n${custom("a", null)}\n${orphan}\n`;
		const result = read(content, { index: true });
		const diagnostics = result.tree?.diagnostics ?? [];
		expect(diagnostics.map((diagnostic) => [diagnostic.reason, diagnostic.line, diagnostic.excerpt])).toEqual([
			["missing-parent", 3, `${orphan.slice(0, 80)}…`],
		]);
	});
});

describe("load.ts: readSessionHeader", () => {
	it("returns the header of a file that is one unterminated line, up to exactly the limit", () => {
		expect(headerOf(header())).toEqual(JSON.parse(header()));
		expect(headerOf(header(), header().length)).toEqual(JSON.parse(header()));
		expect(() => headerOf(header(), header().length - 1)).toThrow(HeaderTooLongError);
	});

	it("is null when the first record is no valid header, or JSON that pi takes as a record comes first", () => {
		expect(headerOf(`${header(5)}\n`)).toBeNull();
		expect(headerOf(`${custom("a", null)}\n${header()}\n`)).toBeNull();
		expect(headerOf(`[1]\n${header()}\n`)).toBeNull();
		// What pi skips is skipped here too.
		expect(headerOf(`null\n{oops\n${header()}\n`)).toEqual(JSON.parse(header()));
	});

	it("is null for a file within the limit that holds no record at all", () => {
		expect(headerOf("\n\nnot json\n")).toBeNull();
		expect(() => headerOf(`\n\nnot json\n${" ".repeat(100)}`, 50)).toThrow(HeaderTooLongError);
	});

	it("reads 4 KiB first, then more from the start only while no record has ended: 64 KiB, 1 MiB", () => {
		const ranges = (content: string) => {
			const { storage, reads } = oneFile(content);
			const found = runTaskSync(readSessionHeader(PATH), storage);
			return { found: found?.id, ranges: reads.map(([start, end]) => [start, end - 1]) };
		};
		const rest = `${custom("a", null)}\n`.repeat(3000);
		expect(ranges(`${header()}\n${rest}`)).toEqual({ found: JSON.parse(header()).id, ranges: [[0, 4 * KiB]] });
		// Past 4 KiB: a long header, or blank and broken lines before it (pi skips them).
		const long = header().replace(/}$/, `,"pad":"${"x".repeat(10_000)}"}`);
		expect(ranges(`${long}\n${rest}`)).toEqual({
			found: JSON.parse(header()).id,
			ranges: [
				[0, 4 * KiB],
				[0, 64 * KiB],
			],
		});
		// Its line feed the last byte of the first 4 KiB, or the first one after them.
		const padded = (bytes: number) => header().replace(/}$/, `,"pad":"${"x".repeat(bytes - header().length - 9)}"}`);
		expect(padded(4 * KiB - 1).length).toBe(4 * KiB - 1);
		expect(ranges(`${padded(4 * KiB - 1)}\n${rest}`).ranges).toEqual([[0, 4 * KiB]]);
		expect(ranges(`${padded(4 * KiB)}\n${rest}`).ranges).toEqual([
			[0, 4 * KiB],
			[0, 64 * KiB],
		]);
		expect(ranges(`${padded(4 * KiB - 1)}\r\n${rest}`)).toEqual({
			found: JSON.parse(header()).id,
			ranges: [
				[0, 4 * KiB],
				[0, 64 * KiB],
			],
		});
		const afterBlanks = ranges(`${"\n".repeat(70 * KiB)}{oops\n${header()}\n${rest}`);
		expect(afterBlanks.found).toBe(JSON.parse(header()).id);
		expect(afterBlanks.ranges).toEqual([
			[0, 4 * KiB],
			[0, 64 * KiB],
			[0, MiB],
		]);
	});
});
