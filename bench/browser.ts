/**
 * Browser benchmarks, in Debian's Chromium: the engine worker on the OPFS storage (adapters/opfs.ts), side
 * by side with ZenFS in memory and with ZenFS's `WebAccess` backend (`@zenfs/dom`) on the same OPFS.
 *
 * 1. Append cost against file size: awaited `appendMessage`s of ~500-byte corpus messages into a 1 KB and
 *    a 100 MB session, each opened for writing in a worker of its own (durability `group`, the stock
 *    worker's default, then `fsync`; `group` only with `--quick`), in alternating blocks, on OPFS and on
 *    memory storage (the floor: nothing to flush; not with `--quick`). Goal on OPFS: 100 MB ≤ 1.5× 1 KB.
 *    The same on ZenFS's `WebAccess` (the case `webaccess, appends`, a minute a round: in the default
 *    run, or with `--only=webaccess`, not with `--only=appends`).
 * 2. Opening a 100 MB session in the worker, from OPFS and from memory storage. Goal: OPFS ≤ 1.3× memory.
 * 3. The main thread's worst frame (gaps between `requestAnimationFrame` callbacks; long tasks too) while
 *    the worker imports a 100 MB `Blob` and opens it. Goal: under 50 ms.
 * 4. Huge sessions, lazily (`--only=huge`, and `--only=huge4` for 4 GB; neither is in the default run: the
 *    two 1 GB inputs take about 2 minutes here, 4 GB about 3, and `bench/scale-inputs.ts` generates each
 *    input once, in 10–35 s, into a cache under the system's temporary directory): the 1 GB v3 sessions
 *    `text-1gb` and `image-1gb` of `bench/scale-inputs.ts` (`text-4gb` with `huge4`: 4 GB of disk for the
 *    input, as much for the profile's OPFS, maybe as much again for the browser's copy of the fetched
 *    `Blob`), served by the bench's server and fetched by the page as a `Blob`. One worker streams it into OPFS
 *    (`importSessionFile(path, blob)`, 8 MiB at a time); then a fresh worker opens it read-only (lazily: the
 *    engine's default) while the page's frames are watched, and asks for `getContext(handle, { last: 50 })`.
 *    Memory: the worker's heap peak, what it keeps once open (after a collection), and the peaks of the
 *    renderer and the browser process. The answer (entry count, leaf, the last page's total and a SHA-256
 *    of its JSON) must equal what the engine gives in Node for the same file. Once per input, not in rounds.
 *
 * The page and its worker (bench/browser/page/) are built by Vite as production code and served by Vite's
 * preview server (bench/browser/serve.ts), cross-origin isolated so that `performance.now()` ticks in
 * 5 µs; Playwright drives them. Every case runs in a fresh Chromium on a fresh profile on disk (an
 * empty OPFS; see `openTab` for why not an off-the-record context); the cases take turns within each round,
 * their order turning from round to round. No figure is printed for a wrong answer: every opened session
 * must have the entry count and leaf context length that `SessionTree` gives in Node for the same bytes;
 * in the first round, untimed and once nothing more is timed in the page, everything an open holds (its
 * header, leaf, name and `getTree()`: every entry, label and the shape; bench/browser/page/answers.ts)
 * must be what `SessionTree` holds in Node, the imported file the session's bytes, and after the appends
 * the whole file: the session's bytes, then every line `SessionTree` in Node writes for the same appends
 * (ids numbered, the entries' times by their shapes). Memory (bench/browser/probes.ts): the renderer's peak resident size
 * during the case (`VmHWM`, reset just before it), and the worker's peak JS heap (V8 heap plus ArrayBuffer
 * backing stores, sampled over CDP), after a garbage collection in the worker.
 *
 * Run: `npx tsx bench/browser.ts` (`--quick` for a short run: one round; `BENCH_ROUNDS=n` to choose the rounds;
 * `--incognito` to run every case in an off-the-record context instead, where OPFS is kept in memory;
 * `--only=appends,open,frames,webaccess` for some of the cases; `--only=huge`, `--only=huge4`: case 4
 * alone). `npm run bench` runs `--only=appends,open` (`--quick --only=appends,open`: one round, about 30 s), and
 * takes its rows (bench/suite/rows.ts): the OPFS appends at 1 KB and at 100 MB (memory storage's as the
 * floor), and the 100 MB opens from OPFS and from memory storage, for writing and read-only.
 * @module
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { link, mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { basename, join } from "node:path";
import type { BrowserContext, CDPSession, Page } from "playwright";
import { createNodeStorage } from "../adapters/node.ts";
import {
	type AgentMessage,
	type Durability,
	Engine,
	encodeEntry,
	type FileEntry,
	SessionTree,
	sessionFileName,
} from "../src/index.ts";
import { chromiumLaunchOptions, launchChromium, launchPersistentChromium } from "../test/support/chromium.ts";
import { appendedMessage, normalisedAppends, wholeDigest } from "./browser/page/answers.ts";
import type { Answer, BenchPage, FrameReport, HugeOpened, LastPage, StorageName } from "./browser/page/main.ts";
import { browserPids, canTrackRss, rendererPids, trackRendererRss, WorkerTarget } from "./browser/probes.ts";
import { addFile, buildPage, servePage } from "./browser/serve.ts";
import { generateLinearSession } from "./generate.ts";
import { ensureInput, type ScaleInput, type VariantName } from "./scale-inputs.ts";
import { type BenchRow, type Measure, measureOf, reportRow } from "./suite/rows.ts";
import { roundsText } from "./suite/table.ts";
import { corpusMessages, median } from "./worker-support.ts";

const quick = process.argv.includes("--quick");
const incognito = process.argv.includes("--incognito");
/** `--only=appends,open,frames,webaccess`: run only the cases whose names start so (all by default). */
const only = process.argv
	.find((arg) => arg.startsWith("--only="))
	?.slice("--only=".length)
	.split(",");
/** Case 4's inputs, by the `--only` names that ask for them (never in the default run). */
const HUGE_CASES: Readonly<Record<string, readonly VariantName[]>> = {
	huge: ["text-1gb", "image-1gb"],
	huge4: ["text-4gb"],
};
const hugeVariants = (only ?? []).flatMap((name) => HUGE_CASES[name] ?? []);
/** The `--only` prefixes of cases 1–3; all of them when `--only` is not given. */
const regularOnly = only?.filter((name) => !(name in HUGE_CASES));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 3));
/** Appends are timed in blocks; the sessions' blocks alternate. */
const OPFS_BLOCK = 20;
const OPFS_BLOCKS = quick ? 3 : 8;
const OPFS_WARMUP = 20;
/** WebAccess rewrites the whole file on every append (about half a second at 100 MB): few appends there. */
const WEBACCESS_SMALL_BLOCK = 4;
const WEBACCESS_BIG_BLOCK = 1;
const WEBACCESS_BLOCKS = quick ? 2 : 4;
const WEBACCESS_WARMUP = 1;
const IDLE_MS = 2000;
const MB = 1e6;

