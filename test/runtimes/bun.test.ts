/**
 * The engine conformance suite on Bun (`bun test`): in-process and through Bun workers; and the storage
 * conformance suite on the node storage (Bun's `node:fs`, sync twin included) and the in-memory storage.
 */

import { afterAll, describe, expect, it } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeStorage, createNodeSyncStorage, nodeLockIdentity } from "../../adapters/node.ts";
import { createMemoryStorage } from "../../adapters/zenfs.ts";
import { testStorage } from "../../src/testing.ts";
import { runEngineConformance, runWorkerLife } from "../conformance/fixtures.ts";

runEngineConformance({ describe, it, expect }, afterAll, describe.skip);
runWorkerLife({ describe, it, expect });

// bun:test's describe, it and expect fit the suite's TestApi as they are.
const t = { describe, it, expect };
testStorage(
	"node storage (Bun)",
	async () => {
		const root = await mkdtemp(join(tmpdir(), "pi-storage-"));
		return {
			storage: createNodeStorage(),
			syncStorage: createNodeSyncStorage(),
			lockIdentity: nodeLockIdentity,
			root,
			cleanup: () => rm(root, { recursive: true, force: true }),
		};
	},
	t,
	{ sync: true },
);
testStorage("memory storage (Bun)", async () => ({ storage: await createMemoryStorage(), root: "/work" }), t);
