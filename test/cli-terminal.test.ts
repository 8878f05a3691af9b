/**
 * What `pi-sessions` writes where: colour only on a terminal and never with NO_COLOR, a progress bar
 * only when standard error is a terminal (and cleared after), driven by a real listing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lsCommand } from "../adapters/cli/commands/ls.ts";
import { runContext } from "../adapters/cli/run-context.ts";
import { formatBytes, oneLine, terminalOutput } from "../adapters/cli/terminal.ts";
import { createNodeStorage } from "../adapters/node.ts";
import { Session } from "../src/index.ts";

function stream(isTTY: boolean) {
	const chunks: string[] = [];
	return { chunks, write: (text: string) => chunks.push(text), isTTY, text: () => chunks.join("") };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for escape sequences
const ESCAPE = /\x1b\[/;

describe("terminal output", () => {
	it("colours a terminal's output, unless NO_COLOR is set; never a pipe's", () => {
		for (const [tty, env, coloured] of [
			[true, {}, true],
			[true, { NO_COLOR: "1" }, false],
			[false, {}, false],
		] as const) {
			const out = stream(tty);
			terminalOutput(out, stream(false), env).line(terminalOutput(out, stream(false), env).color.cyan("id"));
			expect(ESCAPE.test(out.text()), JSON.stringify({ tty, env })).toBe(coloured);
		}
	});

	it("draws progress on a terminal's standard error only, and clears it at the end", () => {
		const tty = stream(true);
		const bar = terminalOutput(stream(false), tty, {}).progress("listing");
		bar.update(3, 12);
		bar.update(12, 12);
		bar.end();
		expect(tty.text()).toContain("listing [######------------------] 3/12");
		expect(tty.text()).toContain("12/12");
		expect(tty.text().endsWith("\r\x1b[2K")).toBe(true);
		const pipe = stream(false);
		const none = terminalOutput(stream(false), pipe, {}).progress("listing");
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
			const stdout = stream(false);
			const stderr = stream(true);
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

	it("one line, and sizes", () => {
		expect(oneLine("a\n\tb  c", 10)).toBe("a b c");
		expect(oneLine("abcdefghijkl", 5)).toBe("abcd…");
		expect([formatBytes(12), formatBytes(2048), formatBytes(5 * 1024 ** 3)]).toEqual(["12 B", "2.0 KB", "5.0 GB"]);
	});
});
