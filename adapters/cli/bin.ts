#!/usr/bin/env node
/**
 * The `pi-sessions` executable (package.json's `bin`), for Node, Bun and Deno.
 * @module
 */
import { main } from "./program.ts";

process.exitCode = await main(process.argv.slice(2));
