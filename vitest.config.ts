import { defineConfig, type ViteUserConfig } from "vitest/config";

const config: ViteUserConfig = defineConfig({
	test: {
		include: ["test/**/*.test.ts"],
		testTimeout: 60_000,
	},
});
export default config;
