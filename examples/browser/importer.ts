/**
 * Importing session files into the engine's storage, at pi's place for each: the sessions directory of
 * the session's cwd (read from the header on the page, the rest left to the worker), under the file's
 * own name. Import never overwrites: a name already stored is refused, and said so.
 */
import { StorageError } from "pi-session-tree/worker";
import type { RemoteEngine } from "./connect.ts";
import { readSessionCwd } from "./session-header.ts";
import { describeError } from "./status.ts";

export interface ImportOutcome {
	name: string;
	status: "imported" | "exists" | "error";
	/** Where it is (or would have been) stored. */
	path?: string;
	message: string;
}

/** Import each file in turn; one failing does not stop the others. */
export async function importFiles(engine: RemoteEngine, files: readonly File[]): Promise<ImportOutcome[]> {
	const outcomes: ImportOutcome[] = [];
	for (const file of files) outcomes.push(await importFile(engine, file));
	return outcomes;
}

async function importFile(engine: RemoteEngine, file: File): Promise<ImportOutcome> {
	const name = file.name;
	if (!name.endsWith(".jsonl")) return { name, status: "error", message: "not a .jsonl file: skipped" };
	let path: string | undefined;
	try {
		const cwd = await readSessionCwd(file);
		path = `${await engine.sessionDirFor(cwd)}/${name}`;
		// The File itself: it crosses to the worker as a handle, and the worker reads it (the page copies nothing).
		await engine.importSessionFile(path, file);
		return { name, status: "imported", path, message: `imported to ${path}` };
	} catch (error) {
		if (isExists(error)) {
			return {
				name,
				status: "exists",
				path,
				message: `already stored at ${path}: not overwritten (import never replaces a file)`,
			};
		}
		return { name, status: "error", path, message: describeError(error) };
	}
}

/** The storage's "a file is there already" (a `StorageError` whose code is `exists`, rebuilt from the worker). */
function isExists(error: unknown): boolean {
	return error instanceof StorageError && error.code === "exists";
}
