/**
 * `pi-sessions`: its commands and their options (the command-line reference, in one place), and the
 * way a run ends: answers on standard output, one line on standard error and a non-zero status for an
 * error (2 for a command line that cannot be read), `--help` on every command.
 * @module
 */
import { type ArgsDef, type CommandDef, defineCommand, renderUsage, runCommand } from "citty";
import { checkCommand } from "./commands/check.ts";
import { contextCommand } from "./commands/context.ts";
import { exportCommand } from "./commands/export.ts";
import { forkCommand } from "./commands/fork.ts";
import { lsCommand } from "./commands/ls.ts";
import { migrateCommand } from "./commands/migrate.ts";
import { searchCommand } from "./commands/search.ts";
import { showCommand } from "./commands/show.ts";
import { statsCommand } from "./commands/stats.ts";
import { treeCommand } from "./commands/tree.ts";
import { unlockCommand } from "./commands/unlock.ts";
import { CliError, isBrokenPipe } from "./errors.ts";
import { type RunContext, runContext } from "./run-context.ts";
import { type Output, terminalOutput } from "./terminal.ts";

export const VERSION = "0.1.0";

/** Where sessions are looked for: every command takes these. */
const placeArgs = {
	dir: {
		type: "string",
		valueHint: "SESSIONS_DIR",
		description:
			"sessions root (one directory per project); default $PI_CODING_AGENT_DIR/sessions or ~/.pi/agent/sessions",
	},
	samples: { type: "boolean", description: "use the sample sessions bundled with the package" },
	catalog: {
		type: "boolean",
		default: true,
		negativeDescription: "do not read or write the listing catalog",
		description: "keep a listing catalog beside the sessions root",
	},
} as const satisfies ArgsDef;

const json = { type: "boolean", description: "print JSON (stable, documented in the README)" } as const;
const session = {
	type: "positional",
	valueHint: "FILE|ID",
	description: "a session file, or a session id or unique id prefix",
} as const;
const leaf = {
	type: "string",
	valueHint: "ID",
	description: "the leaf to read from (default: the session's current leaf)",
} as const;

type Placed<A extends ArgsDef> = A & typeof placeArgs;

/** A command with the place options, run with its context. */
function command<A extends ArgsDef>(
	description: string,
	args: A,
	run: (context: RunContext, args: Record<string, unknown>) => Promise<void>,
	output: () => Output,
): CommandDef<Placed<A>> {
	const all = { ...args, ...placeArgs } as Placed<A>;
	return defineCommand({
		meta: { description },
		args: all,
		run: async ({ args: parsed, rawArgs }) => {
			rejectUnknownOptions(rawArgs, all);
			const positionals = Object.values(all).filter((def) => def.type === "positional").length;
			const extra = (parsed._ as string[]).slice(positionals);
			if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"`, 2);
			const values = parsed as unknown as Record<string, unknown>;
			const context = runContext(
				{ dir: values.dir as string | undefined, samples: values.samples === true, catalog: values.catalog !== false },
				output(),
			);
			await run(context, values);
		},
	});
}

/** citty reads options loosely; a misspelt one must not be taken for nothing. */
function rejectUnknownOptions(rawArgs: readonly string[], args: ArgsDef): void {
	const known = new Map<string, boolean>(); // name → whether it takes a value
	for (const [name, def] of Object.entries(args)) {
		if (def.type === "positional") continue;
		const takesValue = def.type === "string" || def.type === "enum";
		for (const alias of [name, ...[("alias" in def ? def.alias : undefined) ?? []].flat()])
			known.set(alias, takesValue);
		if (def.type === "boolean") known.set(`no-${name}`, false);
	}
	for (let index = 0; index < rawArgs.length; index++) {
		const raw = rawArgs[index] as string;
		if (raw === "--") return;
		if (!raw.startsWith("-") || raw === "-") continue;
		const [name, value] = raw.replace(/^--?/, "").split("=", 2) as [string, string | undefined];
		const takesValue = known.get(name);
		if (takesValue === undefined) throw new CliError(`unknown option ${raw.split("=")[0]}`, 2);
		if (takesValue && value === undefined) index++; // its value may start with "-"
	}
}

function integer(value: unknown, name: string): number | undefined {
	if (value === undefined) return undefined;
	const number = /^\d+$/.test(String(value)) ? Number(value) : Number.NaN;
	if (!Number.isSafeInteger(number)) throw new CliError(`--${name} takes a whole number, not "${value}"`, 2);
	return number;
}

function text(value: unknown): string | undefined {
	return value === undefined ? undefined : String(value);
}

