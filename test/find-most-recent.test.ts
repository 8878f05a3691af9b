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
import { createNodeStorage } from "../adapters/node.ts";
import { findMostRecentSession as pi16FindMostRecentSession } from "../node_modules/pi-coding-agent-1.6/dist/core/session-manager.js";
import { findMostRecentSession } from "../src/catalog.ts";
import { runTask } from "../src/storage.ts";

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
					const ours = await runTask(findMostRecentSession(dir, cwd), storage);
					expect(ours, `cwd ${cwd}`).toBe(pi16FindMostRecentSession(dir, cwd));
				}
			}),
			{ numRuns: 60 },
		);
	});
});
