/**
 * Vite's servers as the end-to-end tests and browser benchmarks start them: a dev server, or a directory of
 * files served as they are (Vite's preview server), on 127.0.0.1 and a free port, with no configuration file.
 * @module
 */
import { createServer, type Logger, type LogLevel, preview } from "vite";

/** A server, where it answers, and how to stop it. */
export interface Served {
	url: string;
	close(): Promise<void>;
}

export interface ServeOptions {
	/** Default `"silent"`. */
	logLevel?: LogLevel;
	/** Instead of Vite's own logger (to collect its warnings). */
	customLogger?: Logger;
}

/** A Vite dev server on `root`, listening. */
export async function serveDev(root: string, options: ServeOptions = {}): Promise<Served> {
	const server = await createServer({
		root,
		configFile: false,
		logLevel: options.logLevel ?? "silent",
		customLogger: options.customLogger,
		server: { port: 0, host: "127.0.0.1" },
	});
	await server.listen();
	return { url: urlOf(server), close: () => server.close() };
}

export interface StaticOptions extends ServeOptions {
	/** `"spa"` (Vite's default) answers a missing file with index.html, as many servers do; `"mpa"` with a 404. */
	appType?: "spa" | "mpa";
	/** Response headers (a Content-Security-Policy, cross-origin isolation). */
	headers?: Record<string, string>;
}

/** The files of `dir` served as they are (Vite's preview server; `root` is the project they were built from). */
export async function serveStatic(root: string, dir: string, options: StaticOptions = {}): Promise<Served> {
	const server = await preview({
		root,
		configFile: false,
		appType: options.appType,
		logLevel: options.logLevel ?? "silent",
		customLogger: options.customLogger,
		build: { outDir: dir },
		preview: { port: 0, host: "127.0.0.1", headers: options.headers },
	});
	return { url: urlOf(server), close: () => server.close() };
}

function urlOf(server: { resolvedUrls: { local: string[] } | null }): string {
	const url = server.resolvedUrls?.local[0];
	if (!url) throw new Error("the Vite server gave no URL");
	return url;
}