// The sessions ---------------------------------------------------------------------------------------

interface Fixture {
	url: string;
	path: string;
	bytes: number;
	answer: Answer;
	/** Its records (header first), to append to in Node; the SHA-256 of its bytes. */
	records: FileEntry[];
	sha256: string;
	/** `SessionTree`'s whole answer in Node (answers.ts `wholeDigest`): what every open must hold. */
	whole: string;
}

/** The answer `SessionTree` gives for a session's records, in Node. */
function answerOf(tree: SessionTree): Answer {
	return { entryCount: tree.size, contextLength: tree.buildSessionProjection().messages.length };
}

/** A fixture of `records` (and their file's `text`), served next to the page as `name`. */
async function fixtureOf(outDir: string, name: string, records: FileEntry[], text: string): Promise<Fixture> {
	const tree = SessionTree.fromRecords(records);
	const header = tree.getHeader();
	return {
		url: await addFile(outDir, name, text),
		path: `/pi-${name.replace(".jsonl", "")}/sessions/--bench-project--/${sessionFileName(header.timestamp, header.id)}`,
		bytes: Buffer.byteLength(text),
		answer: answerOf(tree),
		records,
		sha256: createHash("sha256").update(text).digest("hex"),
		whole: await wholeDigest(header, tree.getLeafId(), tree.getSessionName(), tree.getTree()),
	};
}

/** The 100 MB session of bench/generate.ts, and a 1 KB one of two corpus messages, next to the built page. */
async function writeFixtures(outDir: string): Promise<{ small: Fixture; big: Fixture; messages: AgentMessage[] }> {
	const generated = generateLinearSession();
	const big = await fixtureOf(outDir, "big.jsonl", generated.records, `${generated.lines.join("\n")}\n`);
	const { user, assistant } = corpusMessages(200, 400);
	const tree = SessionTree.create({ cwd: "/bench/project" });
	tree.appendMessage(user[0] as AgentMessage);
	tree.appendMessage(assistant[0] as AgentMessage);
	const smallRecords = [tree.getHeader(), ...tree.getEntries()];
	const small = await fixtureOf(outDir, "small.jsonl", smallRecords, smallRecords.map(encodeEntry).join(""));
	// ~500-byte messages, one user turn to two assistant ones.
	const sized = corpusMessages(450, 560);
	const messages: AgentMessage[] = [];
	for (let i = 0; i < 60; i++) {
		const pool = i % 3 === 0 ? sized.user : sized.assistant;
		messages.push(pool[Math.floor(i / 3) % pool.length] as AgentMessage);
	}
	return { small, big, messages };
}

// The browser ----------------------------------------------------------------------------------------

type Call = <K extends keyof BenchPage>(
	method: K,
	...args: Parameters<BenchPage[K]>
) => Promise<Awaited<ReturnType<BenchPage[K]>>>;

/** A fresh browser with the bench page loaded, its DevTools session, and its renderer processes. */
interface Tab {
	/** Close the browser. */
	end(): Promise<void>;
	page: Page;
	cdp: CDPSession;
	call: Call;
	renderers: number[];
	/** The browser's own process (it keeps `Blob`s, and serves OPFS). */
	browsers: number[];
	userDataDir: string;
}

interface Run {
	url: string;
	messages: AgentMessage[];
	trackRss: boolean;
	/** Where each browser's profile directory is made. */
	profiles: string;
	/** Off-the-record contexts of `launchChromium()` instead of profiles on disk (`--incognito`). */
	incognito: boolean;
}

let workerCount = 0;
/** The browser's product and version (`HeadlessChrome/…`), asked of the first browser started. */
let browserVersion = "?";

/**
 * Start a fresh Chromium on a profile of its own (`launchPersistentContext`, with `launchChromium()`'s
 * executable and flags), and load the bench page in it. Not `launchChromium()`'s `newContext()` (unless
 * `--incognito`): such a context is off the record, and Chromium keeps an off-the-record origin's OPFS in
 * memory, behind the browser process, so that every call of a sync access handle is a round trip to it
 * (0.2–1 ms, against 2–7 µs on a profile's disk), which a user's ordinary tab does not pay.
 */
async function openTab(run: Run, files: readonly string[]): Promise<Tab> {
	const before = new Set(rendererPids());
	const browsersBefore = new Set(browserPids());
	const userDataDir = await mkdtemp(join(run.profiles, "profile-"));
	let context: BrowserContext;
	let end: () => Promise<void>;
	if (run.incognito) {
		const browser = await launchChromium();
		context = await browser.newContext();
		end = () => browser.close();
	} else {
		context = await launchPersistentChromium(userDataDir);
		end = () => context.close();
	}
	const page = context.pages()[0] ?? (await context.newPage());
	page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
	page.on("console", (message) => {
		if (message.type() === "error") console.error(`page console: ${message.text()}`);
	});
	await page.goto(run.url);
	await page.waitForFunction(() => document.body.dataset.ready === "true");
	const call: Call = (method, ...args) =>
		page.evaluate(
			([name, given]) => {
				const bench = (globalThis as unknown as { bench: Record<string, (...a: unknown[]) => unknown> }).bench;
				return bench[name]?.(...given);
			},
			[method, args] as [string, unknown[]],
		) as never;
	if (!(await page.evaluate(() => crossOriginIsolated))) throw new Error("the bench page is not cross-origin isolated");
	await call("setMessages", run.messages);
	for (const file of files) await call("load", file);
	const cdp = await context.newCDPSession(page);
	if (browserVersion === "?") browserVersion = (await cdp.send("Browser.getVersion")).product;
	return {
		end,
		page,
		cdp,
		call,
		userDataDir,
		renderers: rendererPids().filter((pid) => !before.has(pid)),
		browsers: browserPids().filter((pid) => !browsersBefore.has(pid)),
	};
}

/** An engine worker of the page, and its DevTools target. */
interface EngineWorker {
	name: string;
	target: WorkerTarget;
}

async function startWorker(tab: Tab, label: string, storage: StorageName): Promise<EngineWorker> {
	const name = `${label}-${++workerCount}`;
	await tab.call("start", name, storage);
	return { name, target: await WorkerTarget.attach(tab.cdp, name) };
}

async function closeTab(tab: Tab, workers: readonly EngineWorker[]): Promise<void> {
	for (const worker of workers) {
		await tab.call("terminate", worker.name);
		await worker.target.detach();
	}
	await tab.end();
	await rm(tab.userDataDir, { recursive: true, force: true });
}

interface Peaks {
	/** The renderer's peak resident memory, bytes (undefined where /proc cannot tell). */
	rss: number | undefined;
	/** The worker's peak JS heap (V8 heap plus ArrayBuffer backing stores), bytes. */
	heap: number;
}

