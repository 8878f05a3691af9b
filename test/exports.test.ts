/**
 * The package's subpaths are declared three times (package.json for npm, deno.json for Deno, tsup's
 * entries for the build). They must name the same subpaths and the same modules.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { entries as tsupEntries } from "../tsup.config.ts";

const read = (file: string) => JSON.parse(readFileSync(new URL(`../${file}`, import.meta.url), "utf8"));
const packageExports: Record<string, { types: string; import: string }> = read("package.json").exports;
const denoExports: Record<string, string> = read("deno.json").exports;

/** "./dist/node.js" → "node" ; "./adapters/node.ts" → "node" ; "./src/index.ts" → "index". */
const moduleName = (file: string) => (file.split("/").pop() as string).replace(/\.(d\.ts|js|ts)$/, "");

describe("export maps", () => {
	it("package.json and deno.json name the same subpaths", () => {
		expect(Object.keys(denoExports).sort()).toEqual(Object.keys(packageExports).sort());
	});

	it("each subpath points at the same module in both, and tsup builds it", () => {
		for (const [subpath, target] of Object.entries(packageExports)) {
			const name = moduleName(target.import);
			expect(moduleName(target.types)).toBe(name);
			expect(moduleName(denoExports[subpath] as string)).toBe(name);
			expect(`./${tsupEntries[name]}`).toBe(denoExports[subpath]);
		}
		expect(Object.keys(tsupEntries).sort()).toEqual(
			Object.values(packageExports)
				.map((t) => moduleName(t.import))
				.sort(),
		);
	});

	it("package.json's types and import are built into dist/", async () => {
		const built = await import("../dist/index.js");
		expect(typeof built.SessionTree).toBe("function");
		expect(typeof built.buildSessionContext).toBe("function");
		// Declarations may be split into shared chunks; the entry must export the names.
		const declarations = readFileSync(new URL("../dist/index.d.ts", import.meta.url), "utf8");
		for (const name of ["SessionTree", "Engine", "buildSessionContext", "Storage"]) {
			expect(declarations).toMatch(new RegExp(`\\b${name}\\b`));
		}
	});

	it("the built worker starts from dist/ and serves the engine", async () => {
		const { startEngineWorker } = await import("../dist/worker.js");
		const { engine, terminate } = await startEngineWorker({ storage: "memory" });
		try {
			const { handle } = await engine.create({ cwd: "/p" });
			await engine.appendMessage(handle, { role: "user", content: "built", timestamp: 1 });
			expect((await engine.getContext(handle)).messages).toEqual([{ role: "user", content: "built", timestamp: 1 }]);
		} finally {
			await terminate();
		}
	});
});

/**
 * The runtime names of every subpath, sorted. A change to the public surface must change this list too, so
 * it is always deliberate. (`./worker-entry` exports nothing: it is the worker's entry module.)
 */
const PUBLIC_NAMES: Record<string, string[]> = {
	".": [
		"CURRENT_SESSION_VERSION",
		"DEFAULT_MAX_LINE_BYTES",
		"Engine",
		"EntryNotFoundError",
		"EntryNotLoadedError",
		"HeaderTooLongError",
		"InvalidArgumentError",
		"InvalidContextEditError",
		"InvalidSessionPathError",
		"LineSplitter",
		"MAX_NESTING_DEPTH",
		"PathOutsideRootError",
		"Session",
		"SessionClosedError",
		"SessionFileChangedError",
		"SessionFormatError",
		"SessionLimitError",
		"SessionLockedError",
		"SessionNotFoundError",
		"SessionReadOnlyError",
		"SessionTree",
		"StorageError",
		"UnknownSessionError",
		"buildContextEntries",
		"buildSessionContext",
		"buildSessionPath",
		"buildSessionProjection",
		"createSessionId",
		"defaultSessionDir",
		"encodeCwd",
		"encodeEntry",
		"entryKind",
		"entryPreview",
		"findByHeaderId",
		"findById",
		"findMostRecentSession",
		"flattenTree",
		"getLatestCompactionEntry",
		"getSessionContextSettings",
		"isSessionHeader",
		"isStorageError",
		"lineStream",
		"listAllSessions",
		"listSessions",
		"listingCatalogPath",
		"listingCatalogPathForSessionsRoot",
		"lockFiles",
		"messageText",
		"migrateSessionEntries",
		"migrateToCurrentVersion",
		"parseSessionEntries",
		"parseSessionText",
		"projectContextEntry",
		"realmLockIdentity",
		"replaySystemMessages",
		"resolveAgentDir",
		"runTask",
		"sessionEntryToContextMessages",
		"sessionFileName",
		"sessionsRoot",
		"unflattenTree",
		"validateSessionId",
	],
	"./node": [
		"agentDir",
		"createNodeLocks",
		"createNodeStorage",
		"createNodeSyncLocks",
		"createNodeSyncStorage",
		"nodeLockIdentity",
		"processStartTime",
	],
	"./zenfs": ["MEMORY_APPEND_HANDLES", "createMemoryStorage", "createZenfsStorage"],
	"./pi-compat": [
		"CURRENT_SESSION_VERSION",
		"SessionManager",
		"assertValidSessionId",
		"buildContextEntries",
		"buildSessionContext",
		"buildSessionProjection",
		"findMostRecentSession",
		"getDefaultSessionDir",
		"getLatestCompactionEntry",
		"loadEntriesFromFile",
		"migrateSessionEntries",
		"parseSessionEntries",
		"projectContextEntry",
		"sessionEntryToContextMessages",
	],
	"./opfs": ["createOpfsStorage"],
	"./testing": ["testStorage"],
	"./worker": [
		"EngineWorkerError",
		"EntryNotFoundError",
		"EntryNotLoadedError",
		"HeaderTooLongError",
		"InvalidArgumentError",
		"InvalidContextEditError",
		"InvalidSessionPathError",
		"PathOutsideRootError",
		"SessionClosedError",
		"SessionFileChangedError",
		"SessionFormatError",
		"SessionLimitError",
		"SessionLockedError",
		"SessionNotFoundError",
		"SessionReadOnlyError",
		"StorageError",
		"UnknownSessionError",
		"UnreadableMessageError",
		"errorFromData",
		"nodeWorkerEntryUrl",
		"registerTransferHandlers",
		"startEngineWorker",
		"workerEntryUrl",
	],
	"./web-locks": ["WEB_LOCK_PREFIX", "createWebLocks", "webLockName"],
	"./worker-host": ["createEngineFactory", "exposeEngine", "stockStorages"],
};

describe("the public surface", () => {
	it("every subpath exports exactly the names listed", async () => {
		const actual: Record<string, string[]> = {};
		for (const [subpath, file] of Object.entries(denoExports)) {
			if (subpath === "./worker-entry") continue; // importing it starts serving the engine
			actual[subpath] = Object.keys(await import(new URL(`../${file}`, import.meta.url).href)).sort();
		}
		expect(actual).toEqual(PUBLIC_NAMES);
	});

	it("the build exports the same names as the sources", async () => {
		const built = Object.keys(await import("../dist/index.js")).sort();
		expect(built).toEqual(PUBLIC_NAMES["."]);
	});
});
