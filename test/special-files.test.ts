/**
 * Special files named like sessions: a named pipe (FIFO), a link to /dev/zero or /dev/urandom, a
 * directory, a unix socket, all called `*.jsonl` beside real sessions, and a FIFO in place of a lock file.
 * Only regular files are read or written: listings and discovery skip the rest, opening one is refused
 * with a `not-a-file` StorageError naming it, and nothing is ever replaced. Every case runs in a child
 * process with a time limit (a read of a FIFO that blocks would otherwise freeze the test runner), on
 * Node, Bun and Deno; the built CLI too (dist/cli.js: `npm run build` first).
 */
import { spawnSync } from "node:child_process";
import {
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	renameSync,
	rmSync,
	statSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultSessionDir, sessionsRoot } from "../src/paths.ts";
import { ROOT, RUNTIMES, type Runtime, runCli } from "./support/cli.ts";
import type { ProbePaths } from "./support/special-files-probe.ts";

const PROBE = join(ROOT, "test", "support", "special-files-probe.ts");
const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);
/** A run that takes longer than this has hung (a whole probe takes about a second). */
const CHILD_TIMEOUT_MS = 30_000;
const TEST_TIMEOUT_MS = 60_000;

const canMakeFifo = process.platform !== "win32" && spawnSync("mkfifo", ["--version"]).status === 0;

function mkfifo(path: string): void {
	const made = spawnSync("mkfifo", [path]);
	if (made.status !== 0) throw new Error(`mkfifo ${path}: ${made.stderr}`);
}

/**
 * A unix socket file at `path`, left by a process that exits while listening on it. Made under a short
 * name and moved (a socket's path is limited to about 100 bytes).
 */
function makeSocket(path: string): boolean {
	const short = join(mkdtempSync(join(tmpdir(), "s-")), "s");
	const script = `require("node:net").createServer().listen(${JSON.stringify(short)}, () => process.exit(0))`;
	if (spawnSync(process.execPath, ["-e", script], { timeout: 10_000 }).status !== 0) return false;
	if (!lstatSync(short, { throwIfNoEntry: false })?.isSocket()) return false;
	renameSync(short, path);
	rmSync(dirname(short), { recursive: true, force: true });
	return true;
}

function sessionText(id: string, cwd: string, text: string): string {
	const header = { type: "session", version: 3, id, timestamp: "2025-01-01T00:00:00.000Z", cwd };
	const message = {
		type: "message",
		id: "a0000001",
		parentId: null,
		timestamp: "2025-01-01T00:00:01.000Z",
		message: { role: "user", content: text, timestamp: 1 },
	};
	return `${JSON.stringify(header)}\n${JSON.stringify(message)}\n`;
}

interface Scene extends ProbePaths {
	root: string;
	/** The newest real session. */
	newest: string;
	contents: Map<string, string>;
}

/** Every scene's directory, removed when the file's tests are done. */
const sceneRoots: string[] = [];
afterAll(() => {
	for (const root of sceneRoots) rmSync(root, { recursive: true, force: true });
});

