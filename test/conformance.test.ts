/** The engine conformance suite on Node (vitest): in-process and through worker threads. */
import { afterAll, describe, expect, it } from "vitest";
import { runEngineConformance, runWorkerLife } from "./conformance/fixtures.ts";

runEngineConformance({ describe, it, expect }, afterAll, describe.skip);
runWorkerLife({ describe, it, expect });
