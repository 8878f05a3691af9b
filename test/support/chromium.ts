/**
 * Debian's Chromium, the one browser of this machine (Playwright cannot download its own here), with flags
 * that keep it off the network. vitest.config.ts runs the browser tests in it; the end-to-end tests
 * (test/e2e/) and the browser benchmarks drive it with Playwright.
 * @module
 */
import { type Browser, chromium } from "playwright";

export const chromiumLaunchOptions: { executablePath: string; args: string[] } = {
	executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
	args: [
		"--no-sandbox",
		"--disable-gpu",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--no-first-run",
	],
};

/** A headless Chromium; close it when done. */
export function launchChromium(): Promise<Browser> {
	return chromium.launch({ ...chromiumLaunchOptions, headless: true });
}