/** Run `body` watching memory: after a garbage collection in the worker (unless `collect` is false). */
async function watched<T>(
	run: Run,
	tab: Tab,
	worker: EngineWorker,
	body: () => Promise<T>,
	collect = true,
): Promise<{ value: T } & Peaks> {
	if (collect) await worker.target.collectGarbage();
	const rss = run.trackRss ? trackRendererRss(tab.renderers) : undefined;
	const heap = worker.target.sampleHeap();
	const value = await body().finally(() => heap.stop());
	return { value, rss: rss?.stop(), heap: await heap.stop() };
}

function check(what: string, got: Answer | undefined, expected: Answer): void {
	if (got?.entryCount !== expected.entryCount || got.contextLength !== expected.contextLength) {
		throw new Error(
			`${what}: ${JSON.stringify(got)}, but SessionTree in Node says ${JSON.stringify(expected)}: no figure is printed for a wrong answer`,
		);
	}
}

// The figures ----------------------------------------------------------------------------------------

/** One row: a value per round, and memory peaks per round. */
class Row {
	readonly values: number[] = [];
	readonly rss: number[] = [];
	readonly heap: number[] = [];
	/** Samples behind each round's value (appends per round). */
	perRound = 1;
	readonly label: string;
	constructor(label: string) {
		this.label = label;
	}
	add(value: number, peaks?: Peaks): void {
		this.values.push(value);
		if (peaks) this.addPeaks(peaks);
	}
	addPeaks(peaks: Peaks): void {
		if (peaks.rss !== undefined) this.rss.push(peaks.rss);
		this.heap.push(peaks.heap);
	}
	get median(): number {
		return median(this.values);
	}
}

const rows = new Map<string, Row>();
function row(key: string, label: string): Row {
	let found = rows.get(key);
	if (!found) {
		found = new Row(label);
		rows.set(key, found);
	}
	return found;
}

/** Extra figures of the frames cases, per round. */
const frameNotes = new Map<string, FrameReport[]>();
/** Entry counts and context lengths seen, by storage, for the report. */
const answersSeen = new Map<string, Set<string>>();
function seen(storage: string, size: string, answer: Answer): void {
	const key = `${storage} ${size}`;
	if (!answersSeen.has(key)) answersSeen.set(key, new Set());
	answersSeen.get(key)?.add(`${answer.entryCount} entries, context ${answer.contextLength}`);
}

// The cases ------------------------------------------------------------------------------------------

interface AppendPlan {
	storage: StorageName;
	durabilities: Durability[];
	warmup: number;
	blocks: number;
	smallBlock: number;
	bigBlock: number;
}

/**
 * Case 1, one round on one storage: a worker with the 1 KB session and one with the 100 MB session, in
 * one page; both opened for writing with each durability in turn, blocks of awaited appends alternating
 * between them. At the end each file must be the session's bytes, then the appends as `SessionTree` writes
 * them in Node (`appendsProblem`).
 */
async function appendRound(run: Run, fixtures: Fixtures, plan: AppendPlan, round: number): Promise<void> {
	const { small, big } = fixtures;
	const tab = await openTab(run, [small.url, big.url]);
	// Both workers start before any file exists: a WebAccess file system copies what is there when it starts.
	const workers = {
		small: await startWorker(tab, `append-${plan.storage}-small`, plan.storage),
		big: await startWorker(tab, `append-${plan.storage}-big`, plan.storage),
	};
	try {
		await tab.call("importFile", workers.small.name, small.path, small.url);
		const imported = await watched(run, tab, workers.big, () =>
			tab.call("importFile", workers.big.name, big.path, big.url),
		);
		// The other storages' imports are timed in case 2 (one worker in the page); WebAccess runs here only.
		if (plan.storage === "webaccess") {
			row("import webaccess", "webaccess: import 100 MB (Blob → file)").add(imported.value, imported);
		}
		const appended = { small: 0, big: 0 };
		/** The page's numbers of the messages appended to each session, in order (answers.ts `appendedMessage`). */
		const sent = { small: [] as number[], big: [] as number[] };
		const order = round % 2 ? [...plan.durabilities].reverse() : plan.durabilities;
		for (const durability of order) {
			const handles = { small: "", big: "" };
			for (const size of ["small", "big"] as const) {
				const fixture = fixtures[size];
				const worker = workers[size];
				const opened = await watched(run, tab, worker, () =>
					tab.call("open", worker.name, fixture.path, { durability }),
				);
				const expected = {
					entryCount: fixture.answer.entryCount + appended[size],
					contextLength: fixture.answer.contextLength + appended[size],
				};
				check(`${plan.storage} ${size} session opened for writing`, opened.value, expected);
				if (appended[size] === 0) seen(plan.storage, size, opened.value);
				handles[size] = opened.value.handle;
				if (size === "big" && plan.storage === "webaccess" && durability === order[0]) {
					row("open webaccess write", "webaccess: open 100 MB for writing").add(opened.value.ms, opened);
				}
			}
			const times = { small: [] as number[], big: [] as number[] };
			const rowOf = (size: "small" | "big") =>
				row(
					`append ${plan.storage} ${durability} ${size}`,
					`${plan.storage}, ${durability}: append to the ${size === "small" ? "1 KB" : "100 MB"} session`,
				);
			const appendBlock = async (size: "small" | "big", count: number, timed: boolean) => {
				const worker = workers[size];
				const block = await watched(
					run,
					tab,
					worker,
					() => tab.call("appends", worker.name, handles[size], count),
					false,
				);
				appended[size] += count;
				for (let i = 0; i < count; i++) sent[size].push(block.value.first + i);
				if (!timed) return;
				times[size].push(...block.value.times);
				rowOf(size).addPeaks(block);
			};
			for (const size of ["small", "big"] as const) await appendBlock(size, plan.warmup, false);
			for (let block = 0; block < plan.blocks; block++) {
				const sizes = block % 2 ? (["big", "small"] as const) : (["small", "big"] as const);
				for (const size of sizes) await appendBlock(size, size === "small" ? plan.smallBlock : plan.bigBlock, true);
			}
			for (const size of ["small", "big"] as const) {
				const target = rowOf(size);
				target.perRound = times[size].length;
				target.add(median(times[size]));
				const fixture = fixtures[size];
				const after = await tab.call("answer", workers[size].name, handles[size]);
				check(`${plan.storage} ${size} session after the appends`, after, {
					entryCount: fixture.answer.entryCount + appended[size],
					contextLength: fixture.answer.contextLength + appended[size],
				});
				await tab.call("close", workers[size].name, handles[size]);
			}
		}
		for (const size of ["small", "big"] as const) {
			const problem = await appendsProblem(tab, workers[size], fixtures[size], sent[size], run.messages);
			if (problem) throw new Error(`${plan.storage} ${size}: ${problem}: no figure is printed for a wrong answer`);
		}
	} finally {
		await closeTab(tab, [workers.small, workers.big]);
	}
}

/**
 * What is wrong with the file of `fixture` after the appends of the page's messages `sent`, or nothing: its
 * bytes before them must be the fixture's, and every line after them what `SessionTree` in Node writes for
 * the same appends (answers.ts `normalisedAppends`: ids numbered, the entries' times by their shapes).
 */
