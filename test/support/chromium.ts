/**
 * Debian's Chromium, the one browser of this machine (Playwright cannot download its own here), with flags
 * that keep it off the network. vitest.config.ts runs the browser tests in it; the end-to-end tests
 * (test/e2e/) and the browser benchmarks drive it with Playwright.
 * @module
 */
import { type Browser, type BrowserContext, chromium } from "playwright";

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

/**
 * A headless Chromium on a profile of its own in `userDataDir` (one context; close it when done). Unlike a
 * `newContext()` of `launchChromium()`, which is off the record and keeps an origin's OPFS in memory in the
 * browser process, its OPFS is on disk, as in a user's ordinary tab (sync access handle calls cost µs, not
 * a round trip to another process, and `flush` reaches the disk).
 */
export function launchPersistentChromium(userDataDir: string): Promise<BrowserContext> {
	return chromium.launchPersistentContext(userDataDir, { ...chromiumLaunchOptions, headless: true });
}
