/**
 * Fuzzing (issue 14): hostile and damaged session files against `Session.open` (read-only and writing,
 * full and lazy), the reads after it, listing through the catalog, and operations on the opened session.
 *
 * Inputs: random bytes and random JSON lines; files of `sessionFileArbitrary` (already damaged), sessions
 * made by random operations (`opsArbitrary`), the committed fixtures, and windows of the real corpus when it
 * is there (`test/support/corpus.ts`); each then mutated at random: cut at any offset, a byte flipped, lines
 * duplicated, swapped or run together, invalid UTF-8, long lines (up to a few MB), nesting a few hundred
 * levels deep (thousands are another test's), `__proto__` / `constructor` / `toString` keys and ids, and
 * odd types in any field of an entry, its message or its first content block.
 *
 * Properties (each case is run under a time bound of `CASE_MS` and fails on it: an open or read that never
 * settles is a hang; a synchronous endless loop would stall the whole run instead, which vitest reports):
 * - no crash: what throws is one of the package's typed errors (`TYPED`: the classes of src/errors.ts,
 *   `StorageError` among them); a `TypeError`, `RangeError` or plain `Error` escaping is a finding;
 * - nothing on `Object.prototype` changes (a `__proto__` key must stay data);
 * - every well-formed line is read: in a v3 file whose header opens it, a line after the header that is
 *   UTF-8, parses alone as a JSON object with a string `type` (not a second header) and a non-empty string
 *   `id` no other line has, is among `getEntries()` as `JSON.parse` reads it;
 * - a read-only open (full or lazy) changes nothing: the file's bytes and mtime, and the directory's names;
 * - a writing open changes only what the rules allow: the file is as it was, or as it was with one line
 *   feed added (`repairedLastLine`), or a header in an empty file (`wroteHeader`), or migrated, the bytes
 *   as they were then kept in the backup `report.migratedFrom.backupPath`; after closing, no lock is left;
 * - a lazy open reads what a full one does (`expectSameReads` of test/lazy-open.test.ts) when the damage is
 *   of lines, not inside strings (which a lazy open does not see until it decodes: lazy-open.test.ts);
 * - no acknowledged append is lost: operations after opening a mutated file for writing, then a reopen,
 *   give the entries the session had, the appended ones among them.
 *
 * Bounded for CI (the file runs in well under 60 s). A longer run: `FUZZ_RUNS=2000` runs that many cases
 * per property (the time bound per test is lifted), and `FUZZ_SEED=<n>` (with `FUZZ_PATH=<path>`) replays
 * the seed (and shrink path) fast-check printed:
 *   FUZZ_RUNS=2000 node_modules/.bin/vitest run --project node test/fuzz.test.ts
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { listSessions, Session, SessionTree, type Storage } from "../src/index.ts";
import { sessionFixtures } from "./fixtures/generate.ts";
import { CORPUS_FILES, diskCorpus } from "./support/corpus.ts";
import { comparable, concat, sessionFileArbitrary } from "./support/listing-sessions.ts";
import { applyOps, opsArbitrary } from "./support/ops.ts";
import { applyOp16, ops16Arbitrary, type Target16 } from "./support/ops16.ts";
import { expectSameReads } from "./support/same-reads.ts";
import { isTyped } from "./support/typed-errors.ts";

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? "") || 0;
const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
/** Cases of a property: its CI count, or `FUZZ_RUNS`. */
const runs = (ci: number): fc.Parameters<unknown> => ({
	numRuns: FUZZ_RUNS || ci,
	...(FUZZ_SEED === undefined ? {} : { seed: FUZZ_SEED }),
	...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
	// In CI, a failure (a hang among them) is reported with its seed before the test's time runs out.
	...(FUZZ_RUNS ? {} : { interruptAfterTimeLimit: 40_000 }),
});
/** A test's time bound: generous for CI's share, none to speak of for a long run. */
const TEST_MS = FUZZ_RUNS ? 24 * 3_600_000 : 60_000;
/** One case's bound: an open or read of these files takes milliseconds; this long is a hang. */
const CASE_MS = 5_000;

const DIR = "/sessions/--project--";
const PATH = `${DIR}/s.jsonl`;
const encoder = new TextEncoder();
// `ignoreBOM`: a BOM inside the file is a character of its line (the first line's is stripped by hand).
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

// Typed errors, time bounds -----------------------------------------------------------------------

class UntypedError extends Error {
	override name = "UntypedError";
}
class HangError extends Error {
	override name = "HangError";
}

