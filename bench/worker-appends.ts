/**
 * Benchmark: appends through the engine in a worker. (a) One awaited append at a time, through workers
 * on node storage (durability "none" and "group") and on memory storage, beside the bare Comlink round
 * trip, our in-process `Session`, and pi 1.6.0's and pi 0.73.1's `SessionManager.appendMessage` (each call
 * timed in a loop: pi's appends are synchronous). (b) The throughput of 10,000 pipelined appends (all
 * issued, then all awaited) through the same workers, beside our in-process `Session`, pi's
 * `SessionManager.appendMessage` called 10,000 times and the floor (the same entries stringified and
 * written with one call). Every file is read back and checked to hold all appends in order: the returned
 * ids, the sent messages, each entry's parent the one before, and the header's and entries' fields in pi
 * 1.6.0's order; and whole: every line as `JSON.stringify` writes it, and, ids numbered in file order and
 * fresh ids' and timestamps' digits masked, every line the same as in pi 1.6.0's file of the same round.
 * The cases take turns in every round, a different one first each round. Messages are real user and
 * assistant messages of the corpus (150–1000 bytes of JSON).
 * Everything is written to a temporary agent directory, removed at the end.
 * Run: `npx tsx bench/worker-appends.ts [--quick]` (`BENCH_ROUNDS=11` for more rounds; 5 by default, 1 with
 * `--quick`, which also times 500 awaited appends per case and round instead of 2,000 and leaves out the
 * cases the suite's rows do not need: durability "group" and the memory storage); under `npm run bench`
 * (bench/run.ts) it reports its rows to the suite.
 * @module
 */
import { randomUUID } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager as Pi073SessionManager } from "@mariozechner/pi-coding-agent";
import { createNodeStorage } from "../adapters/node.ts";
import { type EngineWorker, startEngineWorker, type WorkerEngineConfig } from "../adapters/worker.ts";
import { SessionManager as Pi16SessionManager } from "../node_modules/pi-coding-agent-1.6/dist/core/session-manager.js";
import { type AgentMessage, type Durability, Session } from "../src/index.ts";
import { type BenchRow, measureOf, reportRow } from "./suite/rows.ts";
import {
	collectAndSettle,
	corpusMessages,
	count,
	isQuick,
	median,
	messageSequence,
	ms,
	percentile,
	relaunchWithGc,
	temporaryAgentDir,
} from "./worker-support.ts";

const QUICK = isQuick();
/** Awaited appends per case and round in (a), after `ROUND_TRIP_WARMUP` untimed ones. */
const ROUND_TRIP_WARMUP = QUICK ? 100 : 500;
const ROUND_TRIPS = QUICK ? 500 : 2000;
const PIPELINED = 10_000;
const WARMUP = 1;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 5));
const CWD = "/bench/appends";

type FileRecord = { type: string; id?: string; parentId?: string | null; timestamp?: string; message?: unknown };

/** The field order pi 1.6.0 writes: of its header, and of a message entry. */
interface Layout {
	header: string;
	entry: string;
}

/**
 * Where `records` are not header, the first assistant message, then exactly `ids`/`messages` in order, each
 * entry's parent the one before and the fields in pi 1.6.0's order; undefined when they are.
 */