/** A fresh agent directory: three real sessions and the special files, newer than all of them. */
function makeScene(): Scene {
	const root = mkdtempSync(join(tmpdir(), "pi-special-"));
	sceneRoots.push(root);
	const agentDir = join(root, "agent");
	const cwd = join(root, "project");
	mkdirSync(cwd);
	const dir = defaultSessionDir(cwd, agentDir);
	mkdirSync(dir, { recursive: true });
	const contents = new Map<string, string>();
	const session = (index: number, seconds: number): string => {
		const id = `0000000${index}-0000-4000-8000-000000000000`;
		const path = join(dir, `2025-01-0${index}T00-00-00-000Z_${id}.jsonl`);
		const text = sessionText(id, cwd, `session ${index}`);
		writeFileSync(path, text);
		utimesSync(path, seconds, seconds);
		contents.set(path, text);
		return path;
	};
	const locked = session(1, 1_000_000);
	const older = session(2, 2_000_000);
	const newest = session(3, 3_000_000);
	mkfifo(`${locked}.lock`);
	const special: Record<string, string> = {
		fifo: join(dir, "2099-01-01T00-00-00-000Z_fifo.jsonl"),
		zero: join(dir, "2099-01-02T00-00-00-000Z_zero.jsonl"),
		urandom: join(dir, "2099-01-03T00-00-00-000Z_urandom.jsonl"),
		directory: join(dir, "2099-01-04T00-00-00-000Z_directory.jsonl"),
	};
	mkfifo(special.fifo as string);
	symlinkSync("/dev/zero", special.zero as string);
	symlinkSync("/dev/urandom", special.urandom as string);
	mkdirSync(special.directory as string);
	const socket = join(dir, "2099-01-05T00-00-00-000Z_socket.jsonl");
	if (makeSocket(socket)) special.socket = socket;
	// A FIFO where a project directory would be: listing every project passes it by.
	mkfifo(join(sessionsRoot(agentDir), "--fifo-project--"));
	const spare = join(root, "spare.txt");
	writeFileSync(spare, "spare\n");
	return { root, agentDir, cwd, dir, locked, sessions: [locked, older, newest], special, spare, newest, contents };
}

function probeCommand(runtime: Runtime, argument: string): [string, string[]] {
	if (runtime === "node") return [process.execPath, ["--import", "tsx", PROBE, argument]];
	if (runtime === "bun") return [bin("bun"), [PROBE, argument]];
	return [bin("deno"), ["run", "-A", "--quiet", PROBE, argument]];
}

type Outcome = { ok: unknown } | { error: { name?: string; code?: string; path?: string; message: string } };

function runProbe(runtime: Runtime, scene: Scene): Map<string, Outcome> {
	const [command, args] = probeCommand(runtime, JSON.stringify(scene));
	const run = spawnSync(command, args, {
		cwd: ROOT,
		encoding: "utf8",
		timeout: CHILD_TIMEOUT_MS,
		killSignal: "SIGKILL",
		env: { ...process.env, HOME: scene.root, PI_CODING_AGENT_DIR: scene.agentDir, NO_COLOR: "1" },
	});
	const steps = new Map<string, Outcome>();
	for (const line of run.stdout.split("\n")) {
		if (!line.startsWith("{")) continue;
		const { step, ...outcome } = JSON.parse(line) as { step: string } & Outcome;
		steps.set(step, outcome);
	}
	if (!steps.has("done")) {
		const last = [...steps.keys()].at(-1) ?? "(none)";
		throw new Error(
			`the probe on ${runtime} did not finish (${run.error?.message ?? `status ${run.status}`}); last step done: ${last}\n${run.stderr}`,
		);
	}
	return steps;
}

function expectRefused(steps: Map<string, Outcome>, step: string, path: string): void {
	const outcome = steps.get(step);
	expect(outcome, step).toBeDefined();
	if (!outcome || !("error" in outcome))
		throw new Error(`${step}: expected not-a-file, got ${JSON.stringify(outcome)}`);
	expect([step, outcome.error.name, outcome.error.code, outcome.error.path]).toEqual([
		step,
		"StorageError",
		"not-a-file",
		path,
	]);
	expect(outcome.error.message).toContain(path);
}

function expectOk(steps: Map<string, Outcome>, step: string, value: unknown): void {
	expect([step, steps.get(step)]).toEqual([step, { ok: value }]);
}

/** Everything the test made is still what it was: no special file replaced, no session changed. */
function expectUntouched(scene: Scene): void {
	expect(lstatSync(scene.special.fifo as string).isFIFO()).toBe(true);
	expect(lstatSync(`${scene.locked}.lock`).isFIFO()).toBe(true);
	expect(lstatSync(scene.special.zero as string).isSymbolicLink()).toBe(true);
	expect(statSync(scene.special.zero as string).isCharacterDevice()).toBe(true);
	expect(lstatSync(scene.special.urandom as string).isSymbolicLink()).toBe(true);
	expect(lstatSync(scene.special.directory as string).isDirectory()).toBe(true);
	expect(readdirSync(scene.special.directory as string)).toEqual([]);
	if (scene.special.socket) expect(lstatSync(scene.special.socket).isSocket()).toBe(true);
	for (const [path, text] of scene.contents) expect(readFileSync(path, "utf8")).toBe(text);
	const names = readdirSync(scene.dir);
	expect(names.filter((name) => name.endsWith(".tmp"))).toEqual([]);
	// The FIFO lock, and the lock of the newest session that a SessionManager of the probe held when it exited.
	const locks = names.filter((name) => name.endsWith(".lock") && !scene.newest.endsWith(name.slice(0, -5)));
	expect(locks).toEqual([`${scene.locked.slice(scene.dir.length + 1)}.lock`]);
	expect(readFileSync(scene.spare, "utf8")).toBe("spare\n");
}

