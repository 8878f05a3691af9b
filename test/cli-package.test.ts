/**
 * The package as a new user gets it: `npm pack` of this build, installed from the tarball into an empty
 * project (dependencies from the npm registry or npm's cache), then the tool run the ways the README
 * says: `npx pi-sessions`, `npx pi-session-tree` (the package's one bin), `bunx pi-sessions` and
 * `deno run -A npm:pi-session-tree`, each in a home without pi sessions, so over the samples the tarball
 * carries. Needs `npm run build` first (npm test builds).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptyHomeDir, ROOT } from "./support/cli.ts";

let work: string;
let project: string;

function run(command: string, args: readonly string[], cwd: string, timeout = 120_000) {
	const result = spawnSync(command, args, {
		cwd,
		encoding: "utf8",
		env: { ...process.env, HOME: emptyHomeDir(), NO_COLOR: "1", PI_CODING_AGENT_DIR: "" },
		timeout,
	});
	if (result.error) throw result.error;
	return result;
}

beforeAll(() => {
	work = mkdtempSync(join(tmpdir(), "pi-sessions-package-"));
	const pack = run("npm", ["pack", "--silent", "--pack-destination", work], ROOT);
	expect(pack.status, pack.stderr).toBe(0);
	const [tarball] = readdirSync(work).filter((name) => name.endsWith(".tgz"));
	project = join(work, "project");
	mkdirSync(project);
	writeFileSync(join(project, "package.json"), JSON.stringify({ name: "a-new-user", private: true }));
	const install = run(
		"npm",
		["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", join(work, tarball as string)],
		project,
		300_000,
	);
	expect(install.status, install.stderr).toBe(0);
}, 360_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);

describe("pi-sessions installed from the packed tarball", () => {
	const ways: [string, string, string[]][] = [
		["npx pi-sessions", "npx", ["--no-install", "pi-sessions"]],
		["npx pi-session-tree", "npx", ["--no-install", "pi-session-tree"]],
		["bunx pi-sessions", bin("bun"), ["x", "pi-sessions"]],
		["deno run -A npm:pi-session-tree", bin("deno"), ["run", "-A", "--quiet", "npm:pi-session-tree"]],
	];
	for (const [name, command, args] of ways) {
		it(`${name} lists the bundled samples and draws one's tree`, () => {
			const ls = run(command, [...args, "ls", "--all"], project);
			expect(ls.stderr).toContain("showing the sample sessions");
			expect(ls.stdout).toContain("Blog: dark mode");
			expect(ls.status).toBe(0);
			const tree = run(command, [...args, "tree", "66bcd527"], project);
			expect(tree.stdout).toMatch(/← leaf/);
			expect(tree.status).toBe(0);
		});
	}
});
