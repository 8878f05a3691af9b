/**
 * The bench page: it starts engine workers of worker.ts and exposes `window.bench`
 * (`BenchPage`) for bench/browser.ts, which drives it with Playwright. Every time is taken here, with
 * `performance.now()` on the page's main thread, around the awaited calls to the worker, so Playwright's
 * own round trips are in none of them. Session files come from the preview server as `Blob`s (fetched
 * once, before any timing) and cross to the worker as handles, not copies.
 * @module
 */
import { type EngineWorker, startEngineWorker } from "../../../adapters/worker.ts";
import type { AgentMessage, Durability } from "../../../src/index.ts";
import { appendedMessage, normalisedAppends, wholeDigest } from "./answers.ts";

/** The storages of the bench worker (worker.ts). */
export type StorageName = "opfs" | "memory" | "webaccess";

/** What an opened session says: the figures every storage must agree on. */
export interface Answer {
	/** Entries of the session (header excluded). */
	entryCount: number;
	/** Messages in the model context of the current leaf. */
	contextLength: number;
}

export interface Opened extends Answer {
	handle: string;
	/** The awaited `engine.open`, ms. */
	ms: number;
}

export interface Appended {
	/** Each awaited `appendMessage`, ms, in order. */
	times: number[];
	/** The page's count of the first message appended (answers.ts `appendedMessage` tells which it was). */
	first: number;
}

/** A file after appends: its size, the SHA-256 of its bytes before the appends, and the lines after them. */
export interface AppendedFile {
	bytes: number;
	prefixSha256: string;
	/** The appended lines, normalised (answers.ts `normalisedAppends`), or what is wrong with them. */
	lines: string[] | string;
}

/** The main thread while something ran (or nothing, for the idle baseline). */
export interface FrameReport {
	totalMs: number;
	/** The longest gap between two `requestAnimationFrame` callbacks (the last one to the end included), ms. */
	worstFrameMs: number;
	frames: number;
	/** Long tasks (PerformanceObserver `longtask`, 50 ms or more) of the page, ms each. */
	longTasks: number[];
	/**
	 * Long animation frames (PerformanceObserver `long-animation-frame`, 50 ms or more): each one's
	 * duration, how much of it blocked input, and what ran in it (script sources, where Chromium tells).
	 */
	longFrames: { duration: number; blockingDuration: number; scripts: string[] }[];
	/** Progress callbacks of the open that reached the page. */
	progressCalls: number;
	/** The opened session's answer and handle (when something was opened). */
	answer?: Answer;
	handle?: string;
}

/** `hugeOpen`: a read-only (lazy) open watched from the main thread. */
export interface HugeOpened extends Omit<FrameReport, "answer"> {
	handle: string;
	/** The awaited `engine.open(path, { readOnly: true })`, ms. */
	ms: number;
	entryCount: number;
	leafId: string | null;
	diagnostics: number;
}

/** `lastPage`: the last page of the leaf's context. */
export interface LastPage {
	/** The awaited `engine.getContext(handle, { last })`, ms. */
	ms: number;
	total: number;
	messages: number;
	/** Length of the page's JSON (`JSON.stringify` of the answer), and its SHA-256 in hex. */
	jsonBytes: number;
	sha256: string;
}

/**
 * What the page offers bench/browser.ts. Engine workers are named (the `Worker`'s name, which is also
 * its DevTools title): a case may run several side by side, each with a session of its own.
 */
export interface BenchPage {
	/** The messages `appends` cycles through. */
	setMessages(messages: AgentMessage[]): void;
	/** Fetch a file of the preview server and keep it as a `Blob`; its size. */
	load(url: string): Promise<number>;
	/** Start an engine worker named `name` on `storage`; how long the start took, ms. */
	start(name: string, storage: StorageName): Promise<number>;
	/** `engine.importSessionFile(path, blob)` of a loaded file, ms. */
	importFile(name: string, path: string, url: string): Promise<number>;
	open(name: string, path: string, options: { readOnly?: boolean; durability?: Durability }): Promise<Opened>;
	answer(name: string, handle: string): Promise<Answer>;
	/** `count` awaited appends of ~500-byte messages, timed one by one. */
	appends(name: string, handle: string, count: number): Promise<Appended>;
	/** A digest of everything the open session holds (answers.ts `wholeDigest`). */
	whole(name: string, handle: string): Promise<string>;
	/** The file at `path` read back, split at `prefixBytes` (its size before any append). */
	appendedFile(name: string, path: string, prefixBytes: number): Promise<AppendedFile>;
	close(name: string, handle: string): Promise<void>;
	/** End a worker (closing its sessions first). */
	terminate(name: string): Promise<void>;
	/** Watch the main thread's frames while a worker imports and opens a loaded file, or for `idleMs`. */
	frames(name: string, work: { path: string; url: string } | { idleMs: number }): Promise<FrameReport>;
	/** Let go of a loaded file's `Blob`. */
	unload(url: string): void;
	/** What the origin's storage holds and may hold (`navigator.storage.estimate()`), bytes. */
	estimate(): Promise<{ usage: number; quota: number }>;
	/** `engine.open(path, { readOnly: true })` (lazy, the engine's default), the main thread's frames watched. */
	hugeOpen(name: string, path: string): Promise<HugeOpened>;
	/** `engine.getContext(handle, { last })`, timed, and a digest of its answer (computed after the timing). */
	lastPage(name: string, handle: string, last: number): Promise<LastPage>;
}

