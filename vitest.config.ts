import { playwright } from "@vitest/browser-playwright";
import { defineConfig, type ViteUserConfig } from "vitest/config";

/** Debian's Chromium (Playwright cannot download its own browsers here); flags keep it off the network. */
const chromium = playwright({
	launchOptions: {
		executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
		args: [
			"--no-sandbox",
			"--disable-gpu",
			"--disable-background-networking",
			"--disable-component-update",
			"--disable-sync",
			"--no-first-run",
		],
	},
});

const config: ViteUserConfig = defineConfig({
	// The corpus lives in ../shared, next to the repository (optional: test/support/corpus.ts).
	server: { fs: { allow: [".."] } },
	test: {
		testTimeout: 60_000,
		projects: [
			{ extends: true, test: { name: "node", include: ["test/*.test.ts"] } },
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
