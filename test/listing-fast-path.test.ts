/**
 * The cold listing reads lines without parsing those it does not show: it must give exactly what parsing
 * every line (`sessionInfoTask`, folding with the same rules) gives, whatever the file holds. That the
 * rules are pi 1.6.0's is shown against pi itself in listing-pi16.test.ts.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { listSessions, sessionInfoTask } from "../src/catalog.ts";
import type { Storage } from "../src/index.ts";
import { listFile } from "../src/listing-file.ts";
import { isPlainEntryJson, messageFields } from "../src/listing-json-scan.ts";
import { ASSISTANT_LINE, COUNT_LINE, lineKind, PARSE_LINE, SKIP_LINE, USER_LINE } from "../src/listing-line-kind.ts";
import { cutText } from "../src/listing-summary.ts";
import { runTask } from "../src/storage.ts";
import { FIXTURE_NAMES, sessionFixtures } from "./fixtures/generate.ts";
import { CORPUS_FILES, describeWithCorpus, diskCorpus } from "./support/corpus.ts";
import { comparable, concat, edited, recordingStorage, sessionFileArbitrary } from "./support/listing-sessions.ts";

const encoder = new TextEncoder();
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

function parsesAsObject(bytes: Uint8Array): boolean {
	try {
		const value = JSON.parse(lenient.decode(bytes));
		return typeof value === "object" && value !== null && !Array.isArray(value);
	} catch {
		return false;
	}
}

const plain = (line: string) => {
	const bytes = encoder.encode(line);
	return isPlainEntryJson(bytes, 0, bytes.length);
};

/** A line's bytes with some edits: bytes deleted, inserted (JSON's own characters mostly), a part repeated. */
const edits = fc.array(
	fc.record({
		kind: fc.constantFrom("delete", "insert", "repeat"),
		at: fc.nat(),
		length: fc.integer({ min: 1, max: 6 }),
		bytes: fc.array(
			fc.constantFrom(...encoder.encode('{}[]",:\\ \t0123456789eE.+-tfnulr'), 0x00, 0x1f, 0x80, 0xff, 0xc3),
			{
				minLength: 1,
				maxLength: 4,
			},
		),
	}),
	{ minLength: 1, maxLength: 3 },
);

const safeKey = fc.string({ unit: fc.constantFrom("a", "b", "é", " ", "😀", "-"), minLength: 1, maxLength: 5 });
const entryObject = fc
	.record({
		type: fc.string({ maxLength: 8 }),
		fields: fc.dictionary(
			safeKey.filter((key) => key !== "type" && key !== "message"),
			fc.jsonValue({ maxDepth: 3 }),
			{ maxKeys: 4 },
		),
		message: fc.option(
			fc.record({
				role: fc.string({ maxLength: 6 }),
				rest: fc.dictionary(
					safeKey.filter((k) => k !== "role"),
					fc.jsonValue({ maxDepth: 2 }),
				),
			}),
		),
	})
	.map(({ type, fields, message }) => ({
		type,
		...fields,
		...(message ? { message: { role: message.role, ...message.rest } } : {}),
	}));