function fileProblem(
	records: readonly FileRecord[],
	ids: readonly string[],
	messages: readonly AgentMessage[],
	layout: Layout | undefined,
): string | undefined {
	const header = records[0];
	if (header?.type !== "session") return "no header first";
	if (layout && Object.keys(header).join() !== layout.header) {
		return `header fields ${Object.keys(header).join()}, pi 1.6.0 writes ${layout.header}`;
	}
	const entries = records.slice(1);
	if (entries.length !== ids.length + 1) return `${entries.length} entries, expected ${ids.length + 1}`;
	let parentId: string | null = null;
	for (let i = 0; i < entries.length; i++) {
		const entry = entries[i] as FileRecord;
		if (entry.type !== "message") return `entry ${i} is a ${entry.type}`;
		if (entry.parentId !== parentId) return `entry ${i}'s parent is ${entry.parentId}, expected ${parentId}`;
		if (Number.isNaN(Date.parse(entry.timestamp ?? ""))) return `entry ${i}'s timestamp is ${entry.timestamp}`;
		if (layout && Object.keys(entry).join() !== layout.entry) {
			return `entry ${i}'s fields ${Object.keys(entry).join()}, pi 1.6.0 writes ${layout.entry}`;
		}
		parentId = entry.id ?? null;
		if (i === 0) continue;
		if (entry.id !== ids[i - 1]) return `entry ${i} has id ${entry.id}, expected ${ids[i - 1]}`;
		if (JSON.stringify(entry.message) !== JSON.stringify(messages[i - 1])) return `entry ${i}'s message differs`;
	}
	return undefined;
}

function readJsonl(path: string): FileRecord[] {
	return readFileSync(path, "utf8")
		.split("\n")
		.filter((line) => line !== "")
		.map((line) => JSON.parse(line) as FileRecord);
}

/** A file's normalised lines (`wholeOf`), to compare with pi 1.6.0's of the same round. */
interface Whole {
	header?: string;
	entries: string[];
}

/**
 * A file's whole content as every implementation must write it, but for what each draws afresh: every line
 * JSON as `JSON.stringify` writes it (with `text`, the file's), the file ending in a newline; the entries'
 * ids numbered in file order (a parent by its number), the header's id and every timestamp by their shapes
 * (digits and hex letters masked). A string says what is wrong instead.
 */
function wholeOf(records: readonly FileRecord[], text?: string): Whole | string {
	if (text !== undefined) {
		const lines = text.split("\n");
		if (lines.pop() !== "") return "the file does not end with a newline";
		const odd = lines.findIndex((line, at) => line !== JSON.stringify(records[at]));
		if (odd >= 0) return `line ${odd + 1} is not written as JSON.stringify writes its record`;
	}
	const numbers = new Map<string, string>();
	const shape = (value: unknown) => (typeof value === "string" ? value.replace(/[0-9a-f]/g, "x") : value);
	const lines = records.map((record) => {
		if (record.type === "session")
			return JSON.stringify({ ...record, id: shape(record.id), timestamp: shape(record.timestamp) });
		numbers.set(record.id as string, `#${numbers.size}`);
		const parentId = record.parentId === null ? null : (numbers.get(record.parentId as string) ?? "unknown");
		return JSON.stringify({
			...record,
			id: numbers.get(record.id as string),
			parentId,
			timestamp: shape(record.timestamp),
		});
	});
	const header = records[0]?.type === "session" ? lines.shift() : undefined;
	return { header, entries: lines };
}

/** What a case's session holds: what is wrong with it (see `fileProblem`), and its whole content. */
interface Held {
	problem?: string;
	whole?: Whole;
}

/** Read a file back (then remove it): `fileProblem`, and its whole content. */
function heldIn(path: string, ids: readonly string[], sent: readonly AgentMessage[], layout: Layout): Held {
	const text = readFileSync(path, "utf8");
	rmSync(path);
	const records = text
		.split("\n")
		.filter((line) => line !== "")
		.map((line) => JSON.parse(line) as FileRecord);
	const whole = wholeOf(records, text);
	const problem = fileProblem(records, ids, sent, layout) ?? (typeof whole === "string" ? whole : undefined);
	return typeof whole === "string" ? { problem } : { problem, whole };
}

/** Where `whole` differs from pi 1.6.0's `reference` (same appends, same round), or undefined. */
function wholeDifference(whole: Whole, reference: Whole): string | undefined {
	if (whole.header !== undefined && whole.header !== reference.header) {
		return `header ${whole.header}, pi 1.6.0 wrote ${reference.header}`;
	}
	const at = whole.entries.findIndex((line, index) => line !== reference.entries[index]);
	if (at >= 0) return `entry ${at} differs from pi 1.6.0's: ${whole.entries[at]?.slice(0, 160)}`;
	if (whole.entries.length !== reference.entries.length) {
		return `${whole.entries.length} entries, pi 1.6.0 wrote ${reference.entries.length}`;
	}
	return undefined;
}

