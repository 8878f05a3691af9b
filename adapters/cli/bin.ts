#!/usr/bin/env node
/**
 * The `pi-sessions` executable (package.json's `bin`), for Node, Bun and Deno.
 * @module
 */
import { isBrokenPipe } from "./errors.ts";
import { main } from "./program.ts";

// A reader that went away (`pi-sessions tree FILE | head`) wants no more: stop quietly, as a pipeline expects
// (`main` does the same where a runtime throws it from the write instead).
process.stdout.on("error", (error: unknown) => {
	if (!isBrokenPipe(error)) throw error;
	process.exit(0);
});

process.exitCode = await main(process.argv.slice(2));
