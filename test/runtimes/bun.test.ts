/** The engine conformance suite on Bun (`bun test`): in-process and through Bun workers. */
import { afterAll, describe, expect, it } from "bun:test";
import { runEngineConformance, runWorkerLife } from "../conformance/fixtures.ts";

runEngineConformance({ describe, it, expect }, afterAll, describe.skip);
runWorkerLife({ describe, it, expect });
