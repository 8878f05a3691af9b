/**
 * The engine lists through its listing catalog: a repeated listing reads no session bytes, one after
 * appends made through the engine reads only the bytes appended, and the answers equal a listing that
 * reads every file.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { listAllSessions } from "../src/catalog.ts";
import { Engine, sessionsRoot } from "../src/index.ts";
import { recordingStorage } from "./support/listing-sessions.ts";

const AGENT = "/pi/agent";

describe("the engine's listings", () => {
	it("read only what changed since the last one, and answer as a full read does", async () => {
		const { storage, reads } = recordingStorage(await createMemoryStorage());
		const engine = new Engine({ storage, agentDir: AGENT });
		const handles: string[] = [];
		for (let index = 0; index < 6; index++) {
			const { handle } = await engine.create({ cwd: `/project-${index % 2}` });
			await engine.appendMessage(handle, { role: "user", content: `question ${index}`, timestamp: 1000 + index });
			handles.push(handle);
		}
		const fullRead = () => listAllSessions(storage, sessionsRoot(AGENT));

		const cold = await engine.listAll();
		expect(cold).toEqual(await fullRead());
		expect(cold).toHaveLength(6);

		reads.clear();
		expect(await engine.listAll()).toEqual(cold);
		expect(reads.sessionBytes()).toBe(0);

		// Appends through the engine: the next listing reads the new bytes of those files only.
		const grown = handles.slice(0, 2);
		const sizes = new Map<string, number>();
		for (const handle of grown) {
			const { path } = await engine.summary(handle);
			sizes.set(path as string, (await storage.stat(path as string))?.size ?? 0);
			await engine.appendMessage(handle, { role: "user", content: "and one more", timestamp: 5000 });
		}
		reads.clear();
		const warm = await engine.listAll();
		reads.clear(); // the full read below reads everything, of course
		expect(warm).toEqual(await fullRead());
		expect(warm.find((info) => sizes.has(info.path))?.messageCount).toBe(2);

		reads.clear();
		await engine.listAll();
		expect(reads.sessionBytes()).toBe(0);
		for (const handle of handles) await engine.close(handle);
	});

	it("keep the catalog in memory between listings, unless told not to", async () => {
		const catalogRead = (reads: ReturnType<typeof recordingStorage>["reads"]) =>
			[...reads.ranges.keys()].some((path) => path.includes("listing-catalog"));
		for (const keep of [true, false]) {
			const { storage, reads } = recordingStorage(await createMemoryStorage());
			const engine = new Engine({ storage, agentDir: AGENT, keepListingCatalogInMemory: keep });
			const { handle } = await engine.create({ cwd: "/project" });
			await engine.appendMessage(handle, { role: "user", content: "a question", timestamp: 1 });
			const first = await engine.listAll();
			reads.clear();
			expect(await engine.listAll()).toEqual(first);
			expect([keep, catalogRead(reads)]).toEqual([keep, !keep]);
			await engine.close(handle);
		}
	});

	it("reads, after appends, no byte of a session before its old end but a little tail to check it", async () => {
		const { storage, reads } = recordingStorage(await createMemoryStorage());
		const engine = new Engine({ storage, agentDir: AGENT });
		const { handle, path } = await engine.create({ cwd: "/project" });
		await engine.appendMessage(handle, { role: "user", content: "x".repeat(100_000), timestamp: 1 });
		await engine.listAll();
		const before = (await storage.stat(path as string))?.size ?? 0;
		await engine.appendMessage(handle, { role: "user", content: "short", timestamp: 2 });
		reads.clear();
		await engine.listAll();
		const read = reads.ranges.get(path as string) ?? [];
		expect(read.length).toBeGreaterThan(0);
		// At most the few KiB before the old end that show the file only grew, then the new bytes.
		for (const [start] of read) expect(start).toBeGreaterThanOrEqual(before - 8192);
		await engine.close(handle);
	});
});
