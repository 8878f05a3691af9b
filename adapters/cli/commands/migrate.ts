import { CliError } from "../errors.ts";
import type { RunContext } from "../run-context.ts";

// A placeholder: this command is written next (the tests do not pass it yet).
export async function migrateCommand(context: RunContext, file: string): Promise<void> {
	throw new CliError("migrate: not written yet");
}
