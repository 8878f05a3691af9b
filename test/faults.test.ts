/**
 * Fault injection through the storage interface (test/support/faulty-storage.ts), on the Node storage and
 * on ZenFS in memory: failing and short writes (a full disk, EMFILE, EIO), failing flushes, failing and
 * half-done renames and replaces, the file removed, truncated or appended to under an open session, the
 * lock file removed under its holder. Each ends in a typed error or a safe recovery, and never in a file
 * that loads with fewer acknowledged entries than before.
 *
 * The migrations, repairs, header writes and forks are run once without faults to learn the storage
 * operations they make, then again with a fault at each of those operations in turn.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createNodeLocks, createNodeStorage, processStartTime } from "../adapters/node.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import * as errors from "../src/errors.ts";
import { SessionFileChangedError, StorageError } from "../src/errors.ts";
import { Session } from "../src/session.ts";
import type { Storage } from "../src/storage.ts";
import { FIXTURES_DIR } from "./fixtures/generate.ts";
import {
	type Call,
	type Fault,
	failNth,
	faultyStorage,
	type Operation,
	onSessionFile,
} from "./support/faulty-storage.ts";
import { assistantMessage, userMessage } from "./support/messages.ts";
import { isTyped } from "./support/typed-errors.ts";

const temporary: string[] = [];
afterAll(() => {
	for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

const bases: [string, () => Promise<{ storage: Storage; root: string }>][] = [
	[
		"node",
		async () => {
			const root = mkdtempSync(join(tmpdir(), "faults-"));
			temporary.push(root);
			return { storage: createNodeStorage(), root };
		},
	],
	["zenfs", async () => ({ storage: await createMemoryStorage(), root: "/data" })],
];

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const user = (text: string) => userMessage(text, 1);
const assistant = (text: string) => assistantMessage(text, { timestamp: 2 });

/** The rejection of `promise`, which must be one of the package's typed errors. */
async function typedRejection(promise: Promise<unknown>): Promise<Error> {
	const outcome = await promise.then(
		() => undefined,
		(error: unknown) => error,
	);
	if (outcome === undefined) throw new Error("expected a rejection, but the promise fulfilled");
	expect(isTyped(outcome), `typed error, not ${String(outcome)}`).toBe(true);
	return outcome as Error;
}

/** `promise`'s value, or the typed error it rejected with. */
async function settled<T>(promise: Promise<T>): Promise<{ value: T } | { error: Error }> {
	try {
		return { value: await promise };
	} catch (error) {
		expect(isTyped(error), `typed error, not ${String(error)}`).toBe(true);
		return { error: error as Error };
	}
}

async function bytesOf(storage: Storage, path: string): Promise<Uint8Array> {
	return storage.readRange(path, 0, (await storage.stat(path))?.size ?? 0);
}

/** Ids of the entries a healthy read-only open finds, in file order. */
async function idsOnDisk(storage: Storage, path: string): Promise<string[]> {
	const session = await Session.open(storage, path, { readOnly: true });
	const ids = (await session.getEntries()).map((entry) => entry.id);
	await session.close();
	return ids;
}

/** Every acknowledged id is in `found`, in the order acknowledged. */
function expectAcknowledgedKept(found: readonly string[], acknowledged: readonly string[], context = ""): void {
	const positions = acknowledged.map((id) => found.indexOf(id));
	expect(
		positions.filter((at) => at < 0).map((_, n) => acknowledged[n]),
		`${context} acknowledged entries missing`,
	).toEqual([]);
	expect(
		[...positions].sort((a, b) => a - b),
		`${context} in order`,
	).toEqual(positions);
}

/** Names in `dir` that start with `name` (the session, its lock, temporaries and backups). */
async function namesBeside(storage: Storage, path: string): Promise<string[]> {
	const dir = path.slice(0, path.lastIndexOf("/"));
	const name = path.slice(dir.length + 1);
	return (await storage.list(dir))
		.map((entry) => entry.name)
		.filter((entry) => entry.startsWith(name))
		.sort();
}

