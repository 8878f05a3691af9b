/**
 * SIGKILL on every runtime: the Node storage (`adapters/node.ts`) in a child process under Node, Bun and
 * Deno, killed at random moments of
 *
 * - a burst of appends (`test/fixtures/append-child.ts`, under Bun and Deno; Node's runs are in
 *   `crash.test.ts`): every acknowledged entry survives, in order, the only damage is a torn last line
 *   (reported, repaired), appending works again, the dead child's lock is taken over;
 * - a migration of a big v1 or v2 file (`test/fixtures/rewrite-child.ts --op migrate`): the file is the
 *   original bytes or the whole migrated file, every backup is the original byte for byte, the next writing
 *   open removes the temporaries and finishes the migration with every entry;
 * - a fork of a big session, `Session.forkFrom` and `createBranchedSession` (`--op fork-from`, `--op branch`):
 *   the source is unchanged, the new file is missing or whole, and no lock keeps the next writer out.
 *
 * The first kill of each rewrite series comes after the child finished (it also measures how long the
 * operation and its big write take); the others are aimed in turn inside the big write, just after it (forks)
 * and at a random moment of the whole operation, by the storage operations the child announces.
 *
 * Environment: `CRASH_SEED`; `CRASH_RUNTIME_APPEND_KILLS` (default 6 per runtime); `CRASH_RUNTIME_MIGRATE_KILLS`
 * (default 6 on Node, 3 on Bun and Deno, or this many on each); `CRASH_RUNTIME_FORK_KILLS` (default 8 on Node,
 * 6 on Bun and Deno, or this many on each); `CRASH_RUNTIME_BIG_MB` (default 12: the size of the big sessions).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createNodeLocks, createNodeStorage } from "../adapters/node.ts";
import type { SessionEntry } from "../src/entries.ts";
import { type Durability, Session } from "../src/session.ts";
import { type BigSession, bigSession } from "./fixtures/big-session.ts";
import { assistantMessage } from "./support/messages.ts";
import { seededRandom } from "./support/random.ts";

type Runtime = "node" | "bun" | "deno";
const RUNTIMES: Runtime[] = ["node", "bun", "deno"];
const MODES: Durability[] = ["none", "fsync", "group"];

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const APPEND_CHILD = fileURLToPath(new URL("./fixtures/append-child.ts", import.meta.url));
const REWRITE_CHILD = fileURLToPath(new URL("./fixtures/rewrite-child.ts", import.meta.url));
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const APPEND_KILLS = Number(process.env.CRASH_RUNTIME_APPEND_KILLS ?? 6);
const MIGRATE_KILLS = process.env.CRASH_RUNTIME_MIGRATE_KILLS;
const FORK_KILLS = process.env.CRASH_RUNTIME_FORK_KILLS;
const BIG_BYTES = Number(process.env.CRASH_RUNTIME_BIG_MB ?? 12) * 2 ** 20;
const kills = (setting: string | undefined, runtime: Runtime, onNode: number, elsewhere: number): number =>
	setting === undefined ? (runtime === "node" ? onNode : elsewhere) : Number(setting);

const storage = createNodeStorage();
const locks = createNodeLocks(storage);

function command(runtime: Runtime, script: string, args: string[]): [string, string[]] {
	const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);
	if (runtime === "node") return [process.execPath, ["--import", "tsx", script, ...args]];
	if (runtime === "bun") return [bin("bun"), [script, ...args]];
	return [bin("deno"), ["run", "-A", "--quiet", script, ...args]];
}

// Children and temporary directories -------------------------------------------------------------

const liveChildren = new Set<Child>();
const temporaryDirs: string[] = [];

function temporaryDir(): string {
	const dir = mkdtempSync(join(tmpdir(), "pi-crash-runtimes-"));
	temporaryDirs.push(dir);
	return dir;
}

async function cleanUp(): Promise<void> {
	await Promise.all([...liveChildren].map((child) => child.kill()));
	for (const dir of temporaryDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
afterEach(cleanUp);
afterAll(cleanUp);

interface Exit {
	code: number | null;
	signal: NodeJS.Signals | null;
}

/** A child process and the complete lines it printed, each with the time it arrived. */
class Child {
	readonly process: ChildProcessWithoutNullStreams;
	readonly lines: { text: string; at: number }[] = [];
	readonly closed: Promise<Exit>;
	exit: Exit | undefined;
	#partial = "";
	#stderr = "";
	readonly #listeners = new Set<() => void>();