describe.skipIf(!canMakeFifo)("special files named *.jsonl", () => {
	for (const runtime of RUNTIMES) {
		it(
			`on ${runtime}: listed past, never found as the most recent, refused when opened, never replaced`,
			() => {
				const scene = makeScene();
				const steps = runProbe(runtime, scene);
				const sessions = [...scene.sessions].sort();
				for (const step of ["engine.listAll", "engine.list", "SessionManager.listAll", "SessionManager.list"]) {
					expectOk(steps, step, sessions);
				}
				for (const step of ["engine.findMostRecent", "engine.continueRecent", "findMostRecentSession"]) {
					expectOk(steps, step, scene.newest);
				}
				expectOk(steps, "SessionManager.continueRecent", scene.newest);
				for (const [kind, path] of Object.entries(scene.special)) {
					for (const op of ["engine.open", "engine.open read-only", "SessionManager.open"]) {
						expectRefused(steps, `${op} ${kind}`, path);
					}
					for (const driver of ["storage", "sync"]) {
						for (const op of ["readRange", "append", "replace", "rename"]) {
							expectRefused(steps, `${driver}.${op} ${kind}`, path);
						}
					}
					expectOk(steps, `loadEntriesFromFile ${kind}`, []);
				}
				const lock = `${scene.locked}.lock`;
				expectRefused(steps, "engine.open, its lock a FIFO", lock);
				expectOk(steps, "engine.open read-only, its lock a FIFO", 1);
				expectRefused(steps, "SessionManager.open, its lock a FIFO", lock);
				expectRefused(steps, "storage.readRange of the FIFO lock", lock);
				expectRefused(steps, "sync.readRange of the FIFO lock", lock);
				expectOk(steps, "many FIFO reads and a real one", ['{"type"', ...Array(12).fill("not-a-file")]);
				expectUntouched(scene);
			},
			TEST_TIMEOUT_MS,
		);
	}
});

describe.skipIf(!canMakeFifo)("the CLI over a sessions root holding special files", () => {
	let scene: Scene;
	// The built tool (dist/cli.js, `npm run build`), as the other CLI tests use it.
	beforeAll(() => {
		scene = makeScene();
	});
	for (const runtime of RUNTIMES) {
		it(
			`on ${runtime}: ls --all lists the real sessions; tree of each special file is one clear line`,
			() => {
				const root = sessionsRoot(scene.agentDir);
				const listed = runCli(runtime, ["ls", "--all", "--json", "--dir", root], { timeout: CHILD_TIMEOUT_MS });
				expect([listed.status, listed.stderr]).toEqual([0, ""]);
				const paths = (JSON.parse(listed.stdout) as { path: string }[]).map((session) => session.path).sort();
				expect(paths).toEqual([...scene.sessions].sort());
				for (const path of Object.values(scene.special)) {
					const tree = runCli(runtime, ["tree", path], { timeout: CHILD_TIMEOUT_MS });
					expect(tree.status).not.toBe(0);
					expect(tree.stdout).toBe("");
					const lines = tree.stderr.trim().split("\n");
					expect(lines).toHaveLength(1);
					expect(lines[0]).toContain(path);
					expect(lines[0]).toMatch(
						/not a regular file|not-a-file|a named pipe|a directory|a character device|a socket/,
					);
				}
				expectUntouched(scene);
			},
			TEST_TIMEOUT_MS,
		);
	}
});
