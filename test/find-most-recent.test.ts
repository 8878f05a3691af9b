/**
 * `findMostRecentSession` against pi 1.6.0's, on random directories: sessions of two working directories,
 * files that are no session (garbage, empty, a header that is not one), modification times drawn from a
 * few values so that ties are common. Both take the newest file whose header is a session (of the cwd,
 * when one is given), ties in the directory's order.
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createNodeStorage, createNodeSyncStorage } from "../adapters/node.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { findMostRecentSession as pi16FindMostRecentSession } from "../node_modules/pi-coding-agent-1.6/dist/core/session-manager.js";
import { findMostRecentSession } from "../src/catalog.ts";
import { type FileStat, io, runTask, runTaskSync, STATS_AT_ONCE, type Storage } from "../src/storage.ts";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const header = (cwd: string, n: number) =>
	`{"type":"session","version":3,"id":"s${n}","timestamp":"2025-01-01T00:00:00.000Z","cwd":"${cwd}"}\n`;

const file = fc.record({
	kind: fc.constantFrom("a", "a", "b", "garbage", "empty", "not-a-header"),
	/** Seconds before now: few values, so that files share a time. */
	age: fc.integer({ min: 0, max: 4 }),
});

describe("findMostRecentSession", () => {
	it("finds what pi 1.6.0's finds, with and without a cwd, over random directories", async () => {
		const storage = createNodeStorage();
		const syncStorage = createNodeSyncStorage();
		await fc.assert(
			fc.asyncProperty(fc.array(file, { minLength: 0, maxLength: 12 }), async (files) => {
				const dir = mkdtempSync(join(tmpdir(), "most-recent-"));
				dirs.push(dir);
				const now = Date.now() / 1000;
				files.forEach(({ kind, age }, n) => {
					const path = join(dir, `f${n}.jsonl`);
					const content =
						kind === "a" || kind === "b"
							? `${header(`/${kind}`, n)}{"type":"custom","id":"e${n}","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z"}\n`
							: kind === "garbage"
								? "not json\n"
								: kind === "empty"
									? ""
									: '{"type":"message","id":"x"}\n';
					writeFileSync(path, content);
					utimesSync(path, now - age * 60, now - age * 60);
				});
				for (const cwd of [undefined, "/a", "/b"]) {
					const pi = pi16FindMostRecentSession(dir, cwd);
					expect(await runTask(findMostRecentSession(dir, cwd), storage), `cwd ${cwd}`).toBe(pi);
					expect(runTaskSync(findMostRecentSession(dir, cwd), syncStorage), `cwd ${cwd}, sync`).toBe(pi);
				}
			}),
			{ numRuns: 60 },
		);
	});
});

/** The storage with its `stat`s counted while in flight, each answered a timer turn later; `fail` fails one. */
function statsInFlight(storage: Storage, fail?: string) {
	const seen = { inFlight: 0, most: 0, started: 0 };
	const spy: Storage = {
		...storage,
		stat: async (path) => {
			seen.started++;
			seen.most = Math.max(seen.most, ++seen.inFlight);
			try {
				await new Promise((resolve) => setTimeout(resolve, 1));
				if (path === fail) throw new Error(`injected failure: ${path}`);
				return await storage.stat(path);
			} finally {
				seen.inFlight--;
			}
		},
	};
	return { spy, seen };
}

describe("statAll", () => {
	const paths = Array.from({ length: 100 }, (_, n) => `/d/f${n}.jsonl`);

	it("takes many stats at once, at most STATS_AT_ONCE, and answers in order (null where nothing is)", async () => {
		const memory = await createMemoryStorage();
		await memory.mkdir("/d");
		for (const path of paths.filter((_, n) => n % 3 === 0)) await memory.append(path, new Uint8Array(7), false);
		const { spy, seen } = statsInFlight(memory);
		const stats = await runTask(io("statAll", paths), spy);
		expect(seen.most).toBe(STATS_AT_ONCE);
		expect(stats.map((stat: FileStat | null) => stat?.size ?? null)).toEqual(
			paths.map((_, n) => (n % 3 === 0 ? 7 : null)),
		);
	});

	it("throws the first failure into the task, and starts no stat after it", async () => {
		const { spy, seen } = statsInFlight(await createMemoryStorage(), "/d/f5.jsonl");
		const caught = await runTask(
			(function* () {
				try {
					yield* io("statAll", paths);
					return "no failure";
				} catch (error) {
					return (error as Error).message;
				}
			})(),
			spy,
		);
		expect(caught).toBe("injected failure: /d/f5.jsonl");
		await new Promise((resolve) => setTimeout(resolve, 50)); // what was left would have started by now
		expect(seen.started).toBeLessThan(STATS_AT_ONCE * 2);
	});
});
