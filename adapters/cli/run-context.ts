/**
 * What every command is given: the storage, where its answers go, and the way to the sessions (found
 * when a command first asks, so a command given a file says nothing about where sessions live).
 * @module
 */
import type { Storage } from "../../src/index.ts";
import type { ReadLimits } from "../../src/load.ts";
import { createNodeStorage } from "../node.ts";
import { findSession } from "./find-session.ts";
import { findPlaces, type PlaceOptions, type Places } from "./places.ts";
import { type Output, terminalOutput } from "./terminal.ts";

export interface RunContext {
	readonly storage: Storage;
	readonly output: Output;
	/** The sessions root, its catalog, and whether it is the bundled samples. */
	places(): Places;
	/** The path of the session a command line names (a file, an id or an id prefix). */
	sessionPath(name: string): Promise<string>;
	/**
	 * Limits of the reads and listings of every command (default: the reads' own, the longest line
	 * `DEFAULT_MAX_LINE_BYTES` and no most records).
	 */
	readonly limits?: ReadLimits;
}

export function runContext(options: PlaceOptions, output: Output = terminalOutput()): RunContext {
	const storage = createNodeStorage();
	let places: Places | undefined;
	const context: RunContext = {
		storage,
		output,
		places: () => {
			places ??= findPlaces(options, output);
			return places;
		},
		sessionPath: (name) => findSession(name, context.places, storage),
	};
	return context;
}
