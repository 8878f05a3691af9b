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
