import { playwright } from "@vitest/browser-playwright";
import { defineConfig, type ViteUserConfig } from "vitest/config";
import { chromiumLaunchOptions } from "./test/support/chromium.ts";

/** Debian's Chromium (Playwright cannot download its own browsers here); flags keep it off the network. */
const chromium = playwright({ launchOptions: chromiumLaunchOptions });

const config: ViteUserConfig = defineConfig({
	// The corpus lives in ../shared, next to the repository (optional: test/support/corpus.ts).
	server: { fs: { allow: [".."] } },
	test: {
		testTimeout: 60_000,
		projects: [
			{ extends: true, test: { name: "node", include: ["test/*.test.ts"] } },
			// Node drives Chromium through Playwright: built apps, several pages, closed tabs.
			{ extends: true, test: { name: "e2e", include: ["test/e2e/*.test.ts"] } },
			{
				extends: true,
				test: {
					name: "chromium",
					include: ["test/browser/*.test.ts"],
					// The page has no process.env: CI decides whether a missing corpus fails the run (import.meta.env.CI).
					env: { CI: process.env.CI ?? "" },
					browser: {
						enabled: true,
						headless: true,
						provider: chromium,
						instances: [{ browser: "chromium" }],
						screenshotFailures: false,
					},
				},
			},
		],
	},
});
export default config;
