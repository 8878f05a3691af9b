/**
 * Lock files under pressure: a stale lock that is still empty, taken over by several openers at once;
 * the locks of a thread of this process that died.
 */
import { mkdtempSync, promises, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { threadId } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import { type FsPromisesLike, fsPromisesStorage } from "../adapters/fs-promises.ts";
import { createNodeLocks, nodeLockIdentity } from "../adapters/node.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { SessionLockedError, type Storage, type WriterLocks } from "../src/index.ts";
import { acquireLock, lockFiles, realmLockIdentity } from "../src/lock-files.ts";
import { markThreadDead } from "../src/lock-threads.ts";
import { type Effect, perform, type Task } from "../src/storage.ts";
import type { HeldLock, LockOwner } from "../src/writer-lock.ts";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const encoder = new TextEncoder();

/** `fs.promises` whose file writes each wait a few milliseconds first. */
function withSlowWrites(fs: typeof promises): FsPromisesLike {
	const like = fs as unknown as FsPromisesLike;
	return Object.assign(Object.create(like), {
		open: async (path: string, flags: string) => {
			const handle = await like.open(path, flags);
			return Object.assign(Object.create(handle), {
				write: async (...args: Parameters<typeof handle.write>) => {
					await new Promise((resolve) => setTimeout(resolve, 3));
					return handle.write(...args);
				},
				stat: () => handle.stat(),
				read: (...args: Parameters<typeof handle.read>) => handle.read(...args),
				datasync: () => handle.datasync(),
				close: () => handle.close(),
			});
		},
	});
}

/** Several openers at once: exactly one gets the lock, the others `SessionLockedError`. */
async function expectOneWinner(locks: WriterLocks, path: string, openers: number): Promise<void> {
	const results = await Promise.allSettled(Array.from({ length: openers }, () => locks.acquire(path)));
	const won = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
	for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(SessionLockedError);
	expect(won).toHaveLength(1);
	await locks.release(won[0] as (typeof won)[number]);
}

describe("an exclusive create (a lock file's)", () => {
	it.each([
		["on the local file system", async () => fsPromisesStorage(withSlowWrites(promises))],
		["in memory", async () => (await createMemoryStorage()) as Storage],
	])("%s is never seen empty or in part, and a failed one leaves nothing", async (_name, make) => {
		const dir = mkdtempSync(join(tmpdir(), "pst-create-"));
		dirs.push(dir);
		const storage = await make();
		await storage.mkdir(dir);
		const path = join(dir, "f.lock");
		const content = [encoder.encode("a".repeat(100)), encoder.encode("b".repeat(100))];
		let done = false;
		const created = storage.createExclusive(path, content, false).finally(() => {
			done = true;
		});
		const seen = new Set<number>();
		while (!done) {
			const stat = await storage.stat(path);
			if (stat) seen.add(stat.size);
			await new Promise((resolve) => setTimeout(resolve, 0));
		}
		await created;
		expect([...seen].filter((size) => size !== 200)).toEqual([]);
		const failing = (function* () {
			yield encoder.encode("x");
			throw new Error("the content could not be made");
		})();
		await expect(storage.createExclusive(join(dir, "g.lock"), failing, false)).rejects.toThrow(/could not be made/);
		expect((await storage.list(dir)).map((entry) => entry.name)).toEqual(["f.lock"]);
	});
});

describe("a stale lock file that is still empty", () => {
	it("on the local file system: of openers taking it over at once, exactly one wins (40 rounds)", async () => {
		const dir = mkdtempSync(join(tmpdir(), "pst-empty-lock-"));
		dirs.push(dir);
		// Slow writes widen the moment between a file's creation and its content, where an opener that
		// reads the new lock finds it empty too (unless creates are whole-or-nothing, as they must be).
		const storage = fsPromisesStorage(withSlowWrites(promises));
		for (let round = 0; round < 40; round++) {
			const path = join(dir, `s${round}.jsonl`);
			writeFileSync(`${path}.lock`, ""); // its writer died between create and write, long ago
			const old = new Date(Date.now() - 60_000);
			utimesSync(`${path}.lock`, old, old);
			await expectOneWinner(lockFiles(storage, nodeLockIdentity), path, 4);
		}
	});

	it("in memory: of openers taking it over at once, exactly one wins (40 rounds)", async () => {
		const storage: Storage = await createMemoryStorage();
		await storage.mkdir("/s");
		const locks = lockFiles(storage, realmLockIdentity);
		for (let round = 0; round < 40; round++) {
			const path = `/s/s${round}.jsonl`;
			await storage.createExclusive(`${path}.lock`, [], false);
			await expectOneWinner(lockFiles(withOldLocks(storage), realmLockIdentity), path, 4);
		}
		expect(locks).toBeDefined();
	});

	it("two takers in the worst interleaving: the one who finds the stale lock gone removes nothing", async () => {
		// The interleaving that once gave two winners: B, holding the takeover guard after A, reads the lock
		// file while it is missing (A removed the stale one and has not yet made its own), and A's new lock
		// must not be taken for the stale one B judged (missing is not "still unreadable").
		const storage: Storage = await createMemoryStorage();
		await storage.mkdir("/s");
		await storage.createExclusive("/s/a.jsonl.lock", [], false);
		const aged = withOldLocks(storage);
		const a = new Stepper(acquireLock("/s/a.jsonl", realmLockIdentity), aged);
		const b = new Stepper(acquireLock("/s/a.jsonl", realmLockIdentity), aged);
		// Each finds the lock taken, unreadable and old.
		await a.steps(3);
		await b.steps(3);
		// A takes the guard, finds the same unreadable lock, removes it, lets go of the guard.
		await a.steps(4);
		// B takes the guard and reads the lock file: missing now.
		await b.steps(2);
		// A makes its lock.
		await a.steps(1);
		await b.finish();
		await a.finish();
		expect(a.outcome).toMatchObject({ done: true, value: { path: "/s/a.jsonl" } });
		expect(b.outcome).toMatchObject({ done: false });
		expect((b.outcome as { error: unknown }).error).toBeInstanceOf(SessionLockedError);
		expect(await readOwnerOf(storage, "/s/a.jsonl.lock")).toBe((a.outcome as { value: HeldLock }).value.owner.token);
	});
});

/**
 * `storage`, with every lock file seen as a minute old: an empty lock this realm never
 * held is judged by its age.
 */
function withOldLocks(storage: Storage): Storage {
	const stat = storage.stat.bind(storage);
	return {
		...storage,
		stat: async (path) => {
			const found = await stat(path);
			return found && path.endsWith(".lock") ? { ...found, mtimeMs: found.mtimeMs - 60_000 } : found;
		},
	};
}

/** A task driven one storage operation at a time, so a test can interleave two of them exactly. */
class Stepper<T> {
	readonly #task: Task<T>;
	readonly #storage: Storage;
	#step: IteratorResult<Effect, T>;
	outcome: { done: true; value: T } | { done: false; error: unknown } | undefined;

	constructor(task: Task<T>, storage: Storage) {
		this.#task = task;
		this.#storage = storage;
		this.#step = task.next();
	}

	/** Perform the next `count` operations (fewer if the task ends first). */
	async steps(count: number): Promise<void> {
		for (let n = 0; n < count && !this.outcome; n++) {
			if (this.#step.done) {
				this.outcome = { done: true, value: this.#step.value };
				return;
			}
			const effect = this.#step.value;
			try {
				const result = await perform(this.#storage, effect);
				this.#step = this.#task.next(result);
			} catch (error) {
				try {
					this.#step = this.#task.throw(error);
				} catch (thrown) {
					this.outcome = { done: false, error: thrown };
					return;
				}
			}
			if (this.#step.done) this.outcome = { done: true, value: this.#step.value };
		}
	}

	async finish(): Promise<void> {
		while (!this.outcome) await this.steps(1);
	}
}

async function readOwnerOf(storage: Storage, lockPath: string): Promise<string> {
	const bytes = await storage.readRange(lockPath, 0, 4096);
	return (JSON.parse(new TextDecoder().decode(bytes)) as LockOwner).token;
}

describe("locks of another thread of this process", () => {
	it("are alive while that thread may run, and stale once it is known to have died", () => {
		const owner = { ...nodeLockIdentity.lockOwner(), thread: threadId + 1000 };
		expect(nodeLockIdentity.isLockOwnerAlive(owner)).toBe(true);
		markThreadDead(threadId + 1000);
		expect(nodeLockIdentity.isLockOwnerAlive(owner)).toBe(false);
		// This thread's own: alive only while held here.
		expect(nodeLockIdentity.isLockOwnerAlive(nodeLockIdentity.lockOwner())).toBe(false);
	});

	it("a lock file left by a thread that died is taken over", async () => {
		const dir = mkdtempSync(join(tmpdir(), "pst-dead-thread-"));
		dirs.push(dir);
		const path = join(dir, "s.jsonl");
		const dead = { ...nodeLockIdentity.lockOwner(), thread: threadId + 2000 };
		writeFileSync(`${path}.lock`, encoder.encode(`${JSON.stringify(dead)}\n`));
		const locks = createNodeLocks();
		const refused = await locks.acquire(path).catch((error: unknown) => error);
		expect(refused).toBeInstanceOf(SessionLockedError);
		expect((refused as Error).message).toMatch(new RegExp(`thread ${threadId + 2000} of this process`));
		markThreadDead(threadId + 2000);
		const lock = await locks.acquire(path);
		expect(lock.owner.thread).toBe(threadId);
		await locks.release(lock);
	});
});

describe("two copies of the lock module in one realm (a package installed twice, a hot reload)", () => {
	it("see each other's locks as live", async () => {
		// A query string makes vite load the module a second time; TypeScript cannot resolve such a specifier.
		// @ts-expect-error TS2307
		const copy = (await import("../src/lock-files.ts?second-copy")) as typeof import("../src/lock-files.ts");
		expect(copy.lockFiles).not.toBe(lockFiles); // really another instance of the module
		const dir = mkdtempSync(join(tmpdir(), "pst-two-copies-"));
		dirs.push(dir);
		const path = join(dir, "s.jsonl");
		const storage = fsPromisesStorage(promises as unknown as FsPromisesLike);
		const held = await lockFiles(storage, nodeLockIdentity).acquire(path);
		const refused = await copy
			.lockFiles(storage, nodeLockIdentity)
			.acquire(path)
			.catch((error: unknown) => error);
		expect((refused as Error).name).toBe("SessionLockedError");
		await lockFiles(storage, nodeLockIdentity).release(held);
	});
});