describe("isPlainEntryJson", () => {
	it("says yes to JSON objects with one `type`, compact or spaced, at any alignment", () => {
		fc.assert(
			fc.property(entryObject, fc.boolean(), fc.integer({ min: 0, max: 7 }), (value, spaced, shift) => {
				const text = spaced ? JSON.stringify(value, null, 1).replaceAll("\n", " ") : JSON.stringify(value);
				const line = encoder.encode(text);
				// Inside a bigger buffer, followed by bytes that would complete a cut line: it must not look past `end`.
				const buffer = concat([new Uint8Array(shift), line, encoder.encode('"}]}\n')]);
				expect(isPlainEntryJson(buffer, shift, shift + line.length)).toBe(true);
			}),
			{ numRuns: 2000 },
		);
	});

	it("says yes only to what JSON.parse reads as an object", () => {
		fc.assert(
			fc.property(entryObject, edits, (value, list) => {
				const bytes = edited(encoder.encode(JSON.stringify(value)), list);
				if (isPlainEntryJson(bytes, 0, bytes.length)) expect(parsesAsObject(bytes)).toBe(true);
			}),
			{ numRuns: 20_000 },
		);
	});

	it("leaves duplicate and escaped keys, deep nesting and odd numbers to JSON.parse", () => {
		expect(plain('{"type":"label","id":"a"}')).toBe(true);
		expect(plain('{"type":"label","type":"message"}')).toBe(false);
		expect(plain('{"type":"label","typ\\u0065":"message"}')).toBe(false);
		expect(plain('{"type":"message","message":{"role":"toolResult"},"message":{"role":"user"}}')).toBe(false);
		expect(plain('{"type":"message","message":{"role":"toolResult","role":"user"}}')).toBe(false);
		expect(plain('{"type":"message","message":{"role":"toolResult","r\\u006fle":"user"}}')).toBe(false);
		// Escaped keys deeper down do not matter.
		expect(
			plain('{"type":"message","message":{"role":"toolResult","details":{"r\\u006fle":1,"role":2,"type":3}}}'),
		).toBe(true);
		expect(plain(`{"type":"x","d":${"[".repeat(600)}${"]".repeat(600)}}`)).toBe(false);
		for (const number of ["0", "-0", "1.5e-3", "-12E+2", "1e400"])
			expect(plain(`{"type":"x","n":${number}}`)).toBe(true);
		for (const number of ["01", "1.", ".5", "+1", "1e", "-", "0x1", "NaN", "Infinity"]) {
			expect(plain(`{"type":"x","n":${number}}`)).toBe(false);
		}
		for (const bad of [
			'{"type":"x",}',
			'{"type":"x"',
			'{"type":"x"}}',
			'{"type":"x"} x',
			'{"type":"a\tb"}',
			'{"type":"\\x"}',
		]) {
			expect(plain(bad)).toBe(false);
		}
		expect(plain('  {"type":"x","s":"\\u00e9\\n\\"","e":{},"a":[]} \t')).toBe(true);
		expect(plain('{"type":"x","s":"\\u00g9"}')).toBe(false);
	});

	it("reads bytes that are not UTF-8 inside strings as JSON.parse reads their U+FFFD", () => {
		const line = concat([encoder.encode('{"type":"x","s":"a'), Uint8Array.of(0xff, 0xe2, 0x82), encoder.encode('"}')]);
		expect(isPlainEntryJson(line, 0, line.length)).toBe(true);
		expect(parsesAsObject(line)).toBe(true);
		const outside = concat([encoder.encode('{"type":"x","s":1'), Uint8Array.of(0xff), encoder.encode("}")]);
		expect(isPlainEntryJson(outside, 0, outside.length)).toBe(false);
	});
});

describe("lineKind", () => {
	const kind = (line: string) => {
		const bytes = encoder.encode(line);
		return lineKind(bytes, 0, bytes.length);
	};
	const message = (body: string) =>
		`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"t","message":${body}}`;

	it("parses user and assistant messages and session_info, counts the other messages, skips the other entries", () => {
		expect(kind(message('{"role":"user","content":"hi"}'))).toBe(USER_LINE);
		expect(kind(message('{"role":"assistant","content":[]}'))).toBe(ASSISTANT_LINE);
		expect(kind(message('{"role":"toolResult","content":[{"type":"text","text":"x"}]}'))).toBe(COUNT_LINE);
		expect(kind(message('{"role":"bashExecution","command":"ls"}'))).toBe(COUNT_LINE);
		expect(kind('{"type":"session_info","id":"a","parentId":null,"timestamp":"t","name":"n"}')).toBe(PARSE_LINE);
		expect(kind('{"type":"label","id":"a","parentId":"b","timestamp":"t","targetId":"c","label":"l"}')).toBe(SKIP_LINE);
		// v1: no ids before the message.
		expect(kind('{"type":"message","timestamp":"t","message":{"role":"toolResult","content":"x"}}')).toBe(COUNT_LINE);
	});

	it("parses whatever is not in pi's shape", () => {
		expect(kind('{"message":{"role":"toolResult"},"type":"message"}')).toBe(PARSE_LINE);
		expect(kind(message('{"content":"x","role":"toolResult"}'))).toBe(PARSE_LINE);
		expect(kind(message('{"role":"tool\\u0052esult"}'))).toBe(PARSE_LINE);
		expect(kind('{"type":"mess\\u0061ge","message":{"role":"toolResult"}}')).toBe(PARSE_LINE);
		expect(kind(message('"text"'))).toBe(PARSE_LINE);
		expect(kind(`${message('{"role":"toolResult"}')}x`)).toBe(PARSE_LINE);
		expect(kind('{"type":"label","type":"message"}')).toBe(PARSE_LINE);
	});
});

