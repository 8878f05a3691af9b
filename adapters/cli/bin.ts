#!/usr/bin/env node
/**
 * The `pi-sessions` executable (package.json's `bin`), for Node, Bun and Deno.
 * @module
 */
import { main } from "./program.ts";

// A reader that went away (`pi-sessions tree FILE | head`) wants no more: stop quietly, as a pipeline expects.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
	if (error.code !== "EPIPE") throw error;
	process.exit(0);
});

process.exitCode = await main(process.argv.slice(2));
