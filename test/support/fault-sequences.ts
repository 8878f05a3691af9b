/**
 * The random operation sequences with random storage faults of test/fault-sequences.test.ts (Node and
 * ZenFS) and test/browser/fault-sequences.test.ts (OPFS and ZenFS in Chromium): one property, on any storage.
 *
 * Operations: appends awaited one by one and pipelined, small and large, flushes, reopenings in each
 * durability, forks, another program appending whole or half lines; each storage operation fails with a
 * small probability in one of the ways of faulty-storage.ts. Properties: every call ends (within `CALL_MS`)
 * in a value or one of the package's typed errors; after the sequence, a healthy open finds every
 * acknowledged entry, in the order acknowledged and as appended; a fork holds the entries its source had
 * acknowledged; a lock or temporary file left by a failed release or rewrite never blocks the next open.
 * @module
 */
import fc from "fast-check";
import { expect } from "vitest";
import type { SessionEntry } from "../../src/entries.ts";
import { messageText } from "../../src/entry-text.ts";
import { type Durability, Session } from "../../src/session.ts";
import type { Storage } from "../../src/storage.ts";
import { type Fault, faultyStorage } from "./faulty-storage.ts";
import { assistantMessage, userMessage } from "./messages.ts";
import { seededRandom } from "./random.ts";
import { isTyped } from "./typed-errors.ts";

/** A call that has not settled by then is a hang. */
const CALL_MS = 10_000;