async function appendsProblem(
	tab: Tab,
	worker: EngineWorker,
	fixture: Fixture,
	sent: readonly number[],
	messages: readonly AgentMessage[],
): Promise<string | undefined> {
	const file = await tab.call("appendedFile", worker.name, fixture.path, fixture.bytes);
	if (file.prefixSha256 !== fixture.sha256) return `the file's first ${fixture.bytes} bytes are not the session's`;
	if (typeof file.lines === "string") return file.lines;
	const tree = SessionTree.fromRecords(fixture.records);
	const before = tree.size;
	for (const i of sent) tree.appendMessage(appendedMessage(messages, i));
	const expected = normalisedAppends(tree.entriesBetween(before, tree.size).map((entry) => JSON.stringify(entry)));
	const at = file.lines.findIndex((line, index) => line !== expected[index]);
	if (at >= 0) return `appended line ${at + 1} differs from SessionTree's in Node: ${file.lines[at]?.slice(0, 160)}`;
	return file.lines.length === expected.length
		? undefined
		: `${file.lines.length} lines appended, SessionTree in Node wrote ${expected.length}`;
}

/** Everything the open session `handle` holds must be what `SessionTree` holds in Node (answers.ts `wholeDigest`). */
async function checkWhole(
	what: string,
	tab: Tab,
	worker: EngineWorker,
	handle: string,
	fixture: Fixture,
): Promise<void> {
	if ((await tab.call("whole", worker.name, handle)) !== fixture.whole) {
		throw new Error(
			`${what}: its entries, labels, header, leaf or name differ from SessionTree's in Node: no figure is printed for a wrong answer`,
		);
	}
}

/** Case 2, one round on one storage: import the 100 MB file, then open it for writing and read-only. */
async function openRound(run: Run, fixtures: Fixtures, storage: StorageName, round: number): Promise<void> {
	const { big } = fixtures;
	const tab = await openTab(run, [big.url]);
	const worker = await startWorker(tab, `open-${storage}`, storage);
	try {
		const imported = await watched(run, tab, worker, () => tab.call("importFile", worker.name, big.path, big.url));
		row(`import ${storage}`, `${storage}: import 100 MB (Blob → file)`).add(imported.value, imported);
		const modes = round % 2 ? [true, false] : [false, true];
		const what = (readOnly: boolean) => `${storage} 100 MB session opened${readOnly ? " read-only" : ""}`;
		for (const readOnly of modes) {
			const opened = await watched(run, tab, worker, () => tab.call("open", worker.name, big.path, { readOnly }));
			check(what(readOnly), opened.value, big.answer);
			// The whole answer in the first round, once nothing more is timed in this page: what the page keeps
			// of it (100 MB of entries) would weigh on the next open's peak. So the last open's own, the first's below.
			if (round === 0 && readOnly === modes[1]) await checkWhole(what(readOnly), tab, worker, opened.value.handle, big);
			seen(storage, "big", opened.value);
			const mode = readOnly ? "read-only" : "write";
			row(`open ${storage} ${mode}`, `${storage}: open 100 MB ${readOnly ? "read-only" : "for writing"}`).add(
				opened.value.ms,
				opened,
			);
			await tab.call("close", worker.name, opened.value.handle);
		}
		if (round === 0) {
			const readOnly = modes[0] as boolean;
			const again = await tab.call("open", worker.name, big.path, { readOnly });
			await checkWhole(`${what(readOnly)} (again, untimed)`, tab, worker, again.handle, big);
			await tab.call("close", worker.name, again.handle);
			// What the import wrote: the session's bytes, nothing more.
			const problem = await appendsProblem(tab, worker, big, [], run.messages);
			if (problem) throw new Error(`${storage}: the 100 MB session imported: ${problem}`);
		}
	} finally {
		await closeTab(tab, [worker]);
	}
}

type FramesKind = "idle" | "opfs" | "memory";

/** Case 3, one round of one kind: the page's frames while the worker imports and opens 100 MB (or idles). */
async function framesRound(run: Run, fixtures: Fixtures, kind: FramesKind, round: number): Promise<void> {
	const { big } = fixtures;
	const tab = await openTab(run, [big.url]);
	const worker = await startWorker(tab, `frames-${kind}`, kind === "idle" ? "opfs" : kind);
	try {
		const work = kind === "idle" ? { idleMs: IDLE_MS } : { path: big.path, url: big.url };
		const watchedFrames = await watched(run, tab, worker, () => tab.call("frames", worker.name, work));
		const report = watchedFrames.value;
		if (kind !== "idle") {
			check(`${kind}: 100 MB session imported and opened`, report.answer, big.answer);
			if (round === 0) await checkWhole(`${kind}: 100 MB session`, tab, worker, report.handle as string, big);
			seen(kind, "big", report.answer as Answer);
		}
		const label =
			kind === "idle"
				? `main thread idle (${IDLE_MS / 1000} s), worst frame`
				: `${kind}: import + open 100 MB, worst frame`;
		row(`frames ${kind}`, label).add(report.worstFrameMs, watchedFrames);
		const notes = frameNotes.get(kind) ?? [];
		notes.push(report);
		frameNotes.set(kind, notes);
	} finally {
		await closeTab(tab, [worker]);
	}
}

interface Fixtures {
	small: Fixture;
	big: Fixture;
}

// Case 4: huge sessions -------------------------------------------------------------------------------

/** A generated input of bench/scale-inputs.ts, served next to the page, and the engine's answer in Node. */
interface HugeFixture {
	input: ScaleInput;
	url: string;
	/** Where the page's worker imports it, in OPFS. */
	path: string;
	/** `Engine#open(path, { readOnly: true })` (lazy) and `getContext({ last: 50 })` on node storage. */
	expected: {
		entryCount: number;
		leafId: string | null;
		total: number;
		messages: number;
		sha256: string;
		openMs: number;
		pageMs: number;
		jsonBytes: number;
	};
}

const HUGE_LAST = 50;

/** Generate (or find cached) `variant`, link it next to the page, and take the engine's answer in Node. */
async function hugeFixture(outDir: string, variant: VariantName, log: (text: string) => void): Promise<HugeFixture> {
	log(`huge: ${variant} (bench/scale-inputs.ts; generated once, then cached)`);
	const input = ensureInput(variant, { log });
	const name = `huge-${input.name}.jsonl`;
	// A hard link: no copy of a gigabyte (the cache is under the same temporary directory).
	await link(input.path, join(outDir, name));
	log(`huge: ${input.name}: the engine's answer in Node (lazy read-only open, last ${HUGE_LAST} messages)`);
	const engine = new Engine({ storage: createNodeStorage(), agentDir: join(tmpdir(), "pi-bench-huge-agent") });
	const openStart = performance.now();
	const opened = await engine.open(input.path, { readOnly: true });
	const openMs = performance.now() - openStart;
	const pageStart = performance.now();
	const page = await engine.getContext(opened.handle, { last: HUGE_LAST });
	const pageMs = performance.now() - pageStart;
	const json = JSON.stringify(page);
	await engine.closeAll();
	if (opened.entryCount !== input.entries || opened.leafId !== input.leafId) {
		throw new Error(
			`${input.name}: the engine in Node sees ${opened.entryCount} entries and leaf ${opened.leafId}, the generator wrote ${input.entries} and ${input.leafId}`,
		);
	}
	return {
		input,
		url: `/${name}`,
		path: `/pi-huge/sessions/--bench-project--/${basename(input.path)}`,
		expected: {
			entryCount: opened.entryCount,
			leafId: opened.leafId,
			total: page.total,
			messages: page.messages.length,
			sha256: createHash("sha256").update(json).digest("hex"),
			openMs,
			pageMs,
			jsonBytes: Buffer.byteLength(json),
		},
	};
}

