import { CliError } from "../errors.ts";
import type { RunContext } from "../run-context.ts";

// A placeholder: this command is written next (the tests do not pass it yet).
export async function exportCommand(
	context: RunContext,
	name: string,
	options: { format: "md" | "html" | "jsonl"; leaf?: string; output?: string },
): Promise<void> {
	throw new CliError("export: not written yet");
}