	constructor(runtime: Runtime, script: string, args: string[]) {
		const [program, programArgs] = command(runtime, script, args);
		this.process = spawn(program, programArgs, { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
		liveChildren.add(this);
		this.process.stdout.setEncoding("utf8");
		this.process.stdout.on("data", (data: string) => {
			const at = performance.now();
			const parts = (this.#partial + data).split("\n");
			// Only complete lines count: an acknowledgement is a whole line.
			this.#partial = parts.pop() ?? "";
			for (const text of parts) this.lines.push({ text, at });
			this.#notify();
		});
		this.process.stderr.setEncoding("utf8");
		this.process.stderr.on("data", (data: string) => {
			this.#stderr += data;
		});
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

	get texts(): string[] {
		return this.lines.map((line) => line.text);
	}

	/** Acknowledged appends, in the order the child printed them. */
	get acks(): { id: string; kind: string }[] {
		return this.texts
			.filter((text) => text.startsWith("ack "))
			.map((text) => {
				const [, id, kind] = text.split(" ");
				return { id: id as string, kind: kind as string };
			});
	}

	#notify(): void {
		for (const listener of [...this.#listeners]) listener();
	}

	/** When the first line that matches arrived; fails when the child exits first or the time runs out. */
	waitForLine(match: (text: string) => boolean, timeoutMs = 30_000): Promise<number> {
		return this.waitForLines([match], timeoutMs);
	}

	/** When the line matching the last of `matches` arrived, each matched by a line after the previous one's. */
	waitForLines(matches: ((text: string) => boolean)[], timeoutMs = 30_000): Promise<number> {
		return new Promise((resolve, reject) => {
			const check = (): void => {
				let next = 0;
				for (const line of this.lines) {
					if (!(matches[next] as (text: string) => boolean)(line.text)) continue;
					if (++next < matches.length) continue;
					done();
					resolve(line.at);
					return;
				}
				if (this.exit) {
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
		return `last lines: ${JSON.stringify(this.texts.slice(-6))}, stderr: ${JSON.stringify(this.#stderr.slice(-2000))}`;
	}

	/** SIGKILL (if still running) and wait until the process is reaped, so its pid is dead. */
	kill(): Promise<Exit> {
		if (!this.exit) this.process.kill("SIGKILL");
		return this.closed;
	}
}

/** Kill the child; it must have died of the signal, having reported no error. */
async function killChild(child: Child, context: string): Promise<void> {
	const exit = await child.kill();
	expect(exit.signal, `${context}: killed; ${child.describe()}`).toBe("SIGKILL");
	expect(
		child.texts.filter((text) => text.startsWith("error")),
		context,
	).toEqual([]);
}

// Helpers ----------------------------------------------------------------------------------------

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function lockOwnerPid(path: string): number | undefined {
	if (!existsSync(`${path}.lock`)) return undefined;
	return (JSON.parse(readFileSync(`${path}.lock`, "utf8")) as { pid: number }).pid;
}

/** The lines of a file, split on `\n` bytes (the last one without it, if unterminated). */
function splitLines(bytes: Buffer): { bytes: Buffer; terminated: boolean }[] {
	const lines: { bytes: Buffer; terminated: boolean }[] = [];
	for (let start = 0; start < bytes.length; ) {
		const end = bytes.indexOf(0x0a, start);
		lines.push({ bytes: bytes.subarray(start, end < 0 ? bytes.length : end), terminated: end >= 0 });
		start = end < 0 ? bytes.length : end + 1;
	}
	return lines;
}

function parses(bytes: Buffer): boolean {
	try {
		JSON.parse(bytes.toString("utf8"));
		return true;
	} catch {
		return false;
	}
}

/** The entries form one chain in file order (the append children append linearly). */
function expectSingleChain(entries: readonly SessionEntry[], context: string): void {
	entries.forEach((entry, index) => {
		expect(entry.parentId, `${context}: parent of entry ${index}`).toBe(index === 0 ? null : entries[index - 1]?.id);
	});
}

/**
 * The names next to a session that belong to it: its lock, backups, and the temporaries of the file and of
 * its lock (`<name>.<8 hex>.tmp`, `<name>.lock.<8 hex>.tmp`). Undefined for a name that is none of those.
 */
function relatedName(
	file: string,
): { session: string; kind: "session" | "lock" | "backup" | "temporary" | "lock-temporary" } | undefined {
	const match = /^(.+?\.jsonl)((?:\.v\d+(?:\.\d+)?\.bak)|\.lock|\.lock\.[0-9a-f]{8}\.tmp|\.[0-9a-f]{8}\.tmp)?$/.exec(
		file,
	);
	if (!match) return undefined;
	const [, session, suffix] = match as unknown as [string, string, string | undefined];
	if (suffix === undefined) return { session, kind: "session" };
	if (suffix === ".lock") return { session, kind: "lock" };
	if (suffix.endsWith(".bak")) return { session, kind: "backup" };
	return { session, kind: suffix.startsWith(".lock.") ? "lock-temporary" : "temporary" };
}

/** The files of `dir`, each sorted under what it is; anything that is not a session's fails the test. */
function filesOf(dir: string, context: string): { name: string; session: string; kind: string }[] {
	return readdirSync(dir, { withFileTypes: true })
		.filter((entry) => entry.isFile())
		.map((entry) => {
			const related = relatedName(entry.name);
			expect(related, `${context}: unexpected file ${entry.name}`).toBeDefined();
			return { name: entry.name, ...(related as NonNullable<typeof related>) };
		});
}

/** The time of the operation's big write in a finished run: from its announcement to its end. */
function writeWindow(child: Child, announces: (text: string) => boolean): { start: number; ms: number } {
	const start = child.lines.findIndex((line) => announces(line.text));
	const op = child.lines[start]?.text.split(" ")[1];
	const end = child.lines.findIndex((line, index) => index > start && line.text === `done ${op}`);
	const startAt = child.lines[start]?.at;
	const endAt = child.lines[end]?.at;
	if (startAt === undefined || endAt === undefined) throw new Error(`no write announced; ${child.describe()}`);
	return { start: startAt, ms: endAt - startAt };
}

/** Per series: what the kills found. */
type Counts = Record<string, number>;
const summaries: string[] = [];
const count = (counts: Counts, key: string, by = 1): void => {
	counts[key] = (counts[key] ?? 0) + by;
};

afterAll(() => {
	for (const line of summaries) console.log(line);
});

// Appends ----------------------------------------------------------------------------------------

/** A chained file is given up for a fresh one beyond this size, to keep re-reads cheap. */
const MAX_CHAINED_BYTES = 32 << 20;

describe.sequential(`SIGKILL during a burst of appends on Bun and Deno (seed ${SEED})`, () => {
	for (const runtime of ["bun", "deno"] as const) {
		it.skipIf(APPEND_KILLS <= 0)(
			`${runtime}: ${APPEND_KILLS} kills across the durability modes; acknowledged entries survive, in order`,
			async () => {
				const started = performance.now();
				const random = seededRandom(SEED ^ (runtime === "bun" ? 0x5b17 : 0xde70));
				const dir = temporaryDir();
				const counts: Counts = {};
				/** The file carried to the next kill, and the line numbers of the torn lines it keeps. */
				let chained: { path: string; invalid: Set<number> } | undefined;
				for (let iteration = 0; iteration < APPEND_KILLS; iteration++) {
					const mode = MODES[iteration % MODES.length] as Durability;
					const context = `seed ${SEED}, ${runtime}, mode ${mode}, kill ${iteration}`;
					const fresh = !chained || random() < 0.3 || readFileSync(chained.path).length > MAX_CHAINED_BYTES;
					const file =
						fresh || !chained ? { path: join(dir, `${iteration}.jsonl`), invalid: new Set<number>() } : chained;
					const existedBefore = existsSync(file.path);
					const child = new Child(runtime, APPEND_CHILD, [
						...["--path", file.path, "--durability", mode, "--tag", `${runtime}${iteration}`],
						...["--seed", String(SEED + iteration * 7919)],
						// Half the runs with big entries (4–8 MiB, one write each, which a kill can cut short).
						...["--big-share", String(random() < 0.5 ? 0.3 : 0)],
					]);
					await child.waitForLine((text) => text.startsWith("ready "));
					await sleep(5 + Math.floor(random() * 76));
					await killChild(child, context);
					const acks = child.acks;
					count(counts, "kills");
					count(counts, "acknowledged", acks.length);
					expect(lockOwnerPid(file.path), `${context}: the dead child's lock is left`).toBe(child.pid);

					if (!existsSync(file.path)) {
						// Killed before its first user or assistant message was written: nothing of it was acknowledged.
						expect(existedBefore, `${context}: a file never disappears`).toBe(false);
						expect(
							acks.filter((ack) => ack.kind === "user" || ack.kind === "assistant"),
							context,
						).toEqual([]);
						count(counts, "killedBeforeFile");
						const session = await Session.open(storage, file.path, { locks, create: true });
						expect(lockOwnerPid(file.path), `${context}: stale lock taken over`).toBe(process.pid);
						await session.close();
						chained = undefined;
						continue;
					}

					const before = readFileSync(file.path);
					const lines = splitLines(before);
					// The child is dead: nobody is writing the last line, so the repair need not wait for it to settle.
					const session = await Session.open(storage, file.path, { locks, durability: mode, settleMs: 0 });
					expect(lockOwnerPid(file.path), `${context}: stale lock taken over`).toBe(process.pid);
					const report = session.report;
					const old = report.diagnostics.filter((d) => file.invalid.has(d.line));
					const found = report.diagnostics.filter((d) => !file.invalid.has(d.line));
					expect(
						old.map((d) => [d.line, d.reason]),
						context,
					).toEqual([...file.invalid].sort((a, b) => a - b).map((line) => [line, "invalid-json"]));
					if (before.length === 0) {
						count(counts, "emptyFiles");
						expect(report.wroteHeader, context).toBe(true);
					} else if (lines.at(-1)?.terminated) {
						expect(found, context).toEqual([]);
						expect(report.repairedLastLine, context).toBe(false);
					} else {
						expect(report.repairedLastLine, `${context}: an unterminated last line is terminated`).toBe(true);
						expect(found.length, `${context}: ${JSON.stringify(found)}`).toBeLessThanOrEqual(1);
						const torn = found[0];
						if (torn) {
							expect([torn.reason, torn.line], `${context}: only the last line is torn`).toEqual([
								"torn-last-line",
								lines.length,
							]);
							file.invalid.add(torn.line);
							count(counts, "tornLastLines");
						} else {
							count(counts, "unterminatedButWhole");
						}
					}

					// Every acknowledged entry is there, in the order acknowledged, on one chain.
					const entries = session.tree.getEntries();
					const position = new Map(entries.map((entry, index) => [entry.id, index]));
					let last = -1;
					for (const ack of acks) {
						const at = position.get(ack.id);
						expect(at, `${context}: acknowledged ${ack.kind} ${ack.id} is in the file`).toBeDefined();
						expect(at, `${context}: ${ack.id} comes after the previous acknowledged entry`).toBeGreaterThan(last);
						last = at as number;
					}
					expectSingleChain(entries, context);

					// Appending works again; a re-read shows it, with only the torn lines as diagnostics.
					const appended = await session.appendMessage(assistantMessage(`after kill ${iteration}`));
					await session.close();
					expect(
						readdirSync(dir).filter((name) => name.startsWith(`${basename(file.path)}.`)),
						`${context}: no lock or temporary left`,
					).toEqual([]);
					const reread = await Session.open(storage, file.path, { readOnly: true });
					expect(reread.tree.getLeafId(), context).toBe(appended);
					expect(reread.tree.size, context).toBe(entries.length + 1);
					expect(
						reread.report.diagnostics.map((d) => [d.line, d.reason]),
						context,
					).toEqual([...file.invalid].sort((a, b) => a - b).map((line) => [line, "invalid-json"]));
					const after = splitLines(readFileSync(file.path));
					expect(after.at(-1)?.terminated, `${context}: ends with a newline`).toBe(true);
					expect(
						after.flatMap((line, index) => (parses(line.bytes) ? [] : [index + 1])),
						`${context}: the lines that do not parse are the torn ones`,
					).toEqual([...file.invalid].sort((a, b) => a - b));
					chained = file;
				}
				// The children did append before they were killed (acknowledgements reached the parent).
				expect(counts.acknowledged ?? 0, `${runtime}: acknowledged appends`).toBeGreaterThanOrEqual(APPEND_KILLS);
				summaries.push(
					`crash-runtimes appends on ${runtime}: seed ${SEED}, ${Math.round(performance.now() - started)} ms, ${JSON.stringify(counts)}`,
				);
			},
			120_000,
		);
	}
});

// Migrations and forks: shared setup --------------------------------------------------------------

interface OldFile {
	version: 1 | 2;
	source: BigSession;
	/** The file as a finished migration writes it (the migration is deterministic: seeded ids for v1). */
	migrated: Buffer;
	ids: string[];
}

let oldFiles: OldFile[] = [];
let forkSource: BigSession;
/** The source's lines after its header, and the lines of the path root → last entry. */
let forkBody: Buffer;
let branchBody: Buffer;

beforeAll(async () => {
	const dir = temporaryDir();
	oldFiles = [];
	for (const version of [1, 2] as const) {
		const source = bigSession(version, BIG_BYTES, SEED + version);
		const path = join(dir, `reference-v${version}.jsonl`);
		writeFileSync(path, source.bytes);
		const session = await Session.open(storage, path, { locks });
		expect(session.report.migratedFrom?.version, `reference v${version}`).toBe(version);
		expect(session.report.diagnostics, `reference v${version}`).toEqual([]);
		const ids = session.tree.getEntries().map((entry) => entry.id);
		expect(ids, `reference v${version}: every entry`).toHaveLength(source.entries);
		await session.close();
		const migrated = readFileSync(path);
		expect(readFileSync(`${path}.v${version}.bak`).equals(source.bytes), `reference v${version}: backup`).toBe(true);
		oldFiles.push({ version, source, migrated, ids });
	}
	forkSource = bigSession(3, BIG_BYTES, SEED + 3);
	const lines = splitLines(forkSource.bytes);
	const withNewline = (line: { bytes: Buffer }) => [line.bytes, Buffer.from("\n")];
	forkBody = forkSource.bytes.subarray((lines[0] as { bytes: Buffer }).bytes.length + 1);
	branchBody = Buffer.concat(forkSource.pathLines.flatMap((index) => withNewline(lines[index] as { bytes: Buffer })));
	// The source branches: a fork of the leaf's path holds fewer lines than a fork of the whole session.
	expect(branchBody.length).toBeLessThan(forkBody.length);
}, 120_000);

/**
 * Where a kill of a rewrite child is aimed: inside the operation's big write, just after it (the new file is
 * there, the child still busy: a fork not locked yet, a source lock not released yet), or anywhere.
 */
type Aim = "write" | "written" | "anywhere";

/**
 * Start a rewrite child and kill it. Kill 0 comes after it finished (a run to the end, which measures the
 * operation and its big write, which `announces` names); the others are aimed in turn as `aims` says.
 */
async function killRewrite(
	runtime: Runtime,
	args: string[],
	announces: (text: string) => boolean,
	kill: number,
	aims: Aim[],
	timing: { totalMs: number; writeMs: number },
	random: () => number,
	context: string,
): Promise<{ child: Child; aim: string; finished: boolean }> {
	const child = new Child(runtime, REWRITE_CHILD, args);
	const readyAt = await child.waitForLine((text) => text === "ready");
	const aim = kill === 0 ? "after" : (aims[(kill - 1) % aims.length] as Aim);
	if (aim === "after") {
		const finishedAt = await child.waitForLine((text) => text.startsWith("finished "), 60_000);
		timing.totalMs = finishedAt - readyAt;
		timing.writeMs = writeWindow(child, announces).ms;
	} else if (aim === "write") {
		await child.waitForLine(announces, 60_000);
		// Within the write measured at the first kill, less a margin for the time the line takes to arrive.
		await sleep(random() * timing.writeMs * 0.6);
	} else if (aim === "written") {
		const op = (text: string) => text.split(" ")[1];
		let write = "";
		await child.waitForLines(
			[
				(text) => {
					if (announces(text)) write = `done ${op(text)}`;
					return announces(text);
				},
				(text) => text === write,
			],
			60_000,
		);
		await sleep(random() * 5);
	} else {
		await sleep(random() * timing.totalMs * 1.05);
	}
	await killChild(child, context);
	return { child, aim, finished: child.texts.some((text) => text.startsWith("finished ")) };
}

// Migrations -------------------------------------------------------------------------------------

describe.sequential(`SIGKILL during a migration of a big old-format file (seed ${SEED})`, () => {
	for (const runtime of RUNTIMES) {
		const total = kills(MIGRATE_KILLS, runtime, 6, 3);
		it.skipIf(total <= 0)(
			`${runtime}: ${total} kills; the file is the original or the whole migration, backups are the original, reopening finishes it`,
			async () => {
				const started = performance.now();
				const random = seededRandom(SEED ^ (0x3161 + RUNTIMES.indexOf(runtime)));
				const counts: Counts = {};
				const timing = { totalMs: 0, writeMs: 0 };
				for (let kill = 0; kill < total; kill++) {
					const old = oldFiles[kill % oldFiles.length] as OldFile;
					const context = `seed ${SEED}, ${runtime}, migration of v${old.version}, kill ${kill}`;
					const dir = temporaryDir();
					const path = join(dir, "old.jsonl");
					writeFileSync(path, old.source.bytes);
					const { child, aim, finished } = await killRewrite(
						runtime,
						["--op", "migrate", "--path", path],
						(text) => text === "op replace old.jsonl",
						kill,
						["write", "anywhere"],
						timing,
						random,
						context,
					);
					count(counts, `aimed ${aim}`);

					// What the kill left: the original or the whole migration, never anything between.
					const files = filesOf(dir, context);
					expect(new Set(files.map((file) => file.session)), context).toEqual(new Set(["old.jsonl"]));
					const bytes = readFileSync(path);
					const outcome = bytes.equals(old.source.bytes)
						? "original"
						: bytes.equals(old.migrated)
							? "migrated"
							: "partial";
					expect(
						outcome,
						`${context}: ${bytes.length} bytes, original ${old.source.bytes.length}, migrated ${old.migrated.length}`,
					).not.toBe("partial");
					count(counts, outcome);
					if (finished) expect(outcome, `${context}: finished`).toBe("migrated");
					const backups = files.filter((file) => file.kind === "backup");
					for (const backup of backups) {
						expect(
							readFileSync(join(dir, backup.name)).equals(old.source.bytes),
							`${context}: ${backup.name} is the original`,
						).toBe(true);
					}
					if (outcome === "migrated")
						expect(
							backups.map((b) => b.name),
							context,
						).toEqual([`old.jsonl.v${old.version}.bak`]);
					else count(counts, "backupBeforeRewrite", backups.length);
					// A temporary left behind: the kill landed inside the rewrite.
					if (files.some((file) => file.kind === "temporary")) count(counts, "killedInsideRewrite");
					const lockTemporaries = files.filter((file) => file.kind === "lock-temporary").length;
					count(counts, "lockTemporaries", lockTemporaries);
					const stale = lockOwnerPid(path);
					if (stale !== undefined) expect(stale, `${context}: the lock is the dead child's`).toBe(child.pid);

					// The next writing open takes the lock over, removes the temporaries and finishes the migration.
					const session = await Session.open(storage, path, { locks });
					expect(lockOwnerPid(path), `${context}: lock taken over`).toBe(process.pid);
					expect(session.report.migratedFrom?.version, context).toBe(outcome === "original" ? old.version : undefined);
					expect(session.report.diagnostics, context).toEqual([]);
					expect(
						session.tree.getEntries().map((entry) => entry.id),
						`${context}: every entry`,
					).toEqual(old.ids);
					await session.close();
					expect(readFileSync(path).equals(old.migrated), `${context}: migrated after reopening`).toBe(true);
					const after = filesOf(dir, context);
					for (const file of after.filter((f) => f.kind === "backup")) {
						expect(
							readFileSync(join(dir, file.name)).equals(old.source.bytes),
							`${context}: ${file.name} after reopening`,
						).toBe(true);
					}
					// A lock's temporary (a kill inside the lock's own create) is removed only once 10 s old, which
					// it is not yet here; everything else is gone.
					expect(
						after.filter((file) => file.kind !== "backup" && file.kind !== "lock-temporary").map((file) => file.name),
						`${context}: nothing left but backups`,
					).toEqual(["old.jsonl"]);
					expect(
						after.filter((file) => file.kind === "lock-temporary"),
						context,
					).toHaveLength(lockTemporaries);
				}
				// On Node the rewrite of a big file takes long enough that the aimed kills land inside it.
				if (runtime === "node" && total >= 4) {
					expect(
						counts.killedInsideRewrite ?? 0,
						`${runtime}: kills inside the rewrite ${JSON.stringify(counts)}`,
					).toBeGreaterThan(0);
				}
				summaries.push(
					`crash-runtimes migrations on ${runtime}: seed ${SEED}, ${Math.round(performance.now() - started)} ms, ` +
						`${Math.round(timing.totalMs)} ms to migrate (${Math.round(timing.writeMs)} ms writing), ${JSON.stringify(counts)}`,
				);
			},
			180_000,
		);
	}
});

// Forks ------------------------------------------------------------------------------------------

type ForkOp = "fork-from" | "branch";

describe.sequential(`SIGKILL during a fork of a big session (seed ${SEED})`, () => {
	for (const runtime of RUNTIMES) {
		const total = kills(FORK_KILLS, runtime, 8, 6);
		it.skipIf(total <= 0)(
			`${runtime}: ${total} kills of forkFrom and createBranchedSession; the source is unchanged, the fork missing or whole`,
			async () => {
				const started = performance.now();
				const random = seededRandom(SEED ^ (0xf0a4 + RUNTIMES.indexOf(runtime)));
				const counts: Counts = {};
				const timings: Record<ForkOp, { totalMs: number; writeMs: number }> = {
					"fork-from": { totalMs: 0, writeMs: 0 },
					branch: { totalMs: 0, writeMs: 0 },
				};
				for (let kill = 0; kill < total; kill++) {
					const op: ForkOp = kill % 2 === 0 ? "fork-from" : "branch";
					const context = `seed ${SEED}, ${runtime}, ${op}, kill ${kill}`;
					const dir = temporaryDir();
					const source = join(dir, "source.jsonl");
					writeFileSync(source, forkSource.bytes);
					const targetDir = op === "fork-from" ? join(dir, "forks") : dir;
					mkdirSync(targetDir, { recursive: true });
					const { child, aim, finished } = await killRewrite(
						runtime,
						["--op", op, "--path", source, ...(op === "fork-from" ? ["--to", targetDir] : [])],
						// The fork's own create (not its lock's, nor the source's lock).
						(text) => text.startsWith("op createExclusive ") && text.endsWith(".jsonl"),
						Math.floor(kill / 2),
						["write", "written", "anywhere"],
						timings[op],
						random,
						context,
					);
					count(counts, `${op} aimed ${aim}`);

					// The source is only read (or, for a branch, opened and left as it was).
					expect(readFileSync(source).equals(forkSource.bytes), `${context}: the source is unchanged`).toBe(true);
					const files = filesOf(targetDir, context).filter((file) => file.session !== "source.jsonl");
					if (op === "branch") {
						const stale = lockOwnerPid(source);
						// Released once the fork is written; otherwise the dead child's.
						if (stale !== undefined) expect([stale, finished], `${context}: source lock`).toEqual([child.pid, false]);
					} else {
						expect(existsSync(`${source}.lock`), `${context}: forkFrom never locks the source`).toBe(false);
					}
					const targets = [...new Set(files.map((file) => file.session))];
					expect(targets.length, `${context}: one fork at most ${JSON.stringify(files)}`).toBeLessThanOrEqual(1);
					const target = targets[0] && join(targetDir, targets[0]);
					const exists = target !== undefined && files.some((file) => file.kind === "session");
					if (finished) expect(exists, `${context}: finished, so the fork is there`).toBe(true);
					count(counts, exists ? "forkWhole" : "noFork");

					if (target && exists) {
						// Whole: its header, then exactly the lines it copies.
						const bytes = readFileSync(target);
						const headerEnd = bytes.indexOf(0x0a);
						const header = JSON.parse(bytes.subarray(0, headerEnd).toString("utf8"));
						expect(header, context).toMatchObject({
							type: "session",
							version: 3,
							parentSession: source,
							cwd: op === "fork-from" ? "/forked" : "/big/project",
						});
						const body = bytes.subarray(headerEnd + 1);
						const expected = op === "fork-from" ? forkBody : branchBody;
						expect(
							body.equals(expected),
							`${context}: the fork's ${body.length} bytes after its header, expected ${expected.length}`,
						).toBe(true);
						const stale = lockOwnerPid(target);
						if (stale !== undefined) expect(stale, `${context}: the fork's lock is the dead child's`).toBe(child.pid);
						else count(counts, "forkNotLockedYet");
						if (op === "branch" && lockOwnerPid(source) !== undefined) count(counts, "sourceLockNotReleasedYet");
					} else if (files.some((file) => file.kind === "temporary")) {
						// A fork written only in part, under its temporary name: nobody knows its name to clean it up.
						count(counts, "orphanedForkTemporaries");
					}
					const lockTemporaries = files.filter((file) => file.kind === "lock-temporary").length;
					count(counts, "lockTemporaries", lockTemporaries);

					// No lock keeps the next writer out: of the source, and of the fork (or of its name, if it is missing).
					const reopened = await Session.open(storage, source, { locks });
					expect(lockOwnerPid(source), `${context}: source lock`).toBe(process.pid);
					expect(reopened.tree.size, context).toBe(forkSource.entries);
					await reopened.close();
					expect(
						readFileSync(source).equals(forkSource.bytes),
						`${context}: the source is unchanged after reopening`,
					).toBe(true);
					if (target) {
						const fork = await Session.open(storage, target, { locks, create: true });
						expect(lockOwnerPid(target), `${context}: fork lock`).toBe(process.pid);
						if (exists) {
							const entries = fork.tree.getEntries();
							expect(fork.report.diagnostics, context).toEqual([]);
							expect(entries.length, context).toBe(op === "fork-from" ? forkSource.entries : forkSource.pathIds.length);
							if (op === "branch")
								expect(
									entries.map((entry) => entry.id),
									context,
								).toEqual(forkSource.pathIds);
							const appended = await fork.appendMessage(assistantMessage(`after kill ${kill}`));
							await fork.close();
							const reread = await Session.open(storage, target, { readOnly: true });
							expect([reread.tree.getLeafId(), reread.tree.size], context).toEqual([appended, entries.length + 1]);
						} else {
							expect(fork.report.created, context).toBe(true);
							await fork.close();
						}
					}
					// Everything left is the source and the fork (lock temporaries aside, as above).
					const after = filesOf(targetDir, context).filter((file) => file.kind !== "lock-temporary");
					expect(after.map((file) => file.name).sort(), `${context}: nothing left but the source and the fork`).toEqual(
						[...(op === "branch" ? ["source.jsonl"] : []), ...(exists && targets[0] ? [targets[0]] : [])].sort(),
					);
				}
				// On Node the write of a big fork takes long enough that the aimed kills land inside it.
				if (runtime === "node" && total >= 4) {
					expect(
						counts.orphanedForkTemporaries ?? 0,
						`${runtime}: kills inside the write ${JSON.stringify(counts)}`,
					).toBeGreaterThan(0);
				}
				summaries.push(
					`crash-runtimes forks on ${runtime}: seed ${SEED}, ${Math.round(performance.now() - started)} ms, ` +
						`forkFrom ${Math.round(timings["fork-from"].totalMs)} ms (${Math.round(timings["fork-from"].writeMs)} ms writing), ` +
						`branch ${Math.round(timings.branch.totalMs)} ms (${Math.round(timings.branch.writeMs)} ms writing), ${JSON.stringify(counts)}`,
				);
			},
			180_000,
		);
	}
});
