/**
 * What `bench/scale.ts` asks of a measurement child (`bench/scale/child.ts`) and what the child answers:
 * plain JSON, one task per process, so each measurement's peak RSS is its own.
 * @module
 */

/** How a session file is opened: the two floors, the two pis, and ours in both load modes. */
export type OpenImpl = "floor-scan" | "floor-parse" | "pi16" | "pi073" | "ours-full" | "ours-lazy";
export type ListImpl = "pi16" | "ours" | "ours-catalog";
export type ContextImpl = "pi16" | "ours";
/** The one-operation rows (getTree, findMostRecentSession, a fork, a migration): pi 1.6.0 against ours. */
export type PairImpl = "pi16" | "ours";

/** Where the pi session managers are (imported by file path in the child). */
export interface PiModules {
	pi16: string;
	pi073: string;
}

export type Task =
	| { kind: "open"; impl: OpenImpl; path: string; check: boolean; modules: PiModules }
	/** With `check`, every call's answer is digested after the timings (the repeated ones too). */
	| { kind: "context"; impl: ContextImpl; path: string; repeats: number; check: boolean; modules: PiModules }
	| {
			kind: "list";
			impl: ListImpl;
			sessionsRoot: string;
			/** The catalog file (`ours-catalog`). */
			catalogPath?: string;
			/** Lines appended (untimed) before the third listing. */
			appends: { path: string; line: string }[];
			modules: PiModules;
	  }
	/** Open whole (untimed), then time `getTree()`. */
	| { kind: "tree"; impl: PairImpl; path: string; modules: PiModules }
	/** Time `findMostRecentSession(dir)` (no cwd filter). */
	| { kind: "recent"; impl: PairImpl; dir: string; modules: PiModules }
	/**
	 * Copy `path` into `workDir` (untimed), open the copy for writing, whole (untimed), then time
	 * `createBranchedSession(leafId)`; the new file is read back (untimed) for the check.
	 */
	| { kind: "fork"; impl: PairImpl; path: string; leafId: string; workDir: string; modules: PiModules }
	/** Copy the v1 file `path` into `workDir` (untimed), then time the open for writing that migrates it. */
	| { kind: "migrate"; impl: PairImpl; path: string; workDir: string; modules: PiModules };

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
	/**
	 * With `check`, after the timings: the whole answer: the header and every entry (as JSON, in file
	 * order), each entry's label and the session's name (the floor's records: `entries` only).
	 */
	whole?: { entries: AnswerDigest; labels?: AnswerDigest; name?: string | null };
	/** With `check`: the page's offset and the id of each message's entry (pi 1.6.0: from its projection). */
	last50Place?: string;
	/** With `check`: why the context could not be built (the open's figures still stand). */
	checkError?: string;
	/** Messages in the whole context, as the page reports them (ours lazy). */
	pageTotal?: number;
	/**
	 * Ours lazy: `contextPage({ last: 50 })` after the open, when `Session` has it; pi 1.6.0: its
	 * `buildSessionContext()` after the open, of which the last 50 messages are the page.
	 */
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
	/** With `check`: the digest of each repeated call's context. */
	repeatDigests?: string[];
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

/** A digest of an answer that is a file's or a tree's content, with its size. */
export interface AnswerDigest {
	/** Tree nodes, entries of the file written, …: what `digest` covers. */
	count: number;
	digest: string;
}

export interface TreeResult {
	kind: "tree";
	open: Sample;
	/** `getTree()`; RSS is the peak over the open and it. */
	tree: Sample;
	/** Pre-order over the roots: each node's id, label and number of children. */
	answer: AnswerDigest;
}

export interface RecentResult {
	kind: "recent";
	sample: Sample;
	/** The file found, or `null`. */
	path: string | null;
}

export interface ForkResult {
	kind: "fork";
	open: Sample;
	/** `createBranchedSession`; RSS is the peak over the open and it. */
	fork: Sample;
	/** The new file's lines, its header without id and timestamp, the ids of the labels it made renumbered. */
	answer: AnswerDigest;
	/** The returned path's directory under the work directory, and whether the session now writes there. */
	place?: string;
	/** Why the answer could not be read (the figures still stand). */
	checkError?: string;
}

export interface MigrateResult {
	kind: "migrate";
	/** The open that migrates and rewrites the file. */
	migrate: Sample;
	/** The migrated file's lines, every id replaced by the index of its entry. */
	answer: AnswerDigest;
	/** Ours: the backup the migration kept, if any, and whether it holds the v1 file's bytes. */
	backupPath?: string;
	backupIntact?: boolean;
	checkError?: string;
}

export type Result = OpenResult | ContextResult | ListResult | TreeResult | RecentResult | ForkResult | MigrateResult;

/** The child prints its answer on one stdout line starting with this. */
export const RESULT_MARKER = "@@scale-result ";
