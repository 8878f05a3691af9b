/**
 * The one error kind the command-line tool reports as it is: a message for its user, printed as one line on
 * standard error with exit status 1 (2 for a command line it cannot read).
 * @module
 */
export class CliError extends Error {
	override readonly name = "CliError";
	readonly exitCode: number;
	constructor(message: string, exitCode = 1) {
		super(message);
		this.exitCode = exitCode;
	}
}

/**
 * Whether `error` says standard output's reader went away (`pi-sessions ls --json | head`): `EPIPE`, or an
 * error named `BrokenPipe` (Deno's name for it), should a runtime throw it from the write or reject the
 * write with it rather than emit it on the stream. A pipeline expects the writer to stop quietly then.
 */
export function isBrokenPipe(error: unknown): boolean {
	if (typeof error !== "object" || error === null) return false;
	const { code, name } = error as { code?: unknown; name?: unknown };
	return code === "EPIPE" || name === "BrokenPipe";
}
