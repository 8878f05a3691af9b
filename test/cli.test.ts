/**
 * `pi-sessions` as a whole process (the built dist/cli.js) on Node, Bun and Deno: `ls`, `tree`, `context`,
 * `show`, `stats`, help and errors. `ls --json` is pi 1.6.0's own `listAll()`/`list()` row for row, and
 * `context --json` pi 1.6.0's `buildSessionContext`, over a generated agent directory of every fixture
 * (v1, v2, v3, CRLF, a garbage line, a torn last line) in two projects. The other commands have their own
 * files (cli-export, cli-search, cli-write).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shapeOfOutline, shapeOfTree, treeRows } from "../adapters/cli/commands/tree.ts";
import { createNodeStorage } from "../adapters/node.ts";
import {
	encodeCwd,
	listAllSessions,
	type OutlineNode,
	Session,
	type SessionEntry,
	type SessionInfo,
} from "../src/index.ts";
import { FIXTURE_NAMES, FIXTURES_DIR, sessionFixture } from "./fixtures/generate.ts";
import { ROOT, RUNTIMES, runCli, runCliPiped } from "./support/cli.ts";
import { pi16 } from "./support/pi16.ts";

const piManager = pi16.SessionManager as unknown as {
	listAll(): Promise<SessionInfo[]>;
	list(cwd: string): Promise<SessionInfo[]>;
};

const COMMANDS = ["ls", "tree", "context", "show", "stats", "search", "fork", "migrate", "check", "export"];
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for escape sequences
const ESCAPES = /\x1b\[/;

let agentDir: string;
let savedAgentDir: string | undefined;
/** Fixture name → its path in the generated agent directory. */
const paths = new Map<string, string>();

/** Every fixture under its header's project (its pi directory), and again in a second project, with distinct times. */
function writeAgentDir(): void {
	agentDir = mkdtempSync(join(tmpdir(), "pi-sessions-cli-"));
	let minute = 0;
	for (const name of FIXTURE_NAMES) {
		const cwd = (JSON.parse(sessionFixture(name).text.split("\n")[0] as string) as { cwd: string }).cwd;
		for (const project of [encodeCwd(cwd), "--elsewhere--"]) {
			const dir = join(agentDir, "sessions", project);
			mkdirSync(dir, { recursive: true });
			const path = join(dir, name);
			copyFileSync(new URL(name, FIXTURES_DIR), path);
			const time = new Date(Date.UTC(2026, 0, 1, 0, minute++));
			utimesSync(path, time, time);
			if (project !== "--elsewhere--") paths.set(name, path);
		}
	}
}

const env = () => ({ PI_CODING_AGENT_DIR: agentDir });

beforeAll(() => {
	writeAgentDir();
	savedAgentDir = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = agentDir; // pi 1.6.0's listings read it when called
});

