import { CliError } from "../errors.ts";
import type { RunContext } from "../run-context.ts";

// A placeholder: this command is written next (the tests do not pass it yet).
export async function checkCommand(
	context: RunContext,
	file: string,
	options: { repair: boolean; json: boolean },
): Promise<void> {
	throw new CliError("check: not written yet");
}