function describeError(error: unknown): string {
	return error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ""}` : String(error);
}

/** `run()` within `CASE_MS`: its value, or the typed error it threw; an untyped error or a hang fails. */
async function settle<T>(what: string, run: () => T | Promise<T>): Promise<{ value: T } | { error: Error }> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const hang = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new HangError(`${what}: did not settle within ${CASE_MS} ms`)), CASE_MS);
	});
	try {
		return { value: await Promise.race([Promise.resolve().then(run), hang]) };
	} catch (error) {
		if (error instanceof HangError) throw error;
		if (!isTyped(error)) throw new UntypedError(`${what}: untyped error ${describeError(error)}`);
		return { error: error as Error };
	} finally {
		clearTimeout(timer);
	}
}

/** The value, or undefined when `run` threw a typed error. */
async function attempt<T>(what: string, run: () => T | Promise<T>): Promise<T | undefined> {
	const outcome = await settle(what, run);
	return "value" in outcome ? outcome.value : undefined;
}

const prototypeKeys = () => Reflect.ownKeys(Object.prototype).map(String).sort();
const PROTOTYPE_KEYS = prototypeKeys();
function expectPrototypeUntouched(): void {
	expect(prototypeKeys()).toEqual(PROTOTYPE_KEYS);
	expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

// Inputs -------------------------------------------------------------------------------------------

/** A file as lines (without their line feeds) and whether the last one has one. */
interface Lines {
	lines: Uint8Array[];
	finalNewline: boolean;
}

function splitLines(bytes: Uint8Array): Lines {
	const lines: Uint8Array[] = [];
	let start = 0;
	for (let at = bytes.indexOf(0x0a); at >= 0; at = bytes.indexOf(0x0a, start)) {
		lines.push(bytes.subarray(start, at));
		start = at + 1;
	}
	const finalNewline = start === bytes.length;
	if (!finalNewline) lines.push(bytes.subarray(start));
	return { lines, finalNewline };
}

function joinLines({ lines, finalNewline }: Lines): Uint8Array {
	const parts: Uint8Array[] = [];
	lines.forEach((line, index) => {
		parts.push(line);
		if (finalNewline || index < lines.length - 1) parts.push(Uint8Array.of(0x0a));
	});
	return concat(parts);
}

function linesOfRecords(records: readonly unknown[]): Uint8Array {
	return encoder.encode(records.map((record) => `${JSON.stringify(record)}\n`).join(""));
}

/** A session made by random operations (only lines that parse). */
const opsSession: fc.Arbitrary<Uint8Array> = opsArbitrary.map((ops) => {
	const tree = SessionTree.create({ cwd: "/project" });
	applyOps(tree, ops);
	return linesOfRecords([tree.getHeader(), ...tree.getEntries()]);
});

const FIXTURES = sessionFixtures().map((fixture) => ({ name: fixture.name, bytes: encoder.encode(fixture.text) }));
const fixtureFile: fc.Arbitrary<Uint8Array> = fc.constantFrom(...FIXTURES.map((fixture) => fixture.bytes));

const corpus = diskCorpus();
/** The corpus files as lines (read once, when the corpus is there). */
const corpusLines: Uint8Array[][] = corpus.found
	? CORPUS_FILES.map((file) => splitLines(corpus.readSync(file)).lines)
	: [];
/** A window of a corpus file: its header and up to 60 lines from anywhere in it. */
const corpusWindow: fc.Arbitrary<Uint8Array> | undefined = corpus.found
	? fc
			.record({ file: fc.nat(corpusLines.length - 1), from: fc.nat(), length: fc.integer({ min: 1, max: 60 }) })
			.map(({ file, from, length }) => {
				const lines = corpusLines[file] as Uint8Array[];
				const start = 1 + (from % (lines.length - 1));
				return joinLines({
					lines: [lines[0] as Uint8Array, ...lines.slice(start, start + length)],
					finalNewline: true,
				});
			})
	: undefined;

/** Lines of any JSON, after a v3 header or none. */
const jsonLines: fc.Arbitrary<Uint8Array> = fc
	.record({ header: fc.boolean(), values: fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 12 }) })
	.map(({ header, values }) =>
		linesOfRecords([
			...(header ? [{ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" }] : []),
			...values,
		]),
	);

/** Random bytes, alone or after a header line. */
const randomBytes: fc.Arbitrary<Uint8Array> = fc
	.record({ header: fc.boolean(), bytes: fc.uint8Array({ maxLength: 3000 }) })
	.map(({ header, bytes }) =>
		header
			? concat([
					encoder.encode('{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n'),
					bytes,
				])
			: bytes,
	);

/** Sources whose lines parse: the damage that a lazy open must read as a full one does is added to them. */
const wholeSources: fc.Arbitrary<Uint8Array> = fc.oneof(
	{ weight: 3, arbitrary: opsSession },
	{ weight: 2, arbitrary: fixtureFile },
	...(corpusWindow ? [{ weight: 2, arbitrary: corpusWindow }] : []),
);

/** Every source. */
const anySource: fc.Arbitrary<Uint8Array> = fc.oneof(
	{ weight: 3, arbitrary: wholeSources },
	{ weight: 2, arbitrary: sessionFileArbitrary },
	{ weight: 1, arbitrary: jsonLines },
	{ weight: 1, arbitrary: randomBytes },
);

// Mutations ----------------------------------------------------------------------------------------

/** Keys that name something on `Object.prototype`, or a prototype itself. */
const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty"] as const;

/** Fields that the engine reads somewhere (entries, messages, content blocks, headers). */
const FIELDS = [
	"type",
	"id",
	"parentId",
	"timestamp",
	"message",
	"role",
	"content",
	"text",
	"firstKeptEntryId",
	"firstKeptEntryIndex",
	"targetId",
	"replacement",
	"label",
	"name",
	"summary",
	"fromId",
	"customType",
	"data",
	"details",
	"display",
	"tokensBefore",
	"usage",
	"provider",
	"model",
	"modelId",
	"thinkingLevel",
	"systemMessage",
	"sections",
	"toolsAdded",
	"version",
	"cwd",
	"parentSession",
	"toolCallId",
	"arguments",
	...PROTO_KEYS,
] as const;

/** Odd values for any field: other types, names of prototype members, and objects that look like prototypes. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
	fc.constantFrom(
		null,
		true,
		false,
		0,
		-1,
		1.5,
		1e308,
		-0,
		"",
		" ",
		"x",
		[],
		{},
		[1, "a", null],
		{ a: 1 },
		{ polluted: true },
		"__proto__",
		"constructor",
		"toString",
		"hasOwnProperty",
		"session",
		"message",
		"compaction",
		"label",
		"not-an-entry",
		"2026-13-45T99:99:99Z",
		[{ type: "text", text: 7 }],
		[{ type: "toolCall", id: null, name: {}, arguments: "x" }],
		{ role: "user", content: {} },
		{ role: "__proto__", content: [] },
		{ role: "constructor" },
	),
	fc.jsonValue({ maxDepth: 2 }),
	fc.string({ maxLength: 12 }),
);

type Where = "entry" | "message" | "block";

type Mutation =
	| { kind: "truncate"; at: number }
	| { kind: "flip"; at: number; xor: number }
	| { kind: "duplicate"; line: number }
	| { kind: "swap"; a: number; b: number }
	| { kind: "join"; line: number }
	| { kind: "crlf"; line: number }
	| { kind: "badUtf8"; line: number; at: number; bytes: number[] }
	| { kind: "longLine"; line: number; length: number; junk: boolean }
	| { kind: "deep"; line: number; depth: number; object: boolean; closed: boolean; where: Where }
	| { kind: "field"; line: number; where: Where; key: string; value: unknown };

const line = fc.nat();
const where: fc.Arbitrary<Where> = fc.constantFrom("entry", "message", "block");
/** Invalid UTF-8: a lone continuation byte, a lead byte without its tail, an overlong form, a surrogate, too high. */
const badBytes = fc.constantFrom<number[]>(
	[0xff],
	[0x80],
	[0xc3],
	[0xe2, 0x82],
	[0xc0, 0xaf],
	[0xed, 0xa0, 0x80],
	[0xf8, 0x88],
);

/** Damage to lines that leaves the inside of strings alone: a lazy open must read it as a full one does. */
const lineMutation: fc.Arbitrary<Mutation> = fc.oneof(
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }) },
	{ weight: 2, arbitrary: fc.record({ kind: fc.constant("duplicate" as const), line }) },
	{ weight: 2, arbitrary: fc.record({ kind: fc.constant("swap" as const), a: line, b: line }) },
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("crlf" as const), line }) },
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant("longLine" as const),
			line,
			length: fc.oneof(
				{ weight: 8, arbitrary: fc.integer({ min: 300, max: 20_000 }) },
				{ weight: 1, arbitrary: fc.constantFrom(70_000, 300_000, 1_100_000) },
			),
			junk: fc.boolean(),
		}),
	},
	{
		weight: 2,
		arbitrary: fc.record({
			kind: fc.constant("deep" as const),
			line,
			depth: fc.integer({ min: 20, max: 400 }),
			object: fc.boolean(),
			closed: fc.boolean(),
			where,
		}),
	},
	{
		weight: 6,
		arbitrary: fc.record({
			kind: fc.constant("field" as const),
			line,
			where,
			key: fc.constantFrom(...FIELDS),
			value: oddValue,
		}),
	},
);

/** Any damage: also bytes flipped anywhere, invalid UTF-8, lines run together. */
const anyMutation: fc.Arbitrary<Mutation> = fc.oneof(
	{ weight: 4, arbitrary: lineMutation },
	{
		weight: 2,
		arbitrary: fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
	},
	{
		weight: 1,
		arbitrary: fc.record({ kind: fc.constant("badUtf8" as const), line, at: fc.nat(), bytes: badBytes }),
	},
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("join" as const), line }) },
);

function setOwn(target: object, key: string, value: unknown): void {
	// Not `target[key] = value`: a "__proto__" key must be a key, as JSON.parse makes it.
	Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function parsedObject(bytes: Uint8Array): Record<string, unknown> | undefined {
	try {
		const value: unknown = JSON.parse(strict.decode(bytes));
		return typeof value === "object" && value !== null && !Array.isArray(value)
			? (value as Record<string, unknown>)
			: undefined;
	} catch {
		return undefined;
	}
}

/** The object a `where` names in an entry: itself, its message, or the message's first content block. */
function targetOf(entry: Record<string, unknown>, where: Where): Record<string, unknown> {
	const isObject = (value: unknown): value is Record<string, unknown> =>
		typeof value === "object" && value !== null && !Array.isArray(value);
	const message = entry.message;
	if (where === "entry" || !isObject(message)) return entry;
	const content = message.content;
	if (where === "block" && Array.isArray(content) && isObject(content[0])) return content[0];
	return message;
}

function nested(depth: number, object: boolean, closed: boolean): string {
	const open = object ? '{"a":' : "[";
	const close = object ? "}" : "]";
	return `${open.repeat(depth)}${object ? "1" : ""}${closed ? close.repeat(depth) : ""}`;
}

/** Change an entry line by `change`, or insert `fallback` there when the line is no JSON object. */
function editLine(
	file: Lines,
	index: number,
	change: (entry: Record<string, unknown>) => string,
	fallback: () => string,
): void {
	const entry = parsedObject(file.lines[index] as Uint8Array);
	if (entry) file.lines[index] = encoder.encode(change(entry));
	else file.lines.splice(index, 0, encoder.encode(fallback()));
}

/** Apply one mutation; line numbers are taken modulo the file's lines. */
function mutate(bytes: Uint8Array, mutation: Mutation): Uint8Array {
	if (mutation.kind === "truncate") return bytes.slice(0, mutation.at % (bytes.length + 1));
	if (mutation.kind === "flip") {
		if (bytes.length === 0) return bytes;
		const copy = bytes.slice();
		const at = mutation.at % copy.length;
		copy[at] = (copy[at] as number) ^ mutation.xor;
		return copy;
	}
	const file = splitLines(bytes);
	const lines = file.lines;
	if (lines.length === 0) lines.push(new Uint8Array(0));
	const pick = (n: number) => n % lines.length;
	switch (mutation.kind) {
		case "duplicate": {
			const index = pick(mutation.line);
			lines.splice(index + 1, 0, lines[index] as Uint8Array);
			break;
		}
		case "swap": {
			const [a, b] = [pick(mutation.a), pick(mutation.b)];
			[lines[a], lines[b]] = [lines[b] as Uint8Array, lines[a] as Uint8Array];
			break;
		}
		case "join": {
			const index = pick(mutation.line);
			if (index + 1 < lines.length) {
				lines.splice(index, 2, concat([lines[index] as Uint8Array, lines[index + 1] as Uint8Array]));
			}
			break;
		}
		case "crlf": {
			const index = pick(mutation.line);
			lines[index] = concat([lines[index] as Uint8Array, Uint8Array.of(0x0d)]);
			break;
		}
		case "badUtf8": {
			const index = pick(mutation.line);
			const target = lines[index] as Uint8Array;
			const at = mutation.at % (target.length + 1);
			lines[index] = concat([target.subarray(0, at), Uint8Array.from(mutation.bytes), target.subarray(at)]);
			break;
		}
		case "longLine": {
			const index = pick(mutation.line);
			const long = "Zm9v".repeat(Math.ceil(mutation.length / 4)).slice(0, mutation.length);
			if (mutation.junk) lines.splice(index, 0, encoder.encode(long));
			else
				editLine(
					file,
					index,
					(entry) => {
						setOwn(targetOf(entry, "block"), "text", long);
						return JSON.stringify(entry);
					},
					() => JSON.stringify({ type: "custom", id: "long0001", parentId: null, data: long }),
				);
			break;
		}
		case "deep": {
			const index = pick(mutation.line);
			const value = nested(mutation.depth, mutation.object, mutation.closed);
			const marker = "\u0000deep\u0000";
			editLine(
				file,
				index,
				(entry) => {
					setOwn(targetOf(entry, mutation.where), "details", marker);
					return JSON.stringify(entry).replace(JSON.stringify(marker), value);
				},
				() => value,
			);
			break;
		}
		case "field": {
			const index = pick(mutation.line);
			editLine(
				file,
				index,
				(entry) => {
					setOwn(targetOf(entry, mutation.where), mutation.key, mutation.value);
					return JSON.stringify(entry);
				},
				() => `{"${mutation.key}":${JSON.stringify(mutation.value) ?? "null"},"type":"message","id":"odd00001"}`,
			);
			break;
		}
	}
	return joinLines(file);
}

/** A source and its mutations, applied in order. */
interface FuzzCase {
	source: Uint8Array;
	mutations: Mutation[];
}

function bytesOf({ source, mutations }: FuzzCase): Uint8Array {
	return mutations.reduce(mutate, source);
}

/** Files whose damage a lazy open must read as a full one does. */
const lineDamaged: fc.Arbitrary<FuzzCase> = fc.record({
	source: wholeSources,
	mutations: fc.array(lineMutation, { minLength: 1, maxLength: 4 }),
});
/** Any file, any damage. */
const anyDamaged: fc.Arbitrary<FuzzCase> = fc.record({
	source: anySource,
	mutations: fc.array(anyMutation, { maxLength: 5 }),
});

// Checks -------------------------------------------------------------------------------------------

async function storageWith(bytes: Uint8Array): Promise<Storage> {
	const storage = await createMemoryStorage();
	await storage.mkdir(DIR);
	await storage.createExclusive(PATH, [bytes], false);
	return storage;
}

async function snapshot(storage: Storage): Promise<{ names: string[]; bytes: Uint8Array; mtimeMs: number }> {
	const stat = await storage.stat(PATH);
	const bytes = await storage.readRange(PATH, 0, stat?.size ?? 0);
	const names = (await storage.list(DIR)).map((entry) => entry.name).sort();
	return { names, bytes, mtimeMs: stat?.mtimeMs ?? Number.NaN };
}

/**
 * The lines of `bytes` that a load must read: in a file whose first record is a v3 header, every line
 * after it that is UTF-8, a JSON object with a string `type` (no header) and an id no other line has.
 */
function wellFormedEntries(bytes: Uint8Array): Map<string, unknown> {
	const { lines } = splitLines(bytes);
	const records: { value: Record<string, unknown>; valid: boolean }[] = [];
	lines.forEach((raw, index) => {
		let content = raw;
		if (index === 0 && content[0] === 0xef && content[1] === 0xbb && content[2] === 0xbf) content = content.subarray(3);
		if (content[content.length - 1] === 0x0d) content = content.subarray(0, content.length - 1);
		let valid = true;
		let text: string;
		try {
			text = strict.decode(content);
		} catch {
			text = lenient.decode(content);
			valid = false;
		}
		let value: unknown;
		try {
			value = JSON.parse(text);
		} catch {
			return;
		}
		if (typeof value !== "object" || value === null || Array.isArray(value)) return;
		if (typeof (value as { type?: unknown }).type !== "string") return;
		records.push({ value: value as Record<string, unknown>, valid });
	});
	const expected = new Map<string, unknown>();
	const header = records[0]?.value;
	if (header?.type !== "session" || header.version !== 3) return expected;
	const counts = new Map<unknown, number>();
	for (const { value } of records.slice(1)) counts.set(value.id, (counts.get(value.id) ?? 0) + 1);
	for (const { value, valid } of records.slice(1)) {
		const id = value.id;
		if (!valid || value.type === "session" || typeof id !== "string" || id === "" || counts.get(id) !== 1) continue;
		expected.set(id, value);
	}
	return expected;
}

function expectWellFormedRead(bytes: Uint8Array, entries: readonly { id: string }[], what: string): void {
	const expected = wellFormedEntries(bytes);
	if (expected.size === 0) return;
	const read = new Map<string, unknown>();
	for (const entry of entries) if (!read.has(entry.id)) read.set(entry.id, entry);
	for (const [id, entry] of expected) expect(read.get(id), `${what}: the well-formed entry ${id}`).toEqual(entry);
}

/** Leaves to read the context at: every entry, none, the default, and ids that are no entry. */
function leavesOf(ids: readonly string[], picks: readonly number[]): (string | null | undefined)[] {
	const chosen = ids.length === 0 ? [] : picks.map((pick) => ids[pick % ids.length] as string);
	return [undefined, null, "not-an-entry", "__proto__", "constructor", ...chosen];
}

const readPicks = fc.record({
	leaves: fc.array(fc.nat(), { maxLength: 4 }),
	pages: fc.array(
		fc.record({
			offset: fc.option(fc.integer({ min: -3, max: 1e6 }), { nil: undefined }),
			limit: fc.option(fc.integer({ min: -3, max: 50 }), { nil: undefined }),
			last: fc.option(fc.integer({ min: -3, max: 50 }), { nil: undefined }),
		}),
		{ maxLength: 3 },
	),
});
type ReadPicks = typeof readPicks extends fc.Arbitrary<infer T> ? T : never;

/** Every read after an open: none may crash or hang. */
async function readEverything(session: Session, picks: ReadPicks, what: string): Promise<void> {
	const entries = (await attempt(`${what} getEntries`, () => session.getEntries())) ?? [];
	await attempt(`${what} getTree`, () => session.getTree());
	await attempt(`${what} outline`, () => session.outline());
	await attempt(`${what} outline page`, () => session.outline({ offset: 1, limit: 3 }));
	const ids = entries.map((entry) => entry.id).filter((id): id is string => typeof id === "string");
	for (const leaf of leavesOf(ids, picks.leaves)) {
		await attempt(`${what} buildSessionContext(${leaf})`, () => session.buildSessionContext(leaf));
		for (const page of picks.pages) {
			await attempt(`${what} contextPage(${JSON.stringify(page)})`, () =>
				session.contextPage({ leafId: leaf, ...page }),
			);
		}
	}
	for (const id of ids.slice(0, 5)) {
		await attempt(`${what} getEntry`, () => session.getEntry(id));
		await attempt(`${what} getBranch`, () => session.getBranch(id));
	}
}

/**
 * Read-only opens, full and lazy: typed errors only, every well-formed line read, the file untouched.
 * `agree`: the two opens read the same (every read; "light": entries, tree and outline, and no other reads).
 */
async function checkReadOnly(bytes: Uint8Array, picks: ReadPicks, agree: boolean | "light"): Promise<void> {
	const storage = await storageWith(bytes);
	const before = await snapshot(storage);
	const opened: Partial<Record<"full" | "lazy", Session>> = {};
	for (const load of ["full", "lazy"] as const) {
		const session = await attempt(`read-only ${load} open`, () =>
			Session.open(storage, PATH, { readOnly: true, load }),
		);
		if (!session) continue;
		opened[load] = session;
		const entries = await attempt(`read-only ${load} getEntries`, () => session.getEntries());
		// A lazy open reads a damaged string only when it decodes it (a typed error then).
		if (entries || load === "full") expectWellFormedRead(bytes, entries ?? [], `read-only ${load} open`);
		if (agree !== "light") await readEverything(session, picks, `read-only ${load}`);
	}
	expect(Boolean(opened.full), "a full and a lazy open both open, or neither does").toBe(Boolean(opened.lazy));
	if (agree && opened.full && opened.lazy) {
		const { full, lazy } = opened;
		if (lazy.lazy && agree !== "light") await expectSameReads(full, lazy);
		else {
			expect(await lazy.getEntries()).toEqual(full.tree.getEntries());
			expect(await lazy.getTree()).toEqual(full.tree.getTree());
			expect(lazy.outline()).toEqual(full.outline());
		}
	}
	expect(await snapshot(storage), "a read-only open changes nothing").toEqual(before);
	expectPrototypeUntouched();
}

/** What the operations need of a session or a tree (the same method names); errors are kept to be judged. */
function opsTarget(session: Session | SessionTree, thrown: unknown[]): Target16 {
	const on = session as Session & SessionTree;
	const structure = session instanceof Session ? session.tree : session;
	const target: Target16 = {
		appendMessage: (message) => on.appendMessage(message as never),
		appendThinkingLevelChange: (level) => on.appendThinkingLevelChange(level),
		appendModelChange: (provider, modelId) => on.appendModelChange(provider, modelId),
		appendUsage: (...args) => on.appendUsage(...args),
		appendCompaction: (...args) => on.appendCompaction(...(args as [string, string, number])),
		appendContextEdit: (targetId, replacement) => on.appendContextEdit(targetId, replacement as never),
		appendCustomEntry: (customType, data) => on.appendCustomEntry(customType, data),
		appendCustomMessageEntry: (customType, content, display, details) =>
			on.appendCustomMessageEntry(customType, content as never, display, details),
		appendLabelChange: (targetId, label) => on.appendLabelChange(targetId, label),
		appendSessionInfo: (name) => on.appendSessionInfo(name),
		branchWithSummary: (...args) => on.branchWithSummary(...args),
		branch: (id) => on.branch(id),
		resetLeaf: () => on.resetLeaf(),
		fork: () => undefined, // a fork writes another file: not what this checks
		entryIds: () => structure.structureBetween(0, structure.size).map((entry) => entry.id),
		branchIds: () => structure.structureOfBranch().map((entry) => entry.id),
	};
	const recording = {} as Record<string, unknown>;
	for (const [name, method] of Object.entries(target)) {
		recording[name] = (...args: unknown[]) => {
			try {
				const result = (method as (...a: unknown[]) => unknown)(...args);
				if (result instanceof Promise) {
					return result.catch((error: unknown) => {
						thrown.push(error);
						throw error;
					});
				}
				return result;
			} catch (error) {
				thrown.push(error);
				throw error;
			}
		};
	}
	return recording as unknown as Target16;
}

/**
 * The same session in memory, built from the entries it read: what an operation throws on it is the
 * refusal of the arguments (an edit of nothing, a label of no entry), not of the file.
 */
async function referenceOf(session: Session): Promise<SessionTree | undefined> {
	const entries = await attempt("reference getEntries", () => session.getEntries());
	if (!entries) return undefined;
	try {
		const tree = SessionTree.fromRecords([session.tree.getHeader(), ...entries]);
		const leaf = session.tree.getLeafId();
		if (leaf === null) tree.resetLeaf();
		else tree.branch(leaf);
		return tree;
	} catch {
		return undefined;
	}
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
	return bytes.length >= prefix.length && prefix.every((byte, index) => bytes[index] === byte);
}

/**
 * A writing open, operations, a close and a reopen: typed errors only; the file changed only as the rules
 * allow; every acknowledged append (and every entry the session had) read again.
 */
async function checkWriting(
	bytes: Uint8Array,
	load: "full" | "lazy",
	ops: Parameters<typeof applyOp16>[1][],
	picks: ReadPicks,
): Promise<void> {
	const storage = await storageWith(bytes);
	const before = await snapshot(storage);
	const session = await attempt(`writing ${load} open`, () => Session.open(storage, PATH, { load }));
	if (!session) {
		expect(await snapshot(storage), "a failed writing open changes nothing").toEqual(before);
		return;
	}
	const afterOpen = await snapshot(storage);
	const report = session.report;
	const backupPath = report.migratedFrom?.backupPath;
	if (backupPath) {
		const backup = await storage.readRange(backupPath, 0, (await storage.stat(backupPath))?.size ?? 0);
		expect(backup, "the backup holds the file as it was").toEqual(before.bytes);
	} else if (report.wroteHeader) {
		expect(lenient.decode(before.bytes).trim(), "a header is written into an empty file only").toBe("");
	} else if (report.repairedLastLine) {
		expect(afterOpen.bytes).toEqual(concat([before.bytes, Uint8Array.of(0x0a)]));
	} else {
		expect(afterOpen.bytes, "a writing open that reports no change makes none").toEqual(before.bytes);
	}
	const entries = await attempt("writing getEntries", () => session.getEntries());
	// A lazy open reads a damaged string only when it decodes it (a typed error then).
	if (entries || load === "full") expectWellFormedRead(bytes, entries ?? [], `writing ${load} open`);

	// Operations: what one throws is a typed error, or the refusal the same session in memory gives too.
	const thrown: unknown[] = [];
	const target = opsTarget(session, thrown);
	const reference = await referenceOf(session);
	const referenceTarget = reference && opsTarget(reference, []);
	for (const [index, op] of ops.entries()) {
		const outcome = await settle(`operation ${op.kind}`, () => applyOp16(target, op, index));
		const expected = referenceTarget && (await applyOp16(referenceTarget, op, index));
		if ("value" in outcome && outcome.value.kind === "threw") {
			const error = thrown.at(-1);
			const refused = expected?.kind === "threw" && expected.message === outcome.value.message;
			if (!isTyped(error) && !refused) {
				throw new UntypedError(`operation ${op.kind}: untyped error ${describeError(error)}`);
			}
		}
	}
	await settle("flush", () => session.flush());
	await readEverything(session, picks, `writing ${load}`);
	const held = await settle("getEntries", () => session.getEntries());
	await settle("close", () => session.close());
	const afterClose = await snapshot(storage);
	expect(startsWith(afterClose.bytes, afterOpen.bytes), "appends only add to the file").toBe(true);
	const backupName = backupPath?.slice(backupPath.lastIndexOf("/") + 1);
	const names = [...before.names, ...(backupName ? [backupName] : [])].sort();
	expect(afterClose.names, "no lock or temporary file is left, a backup only after a migration").toEqual(names);
	if (!("value" in held)) return;
	const reopened = await settle("reopen", () => Session.open(storage, PATH, { readOnly: true, load: "full" }));
	expect("value" in reopened && reopened.value.tree.getEntries(), "no acknowledged entry is lost").toEqual(held.value);
	expectPrototypeUntouched();
}

// Properties ---------------------------------------------------------------------------------------

describe("fuzzing: damaged and hostile session files", () => {
	it(
		"read-only opens (full and lazy) of any damaged file: typed errors, every well-formed line, the file untouched",
		async () => {
			await fc.assert(
				fc.asyncProperty(anyDamaged, readPicks, async (fuzz, picks) => checkReadOnly(bytesOf(fuzz), picks, false)),
				runs(80),
			);
		},
		TEST_MS,
	);

	it(
		"a lazy open reads what a full one does, for damage to lines (not inside strings)",
		async () => {
			await fc.assert(
				fc.asyncProperty(lineDamaged, readPicks, async (fuzz, picks) => checkReadOnly(bytesOf(fuzz), picks, true)),
				runs(20),
			);
		},
		TEST_MS,
	);

	it(
		"writing opens (full and lazy) and operations after: only allowed changes, no acknowledged append lost",
		async () => {
			await fc.assert(
				fc.asyncProperty(
					anyDamaged,
					fc.constantFrom("full" as const, "lazy" as const),
					ops16Arbitrary(10),
					readPicks,
					async (fuzz, load, ops, picks) => {
						await checkWriting(bytesOf(fuzz), load, ops, picks);
					},
				),
				runs(40),
			);
		},
		TEST_MS,
	);

	it(
		"random bytes and random JSON lines, opened every way",
		async () => {
			await fc.assert(
				fc.asyncProperty(
					fc.oneof(randomBytes, jsonLines),
					fc.constantFrom("full" as const, "lazy" as const),
					readPicks,
					async (bytes, load, picks) => {
						await checkReadOnly(bytes, picks, false);
						await checkWriting(bytes, load, [], picks);
					},
				),
				runs(20),
			);
		},
		TEST_MS,
	);
});

describe("fuzzing: truncation at every offset", () => {
	/** A small session: a message with non-ASCII text and a label. */
	function smallSession(): Uint8Array {
		const tree = SessionTree.create({ cwd: "/p", id: "s1" });
		const first = tree.appendMessage({ role: "user", content: "héllo 😀", timestamp: 1 });
		tree.appendLabelChange(first, "start");
		return linesOfRecords([tree.getHeader(), ...tree.getEntries()]);
	}
	const small = smallSession();
	const v1 = encoder.encode(
		[
			'{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}',
			'{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"q","timestamp":1}}',
		]
			.map((text) => `${text}\n`)
			.join(""),
	);
	const picks: ReadPicks = { leaves: [], pages: [{ offset: undefined, limit: undefined, last: 2 }] };

	it(
		`a v3 session (${small.length} bytes) cut at every offset: read-only full and lazy (which agree), and writing`,
		async () => {
			for (let at = 0; at <= small.length; at++) {
				const cut = small.slice(0, at);
				// Every read, compared, at a sample of the offsets (the entries, tree and outline at all).
				await checkReadOnly(cut, picks, at % 20 === 0 ? true : "light");
				// Writing opens at a sample of the offsets.
				if (at % 16 === 0) {
					await checkWriting(cut, at % 2 === 0 ? "full" : "lazy", [], picks);
				}
			}
		},
		TEST_MS,
	);

	it(
		`a v1 session (${v1.length} bytes) cut at every offset, opened for writing (migrated, with a backup)`,
		async () => {
			for (let at = 0; at <= v1.length; at++) await checkWriting(v1.slice(0, at), "full", [], picks);
		},
		TEST_MS,
	);
});

describe("fuzzing: listing through the catalog", () => {
	it(
		"lists damaged files the same cold, warm, after a change and with a damaged catalog, as without one",
		async () => {
			await fc.assert(
				fc.asyncProperty(
					fc.array(anyDamaged, { minLength: 1, maxLength: 5 }),
					fc.nat(),
					anyMutation,
					async (cases, grow, catalogDamage) => {
						const storage = await createMemoryStorage();
						await storage.mkdir(DIR);
						const paths = cases.map((_, index) => `${DIR}/2026-01-01T00-00-0${index}-000Z_s${index}.jsonl`);
						for (const [index, fuzz] of cases.entries()) {
							await storage.createExclusive(paths[index] as string, [bytesOf(fuzz)], false);
						}
						const catalog = "/pi/agent/listing-catalog.json";
						await storage.mkdir("/pi/agent");
						const list = async (what: string, withCatalog: boolean) => {
							const outcome = await settle(what, () => listSessions(storage, DIR, withCatalog ? { catalog } : {}));
							return "value" in outcome ? outcome.value.map(comparable) : outcome.error.name;
						};
						const plain = await list("listing", false);
						expect(await list("cold catalog listing", true)).toEqual(plain);
						expect(await list("warm catalog listing", true)).toEqual(plain);
						// A file grows (as an append makes it): the warm listing reads what changed.
						const grown = paths[grow % paths.length] as string;
						await storage.append(
							grown,
							encoder.encode(
								'{"type":"message","id":"grown001","parentId":null,"message":{"role":"user","content":"more"}}\n',
							),
							false,
						);
						const changed = await list("listing after a change", false);
						expect(await list("warm catalog listing after a change", true)).toEqual(changed);
						// A damaged catalog is a cache to rebuild.
						const stat = await storage.stat(catalog);
						if (stat) {
							const bytes = await storage.readRange(catalog, 0, stat.size);
							await storage.replace(catalog, [mutate(bytes, catalogDamage)]);
						}
						expect(await list("listing with a damaged catalog", true)).toEqual(changed);
						expectPrototypeUntouched();
					},
				),
				runs(25),
			);
		},
		TEST_MS,
	);
});