/** A session of one case, holding one assistant message, ready for appends. */
interface Target {
	/** One append; resolves (pi: returns) with its id once written. */
	one: (message: AgentMessage) => Promise<string> | string;
	/** Issue every append; resolves when all are written. `issued` is called once all are issued. */
	all: (messages: readonly AgentMessage[], issued: () => void) => Promise<string[]>;
	/** Close it and read back what it holds (no problem: all of `ids`/`sent`, in order). */
	finish: (ids: readonly string[], sent: readonly AgentMessage[]) => Promise<Held>;
}

interface Case {
	name: string;
	prepare: () => Promise<Target>;
}

/** Time each of `count` calls after `warmup` untimed ones (each awaited before the next); ms per call, and the ids. */
async function timeEach(
	target: Target,
	messages: readonly AgentMessage[],
	warmup: number,
	timed: number,
): Promise<{ times: number[]; ids: string[]; sent: AgentMessage[] }> {
	const ids: string[] = [];
	const sent: AgentMessage[] = [];
	const times: number[] = [];
	for (let i = 0; i < warmup + timed; i++) {
		const message = messages[i % messages.length] as AgentMessage;
		const start = performance.now();
		const id = await target.one(message);
		if (i >= warmup) times.push(performance.now() - start);
		ids.push(id);
		sent.push(message);
	}
	return { times, ids, sent };
}

