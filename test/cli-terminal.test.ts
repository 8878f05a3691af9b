/**
 * What `pi-sessions` writes where: colour only on a terminal and never with NO_COLOR, a progress bar
 * only when standard error is a terminal (and cleared after), driven by a real listing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lsCommand } from "../adapters/cli/commands/ls.ts";
import { runContext } from "../adapters/cli/run-context.ts";
import { formatBytes, oneLine, terminalOutput } from "../adapters/cli/terminal.ts";
import { createNodeStorage } from "../adapters/node.ts";
import { Session } from "../src/index.ts";
import { capturedStream, RUNTIMES, runCli } from "./support/cli.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for escape sequences
const ESCAPE = /\x1b\[/;

describe("terminal output", () => {
	it("colours a terminal's output, unless NO_COLOR is set; never a pipe's", () => {
		for (const [tty, env, coloured] of [
			[true, {}, true],
			[true, { NO_COLOR: "1" }, false],
			[false, {}, false],
		] as const) {
			const out = capturedStream(tty);
			terminalOutput(out, capturedStream(false), env).line(
				terminalOutput(out, capturedStream(false), env).color.cyan("id"),
			);
			expect(ESCAPE.test(out.text()), JSON.stringify({ tty, env })).toBe(coloured);
		}
	});

	it("draws progress on a terminal's standard error only, and clears it at the end", () => {
		const tty = capturedStream(true);
		const bar = terminalOutput(capturedStream(false), tty, {}).progress("listing");
		bar.update(3, 12);
		bar.update(12, 12);
		bar.end();
		expect(tty.text()).toContain("listing [######------------------] 3/12");
		expect(tty.text()).toContain("12/12");
		expect(tty.text().endsWith("\r\x1b[2K")).toBe(true);
		const pipe = capturedStream(false);
		const none = terminalOutput(capturedStream(false), pipe, {}).progress("listing");
		none.update(1, 2);
		none.end();
		expect(pipe.text()).toBe("");
	});

	it("a real listing drives the bar, and its rows go to standard output", async () => {
		const root = mkdtempSync(join(tmpdir(), "pi-sessions-progress-"));
		try {
			const storage = createNodeStorage();
			for (let index = 0; index < 3; index++) {
				const session = await Session.create(storage, { cwd: "/p", sessionDir: join(root, "--p--") });
				await session.appendMessage({ role: "user", content: `hello ${index}`, timestamp: Date.now() });
				await session.close();
			}
			const stdout = capturedStream(false);
			const stderr = capturedStream(true);
			const context = runContext({ dir: root, catalog: false }, terminalOutput(stdout, stderr, {}));
			await lsCommand(context, { all: true, json: false });
			expect(stderr.text()).toContain("3/3");
			expect(
				stdout
					.text()
					.match(/hello \d/g)
					?.sort(),
			).toEqual(["hello 0", "hello 1", "hello 2"]);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it("makes every line printable: a session's escape sequences are shown, never sent; colours still work", () => {
		const out = capturedStream(true);
		const output = terminalOutput(out, capturedStream(false), {});
		const hostile = "a\x1b]52;c;cGF5bG9hZA==\x07b\x1b[2Jc\u009bd\u202ee\tf";
		output.line(`${output.color.cyan(hostile)} ${output.color.bold(output.color.dim("x"))}`);
		const text = out.text();
		expect(text).toContain("a\\u001b]52;c;cGF5bG9hZA==\\u0007b\\u001b[2Jc\\u009bd\\u202ee\tf");
		const sgr = new RegExp(`${ESCAPE.source}[0-9]+m`, "g");
		expect(text.match(sgr)).toEqual(["\x1b[36m", "\x1b[39m", "\x1b[1m", "\x1b[2m", "\x1b[22m", "\x1b[1m", "\x1b[22m"]);
		// Only colour codes may remain.
		expect(text.replace(sgr, "")).not.toMatch(TERMINAL_CONTROL);
		const plain = capturedStream(true);
		terminalOutput(plain, capturedStream(false), { NO_COLOR: "1" }).line(output.color.red("r"));
		expect(plain.text()).toBe("r\n");
	});

	it("writes JSON as it is to a pipe, and escaped but the same JSON on a terminal; a session's colour markers stay text", () => {
		const value = { text: "a\u001b[2Jb\u009bc\u202ed\u2028e\ue00036\ue001f", n: [1, 2] };
		const pipe = capturedStream(false);
		terminalOutput(pipe, capturedStream(false), {}).json(value);
		expect(pipe.text()).toBe(`${JSON.stringify(value, null, 2)}\n`);
		const tty = capturedStream(true);
		terminalOutput(tty, capturedStream(false), {}).json(value);
		expect(tty.text()).not.toMatch(TERMINAL_CONTROL);
		expect(tty.text()).toContain("\\u009b");
		expect(JSON.parse(tty.text())).toEqual(value);
	});

	it("settles a write of JSON bytes once its stream has taken them, and fails with the stream's error", async () => {
		let taken: (() => void) | undefined;
		const written: string[] = [];
		const slow = {
			write(chunk: string | Uint8Array, done?: (error?: Error | null) => void) {
				written.push(Buffer.from(chunk).toString());
				taken = () => done?.();
				return false;
			},
		};
		let settled = false;
		const writing = terminalOutput(slow, capturedStream(false), {})
			.jsonBytes(Buffer.from("[1]\n"))
			.then(() => {
				settled = true;
			});
		await new Promise((resolve) => setTimeout(resolve, 5));
		expect([written, settled]).toEqual([["[1]\n"], false]);
		taken?.();
		await writing;
		expect(settled).toBe(true);
		const broken = {
			write: (_chunk: unknown, done?: (error?: Error | null) => void) => done?.(new Error("EPIPE here")),
		};
		await expect(terminalOutput(broken, capturedStream(false), {}).jsonBytes(Buffer.from("[]"))).rejects.toThrow(
			"EPIPE here",
		);
	});

	it("one line, and sizes", () => {
		expect(oneLine("a\n\tb  c", 10)).toBe("a b c");
		expect(oneLine("abcdefghijkl", 5)).toBe("abcd…");
		expect([formatBytes(12), formatBytes(2048), formatBytes(5 * 1024 ** 3)]).toEqual(["12 B", "2.0 KB", "5.0 GB"]);
	});
});

/** A session whose every text field carries escape sequences (as bash output does, and as a crafted file may). */
function escapingSession(dir: string): string {
	const esc = (word: string) => `${word}\x1b]0;TITLE\x07\x1b]52;c;cGF5bG9hZA==\x07\x1b[2J\u009b31m\u202e`;
	const time = "2026-01-01T00:00:00.000Z";
	const lines = [
		{ type: "session", version: 3, id: "e5c0e5c0-0000-4000-8000-000000000000", timestamp: time, cwd: esc("/cwd") },
		{
			type: "message",
			id: "a1",
			parentId: null,
			timestamp: time,
			message: { role: "user", content: esc("needle"), timestamp: 0 },
		},
		{
			type: "message",
			id: esc("b2"),
			parentId: "a1",
			timestamp: time,
			message: {
				role: "assistant",
				content: [{ type: "text", text: esc("needle answer") }],
				usage: { input: 1, output: 1 },
				timestamp: 0,
			},
		},
		{ type: "session_info", id: "c3", parentId: esc("b2"), timestamp: time, name: esc("name") },
		{ type: "label", id: "d4", parentId: "c3", timestamp: time, targetId: "a1", label: esc("label") },
		{
			type: "compaction",
			id: "e5",
			parentId: "d4",
			timestamp: time,
			summary: esc("summary"),
			firstKeptEntryId: "a1",
			tokensBefore: 1,
		},
	];
	const project = join(dir, "--cwd--");
	mkdirSync(project, { recursive: true });
	const path = join(project, "2026-01-01T00-00-00-000Z_e5c0e5c0-0000-4000-8000-000000000000.jsonl");
	writeFileSync(path, `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
	return path;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: what a terminal acts on
const TERMINAL_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

describe.each(RUNTIMES)("a session full of escape sequences, on %s", (runtime) => {
	it("reaches no terminal through any command: every control character is shown as \\uXXXX", () => {
		const agentDir = mkdtempSync(join(tmpdir(), "pi-sessions-escapes-"));
		// The sessions root inside it: the listing catalog goes beside the root, so inside the temporary directory too.
		const dir = join(agentDir, "sessions");
		try {
			const path = escapingSession(dir);
			const commands = [
				["ls", "--all"],
				["tree", path],
				["tree", path, "--full"],
				["context", path],
				["show", path, "a1"],
				["stats", path],
				["search", "--all", "needle"],
				["check", path],
			];
			for (const args of commands) {
				const run = runCli(runtime, [...args, "--dir", dir]);
				expect(run.stdout.length, args.join(" ")).toBeGreaterThan(0);
				expect(run.stdout, args.join(" ")).not.toMatch(TERMINAL_CONTROL);
				expect(run.stderr, args.join(" ")).not.toMatch(TERMINAL_CONTROL);
			}
			expect(runCli(runtime, ["context", path]).stdout).toContain("needle\\u001b]0;TITLE\\u0007");
		} finally {
			rmSync(agentDir, { recursive: true, force: true });
		}
	});
});
