/**
 * Shared pieces of the worker benchmarks: a main-thread lateness sampler, percentiles, a relaunch with
 * `--expose-gc`, temporary agent directories in pi's layout, and realistic messages from the corpus.
 * @module
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type IntervalHistogram, monitorEventLoopDelay } from "node:perf_hooks";
import type { AgentMessage } from "../src/index.ts";
import { CORPUS_FILES, requireCorpus } from "../test/support/corpus.ts";
import { CORPUS_DIR } from "./generate.ts";

/** What the sampler saw while it ran. */
export interface LatenessReport {
	/** Wall time between start and stop, ms. */
	totalMs: number;
	/** Largest lateness of a 5 ms timer, ms: the longest stretch the main thread could not run a callback. */
	maxMs: number;
	p99Ms: number;
	medianMs: number;
	samples: number;
	/** `monitorEventLoopDelay` (resolution 5 ms) maximum, less the 5 ms resolution, as a cross-check. */
	histogramMaxMs: number;
	histogramP99Ms: number;
}

/** The sampler's period, ms. */
export const SAMPLE_MS = 5;

/**
 * Samples the main thread's event-loop delay: a chain of `setTimeout(…, 5)` records how late each one
 * fires. A timer cannot fire during a synchronous block, so a block shows up as one long gap between two
 * samples; `stop()` also counts the gap from the last sample to itself, so a block that ends just before
 * the awaited work resolves is not missed.
 */
export class LatenessSampler {
	#timer: ReturnType<typeof setTimeout> | undefined;
	#last = 0;
	#start = 0;
	#lateness: number[] = [];
	#histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: SAMPLE_MS });

	start(): void {
		this.#lateness = [];
		this.#histogram.reset();
		this.#histogram.enable();
		this.#start = performance.now();
		this.#last = this.#start;
		this.#timer = setTimeout(this.#tick, SAMPLE_MS);
	}

