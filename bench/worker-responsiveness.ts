/**
 * Benchmark: how responsive the main thread stays while the engine works. A 5 ms timer chain samples the
 * main thread's event-loop delay while (a) a 1 GB text session (the `text-1gb` input of
 * bench/scale-inputs.ts; 20 MB of the same shape with `--quick`) is opened read-only through the engine in
 * a worker, in-process through `Engine`, and by pi 1.6.0's and pi 0.73.1's `SessionManager.open` (pi 0.73.1
 * cannot open 1 GB: it is tried once), and (b) 1,000 small sessions (500 with `--quick`) in 20 project
 * directories are listed through the worker (without its listing catalog, and with it), in-process by
 * `listAllSessions`, and by pi 1.6.0's and pi 0.73.1's `SessionManager.listAll`. pi works on the main thread: its delay is its whole
 * open. Before anything is timed each answer is checked against pi 1.6.0's as a whole: the open's whole
 * summary (path, header, cwd, name, leaf, entry count, read-only, its report of a clean file), the outline
 * of every entry (id, parent, kind, role, time, label, children), the leaf's whole context and every entry's
 * body, in process and through the worker; of a file over 200 MB (where that would take minutes: the scale
 * step checks every body of the same input, lazily opened, against pi 1.6.0's) every 100th and the last
 * 1,000, in process and through the worker; every listing row, every field.
 * That first pass is the warm-up. Then the cases take turns, a different one first every round. The
 * sessions to list are written to a temporary agent directory in pi's layout, and the input is
 * hard-linked into another; both are removed at the end.
 * Run: `npx tsx bench/worker-responsiveness.ts [--quick]` (`BENCH_ROUNDS=5` for more rounds; 3 by
 * default, 1 with `--quick`); under `npm run bench` (bench/run.ts) it reports its rows to the suite.
 * @module
 */
