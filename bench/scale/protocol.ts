/**
 * What `bench/scale.ts` asks of a measurement child (`bench/scale/child.ts`) and what the child answers:
 * plain JSON, one task per process, so each measurement's peak RSS is its own.
 * @module
 */

/** How a session file is opened: the two floors, the two pis, and ours in both load modes. */
export type OpenImpl = "floor-scan" | "floor-parse" | "pi16" | "pi073" | "ours-full" | "ours-lazy";
export type ListImpl = "pi16" | "ours" | "ours-catalog";
export type ContextImpl = "pi16" | "ours";

/** Where the pi session managers are (imported by file path in the child). */
export interface PiModules {
	pi16: string;
	pi073: string;
}

export type Task =
	| { kind: "open"; impl: OpenImpl; path: string; check: boolean; modules: PiModules }
	| { kind: "context"; impl: ContextImpl; path: string; repeats: number; modules: PiModules }
	| {
			kind: "list";
			impl: ListImpl;
			sessionsRoot: string;
			/** The catalog file (`ours-catalog`). */
			catalogPath?: string;
			/** Lines appended (untimed) before the third listing. */
			appends: { path: string; line: string }[];
			modules: PiModules;
	  };

/** One timed step: wall time, and the process's peak RSS (`resourceUsage().maxRSS`) right after it. */
export interface Sample {
	ms: number;
	peakRssBytes: number;
}

/** A digest of context messages (their JSON, in order) with the thinking level and model. */
export interface ContextDigest {
	messages: number;
	digest: string;
}

export interface OpenResult {
	kind: "open";
	/** RSS once the implementation's modules are loaded, before the timed work. */
	rssBeforeBytes: number;
	open: Sample;
	/** Entries with an id (pi's `getEntryCount`); the floors: lines after the header. */
	entries: number;
	leafId: string | null;
	/** With `check`: the whole context of the leaf. */
	context?: ContextDigest;
	/** With `check`: its last 50 messages (ours lazy: the `contextPage({ last: 50 })` answer). */
	last50?: ContextDigest;
	/** With `check`: why the context could not be built (the open's figures still stand). */
	checkError?: string;
	/** Messages in the whole context, as the page reports them (ours lazy). */
	pageTotal?: number;
	/** Ours lazy: `contextPage({ last: 50 })` after the open, when `Session` has it. */
	page?: Sample;
	pageSupported?: boolean;
}

export interface ContextResult {
	kind: "context";
	open: Sample;
	leafId: string | null;
	/** The first `buildSessionContext()` after the open, then `repeats` more. */
	firstMs: number;
	repeatMs: number[];
	peakRssBytes: number;
	context: ContextDigest;
}

export interface ListPhase extends Sample {
	sessions: number;
	digest: string;
	/** One short digest per listed row, in order (to name the first row that differs). */
	rows: string[];
}

export interface ListResult {
	kind: "list";
	rssBeforeBytes: number;
	/** Cold (first call in this process), warm (a second call), and after appends to 10 sessions. */
	phases: ListPhase[];
	/** `ours-catalog`: whether the catalog file exists after the listings (the option is honoured). */
	catalogWritten?: boolean;
}

export type Result = OpenResult | ContextResult | ListResult;

/** The child prints its answer on one stdout line starting with this. */
export const RESULT_MARKER = "@@scale-result ";