/** `run()`'s value, or undefined when it rejected with a typed error; an untyped error or a hang fails. */
async function attempt<T>(what: string, run: () => Promise<T>): Promise<T | undefined> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const hang = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`${what}: did not settle within ${CALL_MS} ms`)), CALL_MS);
	});
	try {
		return await Promise.race([run(), hang]);
	} catch (error) {
		if (!isTyped(error)) {
			throw new Error(
				`${what}: untyped error ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
			);
		}
		return undefined;
	} finally {
		clearTimeout(timer);
	}
}

type Command =
	| { op: "append"; role: "user" | "assistant"; bytes: number }
	| { op: "pipelined"; count: number }
	| { op: "flush" }
	| { op: "reopen"; durability: Durability }
	| { op: "fork" }
	| { op: "other-program"; whole: boolean };

const command: fc.Arbitrary<Command> = fc.oneof(
	{
		weight: 6,
		arbitrary: fc.record({
			op: fc.constant("append" as const),
			role: fc.constantFrom("user" as const, "assistant" as const),
			bytes: fc.oneof(
				{ weight: 5, arbitrary: fc.integer({ min: 1, max: 200 }) },
				fc.integer({ min: 50_000, max: 300_000 }),
			),
		}),
	},
	{ weight: 2, arbitrary: fc.record({ op: fc.constant("pipelined" as const), count: fc.integer({ min: 2, max: 8 }) }) },
	{ weight: 1, arbitrary: fc.constant({ op: "flush" as const }) },
	{
		weight: 2,
		arbitrary: fc.record({
			op: fc.constant("reopen" as const),
			durability: fc.constantFrom<Durability>("none", "fsync", "group"),
		}),
	},
	{ weight: 1, arbitrary: fc.constant({ op: "fork" as const }) },
	{ weight: 1, arbitrary: fc.record({ op: fc.constant("other-program" as const), whole: fc.boolean() }) },
);

const FAULTS: Fault[] = [
	{ kind: "fail", errno: "EIO" },
	{ kind: "fail", errno: "EMFILE" },
	{ kind: "fail", errno: "ENOSPC" },
	{ kind: "short", keep: 7 },
	{ kind: "flush" },
	{ kind: "after" },
];

/** What was acknowledged of one file: ids in order, and the text each was appended with. */
interface Acknowledged {
	ids: string[];
	texts: Map<string, string>;
}

const encoder = new TextEncoder();

/** Run one sequence on `base`; returns what was acknowledged per file, for the checks. */
async function runSequence(
	base: Storage,
	root: string,
	commands: Command[],
	seed: number,
	faultRate: number,
): Promise<{ files: Map<string, Acknowledged>; forks: { path: string; holds: string[] }[]; log: string[] }> {
	const random = seededRandom(seed);
	const faulty = faultyStorage(base, () =>
		random() < faultRate ? (FAULTS[Math.floor(random() * FAULTS.length)] as Fault) : undefined,
	);
	const storage = faulty.storage;
	const files = new Map<string, Acknowledged>();
	const forks: { path: string; holds: string[] }[] = [];
	const log: string[] = [];
	const sessionDir = `${root}/s`;
	const acknowledge = (path: string, id: string, text: string) => {
		const file: Acknowledged = files.get(path) ?? { ids: [], texts: new Map() };
		files.set(path, file);
		file.ids.push(id);
		file.texts.set(id, text);
	};
	let counter = 0;
	const nextText = (bytes: number) => `m${counter++}:${"x".repeat(bytes)}`;
	const appendOne = (session: Session, role: "user" | "assistant", text: string) =>
		role === "user"
			? session.appendMessage(userMessage(text, 1))
			: session.appendMessage(assistantMessage(text, { timestamp: 2 }));

	let session = await attempt("create", () => Session.create(storage, { cwd: "/p", sessionDir }));
	let path = session?.path;
	for (const c of commands) {
		log.push(JSON.stringify(c));
		if (c.op === "reopen" || !session) {
			if (session) await attempt("close", () => (session as Session).close());
			session = undefined;
			const target = path;
			if (target) {
				const exists = await attempt("stat", () => base.stat(target));
				session = await attempt("open", () =>
					Session.open(storage, target, {
						durability: c.op === "reopen" ? c.durability : "none",
						settleMs: 0,
						create: !exists,
					}),
				);
			} else {
				session = await attempt("create", () => Session.create(storage, { cwd: "/p", sessionDir }));
				path = session?.path;
			}
			if (c.op === "reopen") continue;
			if (!session) continue;
		}
		const current = session;
		const currentPath = current.path as string;
		switch (c.op) {
			case "append": {
				const text = nextText(c.bytes);
				const id = await attempt("append", () => appendOne(current, c.role, text));
				if (id !== undefined) acknowledge(currentPath, id, text);
				break;
			}
			case "pipelined": {
				const texts = Array.from({ length: c.count }, () => nextText(20));
				const calls = texts.map((text, n) =>
					attempt("pipelined append", () => appendOne(current, n % 2 ? "assistant" : "user", text)),
				);
				for (const [n, id] of (await Promise.all(calls)).entries()) {
					if (id !== undefined) acknowledge(currentPath, id, texts[n] as string);
				}
				break;
			}
			case "flush":
				await attempt("flush", () => current.flush());
				break;
			case "fork": {
				// What the source has acknowledged so far must be in the fork (unless the fork fails).
				const holds = [...(files.get(currentPath)?.ids ?? [])];
				const fork = await attempt("fork", () => Session.forkFrom(storage, currentPath, "/forked", `${root}/forks`));
				if (fork) {
					forks.push({ path: fork.path as string, holds });
					await attempt("close fork", () => fork.close());
				}
				break;
			}
			case "other-program": {
				const line = c.whole
					? `{"type":"custom","customType":"other","id":"o${counter++}","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z"}\n`
					: '{"type":"custom","customType":"half';
				if (await attempt("stat", () => base.stat(currentPath))) {
					await base.append(currentPath, encoder.encode(line), false);
				}
				break;
			}
		}
	}
	if (session) await attempt("close", () => (session as Session).close());
	for (const { call, fault } of faulty.log.injected)
		log.push(`fault ${fault.kind} at call ${call.index}: ${call.op} ${call.path}`);
	return { files, forks, log };
}

/** The entries a healthy open (for writing, so a torn tail is repaired first) finds in `path`. */
async function entriesOf(storage: Storage, path: string): Promise<SessionEntry[]> {
	const session = await Session.open(storage, path, { settleMs: 0 });
	const entries = await session.getEntries();
	await session.close();
	return entries;
}

/** Lock files, takeover guards and temporary files among a directory's entries. */
function leftovers(entries: readonly { name: string }[]): string[] {
	return entries.map((entry) => entry.name).filter((name) => /\.(lock|lock\.takeover|tmp)$/.test(name));
}

/** The session file a lock, guard or temporary belongs to. */
function sessionNameOf(leftover: string): string {
	return leftover.replace(/\.jsonl\..*$/, ".jsonl");
}

function textOf(entry: SessionEntry | undefined): string | undefined {
	return entry?.type === "message" ? messageText(entry.message) : undefined;
}

/** Run the property `runs` times on fresh storages made by `setup` (`seed`: repeat a run). */
/** What must hold after a sequence: every acknowledged entry kept, forks whole, nothing left that blocks. */
async function expectOutcome(
	storage: Storage,
	root: string,
	files: Map<string, Acknowledged>,
	forks: { path: string; holds: string[] }[],
): Promise<void> {
	for (const [path, acknowledged] of files) {
		const entries = await entriesOf(storage, path);
		const byId = new Map(entries.map((entry) => [entry.id, entry]));
		const positions = acknowledged.ids.map((id) => entries.findIndex((entry) => entry.id === id));
		expect(
			acknowledged.ids.filter((_, n) => (positions[n] as number) < 0),
			`${path}: acknowledged entries missing`,
		).toEqual([]);
		expect(
			[...positions].sort((a, b) => a - b),
			`${path}: in the order acknowledged`,
		).toEqual(positions);
		for (const id of acknowledged.ids) expect(textOf(byId.get(id)), id).toBe(acknowledged.texts.get(id));
	}
	for (const fork of forks) {
		// A fork's file is created with its first message: one that took none may have no file.
		if (!(await storage.stat(fork.path))) {
			expect(fork.holds, `${fork.path}: a fork of acknowledged entries has a file`).toEqual([]);
			continue;
		}
		const ids = new Set((await entriesOf(storage, fork.path)).map((entry) => entry.id));
		expect(
			fork.holds.filter((id) => !ids.has(id)),
			`${fork.path}: the source's entries`,
		).toEqual([]);
	}
	// A lock or temporary file a failed release or rewrite left never blocks: the next writing open
	// of its session takes the lock over and removes the temporaries, and leaves nothing behind.
	for (const dir of [`${root}/s`, `${root}/forks`]) {
		for (const name of leftovers(await storage.list(dir))) {
			const session = await Session.open(storage, `${dir}/${sessionNameOf(name)}`, {
				create: true,
				settleMs: 0,
			});
			await session.close();
		}
		// A takeover guard whose removal failed may stay; it is judged abandoned by the next takeover.
		const left = leftovers(await storage.list(dir)).filter((name) => !name.endsWith(".takeover"));
		expect(left, `${dir}: locks or temporaries left`).toEqual([]);
	}
}

export async function checkFaultSequences(
	setup: () => Promise<{ storage: Storage; root: string }>,
	runs: number,
	seed?: number,
): Promise<void> {
	await fc.assert(
		fc.asyncProperty(
			fc.array(command, { minLength: 1, maxLength: 25 }),
			fc.integer({ min: 0, max: 2 ** 31 - 1 }),
			fc.constantFrom(0.02, 0.06, 0.15),
			async (commands, seed, faultRate) => {
				const { storage, root } = await setup();
				const { files, forks, log } = await runSequence(storage, root, commands, seed, faultRate);
				try {
					await expectOutcome(storage, root, files, forks);
				} catch (error) {
					// The faults injected are not in the counterexample: say them.
					throw new Error(`${(error as Error).message}\nthe sequence and its faults:\n${log.join("\n")}`, {
						cause: error,
					});
				}
			},
		),
		{ numRuns: runs, ...(seed === undefined ? {} : { seed }) },
	);
}
