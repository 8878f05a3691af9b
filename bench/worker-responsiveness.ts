/**
 * Benchmark: how responsive the main thread stays while the engine works. A 5 ms timer chain samples the
 * main thread's event-loop delay while (a) a ~100 MB session is opened read-only through the engine in a
 * worker, in-process through `Engine`, and by pi's `SessionManager.open`, and (b) 1,000 small sessions in
 * 20 project directories are listed through the worker, in-process by `listAllSessions`, and by pi's
 * `SessionManager.listAll`. Everything is written to a temporary agent directory in pi's layout and
 * removed at the end. Run: `npx tsx bench/worker-responsiveness.ts` (`BENCH_ROUNDS=5` for more rounds).
 * @module
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { createNodeStorage } from "../adapters/node.ts";
import { startEngineWorker } from "../adapters/worker.ts";
import { Engine, type FileEntry, listAllSessions, type SessionInfo, sessionFileName } from "../src/index.ts";
import { generateLinearSession } from "./generate.ts";
import {
	collectAndSettle,
	type LatenessReport,
	LatenessSampler,
	median,
	ms,
	relaunchWithGc,
	SAMPLE_MS,
	temporaryAgentDir,
} from "./worker-support.ts";

const WARMUP = 1;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LISTED_SESSIONS = 1000;
const PROJECT_DIRS = 20;
/** Entry lines longer than this are not used for the small sessions (keeps them "small"). */
const SMALL_SESSION_MAX_LINE = 4000;

interface Outcome {
	/** Something to compare across implementations (entry count, listed ids). */
	check: string;
	/** Run after the sampler stopped (closing handles), not measured. */
	cleanup?: () => Promise<void>;
}

interface Case {
	name: string;
	group: "open" | "list";
	run: () => Promise<Outcome>;
}

interface Fixture {
	bigPath: string;
	bigBytes: number;
	bigEntries: number;
	listSessionsRoot: string;
	listAgentDir: string;
	listBytes: number;
	listEntries: number;
}

/** Write the ~100 MB session to one agent dir and 1,000 small sessions over 20 projects to another. */
function writeFixture(bigAgentDir: string, listAgentDir: string): Fixture {
	const session = generateLinearSession();
	const header = session.records[0] as FileEntry & { id: string; timestamp: string };
	const bigDir = join(bigAgentDir, "sessions", "--bench--");
	mkdirSync(bigDir, { recursive: true });
	const bigPath = join(bigDir, sessionFileName(header.timestamp, header.id));
	writeFileSync(bigPath, `${session.lines.join("\n")}\n`);

	// Small sessions: runs of 20–50 of the generated payload entries, re-chained under a fresh header.
	const payloads = session.records
		.slice(1)
		.filter((_, index) => (session.lines[index + 1] as string).length <= SMALL_SESSION_MAX_LINE)
		.filter((record) => record.type !== "compaction" && record.type !== "label");
	let cursor = 0;
	let listBytes = 0;
	let listEntries = 0;
	for (let k = 0; k < LISTED_SESSIONS; k++) {
		const project = `/bench/project-${String(k % PROJECT_DIRS).padStart(2, "0")}`;
		const dir = join(listAgentDir, "sessions", `--${project.slice(1).replaceAll("/", "-")}--`);
		mkdirSync(dir, { recursive: true });
		const start = Date.UTC(2025, 1, 1) + k * 3_600_000;
		const id = randomUUID();
		const lines = [
			JSON.stringify({ type: "session", version: 3, id, timestamp: new Date(start).toISOString(), cwd: project }),
		];
		const count = 20 + ((k * 13) % 31);
		let parentId: string | null = null;
		for (let i = 0; i < count; i++) {
			const {
				type,
				id: _id,
				parentId: _parent,
				timestamp: _time,
				...fields
			} = payloads[cursor++ % payloads.length] as FileEntry;
			const time = start + (i + 1) * 20_000;
			const entryId = (k * 64 + i).toString(16).padStart(8, "0");
			const own = type === "message" ? { message: { ...(fields.message as object), timestamp: time } } : fields;
			lines.push(JSON.stringify({ type, id: entryId, parentId, timestamp: new Date(time).toISOString(), ...own }));
			parentId = entryId;
		}
		if (k % 5 === 0) {
			const time = start + (count + 1) * 20_000;
			lines.push(
				JSON.stringify({
					type: "session_info",
					id: (k * 64 + 63).toString(16).padStart(8, "0"),
					parentId,
					timestamp: new Date(time).toISOString(),
					name: `bench session ${k}`,
				}),
			);
		}
		const text = `${lines.join("\n")}\n`;
		writeFileSync(join(dir, sessionFileName(new Date(start).toISOString(), id)), text);
		listBytes += Buffer.byteLength(text);
		listEntries += lines.length - 1;
	}
	return {
		bigPath,
		bigBytes: session.bytes,
		bigEntries: session.records.length - 1,
		listSessionsRoot: join(listAgentDir, "sessions"),
		listAgentDir,
		listBytes,
		listEntries,
	};
}

