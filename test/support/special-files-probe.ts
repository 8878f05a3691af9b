/**
 * Run by test/special-files.test.ts as a child process (on Node, Bun and Deno), so that an operation
 * that blocks on a named pipe hangs this process, which the test kills, and never the test runner.
 * Argument: the JSON of `ProbePaths`. Prints one JSON line per step as it ends (`{ step, ok }` or
 * `{ step, error }`), so the last line printed tells where a hang began.
 */
import { createNodeLocks, createNodeStorage, createNodeSyncStorage } from "../../adapters/node.ts";
import { findMostRecentSession, loadEntriesFromFile, SessionManager } from "../../adapters/pi-compat.ts";
import { Engine } from "../../src/index.ts";
import type { Storage, SyncStorage } from "../../src/storage.ts";

/** Where the test put what. */
export interface ProbePaths {
	agentDir: string;
	/** The project's working directory, and its sessions directory. */
	cwd: string;
	dir: string;
	/** Real sessions: one whose lock file is a named pipe, and the others. */
	locked: string;
	sessions: string[];
	/** Things named `*.jsonl` that are not regular files, by kind. */
	special: Record<string, string>;
	/** A regular file outside the sessions directory, free to be renamed. */
	spare: string;
}

const paths = JSON.parse(process.argv[2] ?? "{}") as ProbePaths;
const encoder = new TextEncoder();

function report(step: string, outcome: { ok: unknown } | { error: unknown }): void {
	console.log(JSON.stringify({ step, ...outcome }));
}

function errorOf(error: unknown): unknown {
	if (!(error instanceof Error)) return { message: String(error) };
	const { code, path } = error as { code?: unknown; path?: unknown };
	return { name: error.name, code, path, message: error.message };
}

async function step(name: string, action: () => unknown): Promise<void> {
	try {
		report(name, { ok: await action() });
	} catch (error) {
		report(name, { error: errorOf(error) });
	}
}

const storage: Storage = createNodeStorage();
const sync: SyncStorage = createNodeSyncStorage();
const engine = new Engine({ storage, locks: createNodeLocks(storage), agentDir: paths.agentDir });
const sorted = (found: { path: string }[]) => found.map((session) => session.path).sort();

await step("engine.listAll", async () => sorted(await engine.listAll()));
await step("engine.list", async () => sorted(await engine.list(paths.dir)));
await step("engine.findMostRecent", () => engine.findMostRecent(paths.dir));
await step("engine.continueRecent", async () => {
	const summary = await engine.continueRecent(paths.cwd);
	await engine.close(summary.handle);
	return summary.path;
});
for (const [kind, path] of Object.entries(paths.special)) {
	await step(`engine.open ${kind}`, () => engine.open(path));
	await step(`engine.open read-only ${kind}`, () => engine.open(path, { readOnly: true }));
	await step(`storage.readRange ${kind}`, () => storage.readRange(path, 0, 100));
	await step(`storage.append ${kind}`, () => storage.append(path, encoder.encode("x\n"), false));
	await step(`storage.replace ${kind}`, () => storage.replace(path, [encoder.encode("x\n")]));
	await step(`storage.rename ${kind}`, () => storage.rename(paths.spare, path));
	await step(`sync.readRange ${kind}`, () => sync.readRange(path, 0, 100));
	await step(`sync.append ${kind}`, () => sync.append(path, encoder.encode("x\n"), false));
	await step(`sync.replace ${kind}`, () => sync.replace(path, [encoder.encode("x\n")]));
	await step(`sync.rename ${kind}`, () => sync.rename(paths.spare, path));
	await step(`SessionManager.open ${kind}`, () => SessionManager.open(path).getSessionFile());
	await step(`loadEntriesFromFile ${kind}`, () => loadEntriesFromFile(path));
}
const lock = `${paths.locked}.lock`;
await step("engine.open, its lock a FIFO", () => engine.open(paths.locked));
await step("engine.open read-only, its lock a FIFO", async () => {
	const summary = await engine.open(paths.locked, { readOnly: true });
	await engine.close(summary.handle);
	return summary.entryCount;
});
await step("SessionManager.open, its lock a FIFO", () => SessionManager.open(paths.locked).getSessionFile());
await step("storage.readRange of the FIFO lock", () => storage.readRange(lock, 0, 4096));
await step("sync.readRange of the FIFO lock", () => sync.readRange(lock, 0, 4096));
// More reads of a FIFO at once than the I/O threads (4 by default): a real read still gets through.
await step("many FIFO reads and a real one", async () => {
	const fifo = paths.special.fifo as string;
	const reads = Array.from({ length: 12 }, () => storage.readRange(fifo, 0, 100).then(String, (error) => error.code));
	const real = storage.readRange(paths.sessions[0] as string, 0, 7).then((bytes) => new TextDecoder().decode(bytes));
	return [await real, ...(await Promise.all(reads))];
});
await step("SessionManager.listAll", async () => sorted(await SessionManager.listAll()));
await step("SessionManager.list", async () => sorted(await SessionManager.list(paths.cwd)));
await step("findMostRecentSession", () => findMostRecentSession(paths.dir));
await step("SessionManager.continueRecent", () => SessionManager.continueRecent(paths.cwd).getSessionFile());
report("done", { ok: true });
process.exit(0);
