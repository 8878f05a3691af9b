/**
 * The engine conformance suite on Bun (`bun test`): in-process and through Bun workers; and the storage
 * conformance suite on the node storage (Bun's `node:fs`, sync twin included) and the in-memory storage.
 */

import { afterAll, describe, expect, it } from "bun:test";
import { createMemoryStorage } from "../../adapters/zenfs.ts";
import { testStorage } from "../../src/testing.ts";
import { runEngineConformance, runWorkerLife } from "../conformance/fixtures.ts";
import { runLineWalkAgreement } from "../conformance/line-walk.ts";
import { runListingScanAgreement } from "../conformance/listing-scan.ts";
import { nodeStorageFixture } from "../support/node-storage-fixture.ts";

runEngineConformance({ describe, it, expect }, afterAll, describe.skip);
runWorkerLife({ describe, it, expect });
runLineWalkAgreement({ describe, it, expect });
runListingScanAgreement({ describe, it, expect });

// bun:test's describe, it and expect fit the suite's TestApi as they are.
const t = { describe, it, expect };
testStorage("node storage (Bun)", nodeStorageFixture, t, { sync: true });
testStorage("memory storage (Bun)", async () => ({ storage: await createMemoryStorage(), root: "/work" }), t);
