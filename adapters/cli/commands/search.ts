import { CliError } from "../errors.ts";
import type { RunContext } from "../run-context.ts";

// A placeholder: this command is written next (the tests do not pass it yet).
export async function searchCommand(
	context: RunContext,
	query: string,
	options: { all: boolean; cwd?: string; limit: number; json: boolean },
): Promise<void> {
	throw new CliError("search: not written yet");
}
