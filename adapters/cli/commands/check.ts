/**
 * `check FILE [--repair] [--json]`: every problem of a session file, one per line, with its line number,
 * byte offset, reason, message and excerpt; then a summary line (`<file>: no problems`, or how many and
 * how many `--repair` fixes). See adapters/cli/session-check.ts for what is a problem and what a repair
 * does (drop lines that are not JSON and a torn last line, terminate the last line, migrate an older
 * version; the original kept as `<file>.v<N>.bak` first; entries that parse are never changed).
 *
 * Nothing is written without `--repair` (no lock is taken either). With it, the file is examined again
 * and repaired under its writer lock, and the report says what was done, the backup's path, and what
 * problems are left.
 *
 * Exit status: 0 when the file has no problem (with `--repair`: none is left), 1 when it has. A problem
 * found is reported on standard output (the report, then the summary line) and named in one line on
 * standard error; an error of the tool (no such file, the file locked by another writer) prints nothing
 * on standard output, one line on standard error, and also exits with 1.
 *
 * `--json` prints one object (stable):
 * `{ path, version, currentVersion, entries, problems, repairable, migrationWarnings, repair? }`, where
 * `version` is the file's format version (1 when its header has none; `null` when it is no session),
 * `problems` lists `{ reason, line, byteOffset, excerpt, message, repair }` in file order (`reason` is a
 * diagnostic's reason or one of `old-version`, `missing-final-newline`, `not-a-session`, `empty-file`;
 * `repair` is `"drop-line"`, `"terminate-last-line"`, `"migrate"` or `null` when a repair leaves it),
 * `repairable` says whether `--repair` would change the file. With `--repair`, `repair` is `null` when
 * nothing was to be done, else `{ backupPath, droppedLines, migratedFrom, terminatedLastLine, problems }`,
 * its `problems` being those left after the repair.
 * @module
 */
import { CURRENT_SESSION_VERSION } from "../../../src/index.ts";
import { CliError } from "../errors.ts";
import type { RunContext } from "../run-context.ts";
import { type Examination, examine, type Problem, type RepairDone, repair, repairable } from "../session-check.ts";
import { plural, printable } from "../terminal.ts";
import { refuseSampleFile, withWriterLock } from "../write-guard.ts";

export interface CheckOptions {
	repair: boolean;
	json: boolean;
}

const REPAIR_WORDS: Record<NonNullable<Problem["repair"]>, string> = {
	"drop-line": "--repair drops the line",
	"terminate-last-line": "--repair adds the line feed",
	migrate: `--repair migrates it to version ${CURRENT_SESSION_VERSION}`,
};

export async function checkCommand(context: RunContext, file: string, options: CheckOptions): Promise<void> {
	const path = await context.sessionPath(file);
	let found: Examination;
	let done: RepairDone | undefined;
	let after: Examination | undefined;
	if (options.repair) {
		refuseSampleFile(path);
		[found, done, after] = await withWriterLock(context, path, async () => {
			// Examined under the lock: what is repaired is what the file holds now, and nobody else writes it meanwhile.
			const examination = await examine(context.storage, path);
			const repaired = await repair(context.storage, examination);
			return [examination, repaired, repaired ? await examine(context.storage, path) : examination] as const;
		});
	} else {
		found = await examine(context.storage, path);
	}
	const left = (after ?? found).problems;
	if (options.json) printJson(context, found, options.repair, done, after);
	else printText(context, found, options.repair, done, after);
	if (left.length > 0) {
		const count = `${left.length} ${left.length === 1 ? "problem" : "problems"}`;
		throw new CliError(`${path}: ${count}${options.repair ? " left" : ""} (listed on standard output)`);
	}
}

function printJson(
	context: RunContext,
	found: Examination,
	repairing: boolean,
	done: RepairDone | undefined,
	after: Examination | undefined,
): void {
	const report: Record<string, unknown> = {
		path: found.path,
		version: found.version,
		currentVersion: CURRENT_SESSION_VERSION,
		entries: found.entries,
		problems: found.problems,
		repairable: repairable(found),
		migrationWarnings: found.migrationWarnings,
	};
	if (repairing) report.repair = done ? { ...done, problems: after?.problems ?? [] } : null;
	context.output.json(report);
}

function printText(
	context: RunContext,
	found: Examination,
	repairing: boolean,
	done: RepairDone | undefined,
	after: Examination | undefined,
): void {
	const { output } = context;
	const { color } = output;
	const version = found.version === null ? "no session" : `version ${found.version}`;
	output.line(color.dim(`${found.path}: ${version}, ${plural(found.entries, "entry", "entries")}`));
	for (const problem of found.problems) {
		const fix = problem.repair ? color.green(` [${REPAIR_WORDS[problem.repair]}]`) : "";
		output.line(
			`line ${problem.line} (byte ${problem.byteOffset}): ${color.yellow(problem.reason)}: ${printable(problem.message)}${fix}`,
		);
		output.line(`    ${color.dim(printable(problem.excerpt))}`);
	}
	for (const warning of found.migrationWarnings) output.line(color.dim(`note: migrating it: ${warning}`));
	const fixable = found.problems.filter((problem) => problem.repair !== null).length;
	if (!repairing) {
		if (found.problems.length === 0) {
			output.line(`${found.path}: no problems`);
			return;
		}
		const which = fixable === 0 ? "none repairable" : `${fixable} repairable (pi-sessions check --repair)`;
		output.line(`${found.path}: ${plural(found.problems.length, "problem")}, ${which}`);
		return;
	}
	if (!done) {
		output.line(`nothing to repair: nothing was written`);
	} else {
		const what: string[] = [];
		if (done.droppedLines.length > 0)
			what.push(`dropped ${done.droppedLines.length === 1 ? "line" : "lines"} ${done.droppedLines.join(", ")}`);
		if (done.migratedFrom !== null)
			what.push(`migrated from version ${done.migratedFrom} to ${CURRENT_SESSION_VERSION}`);
		if (done.terminatedLastLine) what.push("added the last line's line feed");
		output.line(`repaired: ${what.join("; ")}`);
		output.line(`the original is kept as ${done.backupPath}`);
	}
	const left = (after ?? found).problems;
	if (left.length === 0) {
		output.line(`${found.path}: no problems${done ? " left" : ""}`);
		return;
	}
	if (done) {
		output.line("left, not repairable:");
		for (const problem of left) {
			output.line(
				`line ${problem.line} (byte ${problem.byteOffset}): ${color.yellow(problem.reason)}: ${printable(problem.message)}`,
			);
		}
	}
	output.line(`${found.path}: ${plural(left.length, "problem")} left, none repairable`);
}
