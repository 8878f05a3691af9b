import { defineConfig, type Options } from "tsup";

// One entry per package.json subpath; test/exports.test.ts keeps this, package.json and deno.json in step.
export const entries: Record<string, string> = {
	index: "src/index.ts",
	node: "adapters/node.ts",
	zenfs: "adapters/zenfs.ts",
	"pi-compat": "adapters/pi-compat.ts",
	testing: "src/testing.ts",
	worker: "adapters/worker.ts",
	"worker-host": "adapters/worker-host.ts",
	"worker-entry": "adapters/worker-entry.ts",
};

const config: Options = defineConfig({
	entry: entries,
	format: ["esm"],
	dts: true,
	clean: true,
	sourcemap: true,
	target: "es2022",
	platform: "neutral",
}) as Options;
export default config;