/** Peaks of a step, the browser process's included. */
interface HugePeaks extends Peaks {
	browserRss: number | undefined;
}

interface HugeReport {
	fixture: HugeFixture;
	/** `fetch(url)` then `response.blob()` in the page, before any worker. */
	load: { ms: number; browserRss: number | undefined; rendererRss: number | undefined };
	imported: { ms: number } & HugePeaks;
	/** The origin's OPFS after the import. */
	estimate: { usage: number; quota: number };
	opened: { value: HugeOpened } & HugePeaks;
	/** The reading worker's heap once the session is open, after a full collection. */
	retainedHeap: number;
	page: { value: LastPage } & HugePeaks;
}

/** `watched`, with the browser process's peak too. */
async function watchedWithBrowser<T>(
	run: Run,
	tab: Tab,
	worker: EngineWorker,
	body: () => Promise<T>,
): Promise<{ value: T } & HugePeaks> {
	const browser = run.trackRss ? trackRendererRss(tab.browsers) : undefined;
	const result = await watched(run, tab, worker, body);
	return { ...result, browserRss: browser?.stop() };
}

/**
 * Case 4, once for one input: fetch it as a `Blob`, stream it into OPFS through one worker, then open it
 * read-only in a fresh worker (the main thread's frames watched) and ask for the last page.
 */
async function hugeRound(run: Run, fixture: HugeFixture, log: (text: string) => void): Promise<HugeReport> {
	const tab = await openTab(run, []);
	const workers: EngineWorker[] = [];
	try {
		const loadRss = run.trackRss ? [trackRendererRss(tab.browsers), trackRendererRss(tab.renderers)] : undefined;
		const loadStart = performance.now();
		const size = await tab.call("load", fixture.url);
		const load = {
			ms: performance.now() - loadStart,
			browserRss: loadRss?.[0]?.stop(),
			rendererRss: loadRss?.[1]?.stop(),
		};
		if (size !== fixture.input.bytes)
			throw new Error(`${fixture.url}: the page got ${size} bytes, not ${fixture.input.bytes}`);
		log(`huge: ${fixture.input.name}: fetched as a Blob in ${(load.ms / 1000).toFixed(1)} s; importing into OPFS`);
		const importer = await startWorker(tab, "huge-import", "opfs");
		workers.push(importer);
		const imported = await watchedWithBrowser(run, tab, importer, () =>
			tab.call("importFile", importer.name, fixture.path, fixture.url),
		);
		const estimate = await tab.call("estimate");
		// The reading worker is a fresh one: nothing of the import is left in its heap.
		await tab.call("terminate", importer.name);
		await importer.target.detach();
		workers.pop();
		await tab.call("unload", fixture.url);
		log(`huge: ${fixture.input.name}: imported in ${(imported.value / 1000).toFixed(1)} s; opening in a fresh worker`);
		const reader = await startWorker(tab, "huge-open", "opfs");
		workers.push(reader);
		const opened = await watchedWithBrowser(run, tab, reader, () => tab.call("hugeOpen", reader.name, fixture.path));
		await reader.target.collectGarbage();
		const retainedHeap = await reader.target.heapBytes();
		const page = await watchedWithBrowser(run, tab, reader, () =>
			tab.call("lastPage", reader.name, opened.value.handle, HUGE_LAST),
		);
		const { expected } = fixture;
		const got = {
			entryCount: opened.value.entryCount,
			leafId: opened.value.leafId,
			total: page.value.total,
			messages: page.value.messages,
			sha256: page.value.sha256,
		};
		const wanted = {
			entryCount: expected.entryCount,
			leafId: expected.leafId,
			total: expected.total,
			messages: expected.messages,
			sha256: expected.sha256,
		};
		if (JSON.stringify(got) !== JSON.stringify(wanted)) {
			throw new Error(
				`${fixture.input.name} in the browser: ${JSON.stringify(got)}, but the engine in Node says ${JSON.stringify(wanted)}: no figure is printed for a wrong answer`,
			);
		}
		return {
			fixture,
			load,
			imported: { ...imported, ms: imported.value },
			estimate,
			opened,
			retainedHeap,
			page,
		};
	} finally {
		await closeTab(tab, workers);
	}
}

/** How many long animation frames, and the longest: its length, what of it blocked input, its scripts. */
function describeLongest(frames: FrameReport["longFrames"]): string {
	const longest = frames.reduce<FrameReport["longFrames"][number] | undefined>(
		(found, frame) => (found && found.duration >= frame.duration ? found : frame),
		undefined,
	);
	if (!longest) return "none";
	return `${frames.length}, longest ${fmt(longest.duration)} ms (blocking ${fmt(longest.blockingDuration)} ms; scripts: ${longest.scripts.join(", ") || "none"})`;
}