afterAll(() => {
	if (savedAgentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
	else process.env.PI_CODING_AGENT_DIR = savedAgentDir;
	rmSync(agentDir, { recursive: true, force: true });
});

/** pi 1.6.0's context of a leaf of a file (read from a copy: pi migrates an old file where it lies). */
function piContext(path: string, leafId?: string): unknown {
	const dir = mkdtempSync(join(tmpdir(), "pi16-context-"));
	const copy = join(dir, "copy.jsonl");
	writeFileSync(copy, readFileSync(path));
	try {
		const manager = pi16.SessionManager.open(copy);
		if (leafId === undefined) return JSON.parse(JSON.stringify(manager.buildSessionContext()));
		return JSON.parse(JSON.stringify(pi16.buildSessionContext(manager.getEntries(), leafId)));
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/** Entries of a file as pi 1.6.0 reads them (migrated). */
function piEntries(path: string): SessionEntry[] {
	const dir = mkdtempSync(join(tmpdir(), "pi16-entries-"));
	const copy = join(dir, "copy.jsonl");
	writeFileSync(copy, readFileSync(path));
	try {
		return pi16.SessionManager.open(copy).getEntries();
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

describe.each(RUNTIMES)("pi-sessions on %s", (runtime) => {
	it("--help lists every command, and every command has its own --help", () => {
		const help = runCli(runtime, ["--help"]);
		expect(help.status).toBe(0);
		for (const command of COMMANDS) expect(help.stdout).toMatch(new RegExp(`^\\s+${command}\\s+\\S`, "m"));
		for (const command of ["ls", "tree", "export"]) {
			const own = runCli(runtime, [command, "--help"]);
			expect(own.status).toBe(0);
			expect(own.stdout).toContain(`pi-sessions ${command}`);
			expect(own.stdout).toContain("--dir");
		}
	});

	it("--version is the package's, and -- ends the options (search -- --help searches for --help)", () => {
		const version = runCli(runtime, ["--version"]);
		expect(version.stdout.trim()).toBe(
			(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version,
		);
		const search = runCli(runtime, ["search", "--samples", "--all", "--", "--help"]);
		expect(search.status).toBe(0);
		expect(search.stderr).toMatch(/No matches for "--help"/);
	});

	it("says so and shows the bundled samples when there is no ~/.pi", () => {
		const run = runCli(runtime, ["ls", "--all"]);
		expect(run.status).toBe(0);
		expect(run.stderr).toContain("No pi sessions at");
		expect(run.stderr).toContain("bundled");
		expect(run.stdout).toContain("Blog: dark mode");
		expect(run.stdout).toContain("/home/dev/projects/todo-app");
		expect(run.stdout).not.toMatch(ESCAPES);
		expect(run.stdout.trim().split("\n")).toHaveLength(8); // four sessions, two lines each
	});

	it("ls --all --json is pi 1.6.0's listAll() byte for byte, cold and warm (the catalog), and without the catalog", async () => {
		const listed = await piManager.listAll();
		expect(listed.length).toBe(FIXTURE_NAMES.length * 2);
		const expected = `${JSON.stringify(listed, null, 2)}\n`;
		for (const args of [["--all"], ["--all"], ["--all", "--no-catalog"]]) {
			const run = runCli(runtime, ["ls", ...args, "--json"], { env: env() });
			expect(run.stderr).toBe("");
			expect(run.status).toBe(0);
			expect(run.stdout).toBe(expected);
		}
	});

	it("ls --cwd DIR --json is pi 1.6.0's list(DIR)", async () => {
		const cwd = "/home/dev/projects/blog";
		const listed = await piManager.list(cwd);
		expect(listed.length).toBeGreaterThan(1);
		const run = runCli(runtime, ["ls", "--cwd", cwd, "--json"], { env: env() });
		expect(run.status).toBe(0);
		expect(run.stdout).toBe(`${JSON.stringify(listed, null, 2)}\n`);
	});

	it("context --json is pi 1.6.0's buildSessionContext for every fixture", () => {
		for (const name of FIXTURE_NAMES) {
			const path = paths.get(name) as string;
			const run = runCli(runtime, ["context", path, "--json"], { env: env() });
			expect(run.stderr).toBe("");
			expect(JSON.parse(run.stdout), name).toEqual(piContext(path));
		}
	});

	it("tree, show and stats read a session named by id prefix or path", () => {
		const path = paths.get("v3-current.jsonl") as string;
		const entries = piEntries(path);
		const tree = runCli(runtime, ["tree", "66bcd5", "--samples"]);
		expect(tree.status).toBe(0);
		expect(tree.stdout).toContain("Blog: dark mode");
		expect(tree.stdout).toMatch(/← leaf/);
		expect(tree.stdout).toMatch(/branch summary/);
		expect(tree.stdout).toMatch(/compaction/);
		expect(tree.stdout).toMatch(/\[works\]/);
		expect(tree.stdout).toMatch(/^├─ /m);

		const entry = entries[3] as SessionEntry;
		const show = runCli(runtime, ["show", path, entry.id, "--json"], { env: env() });
		expect(show.status).toBe(0);
		expect(JSON.parse(show.stdout)).toEqual(entry);

		const stats = runCli(runtime, ["stats", path, "--json"], { env: env() });
		expect(stats.status).toBe(0);
		const counted = JSON.parse(stats.stdout) as {
			entries: number;
			bytes: number;
			compactions: number;
			assistantUsage: { input: number; output: number };
			tree: { leaves: number };
		};
		expect(counted.entries).toBe(entries.length);
		expect(counted.bytes).toBe(readFileSync(path).length);
		expect(counted.compactions).toBe(entries.filter((e) => e.type === "compaction").length);
		let input = 0;
		let output = 0;
		for (const e of entries) {
			if (e.type === "message" && e.message.role === "assistant") {
				input += e.message.usage.input;
				output += e.message.usage.output;
			}
		}
		expect(counted.assistantUsage).toMatchObject({ input, output });
		const parents = new Set(entries.map((e) => e.parentId));
		expect(counted.tree.leaves).toBe(entries.filter((e) => !parents.has(e.id)).length);
	});

	it("stops quietly when its reader goes away (| head)", async () => {
		const dir = mkdtempSync(join(tmpdir(), "pi-sessions-pipe-"));
		try {
			const session = await Session.create(createNodeStorage(), { cwd: "/p", sessionDir: dir });
			for (let index = 0; index < 3000; index++) {
				await session.appendMessage({
					role: "user",
					content: `message ${index} ${"x".repeat(60)}`,
					timestamp: Date.now(),
				});
			}
			await session.close();
			const piped = runCliPiped(runtime, ["tree", "--full", session.path as string], "head -n 1");
			expect(piped.stdout.split("\n")[0]).toContain(`${3000} entries`);
			expect([piped.status, piped.stderr]).toEqual([0, ""]);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	it("ls --json: whole through a slow reader (chunks of one reused buffer), and quiet when its reader goes away", async () => {
		const agentDir = mkdtempSync(join(tmpdir(), "pi-sessions-pipe-ls-"));
		// The catalog goes beside the sessions root: inside the temporary directory.
		const root = join(agentDir, "sessions");
		try {
			// ~3 MB of JSON: written a megabyte at a time.
			for (let index = 0; index < 30; index++) {
				const session = await Session.create(createNodeStorage(), {
					cwd: `/p${index}`,
					sessionDir: join(root, "--p--"),
				});
				const content = `${index} é "q"\n😀 ${"y".repeat(1000)}`.repeat(100);
				await session.appendMessage({ role: "user", content, timestamp: Date.now() });
				await session.close();
			}
			const args = ["ls", "--all", "--json", "--dir", root];
			const expected = `${JSON.stringify(await listAllSessions(createNodeStorage(), root), null, 2)}\n`;
			for (const pass of ["cold", "warm"]) {
				const gone = runCliPiped(runtime, args, "head -c 20");
				expect([gone.stdout.length, expected.startsWith(gone.stdout)], pass).toEqual([20, true]);
				expect([gone.status, gone.stderr], pass).toEqual([0, ""]);
				const slow = runCliPiped(runtime, args, "(sleep 0.3; cat)");
				expect([slow.status, slow.stderr], pass).toEqual([0, ""]);
				expect(slow.stdout === expected, pass).toBe(true);
			}
		} finally {
			rmSync(agentDir, { recursive: true, force: true });
		}
	});

	it("errors are one line on standard error with a non-zero status", () => {
		const cases: [string[], number, RegExp][] = [
			[["nope"], 2, /unknown command nope/i],
			[["tree"], 2, /SESSION/],
			[["tree", "x", "--bogus"], 2, /unknown option --bogus/],
			[["tree", "/no/such/file.jsonl"], 1, /no such session file/],
			[["tree", "zzzzzz"], 1, /no session file or session id/],
			[["context", "66bcd5", "--samples", "--leaf", "nope"], 1, /no entry nope/],
			[["context", "66bcd5", "--samples", "--last", "-3"], 2, /whole number/],
			[["ls", "--all", "--cwd", "/x"], 2, /not both/],
			[["ls", "--json", "extra"], 2, /unexpected argument "extra"/],
			[["context", "66bcd5", "--samples", "--last", "1e3"], 2, /whole number/],
			[["search", "--samples", "--limit", "0x10", "x"], 2, /whole number/],
		];
		for (const [args, status, message] of cases) {
			const run = runCli(runtime, args, { env: env() });
			expect(run.status, args.join(" ")).toBe(status);
			expect(run.stdout, args.join(" ")).toBe("");
			expect(run.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
			expect(run.stderr, args.join(" ")).toMatch(message);
		}
	});
});

describe("pi-sessions context against pi 1.6.0 at other leaves", () => {
	it("--leaf and --last give pi's context of that leaf, and its last messages", () => {
		const path = paths.get("v2-branching.jsonl") as string;
		const entries = piEntries(path);
		const parents = new Set(entries.map((e) => e.parentId));
		const leaves = entries.filter((e) => !parents.has(e.id)).map((e) => e.id);
		expect(leaves.length).toBeGreaterThan(1);
		for (const leaf of [...leaves, (entries[4] as SessionEntry).id]) {
			const expected = piContext(path, leaf) as { messages: unknown[] };
			const whole = runCli("node", ["context", path, "--leaf", leaf, "--json"]);
			expect(JSON.parse(whole.stdout)).toEqual(expected);
			const last = runCli("node", ["context", path, "--leaf", leaf, "--last", "2", "--json"]);
			expect(JSON.parse(last.stdout)).toEqual({ ...expected, messages: expected.messages.slice(-2) });
		}
	});

	it("a v1 file's entries have the same ids in every command (made from its header, never written)", () => {
		const path = paths.get("v1-linear.jsonl") as string;
		const before = readFileSync(path);
		const tree = JSON.parse(runCli("node", ["tree", path, "--json"]).stdout) as { nodes: OutlineNode[] };
		const again = JSON.parse(runCli("node", ["tree", path, "--json"]).stdout) as { nodes: OutlineNode[] };
		expect(again.nodes.map((n) => n.id)).toEqual(tree.nodes.map((n) => n.id));
		const target = tree.nodes[5] as OutlineNode;
		const show = runCli("node", ["show", path, target.id, "--json"]);
		expect(show.status).toBe(0);
		expect((JSON.parse(show.stdout) as SessionEntry).parentId).toBe(target.parentId);
		expect(readFileSync(path).equals(before)).toBe(true);
	});

	it("ls shows each id as the shortest prefix that names it, and that prefix opens it", async () => {
		const agentDir = mkdtempSync(join(tmpdir(), "pi-sessions-short-ids-"));
		const root = join(agentDir, "sessions"); // its catalog beside it, inside the temporary directory
		try {
			const ids = [
				"01a2345c-0000-7000-8000-000000000001",
				"01a2345c-0000-7000-8000-000000000002",
				"01a2345d-1111-7000-8000-000000000003",
			];
			for (const id of ids) {
				const session = await Session.create(createNodeStorage(), { cwd: "/p", sessionDir: join(root, "--p--"), id });
				await session.appendMessage({ role: "user", content: `I am ${id}`, timestamp: Date.now() });
				await session.close();
			}
			const ls = runCli("node", ["ls", "--all", "--dir", root]);
			const shown = [...ls.stdout.matchAll(/^\S+ \S+\s+(\S+)/gm)].map((match) => match[1] as string).sort();
			expect(shown).toEqual([
				"01a2345c-0000-7000-8000-000000000001",
				"01a2345c-0000-7000-8000-000000000002",
				"01a2345d",
			]);
			for (const prefix of shown) {
				const tree = runCli("node", ["tree", prefix, "--dir", root]);
				expect(tree.status, tree.stderr).toBe(0);
				expect(tree.stdout).toContain(`I am ${ids.find((id) => id.startsWith(prefix))}`);
			}
		} finally {
			rmSync(agentDir, { recursive: true, force: true });
		}
	});

	it("an id prefix that several sessions share names them, and opens none", () => {
		// The fixtures are in two projects, under their own names: found by the ids in their headers.
		const run = runCli("node", ["tree", "a4b77f"], { env: env() });
		expect(run.status).toBe(1);
		expect(run.stdout).toBe("");
		expect(run.stderr).toMatch(/"a4b77f" matches 2 sessions under .*v2-branching\.jsonl/);
		const unique = runCli("node", ["tree", "dd0f9f", "--dir", join(agentDir, "sessions")]);
		expect(unique.status).toBe(1); // the v1 fixture is in both projects too
	});
});

describe("the tree's rows", () => {
	const node = (
		id: number,
		parent: number | null,
		childCount: number,
		extra: Partial<OutlineNode> = {},
	): OutlineNode => ({
		id: `e${id}`,
		parentId: parent === null ? null : `e${parent}`,
		type: "message",
		role: "user",
		timestamp: new Date(Date.UTC(2026, 0, 1) + id * 1000).toISOString(),
		childCount,
		...extra,
	});

	it("collapse a long linear run to its ends and keep what is marked; --full keeps all", () => {
		const nodes = Array.from({ length: 40 }, (_, i) => node(i, i === 0 ? null : i - 1, i === 39 ? 0 : 1));
		nodes[20] = { ...(nodes[20] as OutlineNode), label: "midway" };
		const rows = treeRows(shapeOfOutline(nodes, "e39"), false);
		const shown = rows.flatMap((row) => (row.kind === "entry" ? [row.node.id] : []));
		expect(shown).toEqual(["e0", "e1", "e2", "e18", "e19", "e20", "e21", "e22", "e37", "e38", "e39"]);
		expect(rows.filter((row) => row.kind === "hidden").map((row) => (row.kind === "hidden" ? row.count : 0))).toEqual([
			15, 14,
		]);
		expect(treeRows(shapeOfOutline(nodes, "e39"), true).filter((row) => row.kind === "entry")).toHaveLength(40);
	});

	it("indent branches, oldest child first, with the path to the leaf marked", () => {
		const nodes = [node(0, null, 2), node(2, 0, 0), node(1, 0, 1), node(3, 1, 0)];
		const rows = treeRows(shapeOfOutline(nodes, "e3"), false);
		expect(
			rows.map((row) => (row.kind === "entry" ? `${row.prefix}${row.node.id}${row.onPath ? "*" : ""}` : "…")),
		).toEqual(["e0*", "├─ e1*", "│  e3*", "└─ e2"]);
	});

	it("are the same from a session's tree as from its outline, for every fixture", async () => {
		for (const name of FIXTURE_NAMES) {
			const session = await Session.open(createNodeStorage(), paths.get(name) as string, {
				readOnly: true,
				load: "lazy",
			});
			try {
				const fromOutline = treeRows(shapeOfOutline(session.outline(), session.tree.getLeafId()), false);
				expect(fromOutline.length, name).toBeGreaterThan(1);
				expect(treeRows(shapeOfTree(session.tree), false), name).toEqual(fromOutline);
				expect(treeRows(shapeOfTree(session.tree), true), name).toEqual(
					treeRows(shapeOfOutline(session.outline(), session.tree.getLeafId()), true),
				);
			} finally {
				await session.close();
			}
		}
	});

	it("draw a path of 300,000 entries without recursion", () => {
		const count = 300_000;
		const nodes = Array.from({ length: count }, (_, i) => node(i, i === 0 ? null : i - 1, i === count - 1 ? 0 : 1));
		const rows = treeRows(shapeOfOutline(nodes, `e${count - 1}`), false);
		expect(rows.length).toBeLessThan(10);
		expect(treeRows(shapeOfOutline(nodes, `e${count - 1}`), true)).toHaveLength(count);
	});
});