/** A session file with a conversation of `turns` exchanges, closed; its path and entry ids. */
async function sessionOnDisk(storage: Storage, root: string, turns = 2): Promise<{ path: string; ids: string[] }> {
	const session = await Session.create(storage, { cwd: "/p", sessionDir: `${root}/s` });
	const ids: string[] = [];
	for (let turn = 0; turn < turns; turn++) {
		ids.push(await session.appendMessage(user(`question ${turn}`)));
		ids.push(await session.appendMessage(assistant(`answer ${turn}`)));
	}
	await session.close();
	return { path: session.path as string, ids };
}

const FAILURES: Fault[] = [
	{ kind: "fail", errno: "EIO" },
	{ kind: "fail", errno: "EMFILE" },
	{ kind: "fail", errno: "ENOSPC" },
];

describe.each(bases)("faults on %s storage", (_name, setup) => {
	describe("appends", () => {
		it.each(["none", "fsync", "group"] as const)(
			"an append that fails before writing (EIO, EMFILE, ENOSPC), durability %s: rejected, the session stops taking appends, a reopen has every acknowledged entry",
			async (durability) => {
				for (const fault of FAILURES) {
					const { storage: base, root } = await setup();
					const { path, ids } = await sessionOnDisk(base, root);
					const faulty = faultyStorage(base);
					const session = await Session.open(faulty.storage, path, { durability });
					const acknowledged = [...ids, await session.appendMessage(user("before"))];
					faulty.setPlan(failNth(onSessionFile("append"), 0, fault));
					const failed = await typedRejection(session.appendMessage(user("lost")));
					expect(failed).toBeInstanceOf(StorageError);
					expect(failed.message).toContain(fault.kind === "fail" ? fault.errno : "");
					// It refuses more until reopened: the file may end in part of a line.
					await typedRejection(session.appendMessage(user("refused")));
					await typedRejection(session.close());
					expect(await namesBeside(base, path), "lock released").toEqual([path.slice(path.lastIndexOf("/") + 1)]);
					expect(await idsOnDisk(base, path)).toEqual(acknowledged);
					const again = await Session.open(base, path);
					acknowledged.push(await again.appendMessage(user("after")));
					await again.close();
					expect(await idsOnDisk(base, path)).toEqual(acknowledged);
				}
			},
		);

		it("an append cut short by a full disk: the half line is repaired on reopen, every acknowledged entry kept, the next append on its own line", async () => {
			const { storage: base, root } = await setup();
			const { path, ids } = await sessionOnDisk(base, root);
			const faulty = faultyStorage(base);
			const session = await Session.open(faulty.storage, path);
			const before = (await base.stat(path))?.size as number;
			faulty.setPlan(failNth(onSessionFile("append"), 0, { kind: "short", keep: 40 }));
			await typedRejection(session.appendMessage(assistant("x".repeat(500))));
			expect((await base.stat(path))?.size, "forty bytes of it reached the file").toBe(before + 40);
			await typedRejection(session.close());
			const reopened = await Session.open(base, path, { settleMs: 0 });
			expect(reopened.report.repairedLastLine).toBe(true);
			expect(reopened.report.diagnostics.map((d) => d.line)).toEqual([ids.length + 2]);
			const next = await reopened.appendMessage(user("next"));
			await reopened.close();
			expect(await idsOnDisk(base, path)).toEqual([...ids, next]);
			const lines = decoder.decode(await bytesOf(base, path)).split("\n");
			expect(lines.at(-2), "the next entry stands on its own line").toContain('"next"');
			expect(JSON.parse(lines.at(-2) as string).id).toBe(next);
		});

		it("a durable append whose flush fails: rejected; its bytes may be in the file, every acknowledged entry is", async () => {
			const { storage: base, root } = await setup();
			const { path, ids } = await sessionOnDisk(base, root);
			const faulty = faultyStorage(base);
			const session = await Session.open(faulty.storage, path, { durability: "fsync" });
			faulty.setPlan(failNth(onSessionFile("append"), 0, { kind: "flush" }));
			const unsure = session.tree.getLeafId();
			await typedRejection(session.appendMessage(user("written, not flushed")));
			await typedRejection(session.close());
			const found = await idsOnDisk(base, path);
			expectAcknowledgedKept(found, ids);
			expect(found.length - ids.length).toBeLessThanOrEqual(1);
			expect(unsure).toBe(ids.at(-1));
		});

		it("a new session whose first create fails (EMFILE) writes everything with the next append", async () => {
			const { storage: base, root } = await setup();
			const faulty = faultyStorage(
				base,
				failNth(onSessionFile("createExclusive"), 0, { kind: "fail", errno: "EMFILE" }),
			);
			const session = await Session.create(faulty.storage, { cwd: "/p", sessionDir: `${root}/s` });
			const path = session.path as string;
			await typedRejection(session.appendMessage(user("first")));
			expect(await base.stat(path), "a failed create leaves nothing").toBeNull();
			const first = session.tree.getLeafId() as string;
			const second = await session.appendMessage(assistant("second"));
			await session.close();
			expect(await idsOnDisk(base, path)).toEqual([first, second]);
		});

		it("a create whose flush fails after its bytes landed: the session stops with a typed error, the file loads", async () => {
			const { storage: base, root } = await setup();
			const faulty = faultyStorage(base, failNth(onSessionFile("createExclusive"), 0, { kind: "flush" }));
			const session = await Session.create(faulty.storage, { cwd: "/p", sessionDir: `${root}/s`, durability: "fsync" });
			const path = session.path as string;
			await typedRejection(session.appendMessage(user("first")));
			await typedRejection(session.appendMessage(assistant("second")));
			await settled(session.close());
			const found = await idsOnDisk(base, path);
			expect(found.length).toBeLessThanOrEqual(2);
			expect(await namesBeside(base, path)).toEqual([path.slice(path.lastIndexOf("/") + 1)]);
		});
	});

	describe("opening", () => {
		it.each(FAILURES)(
			"the writer lock cannot be made ($errno): the open is refused, nothing changes, the next open works",
			async (fault) => {
				const { storage: base, root } = await setup();
				const { path, ids } = await sessionOnDisk(base, root);
				const original = await bytesOf(base, path);
				const faulty = faultyStorage(
					base,
					failNth((call) => call.op === "createExclusive" && call.path.endsWith(".lock"), 0, fault),
				);
				await typedRejection(Session.open(faulty.storage, path));
				expect(await bytesOf(base, path)).toEqual(original);
				expect(await namesBeside(base, path)).toEqual([path.slice(path.lastIndexOf("/") + 1)]);
				const session = await Session.open(base, path);
				await session.close();
				expect(await idsOnDisk(base, path)).toEqual(ids);
			},
		);

		it("a read that fails while opening (EMFILE, EIO): refused with a typed error, the file unchanged, no lock left", async () => {
			const { storage: base, root } = await setup();
			const { path } = await sessionOnDisk(base, root);
			const original = await bytesOf(base, path);
			for (const fault of FAILURES) {
				for (const readOnly of [false, true]) {
					const faulty = faultyStorage(base, failNth(onSessionFile("readRange"), 0, fault));
					await typedRejection(Session.open(faulty.storage, path, { readOnly }));
					expect(await bytesOf(base, path)).toEqual(original);
					expect(await namesBeside(base, path)).toEqual([path.slice(path.lastIndexOf("/") + 1)]);
				}
			}
		});
	});

	describe("a fault at every storage operation of a rewrite", () => {
		/** A case: a file to start from, what to do with it, and what must hold after it, faults or not. */
		interface RewriteCase {
			name: string;
			/** Writes the starting files; returns the path to open. */
			prepare(storage: Storage, root: string): Promise<string>;
			/** The operation under test, through `storage`. */
			run(storage: Storage, path: string, root: string): Promise<unknown>;
		}
		const fixture = (name: string) => readFileSync(new URL(name, FIXTURES_DIR));
		const put = async (storage: Storage, path: string, bytes: Uint8Array) => {
			await storage.mkdir(path.slice(0, path.lastIndexOf("/")));
			await storage.replace(path, [bytes]);
		};
		/** Run `work` on `session`, then close it, failed or not (as a caller would). */
		const closing = async (session: Session, work: () => Promise<unknown>) => {
			try {
				await work();
			} finally {
				await session.close().catch(() => undefined);
			}
		};
		const openAndAppend = async (storage: Storage, path: string) => {
			const session = await Session.open(storage, path, { settleMs: 0 });
			await closing(session, () => session.appendMessage(user("after opening")));
		};
		const cases: RewriteCase[] = [
			{
				name: "a v1 file migrated on open (backup, rewrite)",
				prepare: async (storage, root) => {
					const path = `${root}/s/v1.jsonl`;
					await put(storage, path, fixture("v1-linear.jsonl"));
					return path;
				},
				run: openAndAppend,
			},
			{
				name: "a v2 file migrated on open",
				prepare: async (storage, root) => {
					const path = `${root}/s/v2.jsonl`;
					await put(storage, path, fixture("v2-branching.jsonl"));
					return path;
				},
				run: openAndAppend,
			},
			{
				name: "a torn last line repaired on open",
				prepare: async (storage, root) => {
					const path = `${root}/s/torn.jsonl`;
					await put(storage, path, fixture("v3-torn-last-line.jsonl"));
					return path;
				},
				run: openAndAppend,
			},
			{
				name: "an empty file given a header on open",
				prepare: async (storage, root) => {
					const path = `${root}/s/empty.jsonl`;
					await put(storage, path, new Uint8Array(0));
					return path;
				},
				run: openAndAppend,
			},
			{
				name: "a fork of a session into a new file",
				prepare: async (storage, root) => {
					const path = `${root}/s/source.jsonl`;
					await put(storage, path, fixture("v3-current.jsonl"));
					return path;
				},
				run: async (storage, path, root) => {
					const fork = await Session.forkFrom(storage, path, "/elsewhere", `${root}/forks`, { durability: "fsync" });
					await closing(fork, () => fork.appendMessage(user("in the fork")));
				},
			},
			{
				name: "a branch into a new file (createBranchedSession)",
				prepare: async (storage, root) => {
					const path = `${root}/s/branched.jsonl`;
					await put(storage, path, fixture("v3-current.jsonl"));
					return path;
				},
				run: async (storage, path) => {
					const session = await Session.open(storage, path);
					await closing(session, async () => {
						await session.createBranchedSession(session.tree.getLeafId() as string);
						await session.appendMessage(user("on the branch"));
					});
				},
			},
		];
		const writes = new Set<Operation>(["append", "createExclusive", "replace", "rename", "link", "remove", "mkdir"]);

		it.each(cases)(
			"$name: ends typed or done; the original's entries always load, backups are whole copies",
			async (c) => {
				// Learn the operations of a healthy run.
				const learn = await setup();
				const learnPath = await c.prepare(learn.storage, learn.root);
				const probe = faultyStorage(learn.storage);
				await c.run(probe.storage, learnPath, learn.root);
				const steps = probe.log.calls
					.filter((call) => call.op !== "stat" && call.op !== "list")
					.map((call) => stepOf(call, learn.root));
				expect(
					steps.some((call) => writes.has(call.op)),
					"the healthy run writes",
				).toBe(true);
				let failures = 0;
				for (const [index, step] of steps.entries()) {
					const kinds: Fault[] = writes.has(step.op)
						? [
								{ kind: "fail", errno: "ENOSPC" },
								{ kind: "after" },
								...(step.op === "append" ? [{ kind: "short", keep: 1 } as Fault] : []),
							]
						: [{ kind: "fail", errno: "EIO" }];
					for (const fault of kinds) {
						const { storage: base, root } = await setup();
						const path = await c.prepare(base, root);
						const original = await bytesOf(base, path);
						// Its entries, read without writing: what the file must still give, whatever happens.
						const before = await idsOnDisk(base, path);
						const nth = steps.slice(0, index).filter((s) => sameStep(s, step)).length;
						const faulty = faultyStorage(
							base,
							failNth((call) => sameStep(stepOf(call, root), step), nth, fault),
						);
						const result = await settled(c.run(faulty.storage, path, root));
						if ("error" in result) failures++;
						const context = `${c.name}: ${fault.kind} at step ${index} (${step.op} ${step.name})`;
						// Whatever happened, a healthy open afterwards works and has every entry the file had.
						const after = await settled(Session.open(base, path, { settleMs: 0 }));
						expect(
							"value" in after,
							`${context}: opens afterwards (${"error" in after ? after.error.message : ""})`,
						).toBe(true);
						if (!("value" in after)) continue;
						const ids = (await after.value.getEntries()).map((entry) => entry.id);
						await after.value.close();
						expectAcknowledgedKept(ids, before, context);
						// A backup, if one is there, holds the original bytes exactly.
						for (const name of await namesBeside(base, path)) {
							if (name.includes(".bak")) {
								expect(
									await bytesOf(base, `${path.slice(0, path.lastIndexOf("/"))}/${name}`),
									`${context}: ${name}`,
								).toEqual(original);
							}
						}
						const left = (await namesBeside(base, path)).filter((name) => !name.includes(".bak"));
						expect(left, `${context}: no lock or temporary left`).toEqual([path.slice(path.lastIndexOf("/") + 1)]);
					}
				}
				expect(failures, "some faults make the run fail").toBeGreaterThan(0);
			},
		);
	});

	describe("the file changed under an open session", () => {
		it("removed: the next append is refused (SessionFileChangedError), no file is made, the session stops", async () => {
			const { storage, root } = await setup();
			const { path } = await sessionOnDisk(storage, root);
			const session = await Session.open(storage, path);
			await session.appendMessage(user("kept in memory"));
			await storage.remove(path);
			const error = await typedRejection(session.appendMessage(user("not written")));
			expect(error).toBeInstanceOf(SessionFileChangedError);
			expect(error.message).toContain(path);
			expect((error as SessionFileChangedError).change).toBe("removed");
			expect(await storage.stat(path), "not made again, headerless").toBeNull();
			await typedRejection(session.appendMessage(user("refused")));
			await settled(session.close());
			expect(await storage.stat(path)).toBeNull();
			expect(await namesBeside(storage, path)).toEqual([]);
		});

		it("removed before the first append after opening, or after a fault: refused the same way", async () => {
			const { storage, root } = await setup();
			const { path } = await sessionOnDisk(storage, root);
			const session = await Session.open(storage, path);
			await storage.remove(path);
			const error = await typedRejection(session.appendMessage(user("not written")));
			expect(error).toBeInstanceOf(SessionFileChangedError);
			expect(await storage.stat(path)).toBeNull();
			await settled(session.close());
		});

		it("truncated or replaced by a shorter file: refused, and the other program's bytes are left as they are", async () => {
			const { storage, root } = await setup();
			const { path, ids } = await sessionOnDisk(storage, root);
			const session = await Session.open(storage, path);
			await session.appendMessage(user("one more"));
			const whole = decoder.decode(await bytesOf(storage, path));
			const shorter = encoder.encode(whole.split("\n").slice(0, 3).join("\n").concat("\n"));
			await storage.replace(path, [shorter]);
			const error = await typedRejection(session.appendMessage(user("not written")));
			expect(error).toBeInstanceOf(SessionFileChangedError);
			expect((error as SessionFileChangedError).change).toBe("truncated");
			expect((error as SessionFileChangedError).foundBytes).toBe(shorter.length);
			expect(await bytesOf(storage, path)).toEqual(shorter);
			await settled(session.close());
			expect(await idsOnDisk(storage, path)).toEqual(ids.slice(0, 2));
		});

		it("appended to by another program (pi takes no lock), even mid-line: our append follows on a line of its own", async () => {
			const { storage, root } = await setup();
			const { path, ids } = await sessionOnDisk(storage, root);
			const session = await Session.open(storage, path);
			const ours = [await session.appendMessage(user("ours 1"))];
			const theirs = `{"type":"custom","customType":"pi","id":"7e1r5000","parentId":"${ours[0]}","timestamp":"2025-01-01T00:00:09.000Z"}\n`;
			await storage.append(path, encoder.encode(theirs), false);
			ours.push(await session.appendMessage(user("ours 2")));
			await storage.append(path, encoder.encode('{"type":"custom","customType":"half'), false);
			ours.push(await session.appendMessage(user("ours 3")));
			await session.close();
			const found = await idsOnDisk(storage, path);
			expectAcknowledgedKept(found, [...ids, ...ours]);
			expect(found).toContain("7e1r5000");
			const lines = decoder.decode(await bytesOf(storage, path)).split("\n");
			expect(lines.at(-3)).toBe('{"type":"custom","customType":"half');
		});

		it("replaced by a longer file (another program's rewrite): appended to after its bytes", async () => {
			const { storage, root } = await setup();
			const { path, ids } = await sessionOnDisk(storage, root);
			const session = await Session.open(storage, path);
			const longer = new Uint8Array([...(await bytesOf(storage, path)), ...encoder.encode(" \n")]);
			await storage.replace(path, [longer]);
			const next = await session.appendMessage(user("after the rewrite"));
			await session.close();
			expect(await idsOnDisk(storage, path)).toEqual([...ids, next]);
		});
	});

	it("a takeover guard left behind by a failed takeover does not block the next one", async () => {
		const { storage: base, root } = await setup();
		const { path, ids } = await sessionOnDisk(base, root);
		const lock = `${path}.lock`;
		// A holder whose release fails: its lock stays, stale (its token is no longer held).
		const leaving = faultyStorage(
			base,
			failNth((call) => call.op === "remove" && call.path === lock, 0, { kind: "fail" }),
		);
		const holder = await Session.open(leaving.storage, path);
		await typedRejection(holder.close());
		expect(await base.stat(lock)).not.toBeNull();
		// A taker whose guard is made but reported failed: the guard stays too.
		const guard = `${lock}.takeover`;
		const taking = faultyStorage(
			base,
			failNth((call) => call.op === "createExclusive" && call.path === guard, 0, { kind: "after" }),
		);
		await typedRejection(Session.open(taking.storage, path));
		expect(await base.stat(guard)).not.toBeNull();
		// The next taker, at once (not only once the guard is old), clears both and takes the lock.
		const next = await Session.open(base, path);
		await next.close();
		expect(await namesBeside(base, path)).toEqual([path.slice(path.lastIndexOf("/") + 1)]);
		expect(await idsOnDisk(base, path)).toEqual(ids);
	});

	it("the lock file removed under its holder: both writers go on, nothing acknowledged is lost, neither removes the other's lock", async () => {
		const { storage, root } = await setup();
		const { path, ids } = await sessionOnDisk(storage, root);
		const first = await Session.open(storage, path);
		const fromFirst = [await first.appendMessage(user("first 1"))];
		await storage.remove(`${path}.lock`);
		const second = await Session.open(storage, path);
		const fromSecond = [await second.appendMessage(user("second 1"))];
		fromFirst.push(await first.appendMessage(user("first 2")));
		fromSecond.push(await second.appendMessage(user("second 2")));
		await first.close();
		expect(await namesBeside(storage, path), "the second writer's lock stays").toContain(
			`${path.slice(path.lastIndexOf("/") + 1)}.lock`,
		);
		await typedRejection(Session.open(storage, path));
		fromSecond.push(await second.appendMessage(user("second 3")));
		await second.close();
		expect(await namesBeside(storage, path)).toEqual([path.slice(path.lastIndexOf("/") + 1)]);
		const found = await idsOnDisk(storage, path);
		expectAcknowledgedKept(found, [...ids, ...fromFirst]);
		expectAcknowledgedKept(found, [...ids, ...fromSecond]);
		expect(found).toHaveLength(ids.length + fromFirst.length + fromSecond.length);
	});
});

