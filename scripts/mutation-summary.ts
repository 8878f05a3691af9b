/**
 * Summarizes a mutation run (`npm run test:mutation`, StrykerJS's `reports/mutation/mutation.json`) into
 * `reports/mutation/SUMMARY.md`: the score of each module, and every mutant no test noticed, each either
 * explained in `test/MUTANTS.md` (a table: module, the code as written, the mutant's code, why it survives)
 * or listed as unexplained. It exits with 1 when a survivor is unexplained, so a run says plainly whether the
 * rules the tests claim to guard are guarded. `--check` only reads and reports (writes nothing).
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const REPORT = `${ROOT}reports/mutation/mutation.json`;
const SUMMARY = `${ROOT}reports/mutation/SUMMARY.md`;
const EXPLAINED = `${ROOT}test/MUTANTS.md`;

/** The parts of the mutation-testing report schema read here. */
interface Report {
	files: Record<string, { source: string; mutants: Mutant[] }>;
}
interface Position {
	line: number;
	column: number;
}
interface Mutant {
	id: string;
	mutatorName: string;
	replacement?: string;
	status: string;
	location: { start: Position; end: Position };
}

/** A survivor as it is named in test/MUTANTS.md: its module, the code it changes and what it puts there. */
export interface SurvivorKey {
	file: string;
	original: string;
	replacement: string;
}

const DETECTED = new Set(["Killed", "Timeout"]);
const UNDETECTED = new Set(["Survived", "NoCoverage"]);

/** One line of code, whitespace runs as one space: how a survivor is named, whatever the indentation. */
const squash = (text: string): string => text.replace(/\s+/g, " ").trim();

/** The source text between two 1-based line, 1-based column positions. */
function sliceSource(source: string, start: Position, end: Position): string {
	const lines = source.split("\n");
	if (start.line === end.line) return (lines[start.line - 1] ?? "").slice(start.column - 1, end.column - 1);
	const first = (lines[start.line - 1] ?? "").slice(start.column - 1);
	const middle = lines.slice(start.line, end.line - 1);
	const last = (lines[end.line - 1] ?? "").slice(0, end.column - 1);
	return [first, ...middle, last].join("\n");
}

/**
 * Cells of a markdown table row; escaped pipes are undone, and a code cell's one pair of delimiters (double
 * backticks when the code has backticks of its own, as a template literal) is taken off.
 */
function cells(row: string): string[] {
	return row
		.replace(/^\|/, "")
		.replace(/\|\s*$/, "")
		.split(/(?<!\\)\|/)
		.map((cell) =>
			cell
				.trim()
				.replace(/\\\|/g, "|")
				// A code span: one backtick each side, or a longer run and a space (so that the code may hold backticks).
				.replace(
					/^(``+) (.*) \1$|^`(.*)`$/s,
					(_, _run, spaced: string | undefined, single: string) => spaced ?? single,
				),
		);
}

/** The survivors test/MUTANTS.md explains: the rows of its table(s) whose first cell is a module path. */
export function readExplained(text: string): SurvivorKey[] {
	return text
		.split("\n")
		.filter((line) => line.startsWith("| src/"))
		.map((line) => {
			const [file = "", original = "", replacement = ""] = cells(line);
			return { file, original: squash(original), replacement: squash(replacement) };
		});
}

/** A cell of test/MUTANTS.md names code whole, or by its start when it ends with "…" (as SUMMARY.md cuts it). */
const matches = (written: string, actual: string): boolean =>
	written.endsWith("…") ? actual.startsWith(written.slice(0, -1)) : written === actual;

interface FileScore {
	file: string;
	detected: number;
	undetected: number;
	other: number;
}

const score = ({ detected, undetected }: { detected: number; undetected: number }): string =>
	detected + undetected === 0 ? "–" : `${((100 * detected) / (detected + undetected)).toFixed(1)} %`;

