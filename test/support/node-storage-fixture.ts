/**
 * The storage suite's fixture for the local file system, shared by the Node, Bun and Deno runs: a fresh
 * temporary directory, the async storage and its sync twin, and this machine's lock identity.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeStorage, createNodeSyncStorage, nodeLockIdentity } from "../../adapters/node.ts";
import type { StorageFixture } from "../../src/testing.ts";

/** A named pipe made by the special-file tests unblocks anything that waits on it after this long. */
const FIFO_WATCHDOG_SECONDS = 15;

/**
 * Make a FIFO at `path`, and a watchdog that opens it for reading and writing after a while: an open or a
 * read that blocks on it (a regression, in the synchronous pass too, which no test timeout can interrupt)
 * then ends, and the test fails instead of hanging.
 */
function makeFifo(path: string, watchdogs: ChildProcess[]): boolean {
	if (process.platform === "win32" || spawnSync("mkfifo", [path]).status !== 0) return false;
	const script = `sleep ${FIFO_WATCHDOG_SECONDS} && exec 3<> "$0"`;
	const watchdog = spawn("sh", ["-c", script, path], { stdio: "ignore" });
	watchdog.unref();
	watchdogs.push(watchdog);
	return true;
}

export async function nodeStorageFixture(): Promise<StorageFixture> {
	const root = (await mkdtemp(join(tmpdir(), "pi-storage-"))).replaceAll("\\", "/");
	const watchdogs: ChildProcess[] = [];
	return {
		storage: createNodeStorage(),
		syncStorage: createNodeSyncStorage(),
		lockIdentity: nodeLockIdentity,
		root,
		cleanup: async () => {
			for (const watchdog of watchdogs) watchdog.kill();
			await rm(root, { recursive: true, force: true });
		},
		makeFifo: async (path) => makeFifo(path, watchdogs),
	};
}