	#tick = (): void => {
		const now = performance.now();
		this.#lateness.push(Math.max(0, now - this.#last - SAMPLE_MS));
		this.#last = now;
		this.#timer = setTimeout(this.#tick, SAMPLE_MS);
	};

	stop(): LatenessReport {
		const now = performance.now();
		clearTimeout(this.#timer);
		this.#histogram.disable();
		this.#lateness.push(Math.max(0, now - this.#last - SAMPLE_MS));
		const sorted = [...this.#lateness].sort((a, b) => a - b);
		const histogramMs = (ns: number): number => Math.max(0, ns / 1e6 - SAMPLE_MS);
		const count = this.#histogram.count;
		return {
			totalMs: now - this.#start,
			maxMs: sorted[sorted.length - 1] ?? 0,
			p99Ms: percentile(sorted, 0.99),
			medianMs: percentile(sorted, 0.5),
			samples: sorted.length,
			histogramMaxMs: count > 0 ? histogramMs(this.#histogram.max) : 0,
			histogramP99Ms: count > 0 ? histogramMs(this.#histogram.percentile(99)) : 0,
		};
	}
}

/** The `q` quantile (nearest rank) of values sorted ascending. */
export function percentile(sorted: readonly number[], q: number): number {
	if (sorted.length === 0) return 0;
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

export function median(values: readonly number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Re-run this script in a child with `--expose-gc` (and `nodeFlags`, such as a larger heap), so the
 * benchmark can collect between cases and keep one case's garbage out of the next one's figures. Returns
 * true in the parent (which then only waits).
 */
export function relaunchWithGc(nodeFlags: readonly string[] = []): boolean {
	if (typeof globalThis.gc === "function" || process.env.BENCH_RELAUNCHED) return false;
	const { status } = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
		stdio: "inherit",
		env: {
			...process.env,
			BENCH_RELAUNCHED: "1",
			NODE_OPTIONS: [process.env.NODE_OPTIONS ?? "", "--expose-gc", ...nodeFlags].join(" ").trim(),
		},
	});
	process.exitCode = status ?? 1;
	return true;
}

const settleFlag = new Int32Array(new SharedArrayBuffer(4));

/** Collect garbage (when exposed), then pause so V8's concurrent sweeping is done before the next case. */
export function collectAndSettle(ms = 100): void {
	globalThis.gc?.();
	Atomics.wait(settleFlag, 0, 0, ms);
}

/** A fresh agent directory in the system's temporary directory; `remove()` deletes it with everything in it. */
export function temporaryAgentDir(prefix: string): { agentDir: string; sessionsRoot: string; remove: () => void } {
	const agentDir = mkdtempSync(join(tmpdir(), prefix));
	return {
		agentDir,
		sessionsRoot: join(agentDir, "sessions"),
		remove: () => rmSync(agentDir, { recursive: true, force: true }),
	};
}

/**
 * User and assistant messages of the corpus whose JSON is `minBytes`–`maxBytes` long, alternating user
 * and assistant as far as the corpus allows (it has far more assistant messages than user ones).
 */
export function corpusMessages(minBytes = 150, maxBytes = 1000): { user: AgentMessage[]; assistant: AgentMessage[] } {
	const user: AgentMessage[] = [];
	const assistant: AgentMessage[] = [];
	const corpus = requireCorpus(CORPUS_DIR); // throws naming the directory when the corpus is not there
	for (const file of CORPUS_FILES) {
		for (const line of corpus.readTextSync(file).split("\n")) {
			if (line.trim() === "") continue;
			const record = JSON.parse(line) as { type: string; message?: AgentMessage };
			if (record.type !== "message" || !record.message) continue;
			const size = JSON.stringify(record.message).length;
			if (size < minBytes || size > maxBytes) continue;
			if (record.message.role === "user") user.push(record.message);
			else if (record.message.role === "assistant") assistant.push(record.message);
		}
	}
	if (user.length === 0 || assistant.length === 0) throw new Error(`no user or assistant messages in ${CORPUS_DIR}`);
	return { user, assistant };
}

/** `count` messages cycling user, assistant, assistant, … (one user turn per three messages), each a distinct object. */
export function messageSequence(count: number): AgentMessage[] {
	const { user, assistant } = corpusMessages();
	const messages: AgentMessage[] = [];
	for (let i = 0; i < count; i++) {
		const pool = i % 3 === 0 ? user : assistant;
		const source = pool[Math.floor(i / 3) % pool.length] as AgentMessage;
		messages.push({ ...source, timestamp: Date.UTC(2025, 0, 1) + i * 1000 } as AgentMessage);
	}
	return messages;
}

/** Milliseconds with a fixed number of decimals, padded to `width`. */
export function ms(value: number, width = 10, decimals = 1): string {
	return value.toFixed(decimals).padStart(width);
}

/** Whether the script was started with `--quick` (the suite's quick run: fewer rounds, smaller inputs). */
export function isQuick(): boolean {
	return process.argv.includes("--quick");
}

/** `100 MB`, `1 GB`, `20 MB`: an input size as a row name says it. */
export function sizeText(bytes: number): string {
	return bytes >= 1e9 ? `${Number((bytes / 1e9).toFixed(1))} GB` : `${Math.round(bytes / 1e6)} MB`;
}

/** `1,000`. */
export function count(value: number): string {
	return value.toLocaleString("en-US");
}

/**
 * Where two answers first differ, or undefined when they are the same as JSON would see them: keys in any
 * order, an `undefined` member the same as a missing one, a `Date` as its ISO text. The path names the
 * member (`$[3].message.content[0]`) and both values, shortened.
 */
export function firstDifference(ours: unknown, theirs: unknown, path = "$"): string | undefined {
	const a = ours instanceof Date ? ours.toISOString() : ours;
	const b = theirs instanceof Date ? theirs.toISOString() : theirs;
	if (Object.is(a, b)) return undefined;
	const shown = (value: unknown): string => (JSON.stringify(value) ?? String(value)).slice(0, 120);
	if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
		return `${path}: ${shown(a)} ≠ ${shown(b)}`;
	}
	if (Array.isArray(a) !== Array.isArray(b)) return `${path}: ${shown(a)} ≠ ${shown(b)}`;
	if (Array.isArray(a) && Array.isArray(b)) {
		if (a.length !== b.length) return `${path}: ${a.length} items ≠ ${b.length}`;
		for (let i = 0; i < a.length; i++) {
			const difference = firstDifference(a[i], b[i], `${path}[${i}]`);
			if (difference) return difference;
		}
		return undefined;
	}
	const left = a as Record<string, unknown>;
	const right = b as Record<string, unknown>;
	const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
	for (const key of keys) {
		const difference = firstDifference(left[key], right[key], `${path}.${key}`);
		if (difference) return difference;
	}
	return undefined;
}
