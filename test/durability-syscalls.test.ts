/**
 * The durable modes really ask the file system to sync. A SIGKILL cannot tell an fsync from none (the page
 * cache outlives the process), so these tests watch the calls instead: on the local file system's storage
 * (`createNodeStorage`) every `FileHandle#write` and `#datasync`, on its synchronous twin (the
 * pi-compatible `SessionManager`'s) every `fs.writeSync` and `fs.fdatasyncSync`, each with the name of
 * the file it went to. A durable append's bytes are synced before its promise resolves; `"none"` syncs no
 * append; a migration's rewrite is synced whatever the mode (it replaces what the user had). Both
 * `datasync` and `sync` (and their sync twins) count as syncs, so that an extra one in `"none"` shows.
 */
import fs, { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createNodeStorage } from "../adapters/node.ts";
import { SessionManager } from "../adapters/pi-compat.ts";
import { type Durability, Session } from "../src/index.ts";
import { sessionFixture } from "./fixtures/generate.ts";
import { assistantMessage, userMessage } from "./support/messages.ts";

const dir = mkdtempSync(join(tmpdir(), "pst-durability-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One call the storage made: a write or a sync, to the file of that name. */
interface Call {
	kind: "write" | "sync";
	file: string;
}

const undo: (() => void)[] = [];
/** Put back everything `patch` replaced, last first. */
function restoreAll(): void {
	for (const restore of undo.splice(0).reverse()) restore();
	syncBuiltinESMExports();
}
afterEach(restoreAll);

/** Replace `target[key]` by what `wrap` makes of it, until the test ends. */
function patch<T extends object, K extends keyof T>(target: T, key: K, wrap: (original: T[K]) => T[K]): void {
	const original = target[key];
	target[key] = wrap(original);
	undo.push(() => {
		target[key] = original;
	});
}

type AnyFunction = (this: unknown, ...args: never[]) => unknown;

/** Every write and datasync through a `FileHandle` (what the async storage uses), in order. */
async function watchHandles(): Promise<Call[]> {
	const probe = await fs.promises.open(join(dir, "probe"), "w");
	const handles = Object.getPrototypeOf(probe) as Record<"write" | "datasync" | "sync", AnyFunction>;
	await probe.close();
	const names = new Map<number, string>();
	const calls: Call[] = [];
	patch(fs.promises, "open", (open) =>
		Object.assign(async (...args: Parameters<typeof open>) => {
			const handle = await open(...args);
			names.set(handle.fd, basename(String(args[0])));
			return handle;
		}),
	);
	// Each recorded when the file system says it is done: a sync counts once it has finished.
	for (const [method, kind] of [
		["write", "write"],
		["datasync", "sync"],
		["sync", "sync"],
	] as const) {
		patch(handles, method, (original) =>
			Object.assign(async function (this: { fd: number }, ...args: never[]) {
				const result = await original.apply(this, args);
				calls.push({ kind, file: names.get(this.fd) ?? "?" });
				return result;
			}),
		);
	}
	return calls;
}

/** Every `writeSync` and `fdatasyncSync` (what the sync storage uses), in order. */
function watchSyncCalls(): Call[] {
	const names = new Map<number, string>();
	const calls: Call[] = [];
	patch(fs, "openSync", (open) =>
		Object.assign((...args: Parameters<typeof open>) => {
			const fd = open(...args);
			names.set(fd, basename(String(args[0])));
			return fd;
		}),
	);
	patch(fs, "writeSync", (write) =>
		Object.assign((...args: Parameters<typeof write>) => {
			calls.push({ kind: "write", file: names.get(args[0]) ?? "?" });
			return (write as AnyFunction)(...(args as unknown as never[])) as number;
		}),
	);
	for (const method of ["fdatasyncSync", "fsyncSync"] as const) {
		patch(fs, method, (sync) =>
			Object.assign((fd: number) => {
				calls.push({ kind: "sync", file: names.get(fd) ?? "?" });
				sync(fd);
			}),
		);
	}
	// The adapters import `node:fs` by name: their bindings follow the module object only after this.
	syncBuiltinESMExports();
	return calls;
}

/** Whether `file` is the temporary twin a rewrite of the file at `path` is written to (`<name>.<8 hex>.tmp`). */
const isRewriteOf = (file: string, path: string): boolean =>
	file.startsWith(`${basename(path)}.`) && /^\.[0-9a-f]{8}\.tmp$/.test(file.slice(basename(path).length));

/** The calls to the session file `path` (by its name; temporary twins carry another). */
const toFile = (calls: readonly Call[], path: string): string[] =>
	calls.filter((call) => call.file === basename(path)).map((call) => call.kind);

/** Appends `count` entries issued together; at each one's resolution, the calls to the file so far. */
async function burst(session: Session, calls: readonly Call[], count: number): Promise<string[][]> {
	const seen: string[][] = [];
	await Promise.all(
		Array.from({ length: count }, (_, n) =>
			session.appendCustomEntry("x", { n }).then(() => {
				seen.push(toFile(calls, session.path as string));
			}),
		),
	);
	return seen;
}

describe("durability: the syncs the file system is asked for (createNodeStorage)", () => {
	const open = async (durability: Durability, name: string) => {
		const storage = createNodeStorage();
		const session = await Session.create(storage, { cwd: "/p", sessionDir: join(dir, name), durability });
		await session.appendMessage(userMessage("hi", 1)); // the file is made now
		return session;
	};

	it('"fsync": each append written and synced on its own, synced before it resolves', async () => {
		const calls = await watchHandles();
		const session = await open("fsync", "fsync");
		const path = session.path as string;
		const created = calls.length;
		expect(created, "the first append creates the file").toBeGreaterThan(0);
		// The file is created under a temporary name, synced, then linked: its own name is never written.
		expect(calls.filter((call) => call.kind === "sync").length).toBeGreaterThanOrEqual(1);
		expect(toFile(calls, path)).toEqual([]);
		const seen = await burst(session, calls, 20);
		const after = toFile(calls, path);
		expect(after).toEqual(Array.from({ length: 20 }, () => ["write", "sync"]).flat());
		// The n-th append resolves once n syncs are done.
		seen.forEach((sofar, n) => {
			expect(sofar.filter((kind) => kind === "sync").length, `append ${n}`).toBeGreaterThanOrEqual(n + 1);
			expect(sofar.at(-1), `append ${n}`).toBe("sync");
		});
		await session.close();
	});

	it('"group": appends issued together share one write and one sync, before they resolve', async () => {
		const calls = await watchHandles();
		const session = await open("group", "group");
		const seen = await burst(session, calls, 200);
		const after = toFile(calls, session.path as string);
		const writes = after.filter((kind) => kind === "write").length;
		expect(writes).toBeLessThanOrEqual(3);
		expect(after).toEqual(Array.from({ length: writes }, () => ["write", "sync"]).flat());
		// Each append resolves once the write holding it is synced: at its resolution, every write so far is.
		for (const sofar of seen) {
			expect(sofar.at(-1)).toBe("sync");
			expect(sofar.filter((kind) => kind === "sync").length).toBe(sofar.filter((kind) => kind === "write").length);
		}
		// And not before its own group's write: the later appends resolve after more writes than the first.
		expect(seen.at(-1)?.length).toBe(after.length);
		await session.close();
	});

	it('"none": appends are written, never synced', async () => {
		const calls = await watchHandles();
		const session = await open("none", "none");
		await burst(session, calls, 20);
		await session.appendMessage(assistantMessage("alone", { timestamp: 2 }));
		const after = toFile(calls, session.path as string);
		expect(after.length).toBeGreaterThan(0);
		expect(calls.filter((call) => call.kind === "sync")).toEqual([]);
		await session.close();
	});

	it("a migration's rewrite is synced before it takes the file's name, in every mode", async () => {
		for (const durability of ["none", "fsync"] as const) {
			const path = join(dir, `v1-${durability}.jsonl`);
			writeFileSync(path, sessionFixture("v1-linear.jsonl").text);
			const calls = await watchHandles();
			const session = await Session.open(createNodeStorage(), path, { durability });
			expect(session.report.migratedFrom?.version, durability).toBe(1);
			// Written to a temporary file, synced, renamed over the session: the last calls are its.
			const rewrite = calls.filter((call) => isRewriteOf(call.file, path));
			expect(rewrite.length, durability).toBeGreaterThan(0);
			expect(rewrite.at(-1)?.kind, durability).toBe("sync");
			await session.close();
			restoreAll();
		}
	});
});

describe("durability: the syncs of the pi-compatible SessionManager (the sync storage)", () => {
	it("a migration's rewrite is synced; appends, as pi's, are not", () => {
		const path = join(dir, "pi-compat-v1.jsonl");
		writeFileSync(path, sessionFixture("v1-linear.jsonl").text);
		const calls = watchSyncCalls();
		const manager = SessionManager.open(path, dir);
		const rewrite = calls.filter((call) => isRewriteOf(call.file, path));
		expect(rewrite.map((call) => call.kind)).toContain("sync");
		expect(rewrite.at(-1)?.kind).toBe("sync");
		const before = calls.length;
		manager.appendMessage(userMessage("after the migration", 5));
		manager.appendMessage(assistantMessage("answer", { timestamp: 6 }));
		const appended = calls.slice(before);
		expect(appended.filter((call) => call.kind === "write").length).toBeGreaterThan(0);
		expect(appended.filter((call) => call.kind === "sync")).toEqual([]);
	});
});