const workers = new Map<string, EngineWorker>();
let messages: AgentMessage[] = [];
/** Messages appended so far by the page (each gets a time of its own: answers.ts `appendedMessage`). */
let nextMessage = 0;
const blobs = new Map<string, Blob>();
const progressText = document.getElementById("progress") as HTMLElement;

function engine(name: string): EngineWorker["engine"] {
	const worker = workers.get(name);
	if (!worker) throw new Error(`no engine worker ${name}`);
	return worker.engine;
}

function blob(url: string): Blob {
	const found = blobs.get(url);
	if (!found) throw new Error(`${url} was not loaded`);
	return found;
}

async function answerOf(name: string, handle: string): Promise<Answer> {
	const [summary, page] = await Promise.all([
		engine(name).summary(handle),
		engine(name).getContext(handle, { limit: 0 }),
	]);
	return { entryCount: summary.entryCount, contextLength: page.total };
}

const bench: BenchPage = {
	setMessages(given) {
		messages = given;
	},
	async load(url) {
		const response = await fetch(url);
		if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
		const loaded = await response.blob();
		blobs.set(url, loaded);
		return loaded.size;
	},
	async start(name, storage) {
		if (workers.has(name)) throw new Error(`an engine worker ${name} is running`);
		const start = performance.now();
		const worker = new Worker(new URL("./worker.ts", import.meta.url), { type: "module", name });
		workers.set(name, await startEngineWorker({ storage, worker }));
		return performance.now() - start;
	},
	async importFile(name, path, url) {
		const file = blob(url);
		const start = performance.now();
		await engine(name).importSessionFile(path, file);
		return performance.now() - start;
	},
	async open(name, path, options) {
		const start = performance.now();
		const { handle } = await engine(name).open(path, options);
		const ms = performance.now() - start;
		return { handle, ms, ...(await answerOf(name, handle)) };
	},
	answer: answerOf,
	async appends(name, handle, count) {
		if (messages.length === 0) throw new Error("setMessages first");
		const remote = engine(name);
		const times: number[] = [];
		const first = nextMessage;
		for (let i = 0; i < count; i++) {
			const message = appendedMessage(messages, nextMessage++);
			const start = performance.now();
			await remote.appendMessage(handle, message);
			times.push(performance.now() - start);
		}
		return { times, first };
	},
	async whole(name, handle) {
		const [summary, roots] = await Promise.all([engine(name).summary(handle), engine(name).getTree(handle)]);
		return wholeDigest(summary.header, summary.leafId, summary.name, roots);
	},
	async appendedFile(name, path, prefixBytes) {
		const bytes = await engine(name).exportSessionFile(path);
		const prefix = await crypto.subtle.digest("SHA-256", bytes.subarray(0, prefixBytes));
		const prefixSha256 = Array.from(new Uint8Array(prefix), (byte) => byte.toString(16).padStart(2, "0")).join("");
		const rest = new TextDecoder().decode(bytes.subarray(prefixBytes));
		const lines =
			rest === ""
				? []
				: rest.endsWith("\n")
					? normalisedAppends(rest.slice(0, -1).split("\n"))
					: `the file does not end with a newline after ${prefixBytes} bytes`;
		return { bytes: bytes.length, prefixSha256, lines };
	},
	close: (name, handle) => engine(name).close(handle),
	async terminate(name) {
		const worker = workers.get(name);
		workers.delete(name);
		await worker?.terminate();
	},
	async frames(name, work) {
		let handle: string | undefined;
		const { report } = await watchFrames(async (progress) => {
			if ("idleMs" in work) await new Promise((resolve) => setTimeout(resolve, work.idleMs));
			else {
				const remote = engine(name);
				await remote.importSessionFile(work.path, blob(work.url));
				handle = (await remote.open(work.path, {}, progress)).handle;
			}
		});
		// The answer once the frames are no longer watched.
		return handle === undefined ? report : { ...report, answer: await answerOf(name, handle), handle };
	},
	unload(url) {
		blobs.delete(url);
	},
	async estimate() {
		const { usage = 0, quota = 0 } = await navigator.storage.estimate();
		return { usage, quota };
	},
	async hugeOpen(name, path) {
		const { value, report } = await watchFrames(async (progress) => {
			const start = performance.now();
			const opened = await engine(name).open(path, { readOnly: true }, progress);
			return { opened, ms: performance.now() - start };
		});
		const { opened, ms } = value;
		return {
			...report,
			handle: opened.handle,
			ms,
			entryCount: opened.entryCount,
			leafId: opened.leafId,
			diagnostics: opened.report.diagnostics.length,
		};
	},
	async lastPage(name, handle, last) {
		const start = performance.now();
		const page = await engine(name).getContext(handle, { last });
		const ms = performance.now() - start;
		const json = new TextEncoder().encode(JSON.stringify(page));
		const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", json));
		const sha256 = Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
		return { ms, total: page.total, messages: page.messages.length, jsonBytes: json.length, sha256 };
	},
};

