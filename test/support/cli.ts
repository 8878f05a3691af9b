/**
 * Runs the built `pi-sessions` (dist/cli.js, made by `npm run build`) as a whole process on Node, Bun or
 * Deno, in a home without pi sessions unless the test gives one, without colour.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT: string = new URL("../..", import.meta.url).pathname;
/** The built tool; `PI_SESSIONS_CLI` names another build (one copied aside while dist/ is rebuilt). */
export const CLI: string = process.env.PI_SESSIONS_CLI ?? join(ROOT, "dist", "cli.js");

export type Runtime = "node" | "bun" | "deno";
export const RUNTIMES: readonly Runtime[] = ["node", "bun", "deno"];

const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);

/** The command line that runs `script` with `args` on `runtime`. */
export function runtimeCommand(runtime: Runtime, script: string, args: readonly string[]): [string, string[]] {
	if (runtime === "node") return [process.execPath, [script, ...args]];
	if (runtime === "bun") return [bin("bun"), [script, ...args]];
	return [bin("deno"), ["run", "-A", "--quiet", script, ...args]];
}

export interface CliRun {
	status: number | null;
	stdout: string;
	stderr: string;
}

export interface CliOptions {
	/** Environment added to the process's (HOME defaults to an empty directory: no ~/.pi). */
	env?: Record<string, string>;
	cwd?: string;
	input?: string;
	timeout?: number;
}

let emptyHome: string | undefined;

/** A home directory with nothing in it, made once per test process. */
export function emptyHomeDir(): string {
	if (emptyHome === undefined) {
		const home = mkdtempSync(join(tmpdir(), "pi-sessions-home-"));
		process.once("exit", () => rmSync(home, { recursive: true, force: true }));
		emptyHome = home;
	}
	return emptyHome;
}

export function runCli(runtime: Runtime, args: readonly string[], options: CliOptions = {}): CliRun {
	const [command, commandArgs] = runtimeCommand(runtime, CLI, args);
	const run = spawnSync(command, commandArgs, {
		cwd: options.cwd ?? ROOT,
		encoding: "utf8",
		env: cliEnv(options.env),
		input: options.input,
		timeout: options.timeout ?? 60_000,
		maxBuffer: 256 << 20,
	});
	if (run.error) throw run.error;
	return { status: run.status, stdout: run.stdout, stderr: withoutRuntimeWarnings(run.stderr) };
}

/** The environment of a run: the process's, in a home without pi sessions, no colour, `extra` over it. */
function cliEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
	const env: Record<string, string | undefined> = { ...process.env, HOME: emptyHomeDir(), NO_COLOR: "1", ...extra };
	if (!extra.PI_CODING_AGENT_DIR) delete env.PI_CODING_AGENT_DIR;
	return env;
}

/** Standard error without Node's warnings about experimental features: the runtime's, not the tool's. */
function withoutRuntimeWarnings(stderr: string): string {
	return stderr.replace(/^.*ExperimentalWarning.*\n?(\(Use `node --trace-warnings.*\n?)?/gm, "");
}

/** A run of the CLI whose standard output goes to another command (`reader`, run by `sh`). */
export interface PipedRun {
	/** The CLI's own exit status (not the reader's). */
	status: number;
	/** What the reader wrote. */
	stdout: string;
	/** The CLI's standard error, the runtime's experimental-feature warnings left out. */
	stderr: string;
}

/** Run the CLI with `args` on `runtime`, its standard output piped into `reader` (`head -c 20`, `cat`…). */
export function runCliPiped(runtime: Runtime, args: readonly string[], reader: string): PipedRun {
	const [command, commandArgs] = runtimeCommand(runtime, CLI, args);
	const quoted = [command, ...commandArgs].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ");
	// The CLI's status on a line of its own on standard error, after everything it wrote there.
	const script = `{ ${quoted}; echo "cli-status=$?" >&2; } | ${reader}`;
	const run = spawnSync("sh", ["-c", script], {
		cwd: ROOT,
		encoding: "utf8",
		env: cliEnv(),
		timeout: 60_000,
		maxBuffer: 256 << 20,
	});
	if (run.error) throw run.error;
	const status = /cli-status=(\d+)\n?$/.exec(run.stderr);
	if (!status) throw new Error(`no status of the CLI in its standard error: ${run.stderr}`);
	return {
		status: Number(status[1]),
		stdout: run.stdout,
		stderr: withoutRuntimeWarnings(run.stderr.slice(0, status.index)),
	};
}

/**
 * A stand-in for standard output or error that keeps what is written, as text: a chunk of bytes is copied
 * when written (its writer may write over it once told it was taken, as the real stream tells it).
 */
export function capturedStream(isTTY = false): {
	isTTY: boolean;
	chunks: string[];
	write(chunk: string | Uint8Array, done?: (error?: Error | null) => void): boolean;
	text(): string;
} {
	const chunks: string[] = [];
	return {
		isTTY,
		chunks,
		write(chunk, done) {
			chunks.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
			done?.();
			return true;
		},
		text: () => chunks.join(""),
	};
}
