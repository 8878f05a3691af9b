/**
 * Hostile paths (issue 14): a backslash in a POSIX file name is part of the name, never a separator (no
 * stray directory, nothing written elsewhere); an engine with a sessions root refuses every path outside
 * it, by `..`, by an absolute path elsewhere, by a relative path and by a symbolic link inside the root
 * that leads outside, in-process and through the worker; paths inside it still work.
 */
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import * as fsPromises from "node:fs/promises";
import { tmpdir } from "node:os";
import * as nodePath from "node:path";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createNodeLocks, createNodeStorage } from "../adapters/node.ts";
import { realPathOn } from "../adapters/real-path.ts";
import { startEngineWorker, PathOutsideRootError as WorkerPathOutsideRootError } from "../adapters/worker.ts";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { InvalidArgumentError } from "../src/errors.ts";
import { Engine, InvalidSessionPathError, PathOutsideRootError, Session, type Storage } from "../src/index.ts";
import { dirname, isInsideRoot, joinPath, normalizeAbsolutePath } from "../src/paths.ts";
import { assistantMessage, userMessage } from "./support/messages.ts";

const nodeRealPath = realPathOn(fsPromises, nodePath);
const temporary: string[] = [];
afterAll(() => {
	for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
	const dir = mkdtempSync(join(tmpdir(), "pi-paths-"));
	temporary.push(dir);
	return dir;
}

/** Every file and directory under `dir`, relative to it, sorted. */
function tree(dir: string): string[] {
	const names: string[] = [];
	const walk = (at: string) => {
		for (const entry of readdirSync(at, { withFileTypes: true })) {
			const path = join(at, entry.name);
			names.push(relative(dir, path) + (entry.isDirectory() ? "/" : ""));
			if (entry.isDirectory()) walk(path);
		}
	};
	walk(dir);
	return names.sort();
}

const header = (id: string) =>
	`${JSON.stringify({ type: "session", version: 3, id, timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" })}\n`;
const v3File = (id: string) =>
	`${header(id)}${JSON.stringify({ type: "message", id: "a1b2c3d4", parentId: null, timestamp: "2025-01-01T00:00:01.000Z", message: userMessage("hi", 1) })}\n`;
const v1File = `${JSON.stringify({ type: "session", id: "v1-session", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" })}\n${JSON.stringify({ type: "message", timestamp: "2025-01-01T00:00:01.000Z", message: userMessage("old", 1) })}\n`;

describe("paths: a backslash is part of a POSIX name", () => {
	it("joinPath and dirname split at / only, except in a Windows path", () => {
		expect(dirname("/s/d\\x/a\\b.jsonl")).toBe("/s/d\\x");
		expect(dirname("a\\b.jsonl")).toBe(".");
		expect(dirname("/a\\b")).toBe("/");
		expect(joinPath("/s/d\\", "a\\b.jsonl")).toBe("/s/d\\/a\\b.jsonl");
		expect(joinPath("/s/", "\\a\\")).toBe("/s/\\a\\");
		// Windows paths (a drive or UNC prefix): `\` separates there too.
		expect(dirname("C:\\Users\\me\\s.jsonl")).toBe("C:\\Users\\me");
		expect(dirname("C:\\s.jsonl")).toBe("C:\\");
		expect(dirname("\\\\server\\share\\s.jsonl")).toBe("\\\\server\\share");
		expect(joinPath("C:\\Users\\me\\", ".pi", "agent")).toBe("C:\\Users\\me/.pi/agent");
	});

	it("normalizeAbsolutePath and isInsideRoot resolve . and .. by name", () => {
		expect(normalizeAbsolutePath("/a/./b//../c/")).toBe("/a/c");
		expect(normalizeAbsolutePath("/../..")).toBe("/");
		expect(normalizeAbsolutePath("a/b")).toBeUndefined();
		expect(normalizeAbsolutePath("/a/..\\b")).toBe("/a/..\\b"); // one name on POSIX
		expect(normalizeAbsolutePath("c:\\a\\..\\b")).toBe("C:/b");
		expect(isInsideRoot("/r/x", "/r")).toBe(true);
		expect(isInsideRoot("/r", "/r/")).toBe(true);
		expect(isInsideRoot("/rx", "/r")).toBe(false);
		expect(isInsideRoot("/r/../x", "/r")).toBe(false);
		expect(isInsideRoot("/r/..\\x", "/r")).toBe(true);
		expect(isInsideRoot("/anything", "/")).toBe(true);
		expect(isInsideRoot("r/x", "/r")).toBe(false);
	});

	it("node storage: open, append, branch, fork and migrate in a directory whose names hold backslashes", async () => {
		const top = tempDir();
		const dir = join(top, "d\\x");
		mkdirSync(dir);
		const path = join(dir, "a\\b.jsonl");
		writeFileSync(path, v3File("bs-session"));
		const v1Path = join(dir, "v1\\x.jsonl");
		writeFileSync(v1Path, v1File);
		const storage = createNodeStorage();

		const session = await Session.open(storage, path, { locks: createNodeLocks(storage) });
		expect(session.sessionDir).toBe(dir);
		const reply = await session.appendMessage(assistantMessage("hello"));
		const branched = (await session.createBranchedSession(reply)) as string;
		expect(dirname(branched)).toBe(dir);
		await session.appendMessage(userMessage("after the branch"));
		await session.close();

		const migrated = await Session.open(storage, v1Path);
		expect(migrated.report.migratedFrom).toEqual({ version: 1, backupPath: `${v1Path}.v1.bak` });
		await migrated.close();

		const engine = new Engine({ storage, agentDir: join(top, "agent"), root: top, realPath: nodeRealPath });
		const fork = await engine.forkFrom(path, "/p", dir);
		expect(dirname(fork.path as string)).toBe(dir);
		await engine.appendMessage(fork.handle, userMessage("in the fork"));
		await engine.close(fork.handle);
		const listed = await engine.list(dir);
		expect(listed.map((info) => info.path).sort()).toEqual(
			[path, branched, fork.path as string, v1Path].sort(), // the backup is no session file (.bak)
		);

		// Only the intended files, all in the intended directory: no `d/`, no `a/`, no `v1/`.
		const inDir = (name: string) => `d\\x/${name}`;
		expect(tree(top)).toEqual(
			[
				"d\\x/",
				inDir("a\\b.jsonl"),
				inDir("v1\\x.jsonl"),
				inDir("v1\\x.jsonl.v1.bak"),
				inDir(relative(dir, branched)),
				inDir(relative(dir, fork.path as string)),
				...tree(top).filter((name) => name.startsWith("agent/")), // the listing catalog
			].sort(),
		);
		expect(tree(top).filter((name) => name.startsWith("agent/") && !name.startsWith("agent/pi-session-tree/"))).toEqual(
			["agent/"],
		);
		expect(readFileSync(branched, "utf8")).toContain("after the branch"); // pi goes on in the branch's file
	});

	it("memory storage: ZenFS takes \\ for /, so a path holding one is refused before anything is written", async () => {
		const storage: Storage = await createMemoryStorage({ root: "/jail" });
		const engine = new Engine({ storage, agentDir: "/pi/agent" });
		const bytes = new TextEncoder().encode(v3File("zen-bs"));
		for (const path of ["/s/d\\x/a\\b.jsonl", "/s/..\\..\\..\\escaped.jsonl", "/s\\..\\x.jsonl"]) {
			await expect(engine.importSessionFile(path, bytes)).rejects.toThrow(/separator|may not leave/);
			await expect(engine.open(path, { create: true })).rejects.toThrow(/separator|may not leave/);
		}
		for (const sessionDir of ["/s/d\\x", "/s\\..\\..", "\\"]) {
			await expect(engine.create({ cwd: "/p", sessionDir })).rejects.toThrow(/separator|may not leave/);
		}
		await expect(engine.open("/s/../b.jsonl")).rejects.toThrow(/may not leave/);
		// `/s` itself is a legitimate directory (made before the file's name was refused); nothing is in it.
		expect((await storage.list("/")).map((entry) => entry.name)).toEqual(["s"]);
		expect(await storage.list("/s")).toEqual([]);
		// pi's layout never holds one: a cwd's `\` becomes `-`.
		const created = await engine.create({ cwd: "C:\\work\\p" });
		expect(created.path).toMatch(/^\/pi\/agent\/sessions\/--C--work-p--\//);
	});
});

/** A root with a session in it, a directory outside it, and links inside the root that lead out. */
function hostileLayout() {
	const top = tempDir();
	const root = join(top, "agent");
	const outside = join(top, "outside");
	const sessions = join(root, "sessions", "--p--");
	mkdirSync(sessions, { recursive: true });
	mkdirSync(outside);
	const inside = join(sessions, "2025-01-01T00-00-00-000Z_inside.jsonl");
	writeFileSync(inside, v3File("inside"));
	const secret = join(outside, "secret.jsonl");
	writeFileSync(secret, v3File("secret"));
	symlinkSync(outside, join(root, "dir-link")); // a directory link leading out
	symlinkSync(secret, join(sessions, "file-link.jsonl")); // a file link leading out
	symlinkSync(join(outside, "new.jsonl"), join(sessions, "dangling.jsonl")); // leads out, to nothing yet
	symlinkSync(sessions, join(root, "inner-link")); // a link that stays inside
	return { top, root, outside, sessions, inside, secret, before: tree(outside) };
}

type Layout = ReturnType<typeof hostileLayout>;

/** Paths that leave the root, each with what it tries. */
function escapes({ root, outside, secret }: Layout): [string, string][] {
	return [
		["../ from the root", `${root}/../outside/secret.jsonl`],
		["../ deep inside", `${root}/sessions/--p--/../../../outside/x.jsonl`],
		["an absolute path elsewhere", join(outside, "x.jsonl")],
		["the root's sibling with the root's name as prefix", `${root}-other/x.jsonl`],
		["a relative path", "agent/sessions/x.jsonl"],
		["a directory link inside the root", join(root, "dir-link", "x.jsonl")],
		["a file link inside the root", join(root, "sessions", "--p--", "file-link.jsonl")],
		["a dangling link inside the root", join(root, "sessions", "--p--", "dangling.jsonl")],
		["the secret itself", secret],
	];
}

type EngineLike = Pick<
	Engine,
	| "open"
	| "create"
	| "importSessionFile"
	| "exportSessionFile"
	| "forkFrom"
	| "list"
	| "findMostRecent"
	| "continueRecent"
	| "appendMessage"
	| "createBranchedSession"
	| "close"
	| "closeAll"
	| "listAll"
>;

/** Every escape refused by every path-taking method, nothing outside changed; legitimate paths work. */
async function checkConfinement(engine: EngineLike, layout: Layout, outsideRootError: typeof PathOutsideRootError) {
	const { root, outside, sessions, inside } = layout;
	const bytes = new TextEncoder().encode(v3File("imported"));
	for (const [what, path] of escapes(layout)) {
		const dir = dirname(path);
		// [method, the path it is refused for, the call]
		const attempts: [string, string, () => Promise<unknown>][] = [
			["open", path, () => engine.open(path)],
			["open create", path, () => engine.open(path, { create: true })],
			["open read-only", path, () => engine.open(path, { readOnly: true })],
			["importSessionFile", path, () => engine.importSessionFile(path, bytes)],
			["exportSessionFile", path, () => engine.exportSessionFile(path)],
			["forkFrom source", path, () => engine.forkFrom(path, "/p")],
		];
		// The file link's and the dangling link's directory is the sessions directory itself, inside.
		if (dir !== sessions) {
			attempts.push(
				["open sessionDir", dir, () => engine.open(inside, { sessionDir: dir })],
				["create", dir, () => engine.create({ cwd: "/p", sessionDir: dir })],
				["continueRecent", dir, () => engine.continueRecent("/p", dir)],
				["forkFrom dir", dir, () => engine.forkFrom(inside, "/p", dir)],
				["list", dir, () => engine.list(dir)],
				["findMostRecent", dir, () => engine.findMostRecent(dir)],
			);
		}
		for (const [method, named, attempt] of attempts) {
			const error = await attempt().then(
				() => undefined,
				(e: unknown) => e,
			);
			const context = `${method} of ${what} (${named})`;
			expect(error, context).toBeInstanceOf(outsideRootError);
			expect(error, context).toBeInstanceOf(InvalidSessionPathError);
			expect((error as PathOutsideRootError).path, context).toBe(named);
			expect((error as PathOutsideRootError).root, context).toBe(root);
		}
	}
	expect(tree(layout.outside), "nothing written outside").toEqual(layout.before);
	expect(existsSync(`${root}-other`)).toBe(false);
	expect(existsSync(join(layout.top, "agent", "sessions", "x.jsonl"))).toBe(false);

	// Legitimate paths still work: the default directory, an import, an export, a fork, a listing, a link that stays inside.
	const created = await engine.create({ cwd: "/p" });
	await engine.appendMessage(created.handle, userMessage("hi"));
	const reply = await engine.appendMessage(created.handle, assistantMessage("hello"));
	const branched = (await engine.createBranchedSession(created.handle, reply)) as string;
	expect(dirname(branched)).toBe(dirname(created.path as string));
	await engine.close(created.handle);
	const imported = join(sessions, "2025-01-02T00-00-00-000Z_imported.jsonl");
	await engine.importSessionFile(imported, bytes);
	expect(new TextDecoder().decode(await engine.exportSessionFile(imported))).toBe(v3File("imported"));
	const fork = await engine.forkFrom(inside, "/p", sessions);
	await engine.close(fork.handle);
	const viaLink = await engine.open(join(root, "inner-link", "2025-01-01T00-00-00-000Z_inside.jsonl"));
	await engine.appendMessage(viaLink.handle, assistantMessage("through the inner link"));
	await engine.close(viaLink.handle);
	// inside, created, branched, imported, fork; not the links leading out (the file link is read, not listed).
	expect((await engine.list(sessions)).length).toBe(5);
	expect((await engine.listAll()).map((info) => info.path)).not.toContain(join(sessions, "file-link.jsonl"));
	expect((await engine.continueRecent("/p")).path).toBeTypeOf("string");
	await engine.closeAll();
	expect(readFileSync(inside, "utf8")).toContain("through the inner link");
	expect(tree(outside), "nothing written outside").toEqual(layout.before);
}

describe("an engine with a sessions root refuses paths outside it", () => {
	it("in-process, on the node storage, with links resolved", async () => {
		const layout = hostileLayout();
		const storage = createNodeStorage();
		const engine = new Engine({
			storage,
			locks: createNodeLocks(storage),
			agentDir: layout.root,
			root: layout.root,
			realPath: nodeRealPath,
		});
		await checkConfinement(engine, layout, PathOutsideRootError);
	});

	it("through the worker's node storage, whose root is its agent directory", async () => {
		const layout = hostileLayout();
		const { engine, terminate } = await startEngineWorker({ storage: "node", agentDir: layout.root });
		try {
			await checkConfinement(engine, layout, WorkerPathOutsideRootError);
		} finally {
			await terminate();
		}
	});

	it("a root reached through a symbolic link still holds its own paths", async () => {
		const layout = hostileLayout();
		const linkedRoot = join(layout.top, "linked-agent");
		symlinkSync(layout.root, linkedRoot);
		const { engine, terminate } = await startEngineWorker({ storage: "node", agentDir: linkedRoot });
		try {
			const session = await engine.create({ cwd: "/p" });
			expect(session.path?.startsWith(`${linkedRoot}/sessions/`)).toBe(true);
			await engine.appendMessage(session.handle, userMessage("hi"));
			await engine.appendMessage(session.handle, assistantMessage("hello"));
			await engine.close(session.handle);
			await expect(engine.open(join(layout.root, "sessions", "--p--", "x.jsonl"))).rejects.toBeInstanceOf(
				WorkerPathOutsideRootError,
			); // the link's target by its own name is outside the root as written
			await expect(engine.open(join(linkedRoot, "dir-link", "x.jsonl"), { create: true })).rejects.toBeInstanceOf(
				WorkerPathOutsideRootError,
			);
		} finally {
			await terminate();
		}
	});

	it("a wider root can be asked for; a relative root is refused", async () => {
		const layout = hostileLayout();
		const { engine, terminate } = await startEngineWorker({ storage: "node", agentDir: layout.root, root: layout.top });
		try {
			expect(new TextDecoder().decode(await engine.exportSessionFile(layout.secret))).toBe(v3File("secret"));
			await expect(engine.exportSessionFile("/etc/hostname")).rejects.toBeInstanceOf(WorkerPathOutsideRootError);
		} finally {
			await terminate();
		}
		expect(() => new Engine({ storage: createNodeStorage(), agentDir: "/a", root: "a" })).toThrow(InvalidArgumentError);
	});

	it("the memory storages keep working without a root, and with one", async () => {
		const storage = await createMemoryStorage();
		const engine = new Engine({ storage, agentDir: "/pi/agent", root: "/pi/agent" });
		const created = await engine.create({ cwd: "/p" });
		await engine.appendMessage(created.handle, userMessage("hi"));
		await engine.appendMessage(created.handle, assistantMessage("hello"));
		await engine.close(created.handle);
		expect((await engine.listAll()).length).toBe(1);
		await expect(engine.exportSessionFile("/pi/agent/../x.jsonl")).rejects.toBeInstanceOf(PathOutsideRootError);
		await expect(engine.exportSessionFile("/elsewhere/x.jsonl")).rejects.toBeInstanceOf(PathOutsideRootError);
		const { engine: worker, terminate } = await startEngineWorker({ storage: "memory" });
		try {
			await worker.importSessionFile("/anywhere/x.jsonl", new TextEncoder().encode(v3File("anywhere")));
			expect((await worker.open("/anywhere/x.jsonl")).entryCount).toBe(1);
		} finally {
			await terminate();
		}
	});
});
