/**
 * The examples, each run as a whole process on its runtime against the built package (`npm run build`):
 * examples/node/worker.ts on Node (the engine in a worker, in a temporary agent directory), and
 * examples/bun/recent.ts and examples/deno/recent.ts (Deno allowed to read and see the environment only)
 * over a home without pi sessions (they fall back to the bundled samples) and over a generated agent
 * directory, which they must list newest first with the size of each context, and leave exactly as it was.
 */
import { spawnSync } from "node:child_process";
import {
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import {
	encodeCwd,
	encodeEntry,
	listAllSessions,
	messageText,
	Session,
	SessionTree,
	sessionFileName,
} from "../src/index.ts";
import { smallUsage } from "./support/messages.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SAMPLES = join(ROOT, "dist", "samples", "sessions");
const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);
const temporaries: string[] = [];
const temporary = (prefix: string) => {
	const dir = mkdtempSync(join(tmpdir(), prefix));
	temporaries.push(dir);
	return dir;
};
afterAll(() => {
	for (const dir of temporaries) rmSync(dir, { recursive: true, force: true });
});

interface Run {
	status: number | null;
	stdout: string;
	stderr: string;
}

/** Run a command in the repository with HOME set to `home` and, if given, PI_CODING_AGENT_DIR. */
function run(command: string[], home: string, agentDir?: string): Run {
	const env: Record<string, string | undefined> = { ...process.env, HOME: home, NO_COLOR: "1" };
	delete env.PI_CODING_AGENT_DIR;
	if (agentDir !== undefined) env.PI_CODING_AGENT_DIR = agentDir;
	const [file, ...args] = command;
	const result = spawnSync(file as string, args, { cwd: ROOT, encoding: "utf8", env, timeout: 120_000 });
	if (result.error) throw result.error;
	// Node's warnings about experimental features are the runtime's, not the example's.
	const stderr = result.stderr.replace(/^.*ExperimentalWarning.*\n?(\(Use `node --trace-warnings.*\n?)?/gm, "");
	return { status: result.status, stdout: result.stdout, stderr };
}

/** Every file and directory under `dir` with its size and modification time, to compare before and after. */
function snapshot(dir: string): string[] {
	const rows: string[] = [];
	const walk = (path: string, name: string) => {
		const stat = statSync(path);
		rows.push(`${name} ${stat.isDirectory() ? "dir" : stat.size} ${stat.mtimeMs}`);
		if (stat.isDirectory()) for (const child of readdirSync(path).sort()) walk(join(path, child), `${name}/${child}`);
	};
	walk(dir, ".");
	return rows;
}

describe("examples/node/worker.ts on Node", () => {
	it("creates, appends, branches, compacts and forks in a worker, and prints the tree and the context", async () => {
		const agentDir = temporary("pi-example-worker-");
		const result = run([process.execPath, "--import", "tsx", "examples/node/worker.ts"], temporary("home-"), agentDir);
		expect(result.stderr.trim()).toBe("");
		expect(result.status).toBe(0);
		const out = result.stdout;
		expect(out).toMatch(/^session [0-9a-f-]{36} "Failing due-date tests": 14 entries$/m);

		// The first tree: one branch point (the diagnosis) with two ways on, the leaf at the end of the second.
		const firstTree = out.slice(out.indexOf("\n\n") + 2, out.indexOf("\n\ncontext of the leaf"));
		const rows = firstTree.split("\n");
		expect(rows).toHaveLength(14);
		expect(rows[4]).toMatch(/^[0-9a-f]{8} assistant \[diagnosis\]: One: due-date parsing/);
		expect(rows.filter((row) => row.startsWith("├─ ") || row.startsWith("└─ "))).toHaveLength(2);
		expect(rows.filter((row) => row.endsWith("← leaf"))).toEqual([expect.stringMatching(/^ {3}\S+ name: Failing/)]);
		expect(out).toContain("tool result: bash: FAIL test/due-date.test.ts");

		// The context: the compaction's summary first, then what it kept, then what came after it.
		const context = out.slice(out.indexOf("context of the leaf"), out.indexOf("\n\nforked into")).split("\n");
		expect(context[0]).toBe("context of the leaf: 5 messages, model claude-sonnet-4-5");
		expect(context.slice(1).map((line) => line.trim().split(":")[0])).toEqual([
			"compactionSummary",
			"user",
			"assistant",
			"user",
			"assistant",
		]);

		// The files it wrote: the session, its fork (pointing back at it) and a copy in another project.
		const original = /^file: (.+)$/m.exec(out)?.[1] as string;
		const forked = /^forked into (.+)$/m.exec(out)?.[1] as string;
		const copied = /^copied into (.+): 14 entries$/m.exec(out)?.[1] as string;
		for (const path of [original, forked, copied]) expect(path.startsWith(join(agentDir, "sessions"))).toBe(true);
		const storage = createNodeStorage();
		const fork = await Session.open(storage, forked, { readOnly: true });
		expect(fork.header.parentSession).toBe(original);
		expect(fork.tree.buildSessionContext().messages.map(messageText).at(-1)).toBe("Explain the bug instead.");
		await fork.close();
		const copy = await Session.open(storage, copied, { readOnly: true });
		expect(copy.header.cwd).toBe("/home/me/todo-app-v2");
		await copy.close();
		const reopened = await Session.open(storage, original, { readOnly: true });
		expect(reopened.tree.buildSessionContext().messages.map((message) => message.role)[0]).toBe("compactionSummary");
		await reopened.close();
		expect(out).toMatch(/^3 sessions in /m);
	});
});

/** A generated session: what its file holds, and what the examples should say about it. */
interface Generated {
	id: string;
	messages: number;
	characters: number;
	note?: string;
}

/**
 * Seven sessions in two projects, active on seven different days, their files' modification times in
 * another order (the listing goes by activity, as pi's does). Among the five newest: a branched session
 * whose leaf is on the short branch, a compacted one, a version 2 file (a normal open would migrate it),
 * one whose last line has no line feed (a normal open would add one) and one with a line that is not JSON.
 */
function writeAgentDir(agentDir: string): Generated[] {
	const generated: Generated[] = [];
	for (let day = 1; day <= 7; day++) {
		const cwd = day % 2 === 0 ? "/home/me/alpha" : "/home/me/beta";
		let time = Date.UTC(2026, 2, day, 9);
		const now = () => {
			time += 60_000; // a minute between entries
			return new Date(time);
		};
		const id = `${day}${day}${day}${day}${day}${day}${day}${day}-0000-4000-8000-00000000000${day}`;
		const tree = SessionTree.create({ cwd, id, now });
		const user = (text: string) => tree.appendMessage({ role: "user", content: text, timestamp: time });
		const assistant = (text: string) =>
			tree.appendMessage({
				role: "assistant",
				content: [{ type: "text", text }],
				api: "anthropic-messages",
				provider: "anthropic",
				model: "claude-sonnet-4-5",
				usage: smallUsage,
				stopReason: "stop",
				timestamp: time,
			});
		let kept = "";
		const turns = day === 6 ? 150 : day; // day 6: a context of more than one page (200 messages)
		for (let turn = 1; turn <= turns; turn++) {
			const question = user(`Question ${turn} of day ${day}?`);
			if (turn === 2) kept = question;
			assistant(`Answer ${turn} of day ${day}: ${"x".repeat(day * 10)}`);
		}
		if (day === 7) {
			// Back to the first answer, one more turn there: the leaf is on the shorter branch.
			const firstAnswer = tree.getEntries()[1]?.id as string;
			tree.branch(firstAnswer);
			user("A different way?");
		}
		if (day === 6) {
			tree.appendCompaction("What happened before the second question.", kept, 1000);
			user("After the compaction.");
		}
		const context = tree.buildSessionContext().messages;
		const lines = [tree.getHeader(), ...tree.getEntries()].map(encodeEntry);
		let note: string | undefined;
		if (day === 5) {
			lines[0] = encodeEntry({ ...tree.getHeader(), version: 2 });
			note = "a version 2 file, read as version 3 in memory";
		}
		if (day === 3) {
			lines.splice(2, 0, "this line is not JSON\n");
			note = "1 bad line(s), the first is line 3";
		}
		let text = lines.join("");
		if (day === 4) text = text.slice(0, -1); // torn: no line feed after the last line
		const dir = join(agentDir, "sessions", encodeCwd(cwd));
		mkdirSync(dir, { recursive: true });
		const path = join(dir, sessionFileName(tree.getHeader().timestamp, id));
		writeFileSync(path, text);
		const mtime = new Date(Date.UTC(2026, 3, 8 - day)); // the oldest activity has the newest file time
		utimesSync(path, mtime, mtime);
		const characters = context.reduce((sum, message) => sum + messageText(message).length, 0);
		generated.push({ id, messages: context.length, characters, ...(note && { note }) });
	}
	return generated.reverse(); // newest first
}

/** What a recent.ts printed: per session, its id prefix, its context size line and its notes. */
function parseRecent(stdout: string): { id: string; context: string; notes: string[] }[] {
	return stdout
		.split("\n\n")
		.slice(1)
		.map((block) => {
			const lines = block.split("\n");
			return {
				id: /^\d+\. \S+ \S+ {2}(\S+) {2}/.exec(lines[0] ?? "")?.[1] ?? `unparsed: ${lines[0]}`,
				context: (lines.find((line) => line.includes("context of the leaf:")) ?? "").trim(),
				notes: lines.filter((line) => line.startsWith("   note: ")).map((line) => line.slice(9)),
			};
		});
}

const recentScripts: [string, string[]][] = [
	["bun", [bin("bun"), "examples/bun/recent.ts"]],
	// Allowed to read files and the environment, nothing else: it could write nothing even if it tried.
	["deno", [bin("deno"), "run", "--allow-read", "--allow-env", "examples/deno/recent.ts"]],
];

describe.each(recentScripts)("examples/%s/recent.ts", (_runtime, command) => {
	let agentDir: string;
	let generated: Generated[];
	beforeAll(() => {
		agentDir = temporary("pi-example-agent-");
		generated = writeAgentDir(agentDir);
	});

	it("lists the five most recent sessions of PI_CODING_AGENT_DIR with their context sizes, changing nothing", () => {
		const before = snapshot(agentDir);
		const result = run(command, temporary("home-"), agentDir);
		expect(result.stderr).toBe("");
		expect(result.status).toBe(0);
		expect(result.stdout).toMatch(
			new RegExp(`^The 5 most recent sessions in ${join(agentDir, "sessions")} \\(read in \\d+ ms\\):\n`),
		);
		const number = (n: number) => n.toLocaleString("en-US");
		expect(parseRecent(result.stdout)).toEqual(
			generated.slice(0, 5).map((session) => ({
				id: session.id.slice(0, 8),
				context: `context of the leaf: ${session.messages} messages, ${number(session.characters)} characters (~${number(Math.ceil(session.characters / 4))} tokens)`,
				notes: session.note ? [session.note] : [],
			})),
		);
		expect(snapshot(agentDir)).toEqual(before);
	});

	it("takes another count", () => {
		const result = run([...command, "2"], temporary("home-"), agentDir);
		expect(result.status).toBe(0);
		expect(parseRecent(result.stdout).map((session) => session.id)).toEqual(
			generated.slice(0, 2).map((session) => session.id.slice(0, 8)),
		);
		const refused = run([...command, "none"], temporary("home-"), agentDir);
		expect(refused.status).toBe(2);
		expect(refused.stderr).toMatch(/^usage: /);
	});

	it("falls back to the bundled samples in a home without pi sessions, and says so on standard error", async () => {
		const home = temporary("home-");
		const before = snapshot(SAMPLES);
		const result = run(command, home);
		expect(result.status).toBe(0);
		expect(result.stderr).toBe(
			`No pi sessions at ${join(home, ".pi", "agent", "sessions")}: showing the sample sessions bundled with pi-session-tree.\n`,
		);
		const samples = await listAllSessions(createNodeStorage(), SAMPLES);
		expect(samples).toHaveLength(4);
		const printed = parseRecent(result.stdout);
		expect(printed.map((session) => session.id)).toEqual(samples.map((session) => session.id.slice(0, 8)));
		for (const session of printed) expect(session.context).toMatch(/^context of the leaf: [1-9]\d* messages, /);
		// The damaged sample and the old versions are reported, not repaired or migrated.
		expect(printed.flatMap((session) => session.notes).sort()).toEqual([
			"1 bad line(s), the first is line 17",
			"a version 1 file, read as version 3 in memory",
			"a version 2 file, read as version 3 in memory",
		]);
		expect(snapshot(SAMPLES)).toEqual(before);
		// Nothing of pi's was made in the home (the runtimes keep their own caches there: .bun, .cache/deno).
		expect(readdirSync(home)).not.toContain(".pi");
	});
});

it("the generated sessions are what the test means (read back whole by the package)", async () => {
	const agentDir = temporary("pi-example-agent-");
	const generated = writeAgentDir(agentDir);
	const listed = await listAllSessions(createNodeStorage(), join(agentDir, "sessions"));
	expect(listed.map((session) => session.id)).toEqual(generated.map((session) => session.id));
	expect(readFileSync(listed[3]?.path as string, "utf8").endsWith("\n")).toBe(false);
});
