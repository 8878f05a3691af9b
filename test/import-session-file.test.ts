/**
 * `Engine#importSessionFile` with a `Blob` bigger than its chunk (8 MiB): streamed under a temporary name,
 * then given its name. On the memory storage (no hard links: a check and a rename under the writer lock)
 * and on the local file system (a hard link): the bytes arrive as they were; an existing file is refused
 * (`exists`) and left as it was; a storage or a `Blob` that fails midway leaves neither the file nor its
 * temporary; a session open for writing there, or another import of the same name at the same time, makes
 * it `exists` too.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { IMPORT_CHUNK_BYTES } from "../src/import-session-file.ts";
import { Engine, type Storage, StorageError } from "../src/index.ts";
import { temporaryOf } from "../src/storage.ts";
import { assistantMessage, userMessage } from "./support/messages.ts";
import { nodeStorageFixture } from "./support/node-storage-fixture.ts";

const encoder = new TextEncoder();

/** A v3 session of at least `bytes` bytes: a chain of user messages, each line about 1 KB. */
function sessionBytes(bytes: number): Uint8Array<ArrayBuffer> {
	const lines = [
		JSON.stringify({ type: "session", version: 3, id: "imported", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" }),
	];
	let size = lines[0]?.length ?? 0;
	let parentId: string | null = null;
	for (let n = 0; size < bytes; n++) {
		const id = n.toString(16).padStart(8, "0");
		const content = `message ${n} ${"é abc ".repeat(150)}`;
		const timestamp = new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString();
		const line = JSON.stringify({ type: "message", id, parentId, timestamp, message: userMessage(content, n) });
		lines.push(line);
		size += encoder.encode(line).length + 1;
		parentId = id;
	}
	return encoder.encode(`${lines.join("\n")}\n`) as Uint8Array<ArrayBuffer>;
}

/** Bigger than one chunk, and not a multiple of it. */
const BIG = 2 * IMPORT_CHUNK_BYTES + 12_345;
const big = sessionBytes(BIG);
const other = sessionBytes(BIG + 3000);

/** The names in `dir`. */
async function names(storage: Storage, dir: string): Promise<string[]> {
	return (await storage.list(dir)).map((entry) => entry.name).sort();
}

/** Whether two byte arrays are equal (`toEqual` of megabytes would print them all when they differ). */
function same(a: Uint8Array, b: Uint8Array): boolean {
	return Buffer.compare(a, b) === 0;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
	return promise.then(
		() => "resolved",
		(error: unknown) => error,
	);
}

/** A storage whose `op` fails with `error` on its `nth` call (1-based), and which records every call's path. */
function failing(storage: Storage, op: "append" | "rename" | "link", nth: number, error: Error) {
	const calls: { op: string; path: string }[] = [];
	let count = 0;
	const wrapped: Storage = { ...storage };
	for (const name of Object.keys(storage) as (keyof Storage)[]) {
		const original = storage[name] as (...args: unknown[]) => Promise<unknown>;
		(wrapped as Record<string, unknown>)[name] = (...args: unknown[]) => {
			calls.push({ op: name, path: String(args[0]) });
			if (name === op && ++count === nth) return Promise.reject(error);
			return original(...args);
		};
	}
	return { storage: wrapped, calls };
}

/** A `Blob` whose `nth` slice (1-based) cannot be read, as a picked file changed on disk. */
class FailingBlob extends Blob {
	readonly #nth: number;
	#slices = 0;
	constructor(parts: BlobPart[], nth: number) {
		super(parts);
		this.#nth = nth;
	}
	override slice(start?: number, end?: number, type?: string): Blob {
		const part = super.slice(start, end, type);
		if (++this.#slices !== this.#nth) return part;
		return Object.assign(part, {
			arrayBuffer: () => Promise.reject(new DOMException("the file changed", "NotReadableError")),
		});
	}
}

interface Fixture {
	storage: Storage;
	root: string;
	cleanup?: () => Promise<void>;
}

const storages: [string, () => Promise<Fixture>][] = [
	["memory storage", async () => ({ storage: await createMemoryStorage(), root: "/work" })],
	["node storage", nodeStorageFixture],
];

describe.each(storages)("importSessionFile of a Blob bigger than its chunk, %s", (_name, makeFixture) => {
	let fixture: Fixture | undefined;
	const setUp = async () => {
		fixture = await makeFixture();
		const dir = `${fixture.root}/sessions/--p--`;
		return { ...fixture, dir, path: `${dir}/imported.jsonl` };
	};
	afterEach(async () => {
		await fixture?.cleanup?.();
		fixture = undefined;
	});

	it("writes the bytes as they are, under a temporary name first, and leaves nothing else", async () => {
		const { storage, root, dir, path } = await setUp();
		const recorded = failing(storage, "append", 0, new Error("never"));
		const engine = new Engine({ storage: recorded.storage, agentDir: `${root}/agent` });
		await engine.importSessionFile(path, new Blob([big]));
		expect(same(await engine.exportSessionFile(path), big)).toBe(true);
		expect(await names(storage, dir)).toEqual(["imported.jsonl"]);
		// Every chunk went to one temporary of the session's, which a writer opening it would clear away.
		const appended = new Set(recorded.calls.filter((call) => call.op === "append").map((call) => call.path));
		expect(appended.size).toBe(1);
		const [temporary] = [...appended];
		expect(temporaryOf(temporary?.slice(dir.length + 1) ?? "")).toEqual({ of: "imported.jsonl", part: "file" });
		expect(recorded.calls.filter((call) => call.op === "append")).toHaveLength(3);

		const opened = await engine.open(path, { readOnly: true });
		const lines = big.reduce((count, byte) => count + (byte === 0x0a ? 1 : 0), 0);
		expect(opened.entryCount).toBe(lines - 1);
		const last = await engine.getContext(opened.handle, { last: 2 });
		expect(last.messages.map((message) => message.timestamp)).toEqual([lines - 3, lines - 2]);
	});

	it("refuses an existing file (`exists`) and leaves it as it was", async () => {
		const { storage, root, dir, path } = await setUp();
		const engine = new Engine({ storage, agentDir: `${root}/agent` });
		await engine.importSessionFile(path, new Blob([big]));
		for (const again of [new Blob([other]), other, new Blob([encoder.encode("{}\n")])]) {
			const error = await rejection(engine.importSessionFile(path, again));
			expect(error).toBeInstanceOf(StorageError);
			expect((error as StorageError).code).toBe("exists");
		}
		expect(same(await engine.exportSessionFile(path), big)).toBe(true);
		expect(await names(storage, dir)).toEqual(["imported.jsonl"]);
	});

	it("refuses a name whose session is open for writing, even before its file exists", async () => {
		const { storage, root, dir } = await setUp();
		const engine = new Engine({ storage, agentDir: `${root}/agent` });
		const created = await engine.create({ cwd: "/p", sessionDir: dir });
		const path = created.path as string;
		const error = await rejection(engine.importSessionFile(path, new Blob([big])));
		expect([(error as StorageError).name, (error as StorageError).code]).toEqual(["StorageError", "exists"]);
		expect(await storage.stat(path)).toBeNull();
		// The session's first messages still create its file.
		await engine.appendMessage(created.handle, userMessage("hi", 1));
		await engine.appendMessage(created.handle, assistantMessage("hello", { timestamp: 2 }));
		expect((await engine.summary(created.handle)).entryCount).toBe(2);
		await engine.closeAll();
		expect((await names(storage, dir)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
	});

	it("of two imports of one name at once, one wins whole and the other is `exists`", async () => {
		const { storage, root, dir, path } = await setUp();
		const engine = new Engine({ storage, agentDir: `${root}/agent` });
		const outcomes = await Promise.all([
			rejection(engine.importSessionFile(path, new Blob([big]))),
			rejection(engine.importSessionFile(path, new Blob([other]))),
		]);
		const won = outcomes.map((outcome) => outcome === "resolved");
		expect(won.filter(Boolean)).toHaveLength(1);
		const lost = outcomes.find((outcome) => outcome !== "resolved") as StorageError;
		expect([lost.name, lost.code]).toEqual(["StorageError", "exists"]);
		expect(same(await engine.exportSessionFile(path), won[0] ? big : other)).toBe(true);
		expect(await names(storage, dir)).toEqual(["imported.jsonl"]);
	});

	it("is `exists` when another import took the name while this one was being written", async () => {
		const { storage, root, dir, path } = await setUp();
		let open = () => {};
		const gate = new Promise<void>((resolve) => {
			open = resolve;
		});
		// The second import's storage holds it after its last chunk (at the check of its temporary's size).
		const held: Storage = {
			...storage,
			stat: async (at) => {
				if (at.endsWith(".tmp")) await gate;
				return storage.stat(at);
			},
		};
		const first = new Engine({ storage, agentDir: `${root}/agent` });
		const second = new Engine({ storage: held, agentDir: `${root}/agent` });
		const late = rejection(second.importSessionFile(path, new Blob([other])));
		await first.importSessionFile(path, new Blob([big]));
		open();
		const error = (await late) as StorageError;
		expect([error.name, error.code]).toEqual(["StorageError", "exists"]);
		expect(same(await first.exportSessionFile(path), big)).toBe(true);
		expect(await names(storage, dir)).toEqual(["imported.jsonl"]);
	});

	it("leaves neither the file nor its temporary when the storage fails midway, and rejects with its error", async () => {
		const { storage, root, dir, path } = await setUp();
		const full = new StorageError("io", path, "io: no space left on device");
		const broken = failing(storage, "append", 2, full);
		const engine = new Engine({ storage: broken.storage, agentDir: `${root}/agent` });
		expect(await rejection(engine.importSessionFile(path, new Blob([big])))).toBe(full);
		expect(await storage.stat(path)).toBeNull();
		expect(await names(storage, dir)).toEqual([]);
		// Nothing is in the way of trying again.
		await new Engine({ storage, agentDir: `${root}/agent` }).importSessionFile(path, new Blob([big]));
		expect(await names(storage, dir)).toEqual(["imported.jsonl"]);
	});

	it("leaves nothing when the file cannot be given its name", async () => {
		const { storage, root, dir, path } = await setUp();
		const failure = new StorageError("io", path, "io: the disk went away");
		// On node storage the name comes from a hard link, on memory storage from a rename: both fail.
		const broken = failing(failing(storage, "link", 1, failure).storage, "rename", 1, failure);
		const engine = new Engine({ storage: broken.storage, agentDir: `${root}/agent` });
		expect(await rejection(engine.importSessionFile(path, new Blob([big])))).toBe(failure);
		expect(await names(storage, dir)).toEqual([]);
	});

	it("leaves nothing when the Blob cannot be read midway, and rejects with its error", async () => {
		const { storage, root, dir, path } = await setUp();
		const engine = new Engine({ storage, agentDir: `${root}/agent` });
		const error = await rejection(engine.importSessionFile(path, new FailingBlob([big], 3)));
		expect((error as DOMException).name).toBe("NotReadableError");
		expect(await names(storage, dir)).toEqual([]);
	});
});
