/**
 * Messages appended as the bytes of their JSON text (how the worker client sends them): written as they
 * are, byte for byte what appending the object writes, and decoded only when the session is read.
 */
import { describe, expect, it } from "vitest";
import { encodeTexts } from "../adapters/message-runs.ts";
import { runBatch } from "../adapters/worker-batch.ts";
import { isBatchFailure } from "../adapters/worker-wire.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { InvalidArgumentError } from "../src/errors.ts";
import { type AgentMessage, Engine, encodeEntry, Session, type SessionEntry, type Storage } from "../src/index.ts";
import { assistantMessage, userMessage } from "./support/messages.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const json = (message: unknown): Uint8Array => encoder.encode(JSON.stringify(message));
const header = `{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}`;

async function fileLines(storage: Storage, path: string): Promise<string[]> {
	const size = (await storage.stat(path))?.size ?? 0;
	return decoder
		.decode(await storage.readRange(path, 0, size))
		.split("\n")
		.slice(0, -1);
}

async function newSession(): Promise<{ storage: Storage; session: Session }> {
	const storage = await createMemoryStorage();
	return { storage, session: await Session.create(storage, { cwd: "/p", sessionDir: "/s" }) };
}

describe("the worker client's encoding of a batch's messages", () => {
	it("is one buffer of exactly their UTF-8, with where each ends", () => {
		const texts = ["é😀", "x".repeat(1000), '{"a":"\u2028"}'];
		const { bytes, ends } = encodeTexts(texts, texts.join("").length);
		expect(bytes.buffer.byteLength).toBe(bytes.length);
		expect(decoder.decode(bytes)).toBe(texts.join(""));
		expect(ends).toEqual([6, 1006, 1006 + encoder.encode(texts[2]).length]);
	});
});

