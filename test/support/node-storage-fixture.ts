/**
 * The storage suite's fixture for the local file system, shared by the Node, Bun and Deno runs: a fresh
 * temporary directory, the async storage and its sync twin, and this machine's lock identity.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeStorage, createNodeSyncStorage, nodeLockIdentity } from "../../adapters/node.ts";
import type { StorageFixture } from "../../src/testing.ts";

export async function nodeStorageFixture(): Promise<StorageFixture> {
	const root = (await mkdtemp(join(tmpdir(), "pi-storage-"))).replaceAll("\\", "/");
	return {
		storage: createNodeStorage(),
		syncStorage: createNodeSyncStorage(),
		lockIdentity: nodeLockIdentity,
		root,
		cleanup: () => rm(root, { recursive: true, force: true }),
	};
}