function listingCheck(infos: readonly SessionInfo[]): string {
	return `${infos.length} sessions, first ${infos[0]?.id}, last ${infos[infos.length - 1]?.id}`;
}

/** pi reads its agent directory from the environment at call time. */
async function piListAll(agentDir: string, onProgress: (done: number, total: number) => void): Promise<SessionInfo[]> {
	const saved = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = agentDir;
	try {
		return (await SessionManager.listAll(onProgress)) as unknown as SessionInfo[];
	} finally {
		if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = saved;
	}
}

async function main(): Promise<void> {
	const big = temporaryAgentDir("pi-bench-open-");
	const listing = temporaryAgentDir("pi-bench-list-");
	let terminate: (() => Promise<void>) | undefined;
	try {
		const start = performance.now();
		const fixture = writeFixture(big.agentDir, listing.agentDir);
		const fixtureMs = performance.now() - start;
		collectAndSettle(300);

		const sampler = new LatenessSampler();
		sampler.start();
		await new Promise((resolve) => setTimeout(resolve, 1000));
		const idle = sampler.stop();

		sampler.start();
		const worker = await startEngineWorker({ storage: "node", agentDir: big.agentDir });
		const workerStart = sampler.stop();
		terminate = worker.terminate;
		const { engine } = worker;
		const listWorker = await startEngineWorker({ storage: "node", agentDir: listing.agentDir });
		const terminateFirst = terminate;
		terminate = async () => {
			await Promise.allSettled([terminateFirst(), listWorker.terminate()]);
		};

		let progressCalls = 0;
		const onProgress = (): void => {
			progressCalls++;
		};
		const cases: Case[] = [
			{
				name: "worker: engine.open (read-only)",
				group: "open",
				run: async () => {
					const summary = await engine.open(fixture.bigPath, { readOnly: true }, onProgress);
					return { check: `${summary.entryCount} entries`, cleanup: () => engine.close(summary.handle) };
				},
			},
			{
				name: "in-process: Engine#open (read-only)",
				group: "open",
				run: async () => {
					const local = new Engine({ storage: createNodeStorage(), agentDir: big.agentDir });
					const summary = await local.open(fixture.bigPath, { readOnly: true }, onProgress);
					return { check: `${summary.entryCount} entries`, cleanup: () => local.close(summary.handle) };
				},
			},
			{
				name: "in-process: pi SessionManager.open",
				group: "open",
				run: async () => {
					const manager = SessionManager.open(fixture.bigPath);
					return { check: `${manager.getEntries().length} entries` };
				},
			},
			{
				name: "worker: engine.listAll",
				group: "list",
				run: async () => ({ check: listingCheck(await listWorker.engine.listAll(onProgress)) }),
			},
			{
				name: "in-process: listAllSessions",
				group: "list",
				run: async () => ({
					check: listingCheck(await listAllSessions(createNodeStorage(), fixture.listSessionsRoot, { onProgress })),
				}),
			},
			{
				name: "in-process: pi SessionManager.listAll",
				group: "list",
				run: async () => ({ check: listingCheck(await piListAll(fixture.listAgentDir, onProgress)) }),
			},
		];

		const reports = cases.map((): LatenessReport[] => []);
		const checks = cases.map((): Set<string> => new Set());
		for (let round = 0; round < WARMUP + ROUNDS; round++) {
			for (const [index, benchCase] of cases.entries()) {
				collectAndSettle();
				sampler.start();
				const outcome = await benchCase.run();
				const report = sampler.stop();
				await outcome.cleanup?.();
				checks[index]?.add(outcome.check);
				if (round >= WARMUP) reports[index]?.push(report);
			}
		}
		for (const group of ["open", "list"] as const) {
			const seen = new Set(cases.flatMap((c, i) => (c.group === group ? [...(checks[i] ?? [])] : [])));
			if (seen.size !== 1) throw new Error(`the ${group} cases disagree: ${[...seen].join(" | ")}`);
		}

		const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);
		console.log(
			`main-thread responsiveness — node ${process.version}, ${ROUNDS} rounds after ${WARMUP} warm-up, ` +
				`sampler: setTimeout(…, ${SAMPLE_MS}) chain`,
		);
		console.log(`  gc between cases: ${typeof globalThis.gc === "function" ? "yes" : "no (no --expose-gc)"}`);
		console.log(
			`open: ${mb(fixture.bigBytes)} MB, ${fixture.bigEntries} entries (v3, generated) — ` +
				`list: ${LISTED_SESSIONS} sessions in ${PROJECT_DIRS} projects, ${fixture.listEntries} entries, ` +
				`${mb(fixture.listBytes)} MB; written in ${(fixtureMs / 1000).toFixed(1)} s`,
		);
		for (const group of ["open", "list"] as const) {
			const index = cases.findIndex((c) => c.group === group);
			console.log(`${group}: the three implementations agree: ${[...(checks[index] ?? [])][0]}`);
		}
		console.log(`progress callbacks received on the main thread: ${progressCalls}`);
		console.log(
			"\ndelay = lateness of a 5 ms timer (the longest stretch the main thread could not run a callback);\n" +
				"median over rounds, worst round in brackets; hist = monitorEventLoopDelay max − 5 ms (median), which\n" +
				"cannot see a block that ends the case (pi's open is one block the histogram never records)\n",
		);
		const head = `${"case".padEnd(40)}${"total ms".padStart(10)}${"max delay ms".padStart(22)}${"p99 delay".padStart(11)}${"hist max".padStart(10)}`;
		console.log(head);
		console.log("-".repeat(head.length));
		const row = (name: string, rs: readonly LatenessReport[]): string => {
			const worst = Math.max(...rs.map((r) => r.maxMs));
			const maxText = `${median(rs.map((r) => r.maxMs)).toFixed(1)} [${worst.toFixed(1)}]`;
			return (
				`${name.padEnd(40)}${ms(median(rs.map((r) => r.totalMs)))}${maxText.padStart(22)}` +
				`${ms(median(rs.map((r) => r.p99Ms)), 11)}${ms(median(rs.map((r) => r.histogramMaxMs)))}`
			);
		};
		console.log(row("idle (sampler alone, 1 s)", [idle]));
		console.log(row("worker start (tsx loader, once)", [workerStart]));
		cases.forEach((benchCase, index) => {
			console.log(row(benchCase.name, reports[index] ?? []));
		});

		const worstOf = (index: number): number => Math.max(...(reports[index] ?? []).map((r) => r.maxMs));
		const goal = (met: boolean): string => (met ? "met" : "NOT met");
		console.log(
			`\ngoal: worker open max delay < 20 ms in every round: ${goal(worstOf(0) < 20)} (worst ${worstOf(0).toFixed(1)} ms)`,
		);
		console.log(
			`goal: worker listAll max delay < 20 ms in every round: ${goal(worstOf(3) < 20)} (worst ${worstOf(3).toFixed(1)} ms)`,
		);
		const inProcessOpen = reports[1] ?? [];
		console.log(
			`in-process Engine#open: longest block ${median(inProcessOpen.map((r) => r.maxMs)).toFixed(0)} ms of ` +
				`${median(inProcessOpen.map((r) => r.totalMs)).toFixed(0)} ms total (medians)`,
		);
	} finally {
		await terminate?.();
		big.remove();
		listing.remove();
	}
}

if (!relaunchWithGc()) await main();