function printHuge(reports: readonly HugeReport[], run: Run, preamble: Preamble): void {
	printPreamble(preamble, "case 4 (huge sessions), once per input");
	const one = (bytes: number | undefined): string => (bytes === undefined ? "—" : (bytes / MB).toFixed(0));
	const header = [
		"input",
		"step",
		"ms",
		"worst frame ms",
		"worker heap peak MB",
		"renderer peak MB",
		"browser peak MB",
	];
	const cells: string[][] = [];
	for (const report of reports) {
		const { input } = report.fixture;
		const name = `${input.name} (${(input.bytes / MB).toFixed(0)} MB, ${input.entries} entries)`;
		cells.push(
			[
				name,
				"fetch → Blob (page)",
				fmt(report.load.ms),
				"",
				"",
				one(report.load.rendererRss),
				one(report.load.browserRss),
			],
			[
				"",
				"import: Blob → OPFS (worker 1)",
				fmt(report.imported.ms),
				"",
				one(report.imported.heap),
				one(report.imported.rss),
				one(report.imported.browserRss),
			],
			[
				"",
				"open read-only, lazy (worker 2)",
				fmt(report.opened.value.ms),
				fmt(report.opened.value.worstFrameMs),
				one(report.opened.heap),
				one(report.opened.rss),
				one(report.opened.browserRss),
			],
			[
				"",
				`getContext({ last: ${HUGE_LAST} })`,
				fmt(report.page.value.ms),
				"",
				one(report.page.heap),
				one(report.page.rss),
				one(report.page.browserRss),
			],
		);
	}
	const widths = header.map((title, i) =>
		Math.max(3, title.length, ...cells.map((cell) => (cell[i] as string).length)),
	);
	const right = new Set([2, 3, 4, 5, 6]);
	const format = (cell: string[]) =>
		`| ${cell.map((text, i) => (right.has(i) ? text.padStart(widths[i] as number) : text.padEnd(widths[i] as number))).join(" | ")} |`;
	console.log("");
	console.log(format(header));
	console.log(
		`| ${widths.map((width, i) => (right.has(i) ? `${"-".repeat(width - 1)}:` : "-".repeat(width))).join(" | ")} |`,
	);
	for (const cell of cells) console.log(format(cell));
	console.log("");
	for (const report of reports) {
		const { input, expected } = report.fixture;
		const opened = report.opened.value;
		const tasks = opened.longTasks;
		console.log(
			`${input.name}: ${input.source} payloads, seed ${input.seed}, longest line ${(input.longestLineBytes / MB).toFixed(1)} MB, ${input.images} images; ` +
				`answer checked against the engine in Node (node storage, same calls: open ${fmt(expected.openMs)} ms, last page ${fmt(expected.pageMs)} ms): ` +
				`${opened.entryCount} entries, leaf ${opened.leafId}, context ${report.page.value.total} messages, last page ${report.page.value.messages} messages ` +
				`(${(report.page.value.jsonBytes / MB).toFixed(2)} MB of JSON, SHA-256 ${report.page.value.sha256.slice(0, 12)}…), ${opened.diagnostics} diagnostics. ` +
				`Worker 2 keeps ${(report.retainedHeap / MB).toFixed(0)} MB of heap once open (after a full GC). ` +
				`While it opened: ${opened.frames} frames, ${opened.progressCalls} progress callbacks, long tasks ${tasks.length ? `${tasks.length}, longest ${fmt(Math.max(...tasks))} ms` : "none"}, ` +
				`long animation frames ${describeLongest(opened.longFrames)}. ` +
				`OPFS after the import: ${(report.estimate.usage / MB).toFixed(0)} MB used of a ${(report.estimate.quota / MB).toFixed(0)} MB quota.`,
		);
	}
	console.log(
		`Memory: worker heap peak = Runtime.getHeapUsage (V8 heap + ArrayBuffer backing stores) of the step's worker, sampled every 20 ms, after a full GC ` +
			`(during the import: mostly chunks already written that V8 has not collected yet); ` +
			`renderer and browser peak = VmHWM of the page's renderer process (page and workers) and of the browser process during the step, reset just before it` +
			`${run.trackRss ? "" : " (not available here)"}. Neither counts OPFS file data in the page cache.`,
	);
}

// The report -----------------------------------------------------------------------------------------

const fmt = (value: number, decimals = 1): string =>
	value >= 100 ? value.toFixed(0) : value.toFixed(value >= 10 ? Math.min(decimals, 1) : decimals + 1);
const mb = (bytes: readonly number[]): string => (bytes.length ? (Math.max(...bytes) / MB).toFixed(0) : "—");

interface Line {
	/** The case of the brief (1 appends, 2 opens, 3 frames). */
	section: 1 | 2 | 3;
	row: Row;
	/** The renderer is shared with another row's worker (appends): its peak is shown on that row. */
	sharedRenderer?: boolean;
	unit: string;
	ratio?: { value: number; goal?: number };
	/** Judge the goal by the worst round instead of the median (worst frames). */
	worst?: { goal: number };
}

function printTable(lines: Line[]): void {
	const header = [
		"#",
		"case",
		"n",
		"median",
		"range",
		"ratio",
		"goal",
		"met",
		"renderer peak MB",
		"worker heap peak MB",
	];
	const cells = lines.map(({ section, row: line, unit, ratio, worst, sharedRenderer }) => {
		const min = Math.min(...line.values);
		const max = Math.max(...line.values);
		let goal = "";
		let met = "";
		if (ratio?.goal !== undefined) {
			goal = `≤ ${ratio.goal}×`;
			met = ratio.value <= ratio.goal ? "yes" : "no";
		}
		if (worst) {
			goal = `< ${worst.goal} ${unit}`;
			met = max < worst.goal ? "yes" : "no";
		}
		return [
			String(section),
			line.label,
			line.perRound > 1 ? `${line.values.length} × ${line.perRound}` : `${line.values.length}`,
			`${fmt(line.median)} ${unit}`,
			`${fmt(min)}–${fmt(max)}`,
			ratio ? `${ratio.value.toFixed(2)}×` : "",
			goal,
			met,
			sharedRenderer ? "—" : mb(line.rss),
			mb(line.heap),
		];
	});
	const widths = header.map((title, i) =>
		Math.max(3, title.length, ...cells.map((cell) => (cell[i] as string).length)),
	);
	const right = new Set([2, 3, 4, 5, 8, 9]);
	const format = (cell: string[]) =>
		`| ${cell.map((text, i) => (right.has(i) ? text.padStart(widths[i] as number) : text.padEnd(widths[i] as number))).join(" | ")} |`;
	console.log(format(header));
	console.log(
		`| ${widths.map((width, i) => (right.has(i) ? `${"-".repeat(width - 1)}:` : "-".repeat(width))).join(" | ")} |`,
	);
	for (const cell of cells) console.log(format(cell));
}

function git(...args: string[]): string {
	try {
		return execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
	} catch {
		return "?";
	}
}

// The run --------------------------------------------------------------------------------------------

/** What every report starts with: the browser, the machine, the commit, the load. */
interface Preamble {
	commit: string;
	started: number;
	loadBefore: number[];
}