/** A step of a run: an operation and its file, under the run's root, without the random parts of names. */
interface Step {
	op: Operation;
	name: string;
}

function stepOf(call: Call, root: string): Step {
	const name = (call.path.startsWith(root) ? call.path.slice(root.length) : call.path)
		.replace(/\d{4}-\d\d-\d\dT[\d-]+Z_[0-9a-f-]{36}/g, "<session>")
		.replace(/\.[0-9a-f]{8}\.tmp$/, ".<tmp>");
	return { op: call.op, name };
}

function sameStep(a: Step, b: Step): boolean {
	return a.op === b.op && a.name === b.name;
}

describe("takeover guards", () => {
	/** A session file with a stale lock (its holder's pid is not running) beside it, in a fresh directory. */
	function staleLocked(): { dir: string; path: string } {
		const dir = mkdtempSync(join(tmpdir(), "guards-"));
		temporary.push(dir);
		const path = join(dir, "a.jsonl");
		writeFileSync(path, '{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n');
		const dead = { pid: 2 ** 22 + 17, host: hostname(), startedAt: 1, token: "dead-holder" };
		writeFileSync(`${path}.lock`, `${JSON.stringify(dead)}\n`);
		return { dir, path };
	}

	it("a guard whose taker is alive on this machine is never cleared, however old: the opener is refused, both stay", async () => {
		const { path } = staleLocked();
		const ppid = process.ppid;
		const alive = { pid: ppid, host: hostname(), startedAt: processStartTime(ppid) ?? 0, token: "live-taker" };
		const guard = `${path}.lock.takeover`;
		writeFileSync(guard, `${JSON.stringify(alive)}\n`);
		const old = new Date(Date.now() - 60_000);
		utimesSync(guard, old, old);
		const storage = createNodeStorage();
		await expect(Session.open(storage, path, { locks: createNodeLocks(storage) })).rejects.toBeInstanceOf(
			errors.SessionLockedError,
		);
		expect(readFileSync(guard, "utf8")).toContain("live-taker");
		expect(readFileSync(`${path}.lock`, "utf8")).toContain("dead-holder");
	});

	it("a guard of a taker that is gone is cleared at once, young as it is; the stale lock is taken over", async () => {
		const { path } = staleLocked();
		const gone = { pid: 2 ** 22 + 19, host: hostname(), startedAt: 1, token: "gone-taker" };
		writeFileSync(`${path}.lock.takeover`, `${JSON.stringify(gone)}\n`);
		const storage = createNodeStorage();
		const session = await Session.open(storage, path, { locks: createNodeLocks(storage) });
		await session.close();
		expect(readdirSync(dirname(path))).toEqual(["a.jsonl"]);
	});

	it("a guard that is gone by the time it is read (its taker done): the opener looks at the lock again and takes it", async () => {
		const { path } = staleLocked();
		const base = createNodeStorage();
		// The first guard create finds one there (another taker's), which is gone when it is read.
		const storage = faultyStorage(
			base,
			failNth((call) => call.op === "createExclusive" && call.path.endsWith(".takeover"), 0, {
				kind: "fail",
				code: "exists",
				errno: "EEXIST",
			}),
		).storage;
		const session = await Session.open(storage, path, { locks: createNodeLocks(storage) });
		await session.close();
		expect(readdirSync(dirname(path))).toEqual(["a.jsonl"]);
	});
});
