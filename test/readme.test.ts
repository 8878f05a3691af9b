/**
 * Every fenced code block of README.md is checked here, so the README cannot drift from the code.
 *
 * - ```ts blocks are type-checked (one `tsc` run over all of them) and then run, each on its own:
 *   written to a temporary directory inside the repository (`.readme-blocks-*`, removed afterwards) and run
 *   with tsx (`node_modules/.bin/tsx`, what `npx tsx` runs) in a child process, with a timeout; it must exit 0.
 *   `pi-session-tree` and its subpaths resolve to the sources, through tsconfig `paths` built from deno.json's
 *   export map (the subpaths of package.json's, `test/exports.test.ts` keeps them in step), which both tsc
 *   and tsx follow: no build needed, and what runs is the code of this checkout. The child's working
 *   directory, `HOME` and `PI_CODING_AGENT_DIR` are fresh temporary directories, so a block never touches
 *   your real `~/.pi`.
 * - A block that needs values an app would have (a file path, a progress bar) gets them from a hidden
 *   prelude: an HTML comment right before the block. The rest of its first line says what it is; the
 *   lines after it, up to `-->`, are TypeScript put before the block (they must not contain `--`):
 *       <!-- prelude: what this sets up
 *       const path = "/sessions/demo.jsonl";
 *       -->
 * - ```ts no-run marks a block that cannot run on its own (none today): it is type-checked only, and
 *   listed by name in the test report.
 * - ```ts browser marks a block for a page (OPFS exists only there): type-checked here, run in Chromium by
 *   test/e2e/readme-browser.test.ts.
 * - ```sh blocks are not run (`npm test` would run itself): every command must name a real npm script, a
 *   binary in node_modules/.bin, or an existing file. Except `npx pi-sessions …` (the package's own bin):
 *   each such command is run, as the built dist/cli.js, in a home without pi sessions (so over the bundled
 *   samples), and must exit 0 and print something.
 * - Blocks without a language (the layout) must name only files and folders that exist.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./support/cli.ts";
import { type Block, fencedBlocks } from "./support/readme-blocks.ts";

const root = new URL("..", import.meta.url).pathname;
const readme = readFileSync(join(root, "README.md"), "utf8");
const packageJson = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
	scripts: Record<string, string>;
	bin: Record<string, string>;
};
const { scripts } = packageJson;
const denoExports = (JSON.parse(readFileSync(join(root, "deno.json"), "utf8")) as { exports: Record<string, string> })
	.exports;

const blocks = fencedBlocks(readme);
const language = (block: Block): string => block.info[0] ?? "";
const title = (block: Block): string => `README.md:${block.line}`;
const tsBlocks = blocks.filter((block) => language(block) === "ts");
const runnable = tsBlocks.filter((block) => !block.info.includes("no-run") && !block.info.includes("browser"));
const notRun = tsBlocks.filter((block) => block.info.includes("no-run"));
const browserOnly = tsBlocks.filter((block) => block.info.includes("browser"));

/** Paths (`npm start`, `npx tsx x.ts`) in a shell command that does not exist, or commands not known here. */
function shellProblems(command: string): string[] {
	const words = command.trim().split(/\s+/);
	const [program, sub, arg] = words;
	if (program === "npm") {
		if (sub === "ci" || sub === "install" || sub === "i") return [];
		if (sub === "start" || sub === "test") return sub in scripts ? [] : [`no npm script "${sub}"`];
		if (sub === "run" && arg) return arg in scripts ? [] : [`no npm script "${arg}"`];
		return [`npm ${sub}: not a command this test knows`];
	}
	if (program === "npx" && sub && sub in packageJson.bin) return [];
	if (program === "npx" && sub) {
		const problems = existsSync(join(root, "node_modules", ".bin", sub))
			? []
			: [`no binary "${sub}" in node_modules/.bin`];
		for (const word of words.slice(2)) {
			if (/[/.]/.test(word) && !word.startsWith("-") && !existsSync(join(root, word))) problems.push(`no file ${word}`);
		}
		return problems;
	}
	return [`"${program}": not a command this test knows (add a rule to test/readme.test.ts)`];
}

/** Files and folders a layout block names that do not exist: `dir/` at a line's start, `name.ts` within it. */
function layoutProblems(text: string): string[] {
	const problems: string[] = [];
	let folder = "";
	for (const line of text.split("\n")) {
		const head = /^([\w.-]+\/)\s/.exec(line);
		if (head) {
			folder = head[1] as string;
			if (!existsSync(join(root, folder))) problems.push(`no folder ${folder}`);
		}
		for (const [name] of line.matchAll(/[\w.-]+(?:\/[\w.-]+)*\.(?:ts|js|json|md)\b/g)) {
			if (!existsSync(join(root, name)) && !existsSync(join(root, folder, name))) problems.push(`no file ${name}`);
		}
	}
	return problems;
}

