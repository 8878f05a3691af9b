/**
 * Crash and concurrency tests on the Node storage, with real child processes (`test/fixtures/append-child.ts`,
 * run with `node --import tsx`, so the child's pid is the pid in its lock file).
 *
 * - Crash: a child appends a burst (awaited and pipelined appends, some of several MiB) and is SIGKILLed at a
 *   random moment; the file must then open, every acknowledged entry must be in it, in order, the only damage
 *   may be a torn last line (reported and repaired), and appending must work again. For all three durability
 *   modes, with the child appending through an in-process `Session` and through the engine in a worker thread
 *   (where pipelined appends travel in batches). In process, some kills are aimed: sent the moment the child
 *   announces a big write (`--announce-writes`), and across the runs at least half of them must land before
 *   the write ended, or the runs would prove nothing about torn writes. Through the worker, at least half of
 *   the kills must find appends issued and not yet acknowledged (`--announce-issues`): the worker had work
 *   when it died. Every run must see appends acknowledged. `CRASH_ITERATIONS` (default 40) and `CRASH_WORKER_ITERATIONS` (default 12) set the number
 *   of kills, `CRASH_SEED` the random seed, `CRASH_BIG_SHARE` (default 0.3) the share of big appends.
 * - Locks: one writer per file across processes; read-only opens; stale locks of dead processes are taken over.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createNodeLocks, createNodeStorage } from "../adapters/node.ts";
import type { SessionEntry } from "../src/entries.ts";
import { acquireLock, SessionLockedError } from "../src/lock-files.ts";
import { type Durability, Session, SessionReadOnlyError } from "../src/session.ts";
import { type Effect, perform, type Storage, type Task } from "../src/storage.ts";
import type { LockIdentity, LockOwner } from "../src/writer-lock.ts";
import { assistantMessage } from "./support/messages.ts";
import { seededRandom } from "./support/random.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CHILD = fileURLToPath(new URL("./fixtures/append-child.ts", import.meta.url));
const MODES: Durability[] = ["none", "fsync", "group"];
const ITERATIONS = Number(process.env.CRASH_ITERATIONS ?? 40);
const WORKER_ITERATIONS = Number(process.env.CRASH_WORKER_ITERATIONS ?? 12);
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** Share of appends in the crash runs that are big custom entries (4–8 MiB). */
const BIG_SHARE = Number(process.env.CRASH_BIG_SHARE ?? 0.3);
/** A chained file is abandoned for a fresh one beyond this size, to keep re-reads cheap. */
const MAX_CHAINED_BYTES = 48 << 20;

const storage = createNodeStorage();
const locks = createNodeLocks(storage);

// Children and temporary directories -------------------------------------------------------------

const liveChildren = new Set<Child>();
const temporaryDirs: string[] = [];

function temporaryDir(): string {
	const dir = mkdtempSync(join(tmpdir(), "pi-crash-"));
	temporaryDirs.push(dir);
	return dir;
}

async function killAll(): Promise<void> {
	await Promise.all([...liveChildren].map((child) => child.kill()));
}