function printPreamble(preamble: Preamble, what: string): void {
	const loadAfter = loadavg();
	const cpu = cpus();
	console.log(
		`\nbrowser benchmarks — ${browserVersion} (headless, ${chromiumLaunchOptions.executablePath}, ` +
			`${incognito ? "an off-the-record context of a fresh browser per case: OPFS in memory (--incognito)" : "a fresh browser on a fresh profile on disk per case"}), ` +
			`Node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
	);
	console.log(
		`commit ${preamble.commit}; ${what}; load average ${preamble.loadBefore[0]?.toFixed(2)} before, ${loadAfter[0]?.toFixed(2)} after; ` +
			`${((performance.now() - preamble.started) / 1000).toFixed(0)} s in all`,
	);
}

/** Cases 1–3, in rounds, and their report. */
async function regularCases(
	run: Run,
	fixtures: Fixtures,
	messages: AgentMessage[],
	preamble: Preamble,
	log: (text: string) => void,
): Promise<void> {
	const { small, big } = fixtures;
	const messageBytes = messages.map((message) => Buffer.byteLength(JSON.stringify(message)));
	const appendPlans: AppendPlan[] = [
		{
			storage: "opfs",
			durabilities: quick ? ["group"] : ["group", "fsync"],
			warmup: OPFS_WARMUP,
			blocks: OPFS_BLOCKS,
			smallBlock: OPFS_BLOCK,
			bigBlock: OPFS_BLOCK,
		},
		// The floor: the same appends to memory storage (nothing to flush), in the same kind of page; not
		// with `--quick`, which keeps to about a minute.
		...(quick
			? []
			: [
					{
						storage: "memory",
						durabilities: ["group"],
						warmup: OPFS_WARMUP,
						blocks: OPFS_BLOCKS,
						smallBlock: OPFS_BLOCK,
						bigBlock: OPFS_BLOCK,
					} satisfies AppendPlan,
				]),
		{
			storage: "webaccess",
			durabilities: ["group"],
			warmup: WEBACCESS_WARMUP,
			blocks: WEBACCESS_BLOCKS,
			smallBlock: WEBACCESS_SMALL_BLOCK,
			bigBlock: WEBACCESS_BIG_BLOCK,
		},
	];
	const framesKinds: FramesKind[] = ["idle", "opfs", "memory"];
	for (let round = 0; round < ROUNDS; round++) {
		// The cases take turns; their order turns too from one round to the next.
		const cases: [string, () => Promise<void>][] = [
			// WebAccess's appends under a name of their own: `--only=appends` leaves out their minute a round.
			...appendPlans.map((plan): [string, () => Promise<void>] => [
				plan.storage === "webaccess" ? "webaccess, appends" : `appends, ${plan.storage}`,
				() => appendRound(run, fixtures, plan, round),
			]),
			...(["memory", "opfs"] as const).map((storage): [string, () => Promise<void>] => [
				`open, ${storage}`,
				() => openRound(run, fixtures, storage, round),
			]),
			...framesKinds.map((kind): [string, () => Promise<void>] => [
				`frames, ${kind}`,
				() => framesRound(run, fixtures, kind, round),
			]),
		];
		const chosen = cases.filter(([name]) => !regularOnly || regularOnly.some((prefix) => name.startsWith(prefix)));
		const shift = round % chosen.length;
		for (const [name, runCase] of [...chosen.slice(shift), ...chosen.slice(0, shift)]) {
			log(`round ${round + 1}/${ROUNDS}: ${name}`);
			await runCase();
		}
	}

	const lines: Line[] = [];
	const ratio = (key: string, base: string, goal?: number): Line["ratio"] => {
		const [of, to] = [rows.get(key), rows.get(base)];
		return of && to ? { value: of.median / to.median, goal } : undefined;
	};
	const push = (section: Line["section"], key: string, extra: Partial<Line> = {}): void => {
		const found = rows.get(key);
		if (found) lines.push({ section, row: found, unit: "ms", ...extra });
	};
	for (const plan of appendPlans) {
		for (const durability of plan.durabilities) {
			const [small, big] = [`append ${plan.storage} ${durability} small`, `append ${plan.storage} ${durability} big`];
			push(1, small, { sharedRenderer: true });
			push(1, big, { ratio: ratio(big, small, plan.storage === "opfs" ? 1.5 : undefined) });
		}
	}
	push(2, "open memory write");
	push(2, "open opfs write", { ratio: ratio("open opfs write", "open memory write", 1.3) });
	push(2, "open memory read-only");
	push(2, "open opfs read-only", { ratio: ratio("open opfs read-only", "open memory read-only", 1.3) });
	push(2, "open webaccess write", { ratio: ratio("open webaccess write", "open memory write") });
	push(2, "import memory");
	push(2, "import opfs", { ratio: ratio("import opfs", "import memory") });
	push(2, "import webaccess", { ratio: ratio("import webaccess", "import memory") });
	push(3, "frames idle");
	push(3, "frames opfs", { worst: { goal: 50 } });
	push(3, "frames memory", { worst: { goal: 50 } });

	printPreamble(preamble, `${roundsText(ROUNDS)}${quick ? " (--quick)" : ""}`);
	console.log(
		`sessions: ${(big.bytes / MB).toFixed(2)} MB (${big.answer.entryCount} entries, context ${big.answer.contextLength} messages) ` +
			`and ${small.bytes} bytes (${small.answer.entryCount} entries); appended messages ${Math.min(...messageBytes)}–${Math.max(...messageBytes)} bytes of JSON ` +
			`(mean ${Math.round(messageBytes.reduce((a, b) => a + b, 0) / messageBytes.length)})`,
	);
	console.log(
		`answers checked before every figure: ${[...answersSeen].map(([key, values]) => `${key}: ${[...values].join(" / ")}`).join("; ")}\n`,
	);
	printTable(lines);
	console.log("");
	console.log(
		`n: rounds (× timed appends per round). median and range: of the rounds' values (an append round's value is the median of its appends). ` +
			`Appends: OPFS and memory ${OPFS_BLOCKS} blocks of ${OPFS_BLOCK} per session per round after ${OPFS_WARMUP} untimed; ` +
			(rows.has("append webaccess group small")
				? `WebAccess ${WEBACCESS_BLOCKS} blocks of ${WEBACCESS_SMALL_BLOCK} (1 KB) and of ${WEBACCESS_BIG_BLOCK} (100 MB) after ${WEBACCESS_WARMUP} untimed. `
				: "") +
			`Ratios: 100 MB ÷ 1 KB (appends), ÷ memory storage (opens). Worst frames: met when the worst round is under the goal.`,
	);
	console.log(
		`Memory, largest over the rounds: renderer peak = VmHWM of the page's renderer process (page and workers) during the case, reset just before it${run.trackRss ? "" : " (not available here)"}; ` +
			`worker heap peak = Runtime.getHeapUsage (V8 heap + ArrayBuffer backing stores) of the timed worker, sampled every 20 ms, after a full GC. ` +
			`Append rows: both workers share one renderer, so its peak is the page's with both sessions open.`,
	);
	reportSuiteRows(fixtures);
	for (const kind of ["idle", "opfs", "memory"] as const) {
		const reports = frameNotes.get(kind) ?? [];
		if (reports.length === 0) continue;
		const tasks = reports.flatMap((report) => report.longTasks);
		const longFrames = reports.flatMap((report) => report.longFrames);
		const longest = longFrames.reduce<FrameReport["longFrames"][number] | undefined>(
			(found, frame) => (found && found.duration >= frame.duration ? found : frame),
			undefined,
		);
		const what = kind === "idle" ? "idle" : `${kind} import + open`;
		console.log(
			`${what}: ${fmt(median(reports.map((r) => r.totalMs)))} ms median in all, ` +
				`${median(reports.map((r) => r.frames))} frames, ${median(reports.map((r) => r.progressCalls))} progress callbacks; ` +
				`long tasks on the page: ${tasks.length ? `${tasks.length}, longest ${fmt(Math.max(...tasks))} ms` : "none"}; ` +
				`long animation frames: ${
					longest
						? `${longFrames.length}, longest ${fmt(longest.duration)} ms (blocking ${fmt(longest.blockingDuration)} ms; scripts: ${longest.scripts.join(", ") || "none"})`
						: "none"
				}`,
		);
	}
}

