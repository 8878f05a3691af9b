/**
 * Benchmark: appends through the engine in a worker. (a) The round trip of one awaited append at a time,
 * through workers on node storage (durability "none" and "group") and on memory storage, beside the bare
 * Comlink round trip and our in-process `Session`. (b) The throughput of 10,000 pipelined appends (all
 * issued, then all awaited) through the same workers, beside our in-process `Session` and pi's
 * `SessionManager.appendMessage` called 10,000 times; every file is checked to hold all of them in order.
 * Messages are real user and assistant messages of the corpus (150–1000 bytes of JSON). Everything is
 * written to a temporary agent directory, removed at the end.
 * Run: `npx tsx bench/worker-appends.ts` (`BENCH_ROUNDS=11` for more rounds; 7 by default).
 * @module
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { createNodeStorage } from "../adapters/node.ts";
import { type EngineWorker, startEngineWorker, type WorkerEngineConfig } from "../adapters/worker.ts";
import { type AgentMessage, type Durability, Session, type SessionEntry } from "../src/index.ts";
import {
	collectAndSettle,
	corpusMessages,
	median,
	messageSequence,
	ms,
	percentile,
	relaunchWithGc,
	temporaryAgentDir,
} from "./worker-support.ts";

const ROUND_TRIP_WARMUP = 500;
const ROUND_TRIPS = 2000;
const PIPELINED = 10_000;
const WARMUP = 1;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CWD = "/bench/appends";

interface WorkerCase {
	name: string;
	config: WorkerEngineConfig;
	worker?: EngineWorker;
}

/** Time each of `count` awaited calls, after `warmup` untimed ones; ms, sorted ascending. */
async function timeEach(count: number, warmup: number, call: (index: number) => Promise<unknown>): Promise<number[]> {
	for (let i = 0; i < warmup; i++) await call(i);
	const times: number[] = [];
	for (let i = 0; i < count; i++) {
		const start = performance.now();
		await call(warmup + i);
		times.push(performance.now() - start);
	}
	return times.sort((a, b) => a - b);
}

/** Throws unless `records` are header, the first assistant message, then exactly `ids`/`messages` in order. */
function verify(
	name: string,
	records: readonly { type: string; id?: string; message?: unknown }[],
	ids: readonly string[],
	messages: readonly AgentMessage[],
): void {
	const entries = records.filter((record) => record.type !== "session");
	if (records[0]?.type !== "session") throw new Error(`${name}: no header first`);
	if (entries.length !== ids.length + 1)
		throw new Error(`${name}: ${entries.length} entries, expected ${ids.length + 1}`);
	for (let i = 0; i < ids.length; i++) {
		const entry = entries[i + 1];
		if (entry?.id !== ids[i]) throw new Error(`${name}: entry ${i} has id ${entry?.id}, expected ${ids[i]}`);
		if (JSON.stringify(entry?.message) !== JSON.stringify(messages[i])) throw new Error(`${name}: entry ${i} differs`);
	}
}

function readJsonl(path: string): { type: string; id?: string; message?: unknown }[] {
	return readFileSync(path, "utf8")
		.split("\n")
		.filter((line) => line !== "")
		.map((line) => JSON.parse(line) as { type: string; id?: string; message?: unknown });
}

interface Throughput {
	name: string;
	/** Create a session holding one assistant message; returns the appender and a verifier. */
	prepare: () => Promise<{
		/** Issue every append; resolves when all are written. `issued` is called once all are issued. */
		append: (messages: readonly AgentMessage[], issued: () => void) => Promise<string[]>;
		finish: (ids: readonly string[], messages: readonly AgentMessage[]) => Promise<void>;
	}>;
}

