/**
 * The commands of `pi-sessions` that write — `fork`, `migrate`, `check --repair` — and `check`, as whole
 * processes (the built dist/cli.js) on Node, Bun and Deno, over copies of the fixtures in a fresh agent
 * directory for each test. What they write is read back through the package and through pi 1.6.0
 * (which must open the forked and migrated files and give the same context); what they must not write
 * (the source of a fork, a clean file that is checked, the bundled samples) is compared byte for byte.
 */
import {
	copyFileSync,
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { samplesRoot } from "../adapters/cli/places.ts";
import { createNodeLocks, createNodeStorage } from "../adapters/node.ts";
import { encodeCwd, Session, type SessionEntry } from "../src/index.ts";
import { FIXTURES_DIR, type FixtureName, sessionFixture } from "./fixtures/generate.ts";
import { RUNTIMES, runCli } from "./support/cli.ts";
import { pi16 } from "./support/pi16.ts";

const storage = createNodeStorage();
const made: string[] = [];

afterEach(() => {
	for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Home {
	agentDir: string;
	root: string;
	env: Record<string, string>;
	/** Copy a fixture into the project `--proj--` of the sessions root; its path. */
	copy(name: FixtureName): string;
}

function home(): Home {
	const agentDir = mkdtempSync(join(tmpdir(), "pi-sessions-write-"));
	made.push(agentDir);
	const root = join(agentDir, "sessions");
	const project = join(root, "--proj--");
	mkdirSync(project, { recursive: true });
	return {
		agentDir,
		root,
		env: { PI_CODING_AGENT_DIR: agentDir },
		copy(name) {
			const path = join(project, name);
			copyFileSync(new URL(name, FIXTURES_DIR), path);
			return path;
		},
	};
}

const fixtureBytes = (name: FixtureName): Buffer => readFileSync(new URL(name, FIXTURES_DIR));
const cwdOf = (name: FixtureName): string =>
	(JSON.parse(sessionFixture(name).text.split("\n")[0] as string) as { cwd: string }).cwd;

async function read<T>(path: string, use: (session: Session) => Promise<T>): Promise<T> {
	const session = await Session.open(storage, path, { readOnly: true });
	try {
		return await use(session);
	} finally {
		await session.close();
	}
}

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** pi 1.6.0's context of a file, from a copy (pi migrates an old file where it lies); at `leafId` if given. */
function piContext(path: string, leafId?: string): unknown {
	const dir = mkdtempSync(join(tmpdir(), "pi16-write-"));
	made.push(dir);
	const copy = join(dir, "copy.jsonl");
	writeFileSync(copy, readFileSync(path));
	const manager = pi16.SessionManager.open(copy, dir);
	if (leafId === undefined) return plain(manager.buildSessionContext());
	return plain(pi16.buildSessionContext(manager.getEntries(), leafId));
}

/** A directory's files with their bytes and modification times. */
function snapshot(dir: string): Record<string, { bytes: string; mtimeMs: number }> {
	const files: Record<string, { bytes: string; mtimeMs: number }> = {};
	for (const name of readdirSync(dir, { recursive: true }) as string[]) {
		const path = join(dir, name);
		if (!statSync(path).isFile()) continue;
		files[name] = { bytes: readFileSync(path).toString("base64"), mtimeMs: statSync(path).mtimeMs };
	}
	return files;
}

/** The entries of a path as a fork holds them: labels aside, parents aside (a fork re-chains past labels). */
const withoutLinks = (entries: readonly SessionEntry[]): unknown[] =>
	entries.filter((entry) => entry.type !== "label").map(({ parentId: _parent, ...rest }) => rest);

async function checkFork(sourcePath: string, forkPath: string, leafId: string, cwd: string): Promise<void> {
	const source = await read(sourcePath, async (session) => ({
		path: await session.getBranch(leafId),
		context: await session.buildSessionContext(leafId),
		labels: new Map((await session.getBranch(leafId)).map((entry) => [entry.id, session.tree.getLabel(entry.id)])),
	}));
	await read(forkPath, async (fork) => {
		expect(fork.header.parentSession).toBe(sourcePath);
		expect(fork.header.cwd).toBe(cwd);
		expect(fork.report.diagnostics).toEqual([]);
		const branch = await fork.getBranch();
		expect(withoutLinks(branch)).toEqual(withoutLinks(source.path));
		for (const [id, label] of source.labels) expect(fork.tree.getLabel(id)).toBe(label);
		expect(plain(await fork.buildSessionContext())).toEqual(plain(source.context));
	});
	// pi 1.6.0 opens the fork and sends the model what it sends from the source's leaf.
	expect(piContext(forkPath)).toEqual(piContext(sourcePath, leafId));
}

function jsonOf(stdout: string): {
	path: string;
	version: number | null;
	problems: { reason: string; line: number; byteOffset: number; excerpt: string; message: string; repair: unknown }[];
	repairable: boolean;
	repair?: { backupPath: string; droppedLines: number[]; problems: unknown[] } | null;
} {
	return JSON.parse(stdout);
}

describe.each(RUNTIMES)("pi-sessions' writing commands on %s", (runtime) => {
	it("fork: the path to the current leaf, into the source's project as pi places it; the source only read", async () => {
		const h = home();
		const source = h.copy("v3-current.jsonl");
		const before = snapshot(dirname(source));
		const run = runCli(runtime, ["fork", source], { env: h.env });
		expect(run.stderr).toMatch(/^forked \d+ entries .* into session \S+/);
		expect(run.status).toBe(0);
		const forkPath = run.stdout.trim();
		expect(dirname(forkPath)).toBe(join(h.root, encodeCwd(cwdOf("v3-current.jsonl"))));
		expect(forkPath).toMatch(/\/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]+\.jsonl$/);
		const leaf = await read(source, async (session) => session.tree.getLeafId() as string);
		await checkFork(source, forkPath, leaf, cwdOf("v3-current.jsonl"));
		expect(snapshot(dirname(source))).toEqual(before);
		expect(readdirSync(dirname(forkPath))).toEqual([forkPath.slice(dirname(forkPath).length + 1)]); // no lock left
	});

	it("fork --leaf on an abandoned branch, --to another directory; an old source is migrated in memory only", async () => {
		const h = home();
		const source = h.copy("v2-branching.jsonl");
		const { abandoned, leaf } = await read(source, async (session) => {
			const point = session.tree.structureBetween(0, session.tree.size).find((entry) => {
				return session.tree.structureOfChildren(entry.id).length > 1;
			}) as SessionEntry;
			const onPath = new Set((await session.getBranch()).map((entry) => entry.id));
			const child = session.tree.structureOfChildren(point.id).find((entry) => !onPath.has(entry.id)) as SessionEntry;
			return { abandoned: child.id, leaf: session.tree.getLeafId() };
		});
		expect(abandoned).not.toBe(leaf);
		const to = join(h.agentDir, "work", "other");
		const run = runCli(runtime, ["fork", source, "--leaf", abandoned, "--to", to], { env: h.env });
		expect(run.stderr).toContain(`up to ${abandoned}`);
		expect(run.status).toBe(0);
		const forkPath = run.stdout.trim();
		expect(dirname(forkPath)).toBe(join(h.root, encodeCwd(resolve(to))));
		await checkFork(source, forkPath, abandoned, resolve(to));
		expect(readFileSync(source)).toEqual(fixtureBytes("v2-branching.jsonl"));
		expect(existsSync(`${source}.v2.bak`)).toBe(false);
	});

	it("fork by session id, with labels on the path; a missing leaf is one line on stderr and writes nothing", async () => {
		const h = home();
		const source = h.copy("v3-current.jsonl");
		const { id, labelled } = await read(source, async (session) => ({
			id: session.header.id,
			labelled: (await session.getBranch()).filter((entry) => session.tree.getLabel(entry.id) !== undefined).length,
		}));
		expect(labelled).toBeGreaterThan(0); // the fixture labels entries of its current path
		const run = runCli(runtime, ["fork", id.slice(0, 8)], { env: h.env });
		expect(run.status).toBe(0);
		const forkPath = run.stdout.trim();
		await checkFork(
			source,
			forkPath,
			await read(source, async (s) => s.tree.getLeafId() as string),
			cwdOf("v3-current.jsonl"),
		);

		const missing = runCli(runtime, ["fork", source, "--leaf", "ffffffff"], { env: h.env });
		expect(missing.status).toBe(1);
		expect(missing.stdout).toBe("");
		expect(missing.stderr.trim().split("\n")).toEqual([`pi-sessions: no entry ffffffff in ${source}`]);
		expect(readdirSync(dirname(forkPath))).toHaveLength(1);
	});

	it("migrate: v1 to v3, the original kept byte for byte, the same context; a current file is left alone", async () => {
		const h = home();
		const path = h.copy("v1-linear.jsonl");
		const original = fixtureBytes("v1-linear.jsonl");
		const reference = h.copy("v2-branching.jsonl"); // another file of the project: untouched
		const expected = await read(path, (session) => session.buildSessionContext());
		const piExpected = piContext(path);
		const run = runCli(runtime, ["migrate", path], { env: h.env });
		expect(run.stderr).toBe("");
		expect(run.status).toBe(0);
		const backup = `${path}.v1.bak`;
		expect(run.stdout).toBe(`migrated ${path} from version 1 to 3\nthe original is kept as ${backup}\n`);
		expect(readFileSync(backup)).toEqual(original);
		expect(readFileSync(reference)).toEqual(fixtureBytes("v2-branching.jsonl"));
		await read(path, async (session) => {
			expect(session.header.version).toBe(3);
			expect(session.report.migratedFrom).toBeUndefined();
			expect(plain(await session.buildSessionContext())).toEqual(plain(expected));
		});
		expect(JSON.parse(readFileSync(path, "utf8").split("\n")[0] as string).version).toBe(3);
		expect(piContext(path)).toEqual(piExpected);
		expect(readdirSync(dirname(path)).sort()).toEqual([
			"v1-linear.jsonl",
			"v1-linear.jsonl.v1.bak",
			"v2-branching.jsonl",
		]);

		const before = snapshot(dirname(path));
		const again = runCli(runtime, ["migrate", path], { env: h.env });
		expect(again.status).toBe(0);
		expect(again.stdout).toBe(`${path} is already version 3: nothing was written\n`);
		expect(snapshot(dirname(path))).toEqual(before);
	});

	it("migrate and check --repair through a link rewrite the file it points to; the link stays a link", () => {
		const h = home();
		const target = h.copy("v1-linear.jsonl");
		const elsewhere = join(h.agentDir, "elsewhere");
		mkdirSync(elsewhere);
		const link = join(elsewhere, "link.jsonl");
		symlinkSync(target, link);
		const run = runCli(runtime, ["migrate", link], { env: h.env });
		expect(run.status, run.stderr).toBe(0);
		expect(run.stdout).toContain(`migrated ${realpathSync(target)} from version 1 to 3`);
		expect(lstatSync(link).isSymbolicLink()).toBe(true);
		expect(JSON.parse(readFileSync(link, "utf8").split("\n")[0] as string).version).toBe(3);
		expect(readFileSync(`${realpathSync(target)}.v1.bak`)).toEqual(fixtureBytes("v1-linear.jsonl"));
		const garbage = h.copy("v3-garbage-line.jsonl");
		const other = join(elsewhere, "garbage.jsonl");
		symlinkSync(garbage, other);
		const repair = runCli(runtime, ["check", "--repair", other], { env: h.env });
		expect(repair.status, repair.stderr).toBe(0);
		expect(lstatSync(other).isSymbolicLink()).toBe(true);
		expect(runCli(runtime, ["check", garbage], { env: h.env }).status).toBe(0);
	});

	it("migrate refuses a file whose writer lock another program holds: one line, nothing written", async () => {
		const h = home();
		const path = h.copy("v2-branching.jsonl");
		const locks = createNodeLocks(storage);
		const lock = await locks.acquire(path); // this process: alive, so the lock is not taken over
		try {
			const run = runCli(runtime, ["migrate", path], { env: h.env });
			expect(run.status).toBe(1);
			expect(run.stdout).toBe("");
			expect(run.stderr).toMatch(
				new RegExp(
					`^pi-sessions: ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is locked by pid ${process.pid} .*nothing was written.*\n$`,
				),
			);
			expect(readFileSync(path)).toEqual(fixtureBytes("v2-branching.jsonl"));
			expect(existsSync(`${path}.v2.bak`)).toBe(false);
		} finally {
			await locks.release(lock);
		}
	});

	it("check: a line that is not JSON and a torn last line, by line, byte offset and reason; exit 1; nothing written", () => {
		const h = home();
		for (const name of ["v3-garbage-line.jsonl", "v3-torn-last-line.jsonl"] as const) {
			const path = h.copy(name);
			const before = snapshot(dirname(path));
			const expected = sessionFixture(name).facts.diagnostics;
			const text = runCli(runtime, ["check", path], { env: h.env });
			expect(text.status).toBe(1);
			expect(text.stderr).toBe(`pi-sessions: ${path}: 1 problem (listed on standard output)\n`);
			const [diagnostic] = expected;
			expect(text.stdout).toContain(`line ${diagnostic?.line} (byte `);
			expect(text.stdout).toContain(`: ${diagnostic?.reason}: `);
			expect(text.stdout.trim().split("\n").at(-1)).toBe(
				`${path}: 1 problem, 1 repairable (pi-sessions check --repair)`,
			);

			const json = runCli(runtime, ["check", path, "--json"], { env: h.env });
			expect(json.status).toBe(1);
			const report = jsonOf(json.stdout);
			expect(report.path).toBe(path);
			expect(report.version).toBe(3);
			expect(report.repairable).toBe(true);
			expect(report.problems.map(({ reason, line }) => ({ reason, line }))).toEqual(expected);
			const lines = readFileSync(path, "utf8").split("\n");
			const offset = Buffer.byteLength(
				lines
					.slice(0, (diagnostic?.line ?? 1) - 1)
					.map((line) => `${line}\n`)
					.join(""),
			);
			expect(report.problems[0]?.byteOffset).toBe(offset);
			expect(report.problems[0]?.excerpt).toBe(
				(lines[(diagnostic?.line ?? 1) - 1] as string).slice(0, 80) +
					((lines[(diagnostic?.line ?? 1) - 1] as string).length > 80 ? "…" : ""),
			);
			expect(report.problems[0]?.repair).toBe("drop-line");
			expect("repair" in report).toBe(false);
			expect(snapshot(dirname(path))).toEqual(before);
		}
	});

	it("check of a clean file (v3, CRLF too): exit 0, and not a byte or a time changed, no lock file", () => {
		const h = home();
		for (const name of ["v3-current.jsonl", "v3-crlf.jsonl"] as const) {
			const path = h.copy(name);
			const before = snapshot(dirname(path));
			const run = runCli(runtime, ["check", path], { env: h.env });
			expect(run.stderr).toBe("");
			expect(run.status).toBe(0);
			expect(run.stdout.trim().split("\n").at(-1)).toBe(`${path}: no problems`);
			const json = runCli(runtime, ["check", path, "--json"], { env: h.env });
			expect(json.status).toBe(0);
			expect(jsonOf(json.stdout)).toMatchObject({ path, version: 3, problems: [], repairable: false });
			expect(snapshot(dirname(path))).toEqual(before);
		}
	});

	it("check --repair: the bad line dropped, the original kept, the kept lines byte for byte; then it checks clean", async () => {
		const h = home();
		for (const name of ["v3-garbage-line.jsonl", "v3-torn-last-line.jsonl"] as const) {
			const path = h.copy(name);
			const original = fixtureBytes(name);
			const expectedEntries = await read(path, (session) => session.getEntries());
			const [diagnostic] = sessionFixture(name).facts.diagnostics;
			const run = runCli(runtime, ["check", path, "--repair"], { env: h.env });
			expect(run.stderr).toBe("");
			expect(run.status).toBe(0);
			const backup = `${path}.v3.bak`;
			expect(run.stdout).toContain(`repaired: dropped line ${diagnostic?.line}\n`);
			expect(run.stdout).toContain(`the original is kept as ${backup}\n`);
			expect(readFileSync(backup)).toEqual(original);
			// Every other line as it was, each ending with a line feed.
			const kept = original.toString("utf8").split("\n");
			kept.splice((diagnostic?.line ?? 0) - 1, 1);
			const text = readFileSync(path, "utf8");
			expect(text).toBe(
				kept
					.filter((line) => line !== "")
					.map((line) => `${line}\n`)
					.join(""),
			);
			await read(path, async (session) => {
				expect(session.report.diagnostics).toEqual([]);
				expect(await session.getEntries()).toEqual(expectedEntries);
			});
			expect(piContext(path)).toEqual(piContext(backup));

			const again = runCli(runtime, ["check", path, "--json"], { env: h.env });
			expect(again.status).toBe(0);
			expect(jsonOf(again.stdout)).toMatchObject({ problems: [], repairable: false });
			const twice = runCli(runtime, ["check", path, "--repair", "--json"], { env: h.env });
			expect(twice.status).toBe(0);
			expect(jsonOf(twice.stdout).repair).toBeNull();
			expect(existsSync(`${path}.v3.1.bak`)).toBe(false);
		}
	});

	it("check --repair of a v1 file with a torn last line: migrated and terminated; entries that parse are kept", async () => {
		const h = home();
		const path = h.copy("v1-linear.jsonl");
		writeFileSync(path, `${readFileSync(path, "utf8")}{"type":"message","timestamp":"2025-`, { flag: "w" });
		const damaged = readFileSync(path);
		const expected = await read(path, (session) => session.buildSessionContext());
		const entries = await read(path, async (session) => (await session.getEntries()).length);
		const run = runCli(runtime, ["check", path, "--repair", "--json"], { env: h.env });
		expect(run.status).toBe(0);
		const report = jsonOf(run.stdout);
		expect(report.version).toBe(1);
		expect(report.problems.map((problem) => [problem.reason, problem.repair])).toEqual([
			["old-version", "migrate"],
			["torn-last-line", "drop-line"],
		]);
		expect(report.repair).toMatchObject({ backupPath: `${path}.v1.bak`, migratedFrom: 1, problems: [] });
		expect(readFileSync(`${path}.v1.bak`)).toEqual(damaged);
		await read(path, async (session) => {
			expect(session.header.version).toBe(3);
			expect(session.report.diagnostics).toEqual([]);
			expect((await session.getEntries()).length).toBe(entries);
			expect(plain(await session.buildSessionContext())).toEqual(plain(expected));
		});
	});

	it("check --repair reports what it may not fix (a duplicate id) and leaves those entries alone", () => {
		const h = home();
		const path = h.copy("v3-current.jsonl");
		const lines = readFileSync(path, "utf8").split("\n");
		const duplicate = lines[3] as string;
		writeFileSync(path, [...lines.slice(0, -1), duplicate, ""].join("\n"));
		const before = readFileSync(path);
		const run = runCli(runtime, ["check", path, "--repair"], { env: h.env });
		expect(run.status).toBe(1);
		expect(run.stdout).toContain(": duplicate-id: ");
		expect(run.stdout).toContain("nothing to repair: nothing was written\n");
		expect(run.stdout.trim().split("\n").at(-1)).toBe(`${path}: 1 problem left, none repairable`);
		expect(readFileSync(path)).toEqual(before);
		expect(readdirSync(dirname(path))).toEqual(["v3-current.jsonl"]);
	});

	it("the bundled samples are refused by every command that writes; they stay as they are", () => {
		const samples = samplesRoot();
		const before = snapshot(samples);
		const [project] = readdirSync(samples);
		const sample = join(samples, project as string, readdirSync(join(samples, project as string))[0] as string);
		const h = home();
		for (const args of [
			["migrate", sample],
			["check", "--repair", sample],
			["migrate", "--samples", sample],
		]) {
			const run = runCli(runtime, args, { env: h.env });
			expect(run.status).toBe(1);
			expect(run.stdout).toBe("");
			expect(run.stderr).toMatch(
				/^pi-sessions: .* sample sessions bundled with pi-sessions, which are read-only: copy the file/,
			);
			expect(run.stderr.trim().split("\n")).toHaveLength(1);
		}
		// Forking into the samples' root: with --samples, or on a machine without pi sessions (they are shown then).
		for (const env of [h.env, {}]) {
			const run = runCli(runtime, ["fork", "--samples", sample], { env });
			expect(run.status).toBe(1);
			expect(run.stderr).toMatch(/read-only: pass --dir SESSIONS_DIR/);
		}
		const fresh = runCli(runtime, ["fork", sample], {});
		expect(fresh.status).toBe(1);
		expect(fresh.stderr).toMatch(/read-only: pass --dir SESSIONS_DIR/);
		// A sample may be the source of a fork into a sessions root of one's own.
		const into = runCli(runtime, ["fork", sample, "--dir", h.root], { env: h.env });
		expect(into.status).toBe(0);
		expect(into.stdout.startsWith(h.root)).toBe(true);
		expect(snapshot(samples)).toEqual(before);
	});
});