// The suite's rows ---------------------------------------------------------------------------------------

/** Names of the rows handed to `npm run bench` (a goal names another row by its name). */
const SUITE_ROWS = {
	appendSmall: "OPFS append, awaited, at 1 KB",
	appendBig: "OPFS append, awaited, at 100 MB",
	openOpfs: "open 100 MB from OPFS in the worker",
	openMemory: "open 100 MB from memory storage in the worker",
	openOpfsReadOnly: "open 100 MB read-only from OPFS in the worker",
	openMemoryReadOnly: "open 100 MB read-only from memory storage in the worker",
} as const;

/** A row's figures over the rounds (with the renderer's peak RSS, where it is the case's own). */
function measureOfRow(key: string, withRss: boolean): Measure | undefined {
	const found = rows.get(key);
	if (!found) return undefined;
	return measureOf(found.values, withRss && found.rss.length === found.values.length ? found.rss : undefined);
}

const heapNote = (key: string): string => {
	const found = rows.get(key);
	return found?.heap.length ? `worker heap peak ${mb(found.heap)} MB` : "";
};

/** Hand the rows of cases 1 and 2 to the suite (bench/suite/rows.ts), for those that ran. */
function reportSuiteRows(fixtures: Fixtures): void {
	const { small, big } = fixtures;
	const answer = (fixture: Fixture) =>
		`${fixture.answer.entryCount.toLocaleString("en-US")} entries, context ${fixture.answer.contextLength.toLocaleString("en-US")} messages`;
	const appendChecked = (fixture: Fixture) =>
		`entry count and context length (${answer(fixture)}, then as many more as appended) equal to SessionTree's in Node, on opening and after the appends; ` +
		"the whole file afterwards: the session's bytes (SHA-256), then every appended line as SessionTree in Node writes the same appends (ids numbered, entry times by their shapes)";
	const openChecked =
		`entry count and context length equal to SessionTree's in Node for the same bytes (${answer(big)}), every open; ` +
		"in the first round, untimed, everything the open holds (header, leaf, name, getTree(): every entry as JSON, label, label time, the shape; a SHA-256) equal to SessionTree's in Node, and the imported file byte for byte the session";
	const out: BenchRow[] = [];
	const push = (row: BenchRow, needs: string) => {
		if (rows.has(needs)) out.push(row);
	};
	for (const [size, fixture] of [
		["small", small],
		["big", big],
	] as const) {
		const key = `append opfs group ${size}`;
		const fsync = rows.get(`append opfs fsync ${size}`);
		const perRound = rows.get(key)?.perRound ?? 0;
		const notes = [
			`durability group (the stock worker's); median of ${perRound} timed appends of ~500-byte messages per round, in blocks alternating with the other session's`,
			"floor: the same appends to memory storage",
			fsync ? `with durability fsync ${fmt(fsync.median)} ms` : "",
			heapNote(key),
		];
		const row: BenchRow = {
			bench: "browser",
			name: size === "small" ? SUITE_ROWS.appendSmall : SUITE_ROWS.appendBig,
			size: { bytes: fixture.bytes, entries: fixture.answer.entryCount },
			ours: measureOfRow(key, false),
			floor: measureOfRow(`append memory group ${size}`, false),
			checked: appendChecked(fixture),
			note: notes.filter((note) => note !== "").join("; "),
		};
		if (size === "big") row.goals = [{ kind: "value", max: 1.5, relativeTo: SUITE_ROWS.appendSmall }];
		push(row, key);
	}
	for (const [mode, opfsName, memoryName] of [
		["write", SUITE_ROWS.openOpfs, SUITE_ROWS.openMemory],
		["read-only", SUITE_ROWS.openOpfsReadOnly, SUITE_ROWS.openMemoryReadOnly],
	] as const) {
		for (const storage of ["opfs", "memory"] as const) {
			const key = `open ${storage} ${mode}`;
			const imported = rows.get(`import ${storage}`);
			const notes = [
				`Engine#open(path${mode === "read-only" ? ", { readOnly: true }" : ""}) awaited from the page, in a fresh browser each round`,
				imported ? `its import of the 100 MB Blob ${fmt(imported.median)} ms` : "",
				`RSS: the renderer's peak (page and worker)`,
				heapNote(key),
			];
			const row: BenchRow = {
				bench: "browser",
				name: storage === "opfs" ? opfsName : memoryName,
				size: { bytes: big.bytes, entries: big.answer.entryCount },
				ours: measureOfRow(key, true),
				checked: openChecked,
				note: notes.filter((note) => note !== "").join("; "),
			};
			if (storage === "opfs") row.goals = [{ kind: "value", max: 1.3, relativeTo: memoryName }];
			push(row, key);
		}
	}
	for (const row of out) reportRow(row);
}

async function main(): Promise<void> {
	const cleanups: (() => Promise<void>)[] = [];
	// Read before the build: the page is built from the working tree as it is now.
	const commit = `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain").length ? "+ (uncommitted changes)" : ""}`;
	const started = performance.now();
	const loadBefore = loadavg();
	const outDir = await mkdtemp(join(tmpdir(), "pi-bench-browser-"));
	const log = (text: string) =>
		console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${text}`);
	let server: { url: string; close: () => Promise<void> } | undefined;
	const runRegular = regularOnly === undefined || regularOnly.length > 0;
	try {
		log("building the bench page (Vite, production)");
		await buildPage(outDir);
		// Every file is next to the page before the server starts.
		const huge: HugeFixture[] = [];
		for (const variant of hugeVariants) huge.push(await hugeFixture(outDir, variant, log));
		let regular: { fixtures: Fixtures; messages: AgentMessage[] } | undefined;
		if (runRegular) {
			log("generating the sessions");
			const { small, big, messages } = await writeFixtures(outDir);
			regular = { fixtures: { small, big }, messages };
		}
		// Each case's browser gets a profile directory of its own in here, removed when the case ends.
		const profiles = await mkdtemp(join(tmpdir(), "pi-bench-profiles-"));
		cleanups.push(() => rm(profiles, { recursive: true, force: true }));
		server = await servePage(outDir);
		const run: Run = {
			url: server.url,
			messages: regular?.messages ?? [],
			trackRss: canTrackRss(),
			profiles,
			incognito,
		};
		const preamble: Preamble = { commit, started, loadBefore };
		if (regular) await regularCases(run, regular.fixtures, regular.messages, preamble, log);
		if (huge.length > 0) {
			const reports: HugeReport[] = [];
			for (const fixture of huge) {
				log(`huge: ${fixture.input.name} in the browser`);
				reports.push(await hugeRound(run, fixture, log));
			}
			printHuge(reports, run, preamble);
		}
	} finally {
		await server?.close();
		await rm(outDir, { recursive: true, force: true });
		for (const cleanup of cleanups) await cleanup();
	}
}

await main();