import { randomUUID } from "node:crypto";
import { copyFileSync, existsSync, linkSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { SessionManager as Pi073SessionManager } from "@mariozechner/pi-coding-agent";
import { createNodeStorage } from "../adapters/node.ts";
import { startEngineWorker } from "../adapters/worker.ts";
import { SessionManager as Pi16SessionManager } from "../node_modules/pi-coding-agent-1.6/dist/core/session-manager.js";
import { sessionOfHandle } from "../src/engine.ts";
import {
	type ContextPage,
	type ContextPageRequest,
	Engine,
	type FileEntry,
	listAllSessions,
	type OutlineNode,
	type OutlinePageRequest,
	type SessionEntry,
	type SessionInfo,
	type SessionSummary,
	sessionFileName,
} from "../src/index.ts";
import { listingCatalogPath } from "../src/listing-catalog.ts";
import { generateLinearSession } from "./generate.ts";
import { ensureInput } from "./scale-inputs.ts";
import { type BenchRow, measureOf, reportRow } from "./suite/rows.ts";
import {
	collectAndSettle,
	count,
	firstDifference,
	isQuick,
	type LatenessReport,
	LatenessSampler,
	median,
	ms,
	relaunchWithGc,
	SAMPLE_MS,
	sizeText,
	temporaryAgentDir,
} from "./worker-support.ts";

const QUICK = isQuick();
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const OPEN_BYTES = QUICK ? 20e6 : 1e9;
const LISTED_SESSIONS = QUICK ? 500 : 1000;
const PROJECT_DIRS = 20;
/** Entry lines longer than this are not used for the small sessions (keeps them "small"). */
const SMALL_SESSION_MAX_LINE = 4000;
/**
 * Every body of a file up to this size is checked (its branch in one call); of a bigger one, a sample (in
 * process, every body of the 1 GB input took 40 s here; bench/scale.ts checks each one of it).
 */
const ALL_BODIES_MAX_BYTES = 200e6;
/** The sample: every `BODY_SAMPLE_STEP`th entry, and the last `BODY_SAMPLE_TAIL`. */
const BODY_SAMPLE_STEP = 100;
const BODY_SAMPLE_TAIL = 1000;
/** Entries asked for at once while checking bodies, and outline nodes per page. */
const CHECK_CHUNK = 2000;
const OUTLINE_PAGE = 50_000;
/** The goal of both groups: the main thread never late by more than a frame. */
const GOAL_MS = 16;

type Impl = "worker" | "inProcess" | "pi16" | "pi073";

interface Case {
	name: string;
	group: "open" | "list";
	impl: Impl | "workerWarm";
	/** Runs inside the sampler; `cleanup` (closing handles) runs after it stopped, not measured. */
	run: () => Promise<{ cleanup?: () => Promise<void> }>;
	/** Run before the sampler starts (removing the listing catalog), not measured. */
	before?: () => void;
	/** Why it is not timed (pi 0.73.1 cannot open the file). */
	skipped?: string;
	/** Timed in the first round only: pi's open of a big file, one block on the main thread (its delay is its whole open). */
	once?: boolean;
}

/** What opening engines answer, in process and through the worker alike. */
interface OpeningEngine {
	open(path: string, options: { readOnly: boolean }): Promise<SessionSummary>;
	getOutline(handle: string, page: OutlinePageRequest): Promise<OutlineNode[]>;
	getContext(handle: string, page: ContextPageRequest): Promise<ContextPage>;
	getEntry(handle: string, id: string): Promise<SessionEntry | undefined>;
	getBranch(handle: string): Promise<SessionEntry[]>;
	close(handle: string): Promise<void>;
}

/** pi 1.6.0's answer to the open: what every implementation's is checked against. */
interface Reference {
	header: unknown;
	cwd: string;
	entries: SessionEntry[];
	/** The root → leaf path. */
	branch: SessionEntry[];
	leafId: string | null;
	name: string | undefined;
	labels: Map<string, string>;
	childCounts: Map<string, number>;
	context: { messages: unknown[]; thinkingLevel: string; model: unknown };
}

function referenceOf(manager: Pi16SessionManager): Reference {
	const entries = manager.getEntries() as unknown as SessionEntry[];
	const labels = new Map<string, string>();
	const childCounts = new Map<string, number>();
	for (const entry of entries) {
		const label = manager.getLabel(entry.id);
		if (label !== undefined) labels.set(entry.id, label);
		if (entry.parentId !== null) childCounts.set(entry.parentId, (childCounts.get(entry.parentId) ?? 0) + 1);
	}
	return {
		header: manager.getHeader(),
		cwd: manager.getCwd(),
		entries,
		branch: manager.getBranch() as unknown as SessionEntry[],
		leafId: manager.getLeafId(),
		name: manager.getSessionName(),
		labels,
		childCounts,
		context: manager.buildSessionContext() as unknown as Reference["context"],
	};
}

/**
 * Where an engine's open of `path` differs from pi 1.6.0's, or undefined; `bodies`: which entries' bodies
 * too (all: the leaf's path in one call, then the rest).
 */
async function openDifference(
	engine: OpeningEngine,
	path: string,
	reference: Reference,
	bodies: "all" | "sample" | "none",
): Promise<string | undefined> {
	const summary = await engine.open(path, { readOnly: true });
	const { handle } = summary;
	try {
		const { entries } = reference;
		// The whole summary but its handle: a clean file, opened read-only, reports nothing found or done.
		const { handle: _handle, ...opened } = summary;
		const head = firstDifference(opened, {
			path,
			header: reference.header,
			cwd: reference.cwd,
			name: reference.name,
			leafId: reference.leafId,
			entryCount: entries.length,
			readOnly: true,
			report: { diagnostics: [], repairedLastLine: false, wroteHeader: false, created: false },
		});
		if (head) return `summary ${head}`;
		for (let offset = 0; offset < entries.length; offset += OUTLINE_PAGE) {
			const page = await engine.getOutline(handle, { offset, limit: OUTLINE_PAGE });
			const expected = entries.slice(offset, offset + OUTLINE_PAGE).map((entry) => ({
				id: entry.id,
				parentId: entry.parentId,
				type: entry.type,
				role: entry.type === "message" ? (entry.message as { role?: string }).role : undefined,
				timestamp: entry.timestamp,
				label: reference.labels.get(entry.id),
				childCount: reference.childCounts.get(entry.id) ?? 0,
			}));
			const difference = firstDifference(page, expected, `outline[${offset}…]`);
			if (difference) return difference;
		}
		const context = await engine.getContext(handle, {});
		const contextDifference = firstDifference(
			{ messages: context.messages, thinkingLevel: context.thinkingLevel, model: context.model },
			reference.context,
			"context",
		);
		if (contextDifference) return contextDifference;
		if (bodies === "none") return undefined;
		let rest = entries.filter(
			(_, index) => index % BODY_SAMPLE_STEP === 0 || index >= entries.length - BODY_SAMPLE_TAIL,
		);
		if (bodies === "all") {
			// The leaf's path in one call (all of a linear session), then every entry off it, a chunk at a time.
			const branchDifference = firstDifference(await engine.getBranch(handle), reference.branch, "branch");
			if (branchDifference) return branchDifference;
			const onBranch = new Set(reference.branch.map((entry) => entry.id));
			rest = entries.filter((entry) => !onBranch.has(entry.id));
		}
		for (let start = 0; start < rest.length; start += CHECK_CHUNK) {
			const chunk = rest.slice(start, start + CHECK_CHUNK);
			// In process, a chunk's bodies are decoded together, as a page of rows would be (the same decoding as
			// getEntry's, batched into ranged reads: one getEntry at a time took 158 s for 1 GB).
			const ours =
				engine instanceof Engine
					? await sessionOfHandle(engine, handle).getEntriesById(chunk.map((entry) => entry.id))
					: await Promise.all(chunk.map((entry) => engine.getEntry(handle, entry.id)));
			const difference = firstDifference(
				ours,
				chunk,
				`entries (${bodies === "sample" ? "sampled" : "off the branch"})[${start}…]`,
			);
			if (difference) return difference;
		}
		return undefined;
	} finally {
		await engine.close(handle);
	}
}

/** Every field of every row pi 1.6.0 lists, in its order. */
function listingRows(infos: readonly SessionInfo[]): unknown[] {
	return infos.map((info) => ({
		path: info.path,
		id: info.id,
		cwd: info.cwd,
		name: info.name,
		parentSessionPath: info.parentSessionPath,
		created: info.created,
		modified: info.modified,
		messageCount: info.messageCount,
		firstMessage: info.firstMessage,
		allMessagesText: info.allMessagesText,
	}));
}

interface ListingFixture {
	sessionsRoot: string;
	agentDir: string;
	bytes: number;
	entries: number;
}

/** 1,000 small sessions over 20 projects: runs of 20–50 payload entries of a generated session, re-chained. */
function writeListing(agentDir: string): ListingFixture {
	const session = generateLinearSession({ targetBytes: QUICK ? 10e6 : 20e6 });
	const payloads = session.records
		.slice(1)
		.filter((_, index) => (session.lines[index + 1] as string).length <= SMALL_SESSION_MAX_LINE)
		.filter((record) => record.type !== "compaction" && record.type !== "label");
	let cursor = 0;
	let bytes = 0;
	let entries = 0;
	for (let k = 0; k < LISTED_SESSIONS; k++) {
		const project = `/bench/project-${String(k % PROJECT_DIRS).padStart(2, "0")}`;
		const dir = join(agentDir, "sessions", `--${project.slice(1).replaceAll("/", "-")}--`);
		mkdirSync(dir, { recursive: true });
		const start = Date.UTC(2025, 1, 1) + k * 3_600_000;
		const id = randomUUID();
		const lines = [
			JSON.stringify({ type: "session", version: 3, id, timestamp: new Date(start).toISOString(), cwd: project }),
		];
		const entryCount = 20 + ((k * 13) % 31);
		let parentId: string | null = null;
		for (let i = 0; i < entryCount; i++) {
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
			const time = start + (entryCount + 1) * 20_000;
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
		bytes += Buffer.byteLength(text);
		entries += lines.length - 1;
	}
	return { sessionsRoot: join(agentDir, "sessions"), agentDir, bytes, entries };
}

/** pi reads its agent directory from the environment at call time. */
async function piListAll(
	listAll: (onProgress: () => void) => Promise<unknown>,
	agentDir: string,
	onProgress: () => void,
): Promise<SessionInfo[]> {
	const saved = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = agentDir;
	try {
		return (await listAll(onProgress)) as SessionInfo[];
	} finally {
		if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = saved;
	}
}

function message(error: unknown): string {
	return (error instanceof Error ? error.message : String(error)).slice(0, 160);
}

async function main(): Promise<void> {
	const big = temporaryAgentDir("pi-bench-open-");
	const listing = temporaryAgentDir("pi-bench-list-");
	const stops: (() => Promise<void>)[] = [];
	const problems = new Map<Impl | "workerWarm", string>();
	try {
		let start = performance.now();
		const input = ensureInput("text-1gb", { bytes: OPEN_BYTES, log: (line) => console.log(line) });
		const inputMs = performance.now() - start;
		const bigDir = join(big.agentDir, "sessions", "--bench--");
		mkdirSync(bigDir, { recursive: true });
		const bigPath = join(bigDir, basename(input.path));
		try {
			linkSync(input.path, bigPath);
		} catch {
			copyFileSync(input.path, bigPath);
		}
		start = performance.now();
		const fixture = writeListing(listing.agentDir);
		const fixtureMs = performance.now() - start;
		const catalog = listingCatalogPath(listing.agentDir);
		collectAndSettle(300);

		const sampler = new LatenessSampler();
		sampler.start();
		await new Promise((resolve) => setTimeout(resolve, 1000));
		const idle = sampler.stop();

		sampler.start();
		const worker = await startEngineWorker({ storage: "node", agentDir: big.agentDir });
		const workerStart = sampler.stop();
		stops.push(worker.terminate);
		const listWorker = await startEngineWorker({ storage: "node", agentDir: listing.agentDir });
		stops.push(listWorker.terminate);
		const local = new Engine({ storage: createNodeStorage(), agentDir: big.agentDir });

		let progressCalls = 0;
		const onProgress = (): void => {
			progressCalls++;
		};
		const size = `text ${sizeText(input.bytes)}`;
		const cases: Case[] = [
			{
				name: "worker: engine.open (read-only)",
				group: "open",
				impl: "worker",
				run: async () => {
					const { handle } = await worker.engine.open(bigPath, { readOnly: true }, onProgress);
					return { cleanup: () => worker.engine.close(handle) };
				},
			},
			{
				name: "in-process: Engine#open (read-only)",
				group: "open",
				impl: "inProcess",
				run: async () => {
					const { handle } = await local.open(bigPath, { readOnly: true }, onProgress);
					return { cleanup: () => local.close(handle) };
				},
			},
			{
				name: "in-process: pi 1.6.0 SessionManager.open",
				group: "open",
				impl: "pi16",
				// 20 s a round of 1 GB, and its delay is its whole open whatever the round: once is enough there.
				once: !QUICK,
				run: async () => {
					Pi16SessionManager.open(bigPath);
					return {};
				},
			},
			{
				name: "in-process: pi 0.73.1 SessionManager.open",
				group: "open",
				impl: "pi073",
				run: async () => {
					Pi073SessionManager.open(bigPath);
					return {};
				},
			},
			{
				name: "worker: engine.listAll (no catalog)",
				group: "list",
				impl: "worker",
				before: () => rmSync(catalog, { force: true }),
				run: async () => {
					await listWorker.engine.listAll(onProgress);
					return {};
				},
			},
			{
				name: "worker: engine.listAll (warm catalog)",
				group: "list",
				impl: "workerWarm",
				// Whatever turn it takes, a listing through the worker wrote the catalog before it (the check's or a round's).
				before: () => {
					if (!existsSync(catalog)) throw new Error("no listing catalog before the warm listing");
				},
				run: async () => {
					await listWorker.engine.listAll(onProgress);
					return {};
				},
			},
			{
				name: "in-process: listAllSessions",
				group: "list",
				impl: "inProcess",
				run: async () => {
					await listAllSessions(createNodeStorage(), fixture.sessionsRoot, { onProgress });
					return {};
				},
			},
			{
				name: "in-process: pi 1.6.0 SessionManager.listAll",
				group: "list",
				impl: "pi16",
				run: async () => {
					await piListAll((progress) => Pi16SessionManager.listAll(progress), fixture.agentDir, onProgress);
					return {};
				},
			},
			{
				name: "in-process: pi 0.73.1 SessionManager.listAll",
				group: "list",
				impl: "pi073",
				run: async () => {
					await piListAll((progress) => Pi073SessionManager.listAll(progress), fixture.agentDir, onProgress);
					return {};
				},
			},
		];
		const caseOf = (group: Case["group"], impl: Case["impl"]): Case =>
			cases.find((c) => c.group === group && c.impl === impl) as Case;

		// Every answer against pi 1.6.0's, once, before timing: this is also every case's warm-up.
		start = performance.now();
		const phases: string[] = [];
		let phaseStart = start;
		const phase = (what: string): void => {
			const now = performance.now();
			phases.push(`${what} ${((now - phaseStart) / 1000).toFixed(1)} s`);
			phaseStart = now;
		};
		let reference: Reference | undefined = referenceOf(Pi16SessionManager.open(bigPath));
		phase("pi 1.6.0's open");
		const checkNote = (impl: Impl | "workerWarm", what: string, difference: string | undefined): void => {
			if (difference) problems.set(impl, `${what}: ${difference}`);
		};
		const allBodies = input.bytes <= ALL_BODIES_MAX_BYTES;
		checkNote("worker", "open", await openDifference(worker.engine, bigPath, reference, allBodies ? "all" : "sample"));
		phase("worker's open");
		checkNote("inProcess", "open", await openDifference(local, bigPath, reference, allBodies ? "all" : "sample"));
		phase("in-process open");
		let pi073Open: string | undefined;
		try {
			const manager = Pi073SessionManager.open(bigPath);
			const difference = firstDifference(
				{ entries: manager.getEntries(), leaf: manager.getLeafId() },
				{ entries: reference.entries, leaf: reference.leafId },
			);
			if (difference) pi073Open = `differs from pi 1.6.0's: ${difference}`;
		} catch (error) {
			const skipped = `pi 0.73.1 cannot open it: ${message(error)}`;
			caseOf("open", "pi073").skipped = skipped;
			pi073Open = skipped;
		}
		phase("pi 0.73.1's open");
		const entryCount = reference.entries.length;
		const leafMessages = reference.context.messages.length;
		reference = undefined;
		collectAndSettle(300);
		const piListing = listingRows(
			await piListAll((progress) => Pi16SessionManager.listAll(progress), fixture.agentDir, onProgress),
		);
		rmSync(catalog, { force: true });
		const listings: [Impl | "workerWarm", () => Promise<SessionInfo[]>][] = [
			["worker", () => listWorker.engine.listAll(onProgress)],
			["workerWarm", () => listWorker.engine.listAll(onProgress)],
			["inProcess", () => listAllSessions(createNodeStorage(), fixture.sessionsRoot, { onProgress })],
		];
		for (const [impl, list] of listings) {
			checkNote(impl, "listing", firstDifference(listingRows(await list()), piListing, "listing"));
		}
		const pi073Rows = listingRows(
			await piListAll((progress) => Pi073SessionManager.listAll(progress), fixture.agentDir, onProgress),
		);
		const pi073Listing = firstDifference(pi073Rows, piListing, "listing");
		phase("listings");
		const checkMs = performance.now() - start;

		const reports = cases.map((): LatenessReport[] => []);
		// The cases take turns, a different one first every round.
		for (let round = 0; round < ROUNDS; round++) {
			const shift = round % cases.length;
			for (const benchCase of [...cases.slice(shift), ...cases.slice(0, shift)]) {
				const index = cases.indexOf(benchCase);
				if (benchCase.skipped || (benchCase.once && round > 0)) continue;
				benchCase.before?.();
				collectAndSettle();
				sampler.start();
				const outcome = await benchCase.run();
				reports[index]?.push(sampler.stop());
				await outcome.cleanup?.();
			}
		}

		const bodiesText = allBodies
			? "every entry's body"
			: `the bodies of every ${BODY_SAMPLE_STEP}th entry and of the last ${count(BODY_SAMPLE_TAIL)}, in process and ` +
				"through the worker (of a file this big, all of them would take minutes; the scale step checks each one)";
		const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);
		const once = cases.filter((c) => c.once).map((c) => c.name);
		const onceText = once.length > 0 ? ` (${once.join(", ")}: in the first round only)` : "";
		console.log(
			`main-thread responsiveness — node ${process.version}, ${ROUNDS} rounds after a checking pass${onceText}, ` +
				`sampler: setTimeout(…, ${SAMPLE_MS}) chain${QUICK ? " (--quick)" : ""}`,
		);
		console.log(`  gc between cases: ${typeof globalThis.gc === "function" ? "yes" : "no (no --expose-gc)"}`);
		console.log(
			`open: ${input.name}, ${mb(input.bytes)} MB, ${count(entryCount)} entries (v3, ${input.source} payloads, ` +
				`cached in ${input.dir}; ${(inputMs / 1000).toFixed(1)} s to find or generate) — list: ${count(LISTED_SESSIONS)} ` +
				`sessions in ${PROJECT_DIRS} projects, ${count(fixture.entries)} entries, ${mb(fixture.bytes)} MB; written in ` +
				`${(fixtureMs / 1000).toFixed(1)} s`,
		);
		console.log(
			`checked against pi 1.6.0 in ${(checkMs / 1000).toFixed(1)} s: open (the whole summary: path, header, cwd, name, leaf, count, read-only, report; the outline of ` +
				`every entry, the leaf's context of ${count(leafMessages)} messages, ${bodiesText}) and listing (every ` +
				`field of every row): ${phases.join(", ")}`,
		);
		for (const [impl, problem] of problems) console.log(`  ${impl} DIFFERS: ${problem}`);
		if (problems.size === 0) console.log("  ours agree with pi 1.6.0 everywhere");
		console.log(`  pi 0.73.1: open ${pi073Open ?? "agrees"}; listing ${pi073Listing ?? "agrees"}`);
		console.log(`progress callbacks received on the main thread: ${progressCalls}`);
		console.log(
			"\ndelay = lateness of a 5 ms timer (the longest stretch the main thread could not run a callback);\n" +
				"median over rounds, worst round in brackets; hist = monitorEventLoopDelay max − 5 ms (median), which\n" +
				"cannot see a block that ends the case (pi's open is one block the histogram never records)\n",
		);
		const head = `${"case".padEnd(46)}${"total ms".padStart(10)}${"max delay ms".padStart(22)}${"p99 delay".padStart(11)}${"hist max".padStart(10)}`;
		console.log(head);
		console.log("-".repeat(head.length));
		const line = (name: string, rs: readonly LatenessReport[]): string => {
			if (rs.length === 0) return `${name.padEnd(46)}${"not timed".padStart(10)}`;
			const worst = Math.max(...rs.map((r) => r.maxMs));
			const maxText = `${median(rs.map((r) => r.maxMs)).toFixed(1)} [${worst.toFixed(1)}]`;
			return (
				`${name.padEnd(46)}${ms(median(rs.map((r) => r.totalMs)))}${maxText.padStart(22)}` +
				`${ms(median(rs.map((r) => r.p99Ms)), 11)}${ms(median(rs.map((r) => r.histogramMaxMs)))}`
			);
		};
		console.log(line("idle (sampler alone, 1 s)", [idle]));
		console.log(line("worker start (tsx loader, once)", [workerStart]));
		cases.forEach((benchCase, index) => {
			console.log(line(benchCase.name, reports[index] ?? []));
		});

		const reportsOf = (group: Case["group"], impl: Case["impl"]): LatenessReport[] =>
			reports[cases.indexOf(caseOf(group, impl))] ?? [];
		const worstOf = (group: Case["group"]): number => Math.max(...reportsOf(group, "worker").map((r) => r.maxMs));
		const goal = (met: boolean): string => (met ? "met" : "NOT met");
		console.log(
			`\ngoal: worker open max delay ≤ ${GOAL_MS} ms (median over rounds): ` +
				`${goal(median(reportsOf("open", "worker").map((r) => r.maxMs)) <= GOAL_MS)} (worst round ${worstOf("open").toFixed(1)} ms)`,
		);
		console.log(
			`goal: worker listAll (no catalog) max delay ≤ ${GOAL_MS} ms (median over rounds): ` +
				`${goal(median(reportsOf("list", "worker").map((r) => r.maxMs)) <= GOAL_MS)} (worst round ${worstOf("list").toFixed(1)} ms)`,
		);
		const inProcessOpen = reportsOf("open", "inProcess");
		console.log(
			`in-process Engine#open: longest block ${median(inProcessOpen.map((r) => r.maxMs)).toFixed(0)} ms of ` +
				`${median(inProcessOpen.map((r) => r.totalMs)).toFixed(0)} ms total (medians)`,
		);

		// The suite's rows: per round, the worst lateness (or the p99) while the case ran.
		const figure = (group: Case["group"], impl: Case["impl"], of: "maxMs" | "p99Ms") =>
			measureOf(reportsOf(group, impl).map((r) => r[of]));
		const totalText = (group: Case["group"], impl: Case["impl"]): string => {
			const rs = reportsOf(group, impl);
			return rs.length > 0 ? `${(median(rs.map((r) => r.totalMs)) / 1000).toFixed(2)} s` : "not timed";
		};
		const listName = `${count(LISTED_SESSIONS)} sessions`;
		const checked = {
			open:
				"open: the whole summary (path, header, cwd, name, leaf, entry count, read-only, the open's report), the outline of every entry (id, parent, kind, role, time, label, " +
				`children), the leaf's whole context, and ${bodiesText}, equal to pi 1.6.0's`,
			list: "listing: every field of every row, in order, equal to pi 1.6.0's",
		};
		const piHow = {
			open: "pi opens on the main thread, synchronously: its delay is its whole open",
			list: "pi 1.6.0 lists on the main thread, reading asynchronously; pi 0.73.1 parses the files back to back",
		};
		const pi073Note = { open: pi073Open, list: pi073Listing && `pi 0.73.1's listing differs: ${pi073Listing}` };
		const rowsOf = (group: Case["group"], what: string, worker: Impl | "workerWarm"): BenchRow[] => {
			const pi073 = caseOf(group, "pi073").skipped ? undefined : figure(group, "pi073", "maxMs");
			const base = {
				bench: "worker-responsiveness",
				unit: "ms",
				size: group === "open" ? { bytes: input.bytes, entries: entryCount } : { sessions: LISTED_SESSIONS },
				checked: checked[group],
			} satisfies Partial<BenchRow>;
			const totals =
				`took: worker ${totalText(group, worker)}, in-process ${totalText(group, "inProcess")}, ` +
				`pi 1.6.0 ${totalText(group, "pi16")}, pi 0.73.1 ${totalText(group, "pi073")}`;
			const notes = (extra: string): string =>
				[extra, totals, `idle sampler ${idle.maxMs.toFixed(1)} ms`, pi073Note[group]].filter(Boolean).join("; ");
			return [
				{
					...base,
					name: `main-thread delay, worker ${what}`,
					ours: figure(group, worker, "maxMs"),
					pi16: figure(group, "pi16", "maxMs"),
					pi073,
					goals: [{ kind: "value", max: GOAL_MS }],
					note: notes(`worst lateness of a 5 ms timer per round; ${piHow[group]}`),
					problem: problems.get(worker),
				},
				{
					...base,
					name: `main-thread delay p99, worker ${what}`,
					ours: figure(group, worker, "p99Ms"),
					pi16: figure(group, "pi16", "p99Ms"),
					pi073: caseOf(group, "pi073").skipped ? undefined : figure(group, "pi073", "p99Ms"),
					note: notes("99th percentile of a 5 ms timer's lateness per round"),
					problem: problems.get(worker),
				},
				{
					...base,
					name: `main-thread delay, in-process ${group === "open" ? "Engine#open" : "listAllSessions"}, ${what.replace(/^\w+ /, "")}`,
					ours: figure(group, "inProcess", "maxMs"),
					pi16: figure(group, "pi16", "maxMs"),
					pi073,
					note: notes("ours on the main thread, no worker"),
					problem: problems.get("inProcess"),
				},
			];
		};
		const rows = [...rowsOf("open", `opening ${size}`, "worker"), ...rowsOf("list", `listing ${listName}`, "worker")];
		rows.push({
			...(rows[3] as BenchRow),
			name: `main-thread delay, worker listing ${listName}, warm catalog`,
			ours: figure("list", "workerWarm", "maxMs"),
			goals: undefined,
			note: `the worker's listing catalog kept from the listing before; took ${totalText("list", "workerWarm")}`,
			problem: problems.get("workerWarm"),
		});
		for (const row of rows) reportRow(row);
		if (problems.size > 0) process.exitCode = 1;
	} finally {
		for (const stop of stops) await stop().catch(() => undefined);
		big.remove();
		listing.remove();
	}
}

if (!relaunchWithGc(["--max-old-space-size=12288"])) await main();