/**
 * Run `work`, watching the main thread meanwhile: gaps between `requestAnimationFrame` callbacks (the last
 * one to the end included), long tasks and long animation frames. `work` gets a progress callback for an
 * open, which counts the calls and shows the fraction on the page.
 */
async function watchFrames<T>(
	work: (progress: (done: number, total: number) => void) => Promise<T>,
): Promise<{ value: T; report: Omit<FrameReport, "answer"> }> {
	const longTasks: number[] = [];
	const longFrames: FrameReport["longFrames"] = [];
	const record = (entries: PerformanceEntryList) => {
		for (const entry of entries) {
			if (entry.entryType === "longtask") longTasks.push(entry.duration);
			else longFrames.push(describeLongFrame(entry as LongAnimationFrame));
		}
	};
	const tasks = new PerformanceObserver((list) => record(list.getEntries()));
	tasks.observe({ type: "longtask" });
	const animationFrames = new PerformanceObserver((list) => record(list.getEntries()));
	animationFrames.observe({ type: "long-animation-frame" });
	let frames = 0;
	let worst = 0;
	let last = performance.now();
	let watching = true;
	const onFrame = () => {
		const now = performance.now();
		worst = Math.max(worst, now - last);
		last = now;
		frames++;
		if (watching) requestAnimationFrame(onFrame);
	};
	requestAnimationFrame(onFrame);
	const start = performance.now();
	let end = start;
	let progressCalls = 0;
	let value: T;
	try {
		value = await work((done, total) => {
			progressCalls++;
			progressText.textContent = `opened ${Math.round((100 * done) / total)}%`;
		});
	} finally {
		watching = false;
		end = performance.now();
		worst = Math.max(worst, end - last);
		// Long tasks are reported after they end: give the observer a turn.
		await new Promise((resolve) => setTimeout(resolve, 0));
		record(tasks.takeRecords());
		record(animationFrames.takeRecords());
		tasks.disconnect();
		animationFrames.disconnect();
		progressText.textContent = "idle";
	}
	return { value, report: { totalMs: end - start, worstFrameMs: worst, frames, longTasks, longFrames, progressCalls } };
}

/** A long animation frame's entry (Chromium's; not in TypeScript's DOM types yet). */
interface LongAnimationFrame extends PerformanceEntry {
	blockingDuration: number;
	scripts: { invoker: string; sourceURL: string; sourceFunctionName: string; duration: number }[];
}

function describeLongFrame(entry: LongAnimationFrame): FrameReport["longFrames"][number] {
	const scripts = (entry.scripts ?? []).map(
		(script) =>
			`${script.invoker || "?"} ${script.sourceFunctionName || ""}@${script.sourceURL.split("/").pop() ?? ""} ${script.duration.toFixed(0)} ms`,
	);
	return { duration: entry.duration, blockingDuration: entry.blockingDuration, scripts };
}

(globalThis as unknown as { bench: BenchPage }).bench = bench;
document.body.dataset.ready = "true";