describe("messages appended as JSON bytes", () => {
	it("are written as appending the objects writes them, and read back as objects", async () => {
		const { storage, session } = await newSession();
		const messages: AgentMessage[] = [
			userMessage('emoji 😀, é, \u2028, "quotes", \\, a\nnewline and a lone surrogate \ud800', 1),
			assistantMessage("answer", { timestamp: 2 }),
		];
		const ids: string[] = [];
		for (const message of messages) {
			const { id, written } = session.changeEncodedMessage(message.role, json(message));
			ids.push(id);
			await written;
		}
		const lines = (await fileLines(storage, session.path as string)).slice(1);
		const entries = ids.map((id) => session.tree.getEntry(id) as SessionEntry);
		expect(entries.map((entry) => entry.type === "message" && entry.message)).toEqual(messages);
		// The first entry's parent is null, the second's an id: both prefixes are what encoding the entry gives.
		expect(entries.map((entry) => entry.parentId)).toEqual([null, ids[0]]);
		expect(lines).toEqual(entries.map((entry) => encodeEntry(entry).slice(0, -1)));
		await session.close();
	});

	it("stay bytes until the tree is read; a branch made before any read carries them decoded", async () => {
		const { storage, session } = await newSession();
		const question = userMessage("q", 1);
		const answer = assistantMessage("a", { timestamp: 2 });
		session.changeEncodedMessage("user", json(question));
		const { id } = session.changeEncodedMessage("assistant", json(answer));
		// Through the session's private core: the tree holds the placeholder until it is read.
		const path = await session.createBranchedSession(id);
		const branched = (await fileLines(storage, path as string)).slice(1).map((line) => JSON.parse(line));
		expect(branched.map((entry) => entry.message)).toEqual([question, answer]);
		await session.close();
	});

	it.each([
		['a quote: we"ird'],
		["a backslash: back\\slash"],
		[`non-ASCII and long: é😀${"x".repeat(300)}`],
		["a control character: \u0001"],
		["a lone surrogate: \ud800"],
	])("a parent id with %s is written as JSON.stringify writes it", async (odd) => {
		const storage = await createMemoryStorage();
		await storage.mkdir("/s");
		const parent: SessionEntry = {
			type: "custom",
			customType: "x",
			id: odd,
			parentId: null,
			timestamp: "2025-01-01T00:00:01.000Z",
		};
		await storage.replace("/s/f.jsonl", [encoder.encode(`${header}\n${encodeEntry(parent)}`)]);
		const session = await Session.open(storage, "/s/f.jsonl");
		const { id, written } = session.changeEncodedMessage("user", json(userMessage("hi", 1)));
		await written;
		const last = (await fileLines(storage, "/s/f.jsonl")).at(-1);
		expect(JSON.parse(last as string).parentId).toBe(odd);
		expect(last).toBe(encodeEntry(session.tree.getEntry(id) as SessionEntry).slice(0, -1));
		await session.close();
	});

	it("bytes that cannot be one line's object are refused at once, and nothing is appended", async () => {
		const { session } = await newSession();
		for (const bad of ['"text"', "[1]", '{"a":"b"}\n{"c":1}', "", "{"]) {
			expect(() => session.changeEncodedMessage("user", encoder.encode(bad))).toThrow(InvalidArgumentError);
		}
		expect(session.tree.size).toBe(0);
		await session.close();
	});

	it("braced bytes that are not JSON are written, then a read names the entry and the session", async () => {
		// Only bytes that did not come from JSON.stringify (a caller bypassing the worker client) can do this.
		const { session } = await newSession();
		const { id } = session.changeEncodedMessage("user", encoder.encode("{not json}"));
		expect(() => session.tree).toThrow(new RegExp(`message entry ${id} of ${session.path}`));
		await session.close();
	});

	it("runBatch (the worker side): runs of messages as byte ranges of the batch's buffer; each message has its outcome", async () => {
		const engine = new Engine({ storage: await createMemoryStorage(), agentDir: "/agent" });
		const { handle } = await engine.create({ cwd: "/p" });
		const first = json(userMessage("first", 1));
		const second = json(assistantMessage("second", { timestamp: 2 }));
		const buffer = new Uint8Array([...first, ...encoder.encode("[]"), ...second]);
		const run = (start: number, ends: number[]) => ({
			method: "appendEncodedMessages",
			args: [handle, start, ends, ends.map(() => "user")],
		});
		const afterFirst = first.length;
		const results = await runBatch(
			engine,
			[
				run(0, [afterFirst, afterFirst + 2, buffer.length]), // the middle one is not an object
				run(0, [buffer.length + 1]), // beyond the buffer
				{ method: "appendCustomEntry", args: [handle, "x", 1] },
				run(afterFirst + 2, [buffer.length - 1, afterFirst]), // the second range runs backwards
				{ method: "appendEncodedMessages", args: ["no-such-handle", 0, [afterFirst, afterFirst + 2], ["a", "b"]] },
			],
			buffer,
		);
		expect(results.map((result) => !isBatchFailure(result))).toEqual([
			true,
			false,
			true,
			false,
			true,
			false,
			false,
			false,
			false,
		]);
		expect(results.map((result) => (isBatchFailure(result) ? result.error.name : ""))).toEqual([
			"",
			"InvalidArgumentError",
			"",
			"InvalidArgumentError",
			"",
			"InvalidArgumentError",
			"InvalidArgumentError",
			"UnknownSessionError",
			"UnknownSessionError",
		]);
		const branch = await engine.getBranch(handle);
		expect(branch.map((entry) => (entry.type === "message" ? entry.message.role : entry.type))).toEqual([
			"user",
			"assistant",
			"custom",
		]);
		await engine.closeAll();
	});

	it("runBatch (the worker side): each session keeps its own copy of its run's bytes; a malformed run refuses the batch", async () => {
		const engine = new Engine({ storage: await createMemoryStorage(), agentDir: "/agent" });
		const one = await engine.create({ cwd: "/p" });
		const two = await engine.create({ cwd: "/q" });
		const first = json(userMessage("first", 1));
		const second = json(userMessage("second", 2));
		const buffer = new Uint8Array([...first, ...second]);
		const results = await runBatch(
			engine,
			[
				{ method: "appendEncodedMessages", args: [one.handle, 0, [first.length], ["user"]] },
				{ method: "appendEncodedMessages", args: [two.handle, first.length, [buffer.length], ["user"]] },
			],
			buffer,
		);
		expect(results.some(isBatchFailure)).toBe(false);
		buffer.fill(0x20); // neither session holds a view of the batch's buffer
		const messages = await Promise.all([one, two].map(({ handle }) => engine.getBranch(handle)));
		expect(messages.map(([entry]) => entry?.type === "message" && entry.message)).toEqual([
			userMessage("first", 1),
			userMessage("second", 2),
		]);
		const malformed = runBatch(
			engine,
			[
				{ method: "appendEncodedMessages", args: [one.handle, 0, "not ends", []] },
				{ method: "resetLeaf", args: [one.handle] },
			],
			buffer,
		);
		await expect(malformed).rejects.toThrow(InvalidArgumentError);
		// Refused whole: the resetLeaf after the malformed run was not applied either.
		expect((await engine.summary(one.handle)).leafId).not.toBeNull();
		await engine.closeAll();
	});
});