export function program(output: () => Output = () => terminalOutput()): CommandDef {
	return defineCommand({
		meta: {
			name: "pi-sessions",
			version: VERSION,
			description: "Look into pi's sessions: list, read, search, fork, repair, export",
		},
		subCommands: {
			ls: command(
				"list sessions, newest first (those of this directory's project unless --all or --cwd)",
				{
					all: { type: "boolean", description: "every project's sessions" },
					cwd: { type: "string", valueHint: "DIR", description: "the sessions of the project in DIR" },
					json,
				},
				(context, args) =>
					lsCommand(context, { all: args.all === true, cwd: text(args.cwd), json: args.json === true }),
				output,
			),
			tree: command(
				"the tree of a session: branches, labels, the leaf, compactions, summaries and context edits",
				{
					session,
					full: { type: "boolean", description: "show every entry (long linear runs are collapsed otherwise)" },
					json,
				},
				(context, args) =>
					treeCommand(context, String(args.session), { full: args.full === true, json: args.json === true }),
				output,
			),
			context: command(
				"what would be sent to the model from a leaf (pi 1.6's buildSessionContext)",
				{ session, leaf, last: { type: "string", valueHint: "N", description: "only the last N messages" }, json },
				(context, args) =>
					contextCommand(context, String(args.session), {
						leaf: text(args.leaf),
						last: integer(args.last, "last"),
						json: args.json === true,
					}),
				output,
			),
			show: command(
				"one entry of a session",
				{ session, entry: { type: "positional", valueHint: "ENTRY_ID", description: "the entry's id" }, json },
				(context, args) => showCommand(context, String(args.session), String(args.entry), { json: args.json === true }),
				output,
			),
			stats: command(
				"entries by kind, branches, depth, compactions, tokens and cost, bytes, the largest entries",
				{ session, json },
				(context, args) => statsCommand(context, String(args.session), { json: args.json === true }),
				output,
			),
			search: command(
				"find text in the messages of sessions (this directory's project unless --all or --cwd)",
				{
					query: { type: "positional", valueHint: "QUERY", description: "the text to find (case-insensitive)" },
					all: { type: "boolean", description: "search every project's sessions" },
					cwd: { type: "string", valueHint: "DIR", description: "search the sessions of the project in DIR" },
					limit: { type: "string", valueHint: "N", description: "at most N matches (default 50)" },
					json,
				},
				(context, args) =>
					searchCommand(context, String(args.query), {
						all: args.all === true,
						cwd: text(args.cwd),
						limit: integer(args.limit, "limit") ?? 50,
						json: args.json === true,
					}),
				output,
			),
			fork: command(
				"a new session holding the path to a leaf (default the current one), for this or another directory",
				{
					session,
					leaf,
					to: {
						type: "string",
						valueHint: "CWD",
						description: "the working directory of the new session (default: the source's)",
					},
				},
				(context, args) => forkCommand(context, String(args.session), { leaf: text(args.leaf), to: text(args.to) }),
				output,
			),
			migrate: command(
				"rewrite an older session file in the current version (the original kept as a backup)",
				{ file: { type: "positional", valueHint: "FILE", description: "the session file" } },
				(context, args) => migrateCommand(context, String(args.file)),
				output,
			),
			check: command(
				"report every problem of a session file, line by line; --repair fixes what is safe, with a backup",
				{
					file: { type: "positional", valueHint: "FILE", description: "the session file" },
					repair: { type: "boolean", description: "repair what is safe to repair (the original kept as a backup)" },
					json,
				},
				(context, args) =>
					checkCommand(context, String(args.file), { repair: args.repair === true, json: args.json === true }),
				output,
			),
			unlock: command(
				"who holds a session's writer lock; remove it if its holder is gone (--force: even if it may run)",
				{
					file: { type: "positional", valueHint: "FILE", description: "the session file (or its .lock file)" },
					force: {
						type: "boolean",
						description: "remove the lock even when its holder may still run (another machine's), with a warning",
					},
				},
				(context, args) => unlockCommand(context, String(args.file), { force: args.force === true }),
				output,
			),
			export: command(
				"a session's branch as Markdown, a self-contained HTML page, or JSONL",
				{
					session,
					format: { type: "enum", options: ["md", "html", "jsonl"], default: "md", description: "md, html or jsonl" },
					leaf,
					output: {
						type: "string",
						alias: "o",
						valueHint: "OUT",
						description: "write to OUT (refuses an existing file) instead of standard output",
					},
				},
				(context, args) =>
					exportCommand(context, String(args.session), {
						format: String(args.format) as "md" | "html" | "jsonl",
						leaf: text(args.leaf),
						output: text(args.output),
					}),
				output,
			),
		},
	});
}

/** Runs the tool on `argv` (without the runtime and script) and gives the exit status. */
export async function main(argv: readonly string[], output: () => Output = () => terminalOutput()): Promise<number> {
	const root = program(output);
	const rawArgs = [...argv];
	try {
		const options = rawArgs.includes("--") ? rawArgs.slice(0, rawArgs.indexOf("--")) : rawArgs;
		const help = options.some((arg) => arg === "--help" || arg === "-h");
		if (rawArgs.length === 1 && (rawArgs[0] === "--version" || rawArgs[0] === "-v")) {
			output().line(VERSION);
			return 0;
		}
		if (help || rawArgs.length === 0) {
			output().line(await usageOf(root, rawArgs));
			return 0;
		}
		await runCommand(root, { rawArgs });
		return 0;
	} catch (error) {
		if (isBrokenPipe(error)) return 0;
		const out = output();
		if (error instanceof CliError) {
			out.note(`pi-sessions: ${error.message}`);
			return error.exitCode;
		}
		if (error instanceof Error && error.name === "CLIError") {
			// citty's own: a command line it cannot read.
			out.note(`pi-sessions: ${stripColor(error.message)} (see pi-sessions --help)`);
			return 2;
		}
		out.note(`pi-sessions: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
		return 1;
	}
}

async function usageOf(root: CommandDef, rawArgs: readonly string[]): Promise<string> {
	const name = rawArgs.find((arg) => !arg.startsWith("-"));
	const subCommands = root.subCommands as Record<string, CommandDef> | undefined;
	const sub = name !== undefined ? subCommands?.[name] : undefined;
	if (name !== undefined && !sub) throw new CliError(`unknown command ${name} (see pi-sessions --help)`, 2);
	const usage = sub
		? await renderUsage({ ...sub, meta: { ...(sub.meta as object), name } }, root)
		: await renderUsage(root);
	return stripColor(usage);
}

// citty colours its usage unless CI or NO_COLOR is set; ours follows the terminal rule of terminal.ts.
function stripColor(text: string): string {
	// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape sequences themselves
	return text.replace(/\x1b\[[0-9;]*m/g, "");
}