afterEach(async () => {
	await killAll();
	for (const dir of temporaryDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

afterAll(async () => {
	await killAll();
	for (const dir of temporaryDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Ack {
	id: string;
	kind: string;
}

interface Exit {
	code: number | null;
	signal: NodeJS.Signals | null;
}

/** One `append-child.ts` process and the lines it printed. */
class Child {
	readonly process: ChildProcessWithoutNullStreams;
	readonly lines: string[] = [];
	readonly closed: Promise<Exit>;
	exit: Exit | undefined;
	#partial = "";
	#stderr = "";
	readonly #listeners = new Set<() => void>();

	constructor(args: string[]) {
		this.process = spawn(process.execPath, ["--import", "tsx", CHILD, ...args], {
			cwd: ROOT,
			stdio: ["pipe", "pipe", "pipe"],
		});
		liveChildren.add(this);
		this.process.stdout.setEncoding("utf8");
		this.process.stdout.on("data", (data: string) => {
			const parts = (this.#partial + data).split("\n");
			// Only complete lines count: an acknowledgement is a whole line.
			this.#partial = parts.pop() ?? "";
			this.lines.push(...parts);
			this.#notify();
		});
		this.process.stderr.setEncoding("utf8");
		this.process.stderr.on("data", (data: string) => {
			this.#stderr += data;
		});
		// The parent may already have closed its end of stdin when the child dies.
		this.process.stdin.on("error", () => undefined);
		this.closed = new Promise((resolve) => {
			this.process.on("close", (code, signal) => {
				this.exit = { code, signal };
				liveChildren.delete(this);
				this.#notify();
				resolve(this.exit);
			});
		});
	}

	get pid(): number {
		return this.process.pid as number;
	}

	/** Acknowledged appends, in the order the child printed them. */
	get acks(): Ack[] {
		return this.lines
			.filter((line) => line.startsWith("ack "))
			.map((line) => {
				const [, id, kind] = line.split(" ");
				return { id: id as string, kind: kind as string };
			});
	}

	get stderr(): string {
		return this.#stderr;
	}

	#notify(): void {
		for (const listener of [...this.#listeners]) listener();
	}

	/** The first printed line that matches; fails when the child exits first or the time runs out. */
	waitForLine(match: (line: string) => boolean, timeoutMs = 20_000): Promise<string> {
		return new Promise((resolve, reject) => {
			const check = (): void => {
				const line = this.lines.find(match);
				if (line !== undefined) {
					done();
					resolve(line);
				} else if (this.exit) {
					done();
					reject(new Error(`child ${this.pid} exited (${JSON.stringify(this.exit)}) first; ${this.describe()}`));
				}
			};
			const timer = setTimeout(() => {
				done();
				reject(new Error(`timed out waiting for a line from child ${this.pid}; ${this.describe()}`));
			}, timeoutMs);
			const done = (): void => {
				clearTimeout(timer);
				this.#listeners.delete(check);
			};
			this.#listeners.add(check);
			check();
		});
	}

	describe(): string {
		return `last lines: ${JSON.stringify(this.lines.slice(-5))}, stderr: ${JSON.stringify(this.#stderr.slice(-2000))}`;
	}

	send(line: string): void {
		this.process.stdin.write(`${line}\n`);
	}

	/** SIGKILL (if still running) and wait until the process is reaped, so its pid is dead. */
	kill(): Promise<Exit> {
		if (!this.exit) this.process.kill("SIGKILL");
		return this.closed;
	}
}

// Helpers ----------------------------------------------------------------------------------------

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface RawLine {
	/** 1-based line number. */
	line: number;
	bytes: Buffer;
	terminated: boolean;
}

/** The raw lines of a file, split on `\n` bytes. */
function rawLines(bytes: Buffer): RawLine[] {
	const lines: RawLine[] = [];
	let start = 0;
	while (start < bytes.length) {
		const end = bytes.indexOf(0x0a, start);
		if (end < 0) {
			lines.push({ line: lines.length + 1, bytes: bytes.subarray(start), terminated: false });
			break;
		}
		lines.push({ line: lines.length + 1, bytes: bytes.subarray(start, end), terminated: true });
		start = end + 1;
	}
	return lines;
}

/** Every line parses as JSON except the known invalid ones, which do not. */
function expectLinesValid(path: string, invalid: ReadonlySet<number>, context: string): void {
	const bytes = readFileSync(path);
	expect(bytes.at(-1), `${context}: file ends with a newline`).toBe(0x0a);
	for (const { line, bytes: text } of rawLines(bytes)) {
		let ok = true;
		try {
			JSON.parse(text.toString("utf8"));
		} catch {
			ok = false;
		}
		expect(ok, `${context}: line ${line} ${invalid.has(line) ? "is the torn line" : "parses"}`).toBe(
			!invalid.has(line),
		);
	}
}

/** The entries form one chain in file order (every child in these tests appends linearly). */
function expectSingleChain(entries: readonly SessionEntry[], context: string): void {
	entries.forEach((entry, index) => {
		expect(entry.parentId, `${context}: parent of entry ${index} (${entry.id})`).toBe(
			index === 0 ? null : entries[index - 1]?.id,
		);
	});
}

/** No lock, stale lock or temporary file of `path` is left in its directory. */
function expectNoLeftovers(path: string, context: string): void {
	const name = basename(path);
	const leftovers = readdirSync(dirname(path)).filter((file) => file.startsWith(name) && file !== name);
	expect(leftovers, `${context}: leftovers next to the session`).toEqual([]);
}

function lockOwnerPid(path: string): number | undefined {
	const lockPath = `${path}.lock`;
	if (!existsSync(lockPath)) return undefined;
	return (JSON.parse(readFileSync(lockPath, "utf8")) as { pid: number }).pid;
}

// Crash tests ------------------------------------------------------------------------------------

interface ModeStats {
	kills: number;
	killedBeforeFile: number;
	/** Appends acknowledged before the file existed, lost with the process (pi's lazy file creation). */
	acknowledgedBeforeFile: number;
	acknowledged: number;
	tornLastLines: number;
	unterminatedButWhole: number;
	emptyFiles: number;
	maxFileBytes: number;
	/** Kills sent the moment the child announced a big write, and those of them before it said the write ended. */
	aimedKills: number;
	killedInWrite: number;
	/** Through the worker: kills after the file existed, and those with appends issued but not acknowledged. */
	workerKills: number;
	killedWithAppendsInFlight: number;
}

const stats = new Map<string, ModeStats>();
const crashStartedAt = performance.now();

/** A file carried from one crash to the next, with the line numbers of the torn lines kept in it. */
interface ChainedFile {
	path: string;
	invalidLines: Set<number>;
}

/** How the child appends: `session` (in its own thread) or `worker` (the engine in a worker thread). */
type Via = "session" | "worker";
const RUNS: { via: Via; mode: Durability; iterations: number[] }[] = (
	[
		["session", ITERATIONS],
		["worker", WORKER_ITERATIONS],
	] as const
).flatMap(([via, count]) =>
	MODES.map((mode, modeIndex) => ({
		via,
		mode,
		iterations: [...Array(count).keys()].filter((i) => i % MODES.length === modeIndex),
	})),
);

describe.sequential(`crash: SIGKILL during a burst of appends (${ITERATIONS}+${WORKER_ITERATIONS} kills, seed ${SEED})`, () => {
	afterAll(() => {
		const total = (key: keyof ModeStats) => [...stats.values()].reduce((sum, s) => sum + s[key], 0);
		const totals = total("tornLastLines");
		const aimed = total("aimedKills");
		const inWrite = total("killedInWrite");
		const workerKills = total("workerKills");
		const busy = total("killedWithAppendsInFlight");
		// The runs prove something about torn writes only if kills land inside them: most aimed kills must (all
		// did in every run seen here; a kill sent once the write was done would find it ended).
		if (aimed >= 3)
			expect(inWrite, `of ${aimed} kills aimed at a big write`).toBeGreaterThanOrEqual(Math.ceil(aimed / 2));
		// Through the worker the kills prove something only if the worker had work: appends sent and not answered.
		if (workerKills >= 3)
			expect(busy, `of ${workerKills} kills through the worker`).toBeGreaterThanOrEqual(Math.ceil(workerKills / 2));
		console.log(
			`crash runs: seed ${SEED}, ${ITERATIONS} kills in ${Math.round(performance.now() - crashStartedAt)} ms, ` +
				`${totals} torn last lines, ${inWrite} of ${aimed} aimed kills inside a big write, ` +
				`${busy} of ${workerKills} kills through the worker with appends in flight; per mode ${JSON.stringify(Object.fromEntries(stats))}`,
		);
	});

	RUNS.forEach(({ via, mode, iterations }, runIndex) => {
		it.skipIf(iterations.length === 0)(
			`via ${via}, durability "${mode}": ${iterations.length} kills; acknowledged entries survive, only a torn last line`,
			async () => {
				const random = seededRandom(SEED + runIndex);
				const dir = temporaryDir();
				const s: ModeStats = {
					kills: 0,
					killedBeforeFile: 0,
					acknowledgedBeforeFile: 0,
					acknowledged: 0,
					tornLastLines: 0,
					unterminatedButWhole: 0,
					emptyFiles: 0,
					maxFileBytes: 0,
					aimedKills: 0,
					killedInWrite: 0,
					workerKills: 0,
					killedWithAppendsInFlight: 0,
				};
				stats.set(`${via}/${mode}`, s);
				let chained: ChainedFile | undefined;
				for (const iteration of iterations) {
					const context = `seed ${SEED}, via ${via}, mode ${mode}, iteration ${iteration}`;
					// Every fifth kill lands before the first user or assistant message: no file yet.
					const beforeFile = iteration % 5 === 4;
					const fresh = beforeFile || !chained || random() < 0.3 || statSync(chained.path).size > MAX_CHAINED_BYTES;
					const file: ChainedFile = fresh
						? { path: join(dir, `${via}-${mode}-${iteration}.jsonl`), invalidLines: new Set() }
						: (chained as ChainedFile);
					const existedBefore = existsSync(file.path);

					// In process, half the runs with big entries kill the child as it starts writing one: at a
					// write in flight, which a kill at a random moment seldom hits.
					const bigShare = random() < 0.5 ? BIG_SHARE : 0;
					const aimed = via === "session" && !beforeFile && bigShare > 0 && random() < 0.5;
					const child = new Child([
						"--via",
						via,
						"--path",
						file.path,
						"--durability",
						mode,
						"--seed",
						String(SEED + iteration * 7919),
						"--tag",
						`i${iteration}`,
						// Half the runs have big entries (4–8 MiB, one write each, which a SIGKILL can cut short);
						// the others append small entries only, hundreds of them before the kill.
						"--big-share",
						String(bigShare),
						...(beforeFile ? ["--pre-assistant-ms", "1500"] : []),
						...(aimed ? ["--announce-writes"] : []),
						...(via === "worker" ? ["--announce-issues"] : []),
					]);
					await child.waitForLine((line) => line.startsWith("ready "));
					const readyAt = performance.now();
					if (aimed) await child.waitForLine((line) => line.startsWith("writing "));
					else if (via === "worker" && !beforeFile) {
						// Through the worker, a long burst first (a few big entries, or up to 200 small ones), so the
						// worker is deep in its work when the kill comes.
						const acked = bigShare > 0 ? 2 + Math.floor(random() * 8) : 20 + Math.floor(random() * 180);
						await child.waitForLine(() => child.acks.length >= acked);
						await sleep(Math.floor(random() * 20));
					} else await sleep(5 + Math.floor(random() * 76));
					const killedAfterMs = performance.now() - readyAt;
					const exit = await child.kill();
					if (aimed) {
						s.aimedKills++;
						const writing = child.lines.findLastIndex((line) => line.startsWith("writing "));
						if (!child.lines.slice(writing).some((line) => line.startsWith("wrote "))) s.killedInWrite++;
					}
					expect(exit.signal, `${context}: killed mid-burst; ${child.describe()}`).toBe("SIGKILL");
					expect(
						child.lines.filter((line) => line.startsWith("error")),
						context,
					).toEqual([]);
					s.kills++;
					const acks = child.acks;
					if (via === "worker" && !beforeFile) {
						s.workerKills++;
						const issued = child.lines.filter((line) => line.startsWith("issued ")).length;
						if (issued > acks.length) s.killedWithAppendsInFlight++;
					}
					s.acknowledged += acks.length;
					const conversationAcked = acks.some((ack) => ack.kind === "assistant" || ack.kind === "user");

					// The killed child's lock is left behind, naming its (now dead) pid.
					expect(lockOwnerPid(file.path), `${context}: stale lock`).toBe(child.pid);

					if (!existsSync(file.path)) {
						expect(existedBefore, `${context}: a file never disappears`).toBe(false);
						expect(conversationAcked, `${context}: a user or assistant message was acknowledged, but no file`).toBe(
							false,
						);
						s.killedBeforeFile++;
						s.acknowledgedBeforeFile += acks.length;
						const session = await Session.open(storage, file.path, { locks, durability: mode, create: true });
						expect(session.report.created, context).toBe(true);
						expect(lockOwnerPid(file.path), `${context}: stale lock taken over`).toBe(process.pid);
						const user = await session.appendMessage({ role: "user", content: "after", timestamp: Date.now() });
						const answer = await session.appendMessage(assistantMessage("after"));
						await session.close();
						expectNoLeftovers(file.path, context);
						const reopened = await Session.open(storage, file.path, { readOnly: true });
						expect(
							reopened.tree.getEntries().map((entry) => entry.id),
							context,
						).toEqual([user, answer]);
						expect(reopened.report.diagnostics, context).toEqual([]);
						chained = file;
						continue;
					}
					if (beforeFile && killedAfterMs < 1000) {
						throw new Error(
							`${context}: the file exists although the child was killed before its first user or assistant message`,
						);
					}

					const before = readFileSync(file.path);
					s.maxFileBytes = Math.max(s.maxFileBytes, before.length);
					const lines = rawLines(before);
					const endsWithNewline = before.length === 0 || before.at(-1) === 0x0a;

					const session = await Session.open(storage, file.path, { locks, durability: mode });
					expect(lockOwnerPid(file.path), `${context}: stale lock taken over`).toBe(process.pid);
					const report = session.report;
					if (before.length === 0) {
						// Killed between creating the file and writing to it: nothing was acknowledged as written.
						s.emptyFiles++;
						expect(report.wroteHeader, context).toBe(true);
					}

					// Diagnostics: the torn lines of earlier crashes, and at most a torn last line from this one.
					const old = report.diagnostics.filter((d) => file.invalidLines.has(d.line));
					const found = report.diagnostics.filter((d) => !file.invalidLines.has(d.line));
					expect(
						old.map((d) => [d.line, d.reason]),
						context,
					).toEqual([...file.invalidLines].sort((a, b) => a - b).map((line) => [line, "invalid-json"]));
					if (endsWithNewline) {
						expect(found, context).toEqual([]);
						expect(report.repairedLastLine, context).toBe(false);
					} else {
						expect(report.repairedLastLine, `${context}: an unterminated last line is terminated`).toBe(true);
						expect(found.length, `${context}: ${JSON.stringify(found)}`).toBeLessThanOrEqual(1);
						const torn = found[0];
						if (torn) {
							expect(torn.reason, context).toBe("torn-last-line");
							expect(torn.line, `${context}: the torn line is the last one`).toBe(lines.length);
							s.tornLastLines++;
							file.invalidLines.add(torn.line);
						} else {
							// Cut just before its newline: the entry is whole and kept.
							s.unterminatedButWhole++;
						}
					}
					expect(readFileSync(file.path).at(-1), `${context}: ends with a newline after opening`).toBe(0x0a);

					// Every acknowledged entry is there (once the file exists, which the first user or assistant message
					// or an earlier run guarantees), in the order it was appended, on one chain.
					const entries = session.tree.getEntries();
					const position = new Map(entries.map((entry, index) => [entry.id, index]));
					const mustHaveAll = existedBefore || conversationAcked;
					let last = -1;
					for (const ack of acks) {
						const at = position.get(ack.id);
						if (mustHaveAll) expect(at, `${context}: acknowledged ${ack.kind} ${ack.id} is in the file`).toBeDefined();
						if (at === undefined) continue;
						expect(at, `${context}: ${ack.id} comes after the previous acknowledged entry`).toBeGreaterThan(last);
						last = at;
					}
					expectSingleChain(entries, context);

					// Appending works again; a re-open shows it, with only the torn lines as diagnostics.
					const appended = await session.appendMessage(assistantMessage(`after crash ${iteration}`));
					await session.close();
					expectNoLeftovers(file.path, context);
					const reopened = await Session.open(storage, file.path, { readOnly: true });
					expect(reopened.tree.getLeafId(), context).toBe(appended);
					expect(reopened.tree.size, context).toBe(entries.length + 1);
					expect(
						reopened.report.diagnostics.map((d) => [d.line, d.reason]),
						context,
					).toEqual([...file.invalidLines].sort((a, b) => a - b).map((line) => [line, "invalid-json"]));
					expectLinesValid(file.path, file.invalidLines, context);
					chained = file;
				}
				// The kills came while appends were being made: some were acknowledged before them.
				expect(s.acknowledged, `seed ${SEED}: appends acknowledged across the run`).toBeGreaterThan(0);
			},
			Math.max(120_000, iterations.length * 4_000),
		);
	});
});

// A torn write can cut a line inside a multi-byte character; that is still a torn last line. (The crash runs
// above use ASCII for their big entries, so this is checked here, deterministically.)
it("a torn last line cut inside a multi-byte character is reported as torn-last-line", async () => {
	const dir = temporaryDir();
	const path = join(dir, "torn-utf8.jsonl");
	const header = { type: "session", version: 3, id: "s", timestamp: new Date(0).toISOString(), cwd: "/" };
	const entry = (id: string) => ({
		type: "custom",
		id,
		parentId: null,
		timestamp: new Date(0).toISOString(),
		customType: "t",
		data: "héllo 🚀 wörld",
	});
	const whole = Buffer.from(
		`${[header, entry("aaaaaaaa"), entry("bbbbbbbb")].map((r) => JSON.stringify(r)).join("\n")}\n`,
	);
	// Cut the last line in the middle of the rocket's four bytes.
	const cut = whole.lastIndexOf(Buffer.from("🚀")) + 2;
	writeFileSync(path, whole.subarray(0, cut));
	const session = await Session.open(storage, path, { locks });
	await session.close();
	expect(session.report.repairedLastLine).toBe(true);
	expect(session.report.diagnostics.map((d) => [d.line, d.reason])).toEqual([[3, "torn-last-line"]]);
});

// Lock tests -------------------------------------------------------------------------------------

const quiet = ["--big-share", "0"];

describe.sequential("locks between processes", () => {
	it("a live writer refuses other writers (SessionLockedError naming its pid); read-only opens see its entries", async () => {
		const dir = temporaryDir();
		const path = join(dir, "held.jsonl");
		const a = new Child(["--path", path, "--durability", "fsync", "--max", "8", "--wait-stdin", ...quiet]);
		await a.waitForLine((line) => line === "appended");
		expect(a.acks).toHaveLength(8);

		const error = await Session.open(storage, path, { locks }).then(
			() => undefined,
			(e: unknown) => e,
		);
		expect(error).toBeInstanceOf(SessionLockedError);
		expect((error as SessionLockedError).owner?.pid).toBe(a.pid);
		expect((error as SessionLockedError).owner?.host).toBe(hostname());

		const reader = await Session.open(storage, path, { readOnly: true });
		expect(reader.tree.getEntries().map((entry) => entry.id)).toEqual(a.acks.map((ack) => ack.id));
		await expect(reader.appendMessage({ role: "user", content: "no", timestamp: 0 })).rejects.toBeInstanceOf(
			SessionReadOnlyError,
		);
		await reader.close();
		expect(lockOwnerPid(path), "a read-only open leaves the writer's lock alone").toBe(a.pid);

		a.send("close");
		expect(await a.closed).toEqual({ code: 0, signal: null });
		expect(a.lines.at(-1)).toBe("closed");
		expectNoLeftovers(path, "after a normal close");

		const writer = await Session.open(storage, path, { locks, durability: "fsync" });
		expect(lockOwnerPid(path)).toBe(process.pid);
		const id = await writer.appendMessage({ role: "user", content: "mine now", timestamp: Date.now() });
		await writer.close();
		const reread = await Session.open(storage, path, { readOnly: true });
		expect(reread.tree.getEntries().map((entry) => entry.id)).toEqual([...a.acks.map((ack) => ack.id), id]);
		expect(reread.report.diagnostics).toEqual([]);
		expectNoLeftovers(path, "after the parent closed");
	});

	it("the lock of a writer killed with SIGKILL is taken over by the next writer", async () => {
		const dir = temporaryDir();
		const path = join(dir, "killed.jsonl");
		const a = new Child(["--path", path, "--durability", "group", "--max", "20", "--wait-stdin", ...quiet]);
		await a.waitForLine((line) => line === "appended");
		await expect(Session.open(storage, path, { locks })).rejects.toBeInstanceOf(SessionLockedError);
		await a.kill();
		expect(lockOwnerPid(path), "the dead writer's lock is still there").toBe(a.pid);

		const writer = await Session.open(storage, path, { locks, durability: "group" });
		expect(lockOwnerPid(path)).toBe(process.pid);
		expect(writer.tree.getEntries().map((entry) => entry.id)).toEqual(a.acks.map((ack) => ack.id));
		expect(writer.report.diagnostics).toEqual([]);
		const id = await writer.appendCustomEntry("after", { ok: true });
		await writer.close();
		expectNoLeftovers(path, "after the takeover");
		const reread = await Session.open(storage, path, { readOnly: true });
		expect(reread.tree.getLeafId()).toBe(id);
		expect(reread.tree.size).toBe(21);
	});

	it("a second process waits for the lock; two writers one after the other never interleave or lose entries", async () => {
		const dir = temporaryDir();
		const path = join(dir, "shared.jsonl");
		const a = new Child([
			"--path",
			path,
			"--durability",
			"group",
			"--max",
			"200",
			"--wait-stdin",
			"--tag",
			"A",
			...quiet,
		]);
		await a.waitForLine((line) => line === "appended");
		const b = new Child([
			"--path",
			path,
			"--durability",
			"fsync",
			"--max",
			"200",
			"--retry-lock",
			"--tag",
			"B",
			...quiet,
		]);
		// B is refused while A holds the lock, and is told who holds it.
		await b.waitForLine((line) => line.startsWith("locked "));
		expect(new Set(b.lines.filter((line) => line.startsWith("locked ")))).toEqual(new Set([`locked ${a.pid}`]));
		expect(b.acks).toEqual([]);

		a.send("close");
		expect(await a.closed).toEqual({ code: 0, signal: null });
		expect(await b.closed, b.describe()).toEqual({ code: 0, signal: null });
		expect(a.acks).toHaveLength(200);
		expect(b.acks).toHaveLength(200);

		expectLinesValid(path, new Set(), "two writers");
		const reread = await Session.open(storage, path, { readOnly: true });
		expect(reread.report.diagnostics).toEqual([]);
		const entries = reread.tree.getEntries();
		expect(entries.map((entry) => entry.id)).toEqual([...a.acks, ...b.acks].map((ack) => ack.id));
		expectSingleChain(entries, "two writers");
		expectNoLeftovers(path, "two writers");
	});

	it("two processes started together on a new file: both finish, one after the other, nothing lost", async () => {
		const dir = temporaryDir();
		const path = join(dir, "race.jsonl");
		const args = ["--path", path, "--max", "150", "--retry-lock", ...quiet];
		const a = new Child([...args, "--durability", "none", "--tag", "A"]);
		const b = new Child([...args, "--durability", "group", "--tag", "B"]);
		expect(await a.closed, a.describe()).toEqual({ code: 0, signal: null });
		expect(await b.closed, b.describe()).toEqual({ code: 0, signal: null });
		expectLinesValid(path, new Set(), "race");
		const reread = await Session.open(storage, path, { readOnly: true });
		expect(reread.report.diagnostics).toEqual([]);
		const entries = reread.tree.getEntries();
		const firstId = entries[0]?.id;
		const [first, second] = a.acks.some((ack) => ack.id === firstId) ? [a, b] : [b, a];
		expect(first.acks).toHaveLength(150);
		expect(second.acks).toHaveLength(150);
		// Only the second can have been refused, and only by the first.
		expect(first.lines.filter((line) => line.startsWith("locked "))).toEqual([]);
		for (const line of second.lines.filter((l) => l.startsWith("locked "))) {
			// "?": refused while the first's lock file was being written (unreadable for an instant).
			expect([`locked ${first.pid}`, "locked ?"]).toContain(line);
		}
		expect(entries.map((entry) => entry.id)).toEqual([...first.acks, ...second.acks].map((ack) => ack.id));
		expectSingleChain(entries, "race");
		expectNoLeftovers(path, "race");
	});

	it("several processes taking over one stale lock at the same moment: exactly one wins", async () => {
		const dir = temporaryDir();
		const path = join(dir, "stale.jsonl");
		// A writer that dies holding the lock.
		let holder = new Child(["--path", path, "--durability", "fsync", "--max", "4", "--wait-stdin", ...quiet]);
		await holder.waitForLine((line) => line === "appended");
		const expected = holder.acks.map((ack) => ack.id);
		for (let round = 0; round < 4; round++) {
			await holder.kill();
			expect(lockOwnerPid(path), `round ${round}: stale lock`).toBe(holder.pid);
			const takers = [...Array(4).keys()].map(
				(n) =>
					new Child([
						"--path",
						path,
						"--durability",
						"fsync",
						"--max",
						"3",
						"--wait-stdin",
						"--go-stdin",
						"--tag",
						`r${round}t${n}`,
						...quiet,
					]),
			);
			await Promise.all(takers.map((taker) => taker.waitForLine((line) => line === "started")));
			for (const taker of takers) taker.send("go");
			// Each either gets the lock (and appends) or is refused and exits with code 3.
			const outcomes = await Promise.all(
				takers.map((taker) => taker.waitForLine((line) => line === "appended" || line.startsWith("locked "))),
			);
			const winners = takers.filter((_, n) => outcomes[n] === "appended");
			const context = `round ${round}: ${JSON.stringify(takers.map((t) => [t.pid, t.lines.slice(0, 2)]))}`;
			expect(winners, context).toHaveLength(1);
			const winner = winners[0] as Child;
			for (const [n, taker] of takers.entries()) {
				if (taker === winner) continue;
				expect(await taker.closed, context).toEqual({ code: 3, signal: null });
				// Refused while the lock was being written (unreadable for an instant) or naming the winner.
				expect([`locked ${winner.pid}`, "locked ?"], context).toContain(outcomes[n]);
			}
			expect(lockOwnerPid(path), context).toBe(winner.pid);
			expected.push(...winner.acks.map((ack) => ack.id));
			holder = winner;
		}
		holder.send("close");
		expect(await holder.closed).toEqual({ code: 0, signal: null });
		expectNoLeftovers(path, "stale takeovers");
		const reread = await Session.open(storage, path, { readOnly: true });
		expect(reread.tree.getEntries().map((entry) => entry.id)).toEqual(expected);
		expect(reread.report.diagnostics).toEqual([]);
	});
});

/** Drives a task step by step on a storage, so that several tasks can be interleaved at chosen points. */
class Stepper<T> {
	readonly #task: Task<T>;
	readonly #storage: Storage;
	#step: IteratorResult<Effect, T>;
	error: unknown;

	constructor(task: Task<T>, storage: Storage) {
		this.#task = task;
		this.#storage = storage;
		this.#step = task.next();
	}

	get done(): boolean {
		return this.#step.done === true || this.error !== undefined;
	}

	get result(): T | undefined {
		return this.#step.done ? this.#step.value : undefined;
	}

	/** Perform the pending operation and resume the task with its outcome. */
	async step(): Promise<void> {
		// A task that ended, or failed, performs nothing more (its last operation must not run again).
		if (this.done || this.#step.done) return;
		const effect = this.#step.value;
		let outcome: { value: unknown } | { error: unknown };
		try {
			outcome = { value: await perform(this.#storage, effect) };
		} catch (error) {
			outcome = { error };
		}
		try {
			this.#step = "error" in outcome ? this.#task.throw(outcome.error) : this.#task.next(outcome.value);
		} catch (error) {
			this.error = error;
		}
	}

	/** Step until the pending operation is `op` (not performed yet). */
	async runUntil(op: Effect["op"]): Promise<void> {
		while (!this.done && !(this.#step.done === false && this.#step.value.op === op)) await this.step();
		expect(this.done, `the task reached "${op}"`).toBe(false);
	}

	async runToEnd(): Promise<void> {
		while (!this.done) await this.step();
	}
}

describe("stale lock takeover, interleaved deterministically", () => {
	it("three takers of one stale lock, interleaved at every step in many orders: exactly one holds it", async () => {
		const host = hostname();
		const stale: LockOwner = { pid: 1, host, startedAt: 0, token: "stale" };
		const base = createNodeStorage();
		// Schedules: which taker performs its next storage operation; each schedule is repeated until all are done.
		const schedules = [
			[0, 1, 2],
			[2, 1, 0],
			[0, 0, 1, 1, 2, 2],
			[1, 2, 0, 0, 0],
			[0, 1, 1, 1, 2],
			[2, 2, 2, 0, 1],
		];
		for (const [index, schedule] of schedules.entries()) {
			const path = join(temporaryDir(), `interleaved-${index}.jsonl`);
			writeFileSync(`${path}.lock`, `${JSON.stringify(stale)}\n`);
			const takers = [1, 2, 3].map((n) => {
				const owner: LockOwner = { pid: 100_000 + n, host, startedAt: 0, token: `taker-${n}` };
				const identity: LockIdentity = {
					lockOwner: () => owner,
					// Only the stale owner is dead.
					isLockOwnerAlive: (o) => o.token !== stale.token,
				};
				return new Stepper(acquireLock(path, identity), base);
			});
			for (let turn = 0; takers.some((t) => !t.done); turn++) {
				await takers[schedule[turn % schedule.length] as number]?.step();
			}
			const holders = takers.filter((t) => t.result !== undefined).map((t) => t.result?.owner.token);
			expect(holders, `takers holding the lock under schedule ${schedule}`).toHaveLength(1);
			for (const t of takers) if (t.result === undefined) expect(t.error).toBeInstanceOf(SessionLockedError);
			expect(JSON.parse(readFileSync(`${path}.lock`, "utf8")).token).toBe(holders[0]);
			expect(existsSync(`${path}.lock.takeover`)).toBe(false);
		}
	});
});