describe("messageFields", () => {
	const fields = (line: string) => {
		const bytes = encoder.encode(line);
		return messageFields(bytes, 0, bytes.length);
	};
	const entry = (body: string, timestamp = '"2025-01-01T00:00:00.000Z"') =>
		`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":${timestamp},"message":${body}}`;

	it("reads pi's messages off their bytes", () => {
		const read = fields(
			entry(
				'{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"a\\nb"},{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"ls","deep":[1,{"x":null}]}},{"text":"late","type":"text"},{"type":"text"}],"api":"x","usage":{"input":1,"cost":{"total":0.5e-3}},"stopReason":"toolUse","timestamp":1760263997704}',
			),
		);
		expect(read?.timestamp).toEqual([expect.any(Number), expect.any(Number)]);
		expect(Array.isArray(read?.content) && read.content.map((span) => (span === null ? null : span.escaped))).toEqual([
			true,
			false,
			null,
		]);
		expect(fields(entry('{"role":"user","content":"hi","timestamp":"later"}'))?.timestamp).toBeNull();
		expect(fields(entry('{"role":"user","content":[],"timestamp":null}'))?.content).toEqual([]);
	});

	it("leaves anything unusual to JSON.parse", () => {
		for (const line of [
			entry('{"role":"user","content":"a","content":"b"}'),
			entry('{"role":"user","content":"a","timestamp":1,"timestamp":2}'),
			entry('{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}'),
			entry('{"role":"user","content":[{"type":"text","type":"image","text":"a"}]}'),
			entry('{"role":"user","content":[{"type":"t\\u0065xt","text":"a"}]}'),
			entry('{"role":"user","content":[{"type":"text","t\\u0065xt":"a"}]}'),
			entry('{"role":"user","content":[{"type":"text","text":5}]}'),
			entry('{"role":"user","content":["text"]}'),
			entry('{"role":"user","content":null}'),
			entry('{"role":"user","content":{"text":"a"}}'),
			entry('{"role":"user"}'),
			entry('{"role":"user","content":"a","timestamp":true}'),
			entry('{"role":"user","content":"a","timestamp":[1]}'),
			entry('{"role":"user","content":"a"}', "5"),
			`${entry('{"role":"user","content":"a"}').slice(0, -1)},"timestamp":"again"}`,
			`${entry('{"role":"user","content":"a"}').slice(0, -1)},"message":{}}`,
			entry('{"role":"user","content":"a\tb"}').replace("\\t", "\t"),
			entry('{"role":"user","content":"a"'),
		]) {
			expect(fields(line), line).toBeNull();
		}
	});

	it("gives what a full read gives, message for message (property)", async () => {
		const block = fc.oneof(
			fc.record({ type: fc.constant("text"), text: fc.string({ unit: "binary" }) }),
			fc.record({ type: fc.constantFrom("thinking", "toolCall", "image", "text"), data: fc.jsonValue() }),
			fc.record({ text: fc.string(), type: fc.constant("text") }),
			fc.jsonValue(),
		);
		const message = fc.record(
			{
				role: fc.constantFrom("user", "assistant"),
				content: fc.oneof(fc.string({ unit: "binary" }), fc.array(block, { maxLength: 4 }), fc.jsonValue()),
				timestamp: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)),
				usage: fc.jsonValue(),
			},
			{ requiredKeys: ["role"] },
		);
		await fc.assert(
			fc.asyncProperty(fc.array(message, { maxLength: 4 }), fc.boolean(), async (messages, spaced) => {
				const lines = [
					JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" }),
					...messages.map((m, i) =>
						JSON.stringify(
							{
								type: "message",
								id: `m${i}`,
								parentId: null,
								timestamp: `2025-01-0${(i % 9) + 1}T00:00:00Z`,
								message: m,
							},
							null,
							spaced ? 1 : undefined,
						).replaceAll("\n", " "),
					),
				];
				const { full, fast } = await both(encoder.encode(`${lines.join("\n")}\n`));
				expect(fast).toEqual(full);
			}),
			{ numRuns: 300 },
		);
	});
});

let storage: Storage;
beforeAll(async () => {
	storage = await createMemoryStorage();
	await storage.mkdir("/s");
});

