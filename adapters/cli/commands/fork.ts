import { CliError } from "../errors.ts";
import type { RunContext } from "../run-context.ts";

// A placeholder: this command is written next (the tests do not pass it yet).
export async function forkCommand(
	context: RunContext,
	name: string,
	options: { leaf?: string; to?: string },
): Promise<void> {
	throw new CliError("fork: not written yet");
}
