/**
 * The Node adapter and the pi-compatible facade work unchanged on Node, Bun and Deno: the persistence
 * walk-through (create, append, branch, fork, migrate, list; async engine and synchronous facade) runs
 * on each, in its own temporary agent directory.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;
const bin = (name: string) => join(root, "node_modules", ".bin", name);
const runtimes: [string, string[]][] = [
	["node", [process.execPath, "--import", "tsx", "examples/sessions-on-disk.ts"]],
	["bun", [bin("bun"), "examples/sessions-on-disk.ts"]],
	["deno", [bin("deno"), "run", "-A", "examples/sessions-on-disk.ts"]],
];

describe.each(runtimes)("sessions on disk with %s", (_runtime, [command, ...args]) => {
	it("creates, appends, branches, forks, migrates and lists", () => {
		const agentDir = mkdtempSync(join(tmpdir(), "pi-agent-"));
		try {
			const run = spawnSync(command as string, args, {
				cwd: root,
				encoding: "utf8",
				env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, NO_COLOR: "1" },
				timeout: 120_000,
			});
			expect(run.stderr.replace(/^.*ExperimentalWarning.*$/gm, "").trim()).toBe("");
			expect(run.stdout).not.toContain("✗");
			expect(run.stdout.trim().split("\n").at(-1)).toBe("ok");
			expect(run.status).toBe(0);
		} finally {
			rmSync(agentDir, { recursive: true, force: true });
		}
	});
});