/** A full read's answer and the fast listing's (optionally with reads of at most `maxRead` bytes). */
async function both(bytes: Uint8Array, options: { maxRead?: number; textLimit?: number } = {}) {
	const path = "/s/session.jsonl";
	await storage.replace(path, [bytes]);
	const full = await runTask(sessionInfoTask(path), storage);
	const reader = recordingStorage(storage, options.maxRead).storage;
	const fast = await runTask(listFile(path, undefined, options.textLimit), reader);
	return { full, fast: fast.info };
}

describe("fast listing = full read", () => {
	it("on random sessions, damaged ones, old versions", async () => {
		await fc.assert(
			fc.asyncProperty(sessionFileArbitrary, async (bytes) => {
				const { full, fast } = await both(bytes);
				expect(comparable(fast)).toEqual(comparable(full));
			}),
			{ numRuns: 600 },
		);
	});

	it("whatever the reads' boundaries", async () => {
		await fc.assert(
			fc.asyncProperty(sessionFileArbitrary, fc.integer({ min: 1, max: 40 }), async (bytes, maxRead) => {
				const { full, fast } = await both(bytes, { maxRead });
				expect(comparable(fast)).toEqual(comparable(full));
			}),
			{ numRuns: 200 },
		);
	});

	it("with a text limit: the same, the text cut at the limit", async () => {
		await fc.assert(
			fc.asyncProperty(sessionFileArbitrary, fc.integer({ min: 0, max: 60 }), async (bytes, textLimit) => {
				const { full, fast } = await both(bytes, { textLimit });
				const expected = full && { ...full, allMessagesText: cutText(full.allMessagesText, textLimit) };
				expect(comparable(fast)).toEqual(comparable(expected));
				if (fast) expect(fast.allMessagesText.length).toBeLessThanOrEqual(textLimit);
			}),
			{ numRuns: 300 },
		);
	});

	it("cuts text between characters, never inside a surrogate pair", () => {
		expect(cutText("ab😀c", 3)).toBe("ab");
		expect(cutText("ab😀c", 4)).toBe("ab😀");
		expect(cutText("abc", 0)).toBe("");
		expect(cutText("abc", 5)).toBe("abc");
		expect(cutText("abc", undefined)).toBe("abc");
	});

	it("on the generated fixtures (every version, CRLF, garbage, a torn last line)", async () => {
		const fixtures = sessionFixtures();
		expect(fixtures.map((f) => f.name)).toEqual(FIXTURE_NAMES);
		for (const fixture of fixtures) {
			const { full, fast } = await both(encoder.encode(fixture.text));
			expect(full, fixture.name).not.toBeNull();
			expect(comparable(fast), fixture.name).toEqual(comparable(full));
		}
	});

	it("listSessions gives what full reads give, file for file", async () => {
		const dir = "/many";
		const samples = fc.sample(sessionFileArbitrary, { numRuns: 60, seed: 7 });
		await storage.mkdir(dir);
		const expected = [];
		for (const [index, bytes] of samples.entries()) {
			const path = `${dir}/${String(index).padStart(3, "0")}.jsonl`;
			await storage.replace(path, [bytes]);
			expected.push(await runTask(sessionInfoTask(path), storage));
		}
		const listed = await listSessions(storage, dir);
		const byPath = new Map(listed.map((info) => [info.path, info]));
		expect(listed.length).toBe(expected.filter(Boolean).length);
		for (const info of expected) if (info) expect(comparable(byPath.get(info.path) ?? null)).toEqual(comparable(info));
	});
});

const corpus = diskCorpus();
describeWithCorpus(
	{ describe, it, describeSkip: describe.skip },
	corpus,
	"fast listing = full read on the real corpus",
	() => {
		for (const file of CORPUS_FILES) {
			it(file, async () => {
				const bytes = await corpus.read(file);
				const { full, fast } = await both(bytes);
				expect(full).not.toBeNull();
				expect(comparable(fast)).toEqual(comparable(full));
				// With the ids of a v3 file, most lines are still only validated.
				const v3 = new TextDecoder().decode(bytes).replace('"type":"session"', '"type":"session","version":3');
				const again = await both(encoder.encode(v3), { maxRead: 4093 });
				expect(comparable(again.fast)).toEqual(comparable(again.full));
			});
		}
	},
);