function summarize(report: Report, explained: readonly SurvivorKey[]) {
	const scores: FileScore[] = [];
	const survivors: (SurvivorKey & { line: number; mutator: string; status: string; explained: boolean })[] = [];
	const isExplained = (key: SurvivorKey) =>
		explained.some(
			(e) => e.file === key.file && matches(e.original, key.original) && matches(e.replacement, key.replacement),
		);
	for (const [file, { source, mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
		const entry: FileScore = { file, detected: 0, undetected: 0, other: 0 };
		for (const mutant of mutants) {
			if (DETECTED.has(mutant.status)) entry.detected++;
			else if (UNDETECTED.has(mutant.status)) {
				entry.undetected++;
				const key = {
					file,
					original: squash(sliceSource(source, mutant.location.start, mutant.location.end)),
					replacement: squash(mutant.replacement ?? ""),
				};
				survivors.push({
					...key,
					line: mutant.location.start.line,
					mutator: mutant.mutatorName,
					status: mutant.status,
					explained: isExplained(key),
				});
			} else entry.other++;
		}
		scores.push(entry);
	}
	return { scores, survivors };
}

/** A code cell; a text with backticks goes between double ones, as markdown wants. */
function code(text: string): string {
	const shown = (text.length > 90 ? `${text.slice(0, 87)}…` : text).replace(/\|/g, "\\|");
	return shown.includes("`") ? `\`\` ${shown} \`\`` : `\`${shown}\``;
}

function main(): void {
	const check = process.argv.includes("--check");
	const report = JSON.parse(readFileSync(REPORT, "utf8")) as Report;
	const explained = readExplained(readFileSync(EXPLAINED, "utf8"));
	const { scores, survivors } = summarize(report, explained);
	const total = scores.reduce(
		(sum, s) => ({ detected: sum.detected + s.detected, undetected: sum.undetected + s.undetected }),
		{ detected: 0, undetected: 0 },
	);
	const unexplained = survivors.filter((s) => !s.explained);
	const lines = [
		"# Mutation run: summary",
		"",
		"Written by `scripts/mutation-summary.ts` from `mutation.json` (StrykerJS; `npm run test:mutation`). The",
		"score is the share of mutants a test noticed (killed, or timed out); the static mutants (module-level",
		"constants) are not tested. Survivors that stay on purpose are explained in `test/MUTANTS.md`.",
		"",
		"| module | noticed | not noticed | not tested | score |",
		"| --- | ---: | ---: | ---: | ---: |",
		...scores.map((s) => `| ${s.file} | ${s.detected} | ${s.undetected} | ${s.other} | ${score(s)} |`),
		`| **all** | ${total.detected} | ${total.undetected} | ${scores.reduce((n, s) => n + s.other, 0)} | **${score(total)}** |`,
		"",
		`## Survivors: ${survivors.length}, ${unexplained.length} not explained in test/MUTANTS.md`,
		"",
		"| module | line | mutator | code | mutant | explained |",
		"| --- | ---: | --- | --- | --- | --- |",
		...survivors.map(
			(s) =>
				`| ${s.file} | ${s.line} | ${s.mutator}${s.status === "NoCoverage" ? " (no test runs it)" : ""} | ${code(s.original)} | ${code(s.replacement)} | ${s.explained ? "yes" : "**no**"} |`,
		),
		"",
	];
	if (!check) writeFileSync(SUMMARY, lines.join("\n"));
	console.log(`mutation score ${score(total)}: ${total.detected} noticed, ${total.undetected} not`);
	for (const s of scores) console.log(`  ${s.file}: ${score(s)} (${s.undetected} not noticed)`);
	if (unexplained.length > 0) {
		console.log(`${unexplained.length} survivors not explained in test/MUTANTS.md:`);
		for (const s of unexplained) console.log(`  ${s.file}:${s.line} ${s.mutator}: ${s.original} → ${s.replacement}`);
		process.exitCode = 1;
	}
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