async function main(): Promise<void> {
	const dirs = temporaryAgentDir("pi-bench-appends-");
	const sessionDir = join(dirs.sessionsRoot, "--bench-appends--");
	const workerCases: WorkerCase[] = [
		{ name: "worker, node, durability none", config: { storage: "node", agentDir: dirs.agentDir, durability: "none" } },
		{
			name: "worker, node, durability group",
			config: { storage: "node", agentDir: dirs.agentDir, durability: "group" },
		},
		{ name: "worker, memory, durability none", config: { storage: "memory", durability: "none" } },
	];
	try {
		const { assistant } = corpusMessages();
		const firstAssistant = assistant[0] as AgentMessage;
		const messages = messageSequence(PIPELINED);
		const bytes = messages.reduce((sum, m) => sum + JSON.stringify(m).length, 0);
		for (const workerCase of workerCases) workerCase.worker = await startEngineWorker(workerCase.config);

		// (a) Round trips, one awaited call at a time.
		const roundTrips: { name: string; times: number[] }[] = [];
		for (const { name, worker } of workerCases) {
			const engine = (worker as EngineWorker).engine;
			const { handle } = await engine.create({ cwd: CWD });
			await engine.appendMessage(handle, firstAssistant);
			collectAndSettle();
			if (roundTrips.length === 0) {
				roundTrips.push({
					name: "worker, bare call (engine.openHandles)",
					times: await timeEach(ROUND_TRIPS, ROUND_TRIP_WARMUP, () => engine.openHandles()),
				});
				collectAndSettle();
			}
			const times = await timeEach(ROUND_TRIPS, ROUND_TRIP_WARMUP, (i) =>
				engine.appendMessage(handle, messages[i % messages.length] as AgentMessage),
			);
			roundTrips.push({ name, times });
			await engine.close(handle);
		}
		{
			const storage = createNodeStorage();
			const session = await Session.create(storage, { cwd: CWD, sessionDir, durability: "none" });
			await session.appendMessage(firstAssistant);
			collectAndSettle();
			const times = await timeEach(ROUND_TRIPS, ROUND_TRIP_WARMUP, (i) =>
				session.appendMessage(messages[i % messages.length] as AgentMessage),
			);
			roundTrips.push({ name: "in-process Session, node, none", times });
			await session.close();
		}

		// (b) Pipelined throughput.
		const workerThroughput = ({ name, worker, config }: WorkerCase): Throughput => ({
			name: `${name}, pipelined`,
			prepare: async () => {
				const engine = (worker as EngineWorker).engine;
				const { handle, path } = await engine.create({ cwd: CWD });
				await engine.appendMessage(handle, firstAssistant);
				return {
					append: (batch, issued) => {
						const pending = batch.map((message) => engine.appendMessage(handle, message));
						issued();
						return Promise.all(pending);
					},
					finish: async (ids, sent) => {
						await engine.close(handle);
						if (config.storage === "node") {
							verify(name, readJsonl(path as string), ids, sent);
							rmSync(path as string);
						} else {
							const reopened = await engine.open(path as string, { readOnly: true });
							const branch = await engine.getBranch(reopened.handle);
							verify(name, [{ type: "session" }, ...(branch as SessionEntry[])], ids, sent);
							await engine.close(reopened.handle);
						}
					},
				};
			},
		});
		const sessionThroughput = (durability: Durability): Throughput => ({
			name: `in-process Session, node, ${durability}, pipelined`,
			prepare: async () => {
				const session = await Session.create(createNodeStorage(), { cwd: CWD, sessionDir, durability });
				await session.appendMessage(firstAssistant);
				return {
					append: (batch, issued) => {
						const pending = batch.map((message) => session.appendMessage(message));
						issued();
						return Promise.all(pending);
					},
					finish: async (ids, sent) => {
						await session.close();
						verify(`Session ${durability}`, readJsonl(session.path as string), ids, sent);
						rmSync(session.path as string);
					},
				};
			},
		});
		const piThroughput: Throughput = {
			name: "pi SessionManager.appendMessage",
			prepare: async () => {
				const manager = SessionManager.create(CWD, sessionDir);
				manager.appendMessage(firstAssistant as never);
				return {
					append: async (batch, issued) => {
						const ids = batch.map((message) => manager.appendMessage(message as never));
						issued();
						return ids;
					},
					finish: async (ids, sent) => {
						const file = manager.getSessionFile() as string;
						verify("pi", readJsonl(file), ids, sent);
						rmSync(file);
					},
				};
			},
		};
		const bareCalls: Throughput = {
			name: "worker, bare call (openHandles), pipelined",
			prepare: async () => {
				const engine = ((workerCases[0] as WorkerCase).worker as EngineWorker).engine;
				return {
					append: async (batch, issued) => {
						const pending = batch.map(() => engine.openHandles());
						issued();
						return (await Promise.all(pending)).map((handles) => handles.join());
					},
					finish: async (results) => {
						if (results.length !== PIPELINED) throw new Error("bare calls: some calls did not answer");
					},
				};
			},
		};
		const throughputCases: Throughput[] = [
			bareCalls,
			...workerCases.map(workerThroughput),
			sessionThroughput("none"),
			sessionThroughput("group"),
			piThroughput,
		];
		const totals = throughputCases.map((): number[] => []);
		const issues = throughputCases.map((): number[] => []);
		for (let round = 0; round < WARMUP + ROUNDS; round++) {
			for (const [index, benchCase] of throughputCases.entries()) {
				const { append, finish } = await benchCase.prepare();
				collectAndSettle();
				const start = performance.now();
				let issuedAt = start;
				const ids = await append(messages, () => {
					issuedAt = performance.now();
				});
				const end = performance.now();
				await finish(ids, messages);
				if (round >= WARMUP) {
					totals[index]?.push(end - start);
					issues[index]?.push(issuedAt - start);
				}
			}
		}

		console.log(`appends through the engine in a worker — node ${process.version}`);
		console.log(
			`messages: corpus user/assistant messages, ${(bytes / messages.length).toFixed(0)} bytes of JSON on average ` +
				`(1 user : 2 assistant); every session starts with one assistant message (pi writes nothing before one)`,
		);
		console.log(`\n(a) one append at a time, awaited: ${ROUND_TRIPS} timed after ${ROUND_TRIP_WARMUP} warm-up\n`);
		const headA = `${"case".padEnd(44)}${"median ms".padStart(11)}${"p90 ms".padStart(9)}${"p99 ms".padStart(9)}${"max ms".padStart(9)}`;
		console.log(headA);
		console.log("-".repeat(headA.length));
		for (const { name, times } of roundTrips) {
			console.log(
				`${name.padEnd(44)}${ms(percentile(times, 0.5), 11, 3)}${ms(percentile(times, 0.9), 9, 3)}` +
					`${ms(percentile(times, 0.99), 9, 3)}${ms(times[times.length - 1] ?? 0, 9, 2)}`,
			);
		}

		console.log(
			`\n(b) ${PIPELINED} appends, all issued then all awaited (pi: called in a loop); ` +
				`median of ${ROUNDS} rounds after ${WARMUP} warm-up, cases take turns; every file checked afterwards\n`,
		);
		const piIndex = throughputCases.length - 1;
		const piMedian = median(totals[piIndex] ?? []);
		const headB = `${"case".padEnd(46)}${"total ms".padStart(10)}${"issue ms".padStart(10)}${"µs/append".padStart(11)}${"appends/s".padStart(11)}${"÷ pi".padStart(7)}`;
		console.log(headB);
		console.log("-".repeat(headB.length));
		throughputCases.forEach((benchCase, index) => {
			const total = median(totals[index] ?? []);
			console.log(
				`${benchCase.name.padEnd(46)}${ms(total)}${ms(median(issues[index] ?? []))}` +
					`${ms((total * 1000) / PIPELINED, 11, 2)}${Math.round((PIPELINED * 1000) / total)
						.toString()
						.padStart(11)}${(total / piMedian).toFixed(2).padStart(7)}`,
			);
		});
		console.log("\nevery round (total ms):");
		throughputCases.forEach((benchCase, index) => {
			console.log(`  ${benchCase.name.padEnd(46)}${(totals[index] ?? []).map((t) => t.toFixed(0)).join(" / ")}`);
		});

		const goal = (met: boolean): string => (met ? "met" : "NOT met");
		const ratio = median(totals[1] ?? []) / piMedian;
		console.log(
			`\ngoal: pipelined through the worker (node, none) at least as fast as pi: ${goal(ratio <= 1)} ` +
				`(ours ÷ pi = ${ratio.toFixed(2)} in time)`,
		);
		const nodeNone = roundTrips.find((r) => r.name === "worker, node, durability none")?.times ?? [];
		const memory = roundTrips.find((r) => r.name === "worker, memory, durability none")?.times ?? [];
		console.log(
			`goal: one round trip under 0.3 ms median: node/none ${goal(percentile(nodeNone, 0.5) < 0.3)} ` +
				`(${percentile(nodeNone, 0.5).toFixed(3)} ms), memory ${goal(percentile(memory, 0.5) < 0.3)} ` +
				`(${percentile(memory, 0.5).toFixed(3)} ms)`,
		);
	} finally {
		await Promise.allSettled(workerCases.map((c) => c.worker?.terminate()));
		dirs.remove();
	}
}

if (!relaunchWithGc()) await main();
