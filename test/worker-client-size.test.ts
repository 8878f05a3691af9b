/**
 * The worker client stays thin: bundled for a page, `pi-session-tree/worker` is at most 8 kB gzipped and
 * holds neither ZenFS nor the engine (nor the session or tree modules it would bring).
 */
import { expect, it } from "vitest";
import { bundleSize } from "../bench/client-size.ts";

it("pi-session-tree/worker bundled for the browser is at most 8 kB gzipped, without ZenFS or the Engine class", async () => {
	const { min, gzip, code, inputs } = await bundleSize("adapters/worker.ts");
	console.log(`worker client: ${min} bytes minified, ${gzip} bytes gzipped`);
	expect(gzip).toBeLessThanOrEqual(8192);
	const modules = Object.keys(inputs);
	expect(modules.filter((path) => /@zenfs|src\/(engine|session|tree)\.ts$|adapters\/zenfs\.ts$/.test(path))).toEqual(
		[],
	);
	// Distinctive text of each: the engine's unknown-handle message, ZenFS's in-memory store's name.
	expect(code).not.toContain("no open session");
	expect(code).not.toContain("tmpfs");
	expect(modules).toContain("adapters/worker-client.ts");
});