async function main(): Promise<void> {
	const dirs = temporaryAgentDir("pi-bench-appends-");
	const sessionDir = join(dirs.sessionsRoot, "--bench-appends--");
	const allWorkerConfigs: { name: string; config: WorkerEngineConfig }[] = [
		{ name: "worker, node, durability none", config: { storage: "node", agentDir: dirs.agentDir, durability: "none" } },
		{
			name: "worker, node, durability group",
			config: { storage: "node", agentDir: dirs.agentDir, durability: "group" },
		},
		{ name: "worker, memory, durability none", config: { storage: "memory", durability: "none" } },
	];
	// A quick run keeps the cases the suite's rows need: node storage with durability none.
	const workerConfigs = QUICK ? allWorkerConfigs.slice(0, 1) : allWorkerConfigs;
	const workers: EngineWorker[] = [];
	const problems = new Map<string, string>();
	try {
		const { assistant } = corpusMessages();
		const firstAssistant = assistant[0] as AgentMessage;
		const messages = messageSequence(PIPELINED);
		const bytes = messages.reduce((sum, m) => sum + JSON.stringify(m).length, 0);
		for (const { config } of workerConfigs) workers.push(await startEngineWorker(config));

		// pi 1.6.0's field order, from a session of its own, so every file can be held to it.
		const reference = Pi16SessionManager.create(CWD, sessionDir);
		reference.appendMessage(firstAssistant as never);
		reference.appendMessage(messages[0] as never);
		const referenceRecords = readJsonl(reference.getSessionFile() as string);
		rmSync(reference.getSessionFile() as string);
		const layout: Layout = {
			header: Object.keys(referenceRecords[0] ?? {}).join(),
			entry: Object.keys(referenceRecords[1] ?? {}).join(),
		};

		const workerCase = (index: number): Case => {
			const { name, config } = workerConfigs[index] as (typeof workerConfigs)[0];
			const engine = (workers[index] as EngineWorker).engine;
			return {
				name,
				prepare: async () => {
					const { handle, path } = await engine.create({ cwd: CWD });
					await engine.appendMessage(handle, firstAssistant);
					return {
						one: (message) => engine.appendMessage(handle, message),
						all: (batch, issued) => {
							const pending = batch.map((message) => engine.appendMessage(handle, message));
							issued();
							return Promise.all(pending);
						},
						finish: async (ids, sent) => {
							await engine.close(handle);
							if (config.storage === "node") return heldIn(path as string, ids, sent, layout);
							const reopened = await engine.open(path as string, { readOnly: true });
							const branch = (await engine.getBranch(reopened.handle)) as FileRecord[];
							await engine.close(reopened.handle);
							// What the memory storage holds is read back as entries (no file to hold to pi's field order).
							const problem = fileProblem([{ type: "session" }, ...branch], ids, sent, undefined);
							return { problem, whole: wholeOf(branch) as Whole };
						},
					};
				},
			};
		};
		const sessionCase = (durability: Durability): Case => ({
			name: `in-process Session, node, ${durability}`,
			prepare: async () => {
				const session = await Session.create(createNodeStorage(), { cwd: CWD, sessionDir, durability });
				await session.appendMessage(firstAssistant);
				return {
					one: (message) => session.appendMessage(message),
					all: (batch, issued) => {
						const pending = batch.map((message) => session.appendMessage(message));
						issued();
						return Promise.all(pending);
					},
					finish: async (ids, sent) => {
						await session.close();
						return heldIn(session.path as string, ids, sent, layout);
					},
				};
			},
		});
		const piCase = (name: string, create: () => Pi16SessionManager | Pi073SessionManager): Case => ({
			name,
			prepare: async () => {
				const manager = create();
				manager.appendMessage(firstAssistant as never);
				return {
					one: (message) => manager.appendMessage(message as never),
					all: async (batch, issued) => {
						const ids = batch.map((message) => manager.appendMessage(message as never));
						issued();
						return ids;
					},
					finish: async (ids, sent) => heldIn(manager.getSessionFile() as string, ids, sent, layout),
				};
			},
		});
		const pi16Case = piCase("pi 1.6.0 SessionManager.appendMessage", () => Pi16SessionManager.create(CWD, sessionDir));
		const pi073Case = piCase("pi 0.73.1 SessionManager.appendMessage", () =>
			Pi073SessionManager.create(CWD, sessionDir),
		);
		const bareEngine = (workers[0] as EngineWorker).engine;
		const bareCall: Case = {
			name: "worker, bare call (engine.openHandles)",
			prepare: async () => ({
				one: async () => (await bareEngine.openHandles()).join(),
				all: async (batch, issued) => {
					const pending = batch.map(() => bareEngine.openHandles());
					issued();
					return (await Promise.all(pending)).map((handles) => handles.join());
				},
				// No session: each call answers the worker's open handles (none: every case closes its own).
				finish: async (results, sent) => ({
					problem:
						results.length === sent.length && results.every((handles) => handles === "")
							? undefined
							: "bare calls: some calls did not answer, or answered open handles",
				}),
			}),
		};
		// The floor: the entries pi would write, stringified, and written with one call (no ids kept, no tree).
		const floorCase: Case = {
			name: "floor: stringify all, one write",
			prepare: async () => {
				const path = join(dirs.agentDir, "floor.jsonl");
				const header = { type: "session", version: 3, id: randomUUID(), timestamp: new Date().toISOString(), cwd: CWD };
				const first = { type: "message", id: "f0000000", parentId: null, timestamp: header.timestamp };
				writeFileSync(path, `${JSON.stringify(header)}\n${JSON.stringify({ ...first, message: firstAssistant })}\n`);
				return {
					one: () => {
						throw new Error("the floor has no one-by-one case");
					},
					all: async (batch, issued) => {
						const ids: string[] = [];
						let parentId = first.id;
						let text = "";
						for (const [index, message] of batch.entries()) {
							const id = (index + 1).toString(16).padStart(8, "0");
							const entry = { type: "message", id, parentId, timestamp: new Date().toISOString(), message };
							text += `${JSON.stringify(entry)}\n`;
							ids.push(id);
							parentId = id;
						}
						issued();
						writeFileSync(path, text, { flag: "a" });
						return ids;
					},
					finish: async (ids, sent) => heldIn(path, ids, sent, layout),
				};
			},
		};
		const workerCases = workerConfigs.map((_, index) => workerCase(index));
		const inProcess = sessionCase("none");
		const note = (name: string, problem: string | undefined): void => {
			if (problem && !problems.has(name)) problems.set(name, problem);
		};
		/**
		 * One round of `cases`, each in its turn (a different one first every round); `run` times one and
		 * reads back what its session holds, which must then be what pi 1.6.0's holds after the same appends.
		 */
		const inTurns = async (
			cases: readonly Case[],
			round: number,
			nameOf: (benchCase: Case) => string,
			run: (benchCase: Case, index: number) => Promise<Held>,
		): Promise<void> => {
			const wholes = new Map<Case, Whole>();
			const shift = round % cases.length;
			for (const benchCase of [...cases.slice(shift), ...cases.slice(0, shift)]) {
				const held = await run(benchCase, cases.indexOf(benchCase));
				note(nameOf(benchCase), held.problem);
				if (held.whole) wholes.set(benchCase, held.whole);
			}
			const reference = wholes.get(pi16Case);
			if (!reference) note(nameOf(pi16Case), "no file to compare the others' with");
			for (const [benchCase, whole] of wholes) {
				if (reference && benchCase !== pi16Case) note(nameOf(benchCase), wholeDifference(whole, reference));
			}
		};

		// (a) One append at a time, awaited. Cases take turns in each round (inTurns); each round a fresh session.
		const roundTripCases: Case[] = [bareCall, ...workerCases, inProcess, pi16Case, pi073Case];
		const roundTimes = roundTripCases.map((): number[] => []);
		/** µs per append of each round: the median of its timed appends, and their mean (total ÷ count). */
		const roundMedians = roundTripCases.map((): number[] => []);
		const roundMeans = roundTripCases.map((): number[] => []);
		for (let round = 0; round < WARMUP + ROUNDS; round++) {
			await inTurns(
				roundTripCases,
				round,
				(benchCase) => benchCase.name,
				async (benchCase, index) => {
					const target = await benchCase.prepare();
					collectAndSettle();
					const { times, ids, sent } = await timeEach(target, messages, ROUND_TRIP_WARMUP, ROUND_TRIPS);
					if (round >= WARMUP) {
						roundTimes[index]?.push(...times);
						roundMedians[index]?.push(median(times) * 1000);
						roundMeans[index]?.push((times.reduce((sum, t) => sum + t, 0) * 1000) / times.length);
					}
					return target.finish(ids, sent);
				},
			);
		}
		for (const times of roundTimes) times.sort((a, b) => a - b);

		// (b) Pipelined throughput.
		const throughputCases: Case[] = [
			bareCall,
			...workerCases,
			inProcess,
			...(QUICK ? [] : [sessionCase("group")]),
			pi16Case,
			pi073Case,
			floorCase,
		];
		const pipelinedName = (name: string): string =>
			name.startsWith("pi ")
				? `${name} (${count(PIPELINED)} calls)`
				: name.startsWith("floor")
					? name
					: `${name}, pipelined`;
		const totals = throughputCases.map((): number[] => []);
		const issues = throughputCases.map((): number[] => []);
		for (let round = 0; round < WARMUP + ROUNDS; round++) {
			await inTurns(
				throughputCases,
				round,
				(benchCase) => `${benchCase.name}, pipelined`,
				async (benchCase, index) => {
					const target = await benchCase.prepare();
					collectAndSettle();
					const start = performance.now();
					let issuedAt = start;
					const ids = await target.all(messages, () => {
						issuedAt = performance.now();
					});
					const end = performance.now();
					if (round >= WARMUP) {
						totals[index]?.push(end - start);
						issues[index]?.push(issuedAt - start);
					}
					return target.finish(ids, messages);
				},
			);
		}

		console.log(`appends through the engine in a worker — node ${process.version}${QUICK ? " (--quick)" : ""}`);
		console.log(
			`messages: corpus user/assistant messages, ${(bytes / messages.length).toFixed(0)} bytes of JSON on average ` +
				`(1 user : 2 assistant); every session starts with one assistant message (pi writes nothing before one)`,
		);
		console.log(
			`\n(a) one append at a time, awaited (pi: each call timed in a loop): ${ROUND_TRIPS} timed after ` +
				`${ROUND_TRIP_WARMUP} warm-up per round, ${ROUNDS} rounds after ${WARMUP} warm-up; percentiles of all ` +
				`calls; mean µs: median over rounds of each round's mean (its tail included)\n`,
		);
		const headA = `${"case".padEnd(44)}${"median ms".padStart(11)}${"p90 ms".padStart(9)}${"p99 ms".padStart(9)}${"max ms".padStart(9)}${"mean µs".padStart(10)}`;
		console.log(headA);
		console.log("-".repeat(headA.length));
		roundTripCases.forEach(({ name }, index) => {
			const times = roundTimes[index] ?? [];
			console.log(
				`${name.padEnd(44)}${ms(percentile(times, 0.5), 11, 3)}${ms(percentile(times, 0.9), 9, 3)}` +
					`${ms(percentile(times, 0.99), 9, 3)}${ms(times[times.length - 1] ?? 0, 9, 2)}` +
					`${ms(median(roundMeans[index] ?? []), 10, 1)}`,
			);
		});

		console.log(
			`\n(b) ${count(PIPELINED)} appends, all issued then all awaited (pi: called in a loop); ` +
				`median of ${ROUNDS} rounds after ${WARMUP} warm-up, cases take turns; every file checked afterwards\n`,
		);
		const pi16Index = throughputCases.indexOf(pi16Case);
		const piMedian = median(totals[pi16Index] ?? []);
		const headB = `${"case".padEnd(54)}${"total ms".padStart(10)}${"issue ms".padStart(10)}${"µs/append".padStart(11)}${"appends/s".padStart(11)}${"÷ pi16".padStart(8)}`;
		console.log(headB);
		console.log("-".repeat(headB.length));
		throughputCases.forEach((benchCase, index) => {
			const total = median(totals[index] ?? []);
			console.log(
				`${pipelinedName(benchCase.name).padEnd(54)}${ms(total)}${ms(median(issues[index] ?? []))}` +
					`${ms((total * 1000) / PIPELINED, 11, 2)}${Math.round((PIPELINED * 1000) / total)
						.toString()
						.padStart(11)}${(total / piMedian).toFixed(2).padStart(8)}`,
			);
		});
		console.log("\nevery round (total ms):");
		throughputCases.forEach((benchCase, index) => {
			const name = pipelinedName(benchCase.name);
			console.log(`  ${name.padEnd(54)}${(totals[index] ?? []).map((t) => t.toFixed(0)).join(" / ")}`);
		});
		console.log(
			problems.size === 0
				? "\nevery file held all its appends in order (ids, messages, parents, pi 1.6.0's field order), line for line pi 1.6.0's of its round (ids numbered, fresh ids' and timestamps' digits masked)"
				: `\nPROBLEMS:\n${[...problems].map(([name, problem]) => `  ${name}: ${problem}`).join("\n")}`,
		);

		const goal = (met: boolean): string => (met ? "met" : "NOT met");
		const workerIndex = throughputCases.indexOf(workerCases[0] as Case);
		const ratio = median(totals[workerIndex] ?? []) / piMedian;
		console.log(
			`\ngoal: ${count(PIPELINED)} pipelined through the worker (node, none) ≤ 0.8× pi 1.6.0's loop: ` +
				`${goal(ratio <= 0.8)} (ours ÷ pi 1.6.0 = ${ratio.toFixed(2)} in time)`,
		);
		const roundTrip = (name: string): number =>
			percentile(roundTimes[roundTripCases.findIndex((c) => c.name === name)] ?? [], 0.5);
		const nodeNone = roundTrip("worker, node, durability none");
		const memory = roundTrip("worker, memory, durability none");
		const memoryMedian = QUICK ? "not run with --quick" : `${memory.toFixed(3)} ms`;
		console.log(
			`goal: one round trip under 0.3 ms median: node/none ${goal(nodeNone < 0.3)} ` +
				`(${nodeNone.toFixed(3)} ms), memory ${QUICK ? "-" : goal(memory < 0.3)} (${memoryMedian})`,
		);

		// The suite's rows: ours, pi 1.6.0's and pi 0.73.1's loops, and the floor where there is one.
		const problemOf = (...names: string[]): string | undefined => {
			const found = names.flatMap((name) => (problems.has(name) ? [`${name}: ${problems.get(name)}`] : []));
			return found.length > 0 ? found.join("; ") : undefined;
		};
		const checked =
			"each file read back whole: header, then every append in order with the returned ids and the sent messages, " +
			"each entry's parent the one before; every line as JSON.stringify writes it and, ids numbered in file order and " +
			"fresh ids' and timestamps' digits masked, the same as pi 1.6.0's file of the round (pi 0.73.1's file too)";
		const a = (benchCase: Case) => measureOf(roundMedians[roundTripCases.indexOf(benchCase)] ?? []);
		const b = (benchCase: Case) => measureOf(totals[throughputCases.indexOf(benchCase)] ?? []);
		const aNote =
			`µs per append: each round's median of ${count(ROUND_TRIPS)} awaited appends (after ${ROUND_TRIP_WARMUP} ` +
			"untimed), median and range over rounds; pi's appends are synchronous (each call timed in a loop)";
		const worker = workerCases[0] as Case;
		const rows: BenchRow[] = [
			{
				bench: "worker-appends",
				name: "append, awaited one by one, in process",
				unit: "µs",
				ours: a(inProcess),
				pi16: a(pi16Case),
				pi073: a(pi073Case),
				checked,
				note: `${aNote}; ours: Session on node storage, durability none`,
				problem: problemOf(inProcess.name, pi16Case.name),
			},
			{
				bench: "worker-appends",
				name: "append, awaited, through the worker",
				unit: "µs",
				ours: a(worker),
				pi16: a(pi16Case),
				pi073: a(pi073Case),
				floor: a(bareCall),
				// One round trip (an append awaited through the worker) under 0.3 ms.
				goals: [{ kind: "value", max: 300 }],
				checked,
				note: `${aNote}; ours: worker on node storage, durability none; floor: a bare call (engine.openHandles)`,
				problem: problemOf(worker.name, pi16Case.name),
			},
			{
				bench: "worker-appends",
				name: `${count(PIPELINED)} appends pipelined, in process`,
				unit: "ms",
				size: { entries: PIPELINED },
				ours: b(inProcess),
				pi16: b(pi16Case),
				pi073: b(pi073Case),
				floor: b(floorCase),
				checked,
				note:
					"ms for the whole batch; ours: Session on node storage, durability none, all issued then all awaited; " +
					"pi: appendMessage called in a loop; floor: the entries stringified and written with one call",
				problem: problemOf(`${inProcess.name}, pipelined`, `${pi16Case.name}, pipelined`),
			},
			{
				bench: "worker-appends",
				name: `${count(PIPELINED)} appends pipelined, through the worker`,
				unit: "ms",
				size: { entries: PIPELINED },
				ours: b(worker),
				pi16: b(pi16Case),
				pi073: b(pi073Case),
				floor: b(floorCase),
				goals: [{ kind: "ratio", max: 0.8, against: "pi16" }],
				checked,
				note:
					"ms for the whole batch; ours: worker on node storage, durability none, all issued then all awaited; " +
					"pi: appendMessage called in a loop in process; floor: the entries stringified and written with one call",
				problem: problemOf(`${worker.name}, pipelined`, `${pi16Case.name}, pipelined`),
			},
		];
		for (const row of rows) reportRow(row);
		if (problems.size > 0) process.exitCode = 1;
	} finally {
		await Promise.allSettled(workers.map((worker) => worker.terminate()));
		dirs.remove();
	}
}

if (!relaunchWithGc()) await main();