describe("README.md code blocks", () => {
	it("are each of a kind this test checks (ts, ts no-run, sh, or no language)", () => {
		expect(blocks.length).toBeGreaterThan(0);
		const unknown = blocks.filter((block) => !["ts", "sh", ""].includes(language(block))).map(title);
		expect(unknown).toEqual([]);
	});

	for (const block of blocks.filter((b) => language(b) === "sh")) {
		it(`${title(block)} (sh): every command names a real npm script, binary or file`, () => {
			const commands = block.code
				.split("\n")
				.map((line) => line.replace(/#.*$/, ""))
				.flatMap((line) => line.split(/&&|\|\||;/))
				.filter((command) => command.trim() !== "");
			expect(commands.length).toBeGreaterThan(0);
			expect(commands.flatMap(shellProblems)).toEqual([]);
		});
	}

	/** The package's own commands in the sh blocks: `npx pi-sessions …`, one line each. */
	const cliCommands = blocks
		.filter((b) => language(b) === "sh")
		.flatMap((block) =>
			block.code
				.split("\n")
				.map((line, index) => ({ block, line: line.replace(/\s+#.*$/, "").trim(), at: block.line + 1 + index })),
		)
		.filter(({ line }) => line.startsWith("npx pi-sessions "));

	it("shows the command-line tool at work (npx pi-sessions …)", () => {
		expect(cliCommands.length).toBeGreaterThan(5);
	});

	for (const { line, at } of cliCommands) {
		it(`README.md:${at} \`${line}\` runs over the bundled samples and exits 0`, () => {
			const args = line
				.slice("npx pi-sessions ".length)
				.split(/\s+/)
				.map((word) => word.replace(/^"(.*)"$/, "$1"));
			const run = runCli("node", args);
			expect(`exit ${run.status}\n${run.stderr}`).toMatch(/^exit 0\n/);
			expect(run.stdout.trim()).not.toBe("");
		});
	}

	for (const block of blocks.filter((b) => language(b) === "")) {
		it(`${title(block)} (layout): every file and folder it names exists`, () => {
			expect(layoutProblems(block.code)).toEqual([]);
		});
	}

	describe("ts blocks", () => {
		const dir = mkdtempSync(join(root, ".readme-blocks-"));
		const sandbox = mkdtempSync(join(tmpdir(), "readme-run-"));
		afterAll(() => {
			rmSync(dir, { recursive: true, force: true });
			rmSync(sandbox, { recursive: true, force: true });
		});
		const paths = Object.fromEntries(
			Object.entries(denoExports).map(([subpath, source]) => [
				subpath === "." ? "pi-session-tree" : `pi-session-tree/${subpath.slice(2)}`,
				[join(root, source)],
			]),
		);
		const tsconfig = join(dir, "tsconfig.json");
		writeFileSync(
			tsconfig,
			JSON.stringify({
				extends: "../tsconfig.json",
				compilerOptions: { paths },
				include: ["*.ts", "../src/**/*.d.ts", "../adapters/**/*.d.ts"],
			}),
		);
		const fileOf = (block: Block) => join(dir, `readme-line-${block.line}.ts`);
		for (const block of tsBlocks) {
			const prelude = block.prelude ? `${block.prelude}\n// ── README.md:${block.line} ──\n` : "";
			writeFileSync(fileOf(block), `${prelude}${block.code}\n`);
		}

		it("all type-check against the sources (tsc; prelude lines come first in each file)", () => {
			expect(tsBlocks.length).toBeGreaterThan(0);
			const tsc = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", tsconfig], {
				cwd: root,
				encoding: "utf8",
				timeout: 120_000,
			});
			expect(`${tsc.stdout}${tsc.stderr}`.trim()).toBe("");
			expect(tsc.status).toBe(0);
		}, 150_000);

		for (const block of notRun) {
			it(`${title(block)} is marked no-run: type-checked above, not run`, () => {
				expect(readFileSync(fileOf(block), "utf8")).toContain(block.code);
			});
		}

		for (const block of browserOnly) {
			it(`${title(block)} is a browser block: type-checked above, run in Chromium by test/e2e/readme-browser.test.ts`, () => {
				expect(readFileSync(fileOf(block), "utf8")).toContain(block.code);
			});
		}

		for (const block of runnable) {
			it(`${title(block)} runs (tsx) and exits 0`, () => {
				const home = mkdtempSync(join(sandbox, "home-"));
				const run = spawnSync(join(root, "node_modules/.bin/tsx"), ["--tsconfig", tsconfig, fileOf(block)], {
					cwd: mkdtempSync(join(sandbox, "cwd-")),
					encoding: "utf8",
					env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent"), NO_COLOR: "1" },
					timeout: 60_000,
				});
				const output = `exit ${run.status ?? run.signal}\n${run.stderr}`;
				expect(output.replace(/^.*ExperimentalWarning.*$/gm, "").trim()).toBe("exit 0");
			}, 90_000);
		}
	});
});
