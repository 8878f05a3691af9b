/**
 * Seeded inputs for the scale benchmark (`bench/scale.ts`): v3 pi session files, written to disk line by
 * line as they are generated (a 4 GB file is never in memory), never committed. Each input is cached in
 * `<root>/<shape>-<size>-seed<N>-<corpus|synthetic>-g<generator version>/` (root: `--out`, else
 * `PI_SCALE_DIR`, else `<os.tmpdir()>/pi-session-tree-scale`), so a second run with the same name, seed and
 * size reuses it; an input appears there only once it is complete (it is written beside it, then renamed).
 *
 * Payloads are the real ones of the shared corpus (`../shared/corpus`, or `PI_CORPUS_DIR`) when it is
 * there, and seeded synthetic conversations (user, assistant with tool calls, tool results) otherwise,
 * so a fresh clone without the corpus gets inputs of the same shapes. Field order per entry kind is the
 * one pi 1.6.0's `SessionManager` writes.
 *
 * Variants: `linear-100mb` (one chain, a few compactions and labels), `bushy-100mb` (a branch every few
 * dozen entries, most with a `branch_summary`; labels set and cleared; the leaf, the last entry written,
 * is on a short branch off the first twentieth of the file), `compaction-heavy-100mb` (a compaction every
 * few hundred entries, some keeping entries from before the previous one, some keeping none),
 * `text-1gb`, `image-1gb` (tool results carrying base64 PNG blocks of 100 KB–2 MB), `text-4gb` (only with
 * `--only text-4gb`, `--huge` or `PI_SCALE_HUGE=1`), and `home-1000` (a pi agent directory: 1,000 sessions
 * over 30 projects in pi's layout, ~300 MB, sizes log-normally skewed; `bytes` scales the number of
 * sessions with it). `ensureV1Input` makes a version 1 file of a linear input, for migrations.
 *
 * Run: `npx tsx bench/scale-inputs.ts --out DIR [--only NAME[,NAME…]] [--seed N] [--quick] [--huge]
 * [--synthetic] [--check-all | --no-check]`; `npm run bench:inputs` does the default set. After generating, it opens
 * a sample of each with pi 1.6.0 (`SessionManager.open` of each file up to 200 MB and of 20 sessions of an
 * agent directory; every file with `--check-all`) and checks the entry count, the leaf, and that
 * `buildSessionContext()` gives messages.
 * @example
 * import { ensureInput } from "./scale-inputs.ts";
 * const input = ensureInput("linear-100mb"); // cached: generated on the first call only
 * console.log(input.path, input.entries, input.leafId);
 * @module
 */
import {
	closeSync,
	existsSync,
	mkdirSync,
	openSync,
	readFileSync,
	renameSync,
	rmSync,
	statSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { encodeCwd, sessionFileName } from "../src/paths.ts";
import { CORPUS_FILES, corpusDir, diskCorpus } from "../test/support/corpus.ts";
import { seededUint32 } from "../test/support/random.ts";

/** Bumped whenever the output of a seed changes, so stale caches are not reused. */
export const GENERATOR_VERSION = 2;
export const DEFAULT_SEED = 42;

export type VariantName =
	| "linear-100mb"
	| "bushy-100mb"
	| "compaction-heavy-100mb"
	| "text-1gb"
	| "image-1gb"
	| "text-4gb"
	| "home-1000";

type Shape = "linear" | "bushy" | "compaction-heavy" | "text" | "image" | "home";

interface VariantSpec {
	shape: Shape;
	/** Target size of the JSONL (home: of all sessions together). */
	bytes: number;
	/** The smaller size `--quick` uses. */
	quickBytes: number;
	/** Sessions of an agent directory (home only), and with `--quick`. */
	sessions?: number;
	quickSessions?: number;
	/** Generated only when asked for by name, with `--huge` or with `PI_SCALE_HUGE=1`. */
	huge?: boolean;
}

export const VARIANTS: Readonly<Record<VariantName, VariantSpec>> = {
	"linear-100mb": { shape: "linear", bytes: 100e6, quickBytes: 20e6 },
	"bushy-100mb": { shape: "bushy", bytes: 100e6, quickBytes: 20e6 },
	"compaction-heavy-100mb": { shape: "compaction-heavy", bytes: 100e6, quickBytes: 20e6 },
	"text-1gb": { shape: "text", bytes: 1e9, quickBytes: 100e6 },
	"image-1gb": { shape: "image", bytes: 1e9, quickBytes: 100e6 },
	"text-4gb": { shape: "text", bytes: 4e9, quickBytes: 400e6, huge: true },
	"home-1000": { shape: "home", bytes: 300e6, quickBytes: 75e6, sessions: 1000, quickSessions: 250 },
};

export const VARIANT_NAMES: readonly VariantName[] = Object.keys(VARIANTS) as VariantName[];

/** One session of a generated agent directory. */
export interface HomeSession {
	path: string;
	cwd: string;
	bytes: number;
	entries: number;
	/** The id of the file's last entry (an append goes after it). */
	lastId: string;
	/** The largest `timestamp` of its messages (epoch ms): pi's `modified`. */
	lastActivity: number;
}

/** A generated input, as described by the `meta.json` beside it: what was written, and how. */
export interface ScaleInput extends FileStats {
	/** The variant and the size actually generated, e.g. `linear-100mb`, or `linear-20mb` with `--quick`. */
	name: string;
	variant: VariantName;
	/** The input's cache directory. */
	dir: string;
	seed: number;
	source: "corpus" | "synthetic";
	generatorVersion: number;
	generatedMs: number;
}

export interface EnsureOptions {
	seed?: number;
	/** Size to generate instead of the variant's (default: its full size, or `quickBytes` with `quick`). */
	bytes?: number;
	quick?: boolean;
	/** Cache root (default `PI_SCALE_DIR` or `<tmpdir>/pi-session-tree-scale`). */
	root?: string;
	/** Use synthetic payloads even when the corpus is there. */
	synthetic?: boolean;
	/** Progress lines (default: none). */
	log?: (line: string) => void;
}

/** Where inputs are cached unless told otherwise. */
export function defaultInputRoot(): string {
	return process.env.PI_SCALE_DIR || join(tmpdir(), "pi-session-tree-scale");
}

/** `100mb`, `1gb`, `4gb`, `20mb`. */
export function sizeLabel(bytes: number): string {
	if (bytes >= 1e9 && bytes % 1e9 === 0) return `${bytes / 1e9}gb`;
	if (bytes >= 1e6) return `${Math.round(bytes / 1e6)}mb`;
	return `${Math.round(bytes / 1e3)}kb`;
}

/**
 * The input `name`, generated unless the cache already has it (same seed, size, payload source and
 * generator version).
 */
export function ensureInput(name: VariantName, options: EnsureOptions = {}): ScaleInput {
	const spec = VARIANTS[name];
	if (!spec) throw new Error(`unknown input ${name}; known: ${VARIANT_NAMES.join(", ")}`);
	const seed = options.seed ?? DEFAULT_SEED;
	const bytes = options.bytes ?? (options.quick ? spec.quickBytes : spec.bytes);
	const sessions = Math.max(
		1,
		Math.round(
			options.bytes !== undefined && spec.sessions
				? (spec.sessions * options.bytes) / spec.bytes
				: ((options.quick ? spec.quickSessions : spec.sessions) ?? 0),
		),
	);
	const corpus = options.synthetic ? undefined : loadCorpus();
	const source = corpus ? "corpus" : "synthetic";
	const label = spec.shape === "home" ? `home-${sessions}-${sizeLabel(bytes)}` : `${spec.shape}-${sizeLabel(bytes)}`;
	const root = options.root ?? defaultInputRoot();
	const dir = join(root, `${label}-seed${seed}-${source}-g${GENERATOR_VERSION}`);
	const metaPath = join(dir, "meta.json");
	if (existsSync(metaPath)) return JSON.parse(readFileSync(metaPath, "utf8")) as ScaleInput;

	mkdirSync(root, { recursive: true });
	const partial = `${dir}.partial-${process.pid}`;
	rmSync(partial, { recursive: true, force: true });
	mkdirSync(partial, { recursive: true });
	options.log?.(`generating ${label} (seed ${seed}, ${source} payloads) in ${dir} …`);
	const start = performance.now();
	const payloads = corpus ? corpusSource(corpus, seed) : syntheticSource(seed);
	const stats =
		spec.shape === "home"
			? writeHome(partial, dir, payloads, seed, bytes, sessions)
			: writeFileInput(partial, dir, payloads, spec.shape, seed, bytes);
	const input: ScaleInput = {
		...stats,
		name: spec.shape === "home" ? `home-${sessions}` : `${spec.shape}-${sizeLabel(bytes)}`,
		variant: name,
		dir,
		seed,
		source,
		generatorVersion: GENERATOR_VERSION,
		generatedMs: Math.round(performance.now() - start),
	};
	writeFileSync(join(partial, "meta.json"), `${JSON.stringify(input, null, 1)}\n`);
	try {
		renameSync(partial, dir);
	} catch (error) {
		// Another run finished the same input first: keep its copy.
		rmSync(partial, { recursive: true, force: true });
		if (!existsSync(metaPath)) throw error;
		return JSON.parse(readFileSync(metaPath, "utf8")) as ScaleInput;
	}
	options.log?.(`  ${(input.bytes / 1e6).toFixed(1)} MB, ${input.entries} entries in ${input.generatedMs} ms`);
	return input;
}

// ————————————————————————————————————————— writing —————————————————————————————————————————

const CHUNK_BYTES = 8 << 20;

/** Lines to a file through one reused buffer: memory stays at the buffer whatever the file's size. */
class LineWriter {
	readonly #fd: number;
	readonly #buffer = Buffer.allocUnsafe(CHUNK_BYTES);
	#used = 0;
	bytes = 0;
	longestLine = 0;

	constructor(path: string) {
		this.#fd = openSync(path, "wx");
	}

	line(text: string): void {
		const length = Buffer.byteLength(text);
		this.bytes += length + 1;
		if (length > this.longestLine) this.longestLine = length;
		if (this.#used + length + 1 > this.#buffer.length) this.#flush();
		if (length + 1 > this.#buffer.length) {
			this.#writeAll(Buffer.from(`${text}\n`));
			return;
		}
		this.#used += this.#buffer.write(text, this.#used);
		this.#buffer[this.#used++] = 0x0a;
	}

	close(): void {
		this.#flush();
		closeSync(this.#fd);
	}

	#flush(): void {
		this.#writeAll(this.#buffer.subarray(0, this.#used));
		this.#used = 0;
	}

	#writeAll(bytes: Uint8Array): void {
		let done = 0;
		while (done < bytes.length) done += writeSync(this.#fd, bytes, done, bytes.length - done);
	}
}

type Random = () => number;

/** A value in [min, max), log-uniform: most values small, a few large. */
function logUniform(random: Random, min: number, max: number): number {
	return Math.floor(min * (max / min) ** (random() / 4294967296));
}

function hex8(value: number): string {
	return value.toString(16).padStart(8, "0");
}

function uuid(random: Random): string {
	const hex = [hex8(random()), hex8(random()), hex8(random()), hex8(random())].join("");
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${"89ab"[random() % 4]}${hex.slice(17, 20)}-${hex.slice(20)}`;
}

/** A message without its `timestamp` (the writer gives it its entry's), or another entry kind's own fields. */
interface Payload {
	type: string;
	fields: Record<string, unknown>;
	/** The message's JSON size, roughly (to steer sizes). */
	bytes: number;
}

/**
 * One session file being written: entries as pi writes them (`type, id, parentId, timestamp`, then the
 * kind's own fields), with the tree's shape kept as numbers only (an id and a parent index per entry), so
 * branches, compactions and labels can point anywhere earlier.
 */
class SessionWriter {
	readonly writer: LineWriter;
	readonly random: Random;
	readonly ids: string[] = [];
	/** Index of each entry's parent; -1 for a root. */
	parents: Int32Array = new Int32Array(1 << 16);
	depths: Int32Array = new Int32Array(1 << 16);
	/** Index of the leaf; -1 before the first entry or after a reset. */
	leaf = -1;
	clock: number;
	lastActivity = 0;
	readonly #taken = new Set<string>();
	readonly #millis: number;

	constructor(path: string, random: Random, start: number, millis = 0) {
		this.writer = new LineWriter(path);
		this.random = random;
		this.clock = start;
		this.#millis = millis;
	}

	header(id: string, cwd: string, parentSession?: string): string {
		const timestamp = new Date(this.clock + this.#millis).toISOString();
		const header: Record<string, unknown> = { type: "session", version: 3, id, timestamp, cwd };
		if (parentSession !== undefined) header.parentSession = parentSession;
		this.writer.line(JSON.stringify(header));
		return timestamp;
	}

	/** Whole seconds, so that a session's own millisecond offset keeps its times apart from every other's. */
	tick(): number {
		this.clock += 1000 * (1 + (this.random() % 40));
		return this.clock + this.#millis;
	}

	/** A fresh id: 8 hex characters, redrawn on a collision as pi does. */
	newId(): string {
		let id = hex8(this.random());
		while (this.#taken.has(id)) id = hex8(this.random());
		this.#taken.add(id);
		return id;
	}

	get count(): number {
		return this.ids.length;
	}

	/** Append an entry under `parent` (default: the leaf), which becomes the leaf. Returns its index. */
	append(type: string, fields: Record<string, unknown>, options: { parent?: number; id?: string } = {}): number {
		const parent = options.parent ?? this.leaf;
		const id = options.id ?? this.newId();
		const time = this.tick();
		let own = fields;
		if (type === "message") {
			own = { message: { ...(fields.message as object), timestamp: time } };
			const role = (fields.message as { role?: string }).role;
			if (role === "user" || role === "assistant") this.lastActivity = time;
		}
		this.writer.line(
			JSON.stringify({
				type,
				id,
				parentId: parent < 0 ? null : this.ids[parent],
				timestamp: new Date(time).toISOString(),
				...own,
			}),
		);
		const index = this.ids.length;
		if (index === this.parents.length) {
			const grow = (from: Int32Array) => {
				const next = new Int32Array(from.length * 2);
				next.set(from);
				return next;
			};
			this.parents = grow(this.parents);
			this.depths = grow(this.depths);
		}
		this.ids.push(id);
		this.parents[index] = parent;
		this.depths[index] = parent < 0 ? 1 : (this.depths[parent] as number) + 1;
		this.leaf = index;
		return index;
	}

	/** The entry `steps` up from `index` (stops at the root). */
	ancestor(index: number, steps: number): number {
		let at = index;
		for (let i = 0; i < steps && (this.parents[at] as number) >= 0; i++) at = this.parents[at] as number;
		return at;
	}

	/** Whether `candidate` is on the root → `index` path. */
	isAncestor(candidate: number, index: number): boolean {
		for (let at = index; at >= 0; at = this.parents[at] as number) if (at === candidate) return true;
		return false;
	}

	close(): void {
		this.writer.close();
	}
}

// ————————————————————————————————————————— payloads —————————————————————————————————————————

interface PayloadSource {
	kind: "corpus" | "synthetic";
	/** Start a new conversation: the next payload is a user message. */
	restart(random: Random): void;
	next(): Payload;
	/** A compaction or branch summary: text of roughly `min`–`max` characters and the tokens it stood for. */
	summary(random: Random, min: number, max: number): { summary: string; tokensBefore: number };
	/** Plain text of `min`–`max` characters (log-uniform). */
	text(random: Random, min: number, max: number): string;
}

interface CorpusPayloads {
	payloads: Payload[];
	userIndexes: number[];
	summaries: string[];
}

/** The corpus's payloads (messages, thinking-level and model changes) and compaction summaries, or `undefined`. */
function loadCorpus(): CorpusPayloads | undefined {
	const corpus = diskCorpus(corpusDir());
	if (!corpus.found) return undefined;
	const payloads: Payload[] = [];
	const userIndexes: number[] = [];
	const summaries: string[] = [];
	for (const file of CORPUS_FILES) {
		for (const line of corpus.readTextSync(file).split("\n")) {
			if (line.trim() === "") continue;
			const { type, timestamp: _v1Time, ...fields } = JSON.parse(line) as Record<string, unknown> & { type: string };
			if (type === "message") {
				const { timestamp: _time, ...message } = fields.message as Record<string, unknown>;
				if (message.role === "user") userIndexes.push(payloads.length);
				payloads.push({ type, fields: { message }, bytes: line.length });
			} else if (type === "thinking_level_change" || type === "model_change") {
				payloads.push({ type, fields, bytes: line.length });
			} else if (type === "compaction") summaries.push(fields.summary as string);
		}
	}
	return payloads.length > 0 && userIndexes.length > 0 && summaries.length > 0
		? { payloads, userIndexes, summaries }
		: undefined;
}

/** Seeded text made of a fixed vocabulary, as one pool that texts are cut from (fast, and the same per seed). */
function textPool(seed: number, length = 1 << 21): string {
	const words = (
		"the a to of and in is it for on that this with as be are was not you can file function const return " +
		"import export from type interface class new if else await async error session entry tree leaf branch " +
		"compaction summary message assistant user tool result read write edit bash path line offset bytes json " +
		"parse string number boolean null undefined array object map set promise test expect describe should " +
		"refactor rename move split merge index cache worker storage lock append open close list find context " +
		"model thinking level label parent child root depth node src test bench docs readme package build lint"
	).split(" ");
	const random = seededUint32(seed ^ 0x5eed);
	const parts: string[] = [];
	let size = 0;
	while (size < length) {
		let word = words[random() % words.length] as string;
		const roll = random() % 100;
		if (roll < 4) word += ".\n";
		else if (roll < 10) word += ",";
		else if (roll < 12) word = `\`${word}()\``;
		parts.push(word);
		size += word.length + 1;
	}
	return parts.join(" ");
}

function cutText(pool: string, random: Random, min: number, max: number): string {
	const length = logUniform(random, min, max);
	const start = random() % (pool.length - length);
	return pool.slice(start, start + length).trim() || "ok";
}

function corpusSource(corpus: CorpusPayloads, seed: number): PayloadSource {
	const pool = textPool(seed);
	let cursor = 0;
	return {
		kind: "corpus",
		restart(random) {
			cursor = corpus.userIndexes[random() % corpus.userIndexes.length] as number;
		},
		next() {
			const payload = corpus.payloads[cursor % corpus.payloads.length] as Payload;
			cursor++;
			return payload;
		},
		summary(random, min, max) {
			const full = corpus.summaries[random() % corpus.summaries.length] as string;
			const length = Math.min(full.length, logUniform(random, min, max));
			return { summary: full.slice(0, length), tokensBefore: 20_000 + (random() % 150_000) };
		},
		text: (random, min, max) => cutText(pool, random, min, max),
	};
}

const TOOLS = ["read", "bash", "edit", "write", "grep"] as const;

/** Seeded conversations: a user turn, a few tool calls and their results, an answer; now and then a model or thinking change. */
function syntheticSource(seed: number): PayloadSource {
	const pool = textPool(seed);
	const random = seededUint32(seed ^ 0x70a1);
	const queue: Payload[] = [];
	let sinceChange = 0;
	const usage = (input: number, output: number) => ({
		input,
		output,
		cacheRead: 0,
		cacheWrite: 0,
		totalTokens: input + output,
		cost: {
			input: input * 3e-6,
			output: output * 15e-6,
			cacheRead: 0,
			cacheWrite: 0,
			total: input * 3e-6 + output * 15e-6,
		},
	});
	const assistant = (content: unknown[], stopReason: string): Payload => {
		const message = {
			role: "assistant",
			content,
			api: "anthropic-messages",
			provider: "anthropic",
			model: "claude-sonnet-4-5",
			usage: usage(1000 + (random() % 90_000), 50 + (random() % 4000)),
			stopReason,
		};
		return { type: "message", fields: { message }, bytes: 0 };
	};
	const turn = (): void => {
		queue.push({
			type: "message",
			fields: {
				message: { role: "user", content: [{ type: "text", text: cutText(pool, random, 20, 1500) }] },
			},
			bytes: 0,
		});
		const calls = random() % 5;
		for (let c = 0; c < calls; c++) {
			const callId = `toolu_${hex8(random())}${hex8(random())}`;
			const name = TOOLS[random() % TOOLS.length] as string;
			const content: unknown[] = [];
			if (random() % 4 === 0) content.push({ type: "thinking", thinking: cutText(pool, random, 50, 2000) });
			if (random() % 2 === 0) content.push({ type: "text", text: cutText(pool, random, 20, 400) });
			content.push({
				type: "toolCall",
				id: callId,
				name,
				arguments: { path: `/bench/project/src/f${random() % 500}.ts` },
			});
			queue.push(assistant(content, "toolUse"));
			queue.push({
				type: "message",
				fields: {
					message: {
						role: "toolResult",
						toolCallId: callId,
						toolName: name,
						content: [{ type: "text", text: cutText(pool, random, 100, 12_000) }],
						isError: random() % 20 === 0,
					},
				},
				bytes: 0,
			});
		}
		queue.push(assistant([{ type: "text", text: cutText(pool, random, 50, 3000) }], "stop"));
		sinceChange += calls * 2 + 2;
		if (sinceChange > 300) {
			sinceChange = 0;
			queue.push(
				random() % 3 === 0
					? { type: "model_change", fields: { provider: "anthropic", modelId: "claude-opus-4-5" }, bytes: 0 }
					: {
							type: "thinking_level_change",
							fields: { thinkingLevel: ["off", "low", "medium", "high"][random() % 4] },
							bytes: 0,
						},
			);
		}
	};
	return {
		kind: "synthetic",
		restart() {
			queue.length = 0;
		},
		next() {
			if (queue.length === 0) turn();
			return queue.shift() as Payload;
		},
		summary(r, min, max) {
			return { summary: `## Summary\n\n${cutText(pool, r, min, max)}`, tokensBefore: 20_000 + (r() % 150_000) };
		},
		text: (r, min, max) => cutText(pool, r, min, max),
	};
}

/** Base64 of a PNG signature and an IHDR length: 12 bytes, so 16 characters without padding. */
const PNG_PREFIX = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString("base64");

/** Seeded base64 that image blocks are cut from (at multiples of 4 characters, so every cut is valid base64). */
function imagePool(seed: number, chars: number): string {
	const random = seededUint32(seed ^ 0x1a9e);
	const bytes = Buffer.allocUnsafe(Math.ceil((chars * 3) / 4 / 4) * 4);
	for (let i = 0; i < bytes.length; i += 4) bytes.writeUInt32LE(random(), i);
	return bytes.toString("base64");
}

// ————————————————————————————————————————— shapes —————————————————————————————————————————

/** What a generated file (or home) holds. */
export interface FileStats {
	kind: "file" | "home";
	/** The session file; for `home`, the agent directory (its sessions are under `<path>/sessions`). */
	path: string;
	bytes: number;
	/** Entries (header excluded); for `home`, over all sessions. */
	entries: number;
	/** The leaf when the file is opened (the last entry written); `null` for `home`. */
	leafId: string | null;
	/** Entries on the root → leaf path. */
	leafDepth: number;
	/** The deepest entry's id and depth (for `linear`, the leaf). */
	deepestId: string | null;
	deepestDepth: number;
	compactions: number;
	labels: number;
	branches: number;
	branchSummaries: number;
	images: number;
	imageBytes: number;
	longestLineBytes: number;
	/** `home` only. */
	sessionsRoot?: string;
	sessions?: HomeSession[];
	projects?: number;
}

interface Counters {
	compactions: number;
	labels: number;
	branches: number;
	branchSummaries: number;
	images: number;
	imageBytes: number;
}

const COMPACTION_DETAILS = { readFiles: ["src/session.ts", "src/tree.ts"], modifiedFiles: ["src/context.ts"] };

function appendPayload(session: SessionWriter, payload: Payload): void {
	session.append(payload.type, payload.fields);
}

/** A compaction on the leaf's path that keeps from `keptBack` entries up (0: keeps none, its own id). */
function appendCompaction(session: SessionWriter, source: PayloadSource, keptBack: number, counters: Counters): void {
	const { summary, tokensBefore } = source.summary(session.random, 800, 8000);
	const id = session.newId();
	const firstKeptEntryId = keptBack === 0 ? id : session.ids[session.ancestor(session.leaf, keptBack - 1)];
	session.append("compaction", { summary, firstKeptEntryId, tokensBefore, details: COMPACTION_DETAILS }, { id });
	counters.compactions++;
}

/** A label on one of the last entries; with `clear`, a label entry without a label (pi's way of removing one). */
function appendLabel(session: SessionWriter, counters: Counters, clear = false): void {
	const back = session.random() % Math.min(session.count, 50);
	const targetId = session.ids[session.ancestor(session.leaf, back)];
	session.append("label", clear ? { targetId } : { targetId, label: `checkpoint-${counters.labels + 1}` });
	counters.labels++;
}

function branchSummary(session: SessionWriter, source: PayloadSource, from: number, counters: Counters): void {
	const fromId = session.leaf < 0 ? "root" : session.ids[session.leaf];
	const { summary } = source.summary(session.random, 200, 2500);
	session.append("branch_summary", { fromId, summary }, { parent: from });
	counters.branchSummaries++;
}

function writeFileInput(
	partial: string,
	dir: string,
	source: PayloadSource,
	shape: Shape,
	seed: number,
	target: number,
): FileStats {
	const random = seededUint32(seed);
	const sessionId = uuid(random);
	const start = Date.UTC(2025, 0, 1);
	const fileName = sessionFileName(new Date(start).toISOString(), sessionId);
	const session = new SessionWriter(join(partial, fileName), random, start);
	session.header(sessionId, "/bench/project");
	source.restart(random);
	const counters: Counters = { compactions: 0, labels: 0, branches: 0, branchSummaries: 0, images: 0, imageBytes: 0 };
	const bytes = () => session.writer.bytes;

	// The first user message, then the session's name (pi writes `session_info` once a name is set).
	appendPayload(session, source.next());
	session.append("session_info", { name: `bench ${shape} session` });

	if (shape === "linear" || shape === "text" || shape === "image") {
		const compactions = shape === "text" ? 10 : 5;
		const labels = shape === "text" ? 20 : 8;
		const images = shape === "image" ? imagePool(seed, 2_200_000) : "";
		while (bytes() < target) {
			if (bytes() >= (target * (counters.compactions + 1)) / (compactions + 1) && counters.compactions < compactions) {
				appendCompaction(session, source, 200 + (random() % 300), counters);
			}
			if (bytes() >= (target * (counters.labels + 0.5)) / labels && counters.labels < labels) {
				appendLabel(session, counters);
			}
			if (shape === "image" && counters.imageBytes < 0.85 * bytes()) {
				appendImageCall(session, images, counters);
				continue;
			}
			appendPayload(session, source.next());
		}
	} else if (shape === "compaction-heavy") {
		let nextCompaction = 150 + (random() % 300);
		let lastCompaction = 0;
		let nextLabel = 1000;
		while (bytes() < target) {
			if (session.count >= nextCompaction) {
				const since = session.count - lastCompaction;
				const kind = counters.compactions % 10;
				// Mostly a kept tail of 20–300 entries; every fifth reaches back past the previous compaction,
				// and every tenth keeps nothing.
				const keptBack = kind === 9 ? 0 : kind % 5 === 4 ? since + 20 + (random() % 100) : 20 + (random() % 280);
				appendCompaction(session, source, keptBack, counters);
				lastCompaction = session.count;
				nextCompaction = session.count + 150 + (random() % 300);
			}
			if (session.count >= nextLabel) {
				appendLabel(session, counters);
				nextLabel = session.count + 1500 + (random() % 1000);
			}
			appendPayload(session, source.next());
		}
	} else if (shape === "bushy") {
		let nextBranch = 30 + (random() % 170);
		let nextLabel = 200;
		let nextCompaction = Math.floor(target / 4);
		// Stop early enough for the final short branch.
		while (bytes() < target * 0.99) {
			if (session.count >= nextBranch) {
				// Branch back along the path (5–400 entries) or, one time in three, to anywhere earlier.
				const from =
					random() % 3 === 0 ? random() % session.count : session.ancestor(session.leaf, 5 + (random() % 395));
				if (random() % 5 < 3) branchSummary(session, source, from, counters);
				else session.leaf = from;
				counters.branches++;
				nextBranch = session.count + 30 + (random() % 170);
			}
			if (session.count >= nextLabel) {
				// One label in five clears an earlier one.
				appendLabel(session, counters, random() % 5 === 0);
				nextLabel = session.count + 150 + (random() % 300);
			}
			if (bytes() >= nextCompaction) {
				appendCompaction(session, source, 50 + (random() % 200), counters);
				nextCompaction += Math.floor(target / 4);
			}
			appendPayload(session, source.next());
		}
		// The leaf, the last entry written, ends a short branch off the first twentieth of the file: most of
		// the file is not on its path.
		const from = Math.floor(session.count / 20);
		branchSummary(session, source, from, counters);
		counters.branches++;
		source.restart(random);
		while (bytes() < target) appendPayload(session, source.next());
	}

	const leaf = session.leaf;
	let deepest = 0;
	for (let i = 1; i < session.count; i++) {
		if ((session.depths[i] as number) > (session.depths[deepest] as number)) deepest = i;
	}
	session.close();
	return {
		kind: "file",
		path: join(dir, fileName),
		bytes: session.writer.bytes,
		entries: session.count,
		leafId: session.ids[leaf] ?? null,
		leafDepth: session.depths[leaf] ?? 0,
		deepestId: session.ids[deepest] ?? null,
		deepestDepth: session.depths[deepest] ?? 0,
		longestLineBytes: session.writer.longestLine,
		...counters,
	};
}

/** An assistant `read` of a PNG and its tool result: a text block and a base64 image block of 100 KB–2 MB. */
function appendImageCall(session: SessionWriter, pool: string, counters: Counters): void {
	const random = session.random;
	const callId = `toolu_${hex8(random())}${hex8(random())}`;
	const path = `/bench/project/assets/screenshot-${counters.images + 1}.png`;
	session.append("message", {
		message: {
			role: "assistant",
			content: [{ type: "toolCall", id: callId, name: "read", arguments: { path } }],
			api: "anthropic-messages",
			provider: "anthropic",
			model: "claude-sonnet-4-5",
			usage: {
				input: 5000,
				output: 60,
				cacheRead: 0,
				cacheWrite: 0,
				totalTokens: 5060,
				cost: { input: 0.015, output: 0.0009, cacheRead: 0, cacheWrite: 0, total: 0.0159 },
			},
			stopReason: "toolUse",
		},
	});
	const length = Math.floor(logUniform(random, 100_000, 2_000_000) / 4) * 4 - PNG_PREFIX.length;
	const offset = (random() % ((pool.length - length) >> 2)) << 2;
	const data = PNG_PREFIX + pool.slice(offset, offset + length);
	session.append("message", {
		message: {
			role: "toolResult",
			toolCallId: callId,
			toolName: "read",
			content: [
				{ type: "text", text: "Read image file [image/png]" },
				{ type: "image", data, mimeType: "image/png" },
			],
			isError: false,
		},
	});
	counters.images++;
	counters.imageBytes += data.length;
}

/** 30 projects (a few nested deeper, one with a space), most sessions in a few of them. */
function projectCwds(count: number): string[] {
	const cwds: string[] = [];
	for (let i = 0; i < count; i++) {
		if (i % 7 === 3) cwds.push(`/home/dev/src/github.com/acme/service-${i}`);
		else if (i === 11) cwds.push("/home/dev/My Projects/notes");
		else cwds.push(`/home/dev/work/project-${String(i).padStart(2, "0")}`);
	}
	return cwds;
}

/** A standard normal draw (Box–Muller). */
function normal(random: Random): number {
	const u = (random() + 1) / 4294967297;
	const v = random() / 4294967296;
	return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

function writeHome(
	partial: string,
	dir: string,
	source: PayloadSource,
	seed: number,
	target: number,
	count: number,
): FileStats {
	const random = seededUint32(seed ^ 0x40e);
	const projects = projectCwds(30);
	// Sizes: log-normal (σ 1.6), scaled to the target; many small sessions, a few of several MB.
	const weights = Array.from({ length: count }, () => Math.exp(1.6 * normal(random)));
	const sum = weights.reduce((a, b) => a + b, 0);
	const sizes = weights.map((w) => Math.max(3000, Math.floor((target * w) / sum)));
	const sessions: HomeSession[] = [];
	const counters: Counters = { compactions: 0, labels: 0, branches: 0, branchSummaries: 0, images: 0, imageBytes: 0 };
	let bytes = 0;
	let entries = 0;
	let longest = 0;
	const sessionsRoot = join(dir, "agent", "sessions");
	for (let k = 0; k < count; k++) {
		// Skewed over projects: the first few get most sessions.
		const project = Math.floor(projects.length * (random() / 4294967296) ** 2);
		const cwd = projects[project] as string;
		const projectDir = encodeCwd(cwd);
		mkdirSync(join(partial, "agent", "sessions", projectDir), { recursive: true });
		const start = Date.UTC(2025, 0, 1) + (random() % 300) * 86_400_000 + (random() % 86_400) * 1000;
		const id = uuid(random);
		const fileName = sessionFileName(new Date(start + (k % 1000)).toISOString(), id);
		// Each session's times share one millisecond offset of its own, so no two end at the same time.
		const session = new SessionWriter(
			join(partial, "agent", "sessions", projectDir, fileName),
			random,
			start,
			k % 1000,
		);
		const fork = k > 10 && random() % 30 === 0 ? sessions[random() % sessions.length] : undefined;
		session.header(id, cwd, fork?.path);
		source.restart(random);
		const named = random() % 5 === 0;
		const size = sizes[k] as number;
		let branched = false;
		while (session.writer.bytes < size || session.count < 2) {
			appendPayload(session, source.next());
			if (named && session.count === 3) {
				// As pi's `appendSessionInfo` writes a name: line breaks become spaces, then trimmed.
				const name = `session ${k}: ${source.text(random, 10, 60)}`.replace(/[\r\n]+/g, " ").trim();
				session.append("session_info", { name });
			}
			if (session.count === 400 && size > 1e6) appendCompaction(session, source, 100, counters);
			if (!branched && session.count > 40 && size > 200e3 && random() % 50 === 0) {
				branchSummary(session, source, session.ancestor(session.leaf, 10 + (random() % 20)), counters);
				counters.branches++;
				branched = true;
			}
		}
		// Sessions end on an assistant message, so `modified` is that message's time.
		session.append("message", {
			message: {
				role: "assistant",
				content: [{ type: "text", text: source.text(random, 20, 200) }],
				api: "anthropic-messages",
				provider: "anthropic",
				model: "claude-sonnet-4-5",
				usage: {
					input: 100,
					output: 20,
					cacheRead: 0,
					cacheWrite: 0,
					totalTokens: 120,
					cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
				},
				stopReason: "stop",
			},
		});
		session.close();
		bytes += session.writer.bytes;
		entries += session.count;
		longest = Math.max(longest, session.writer.longestLine);
		sessions.push({
			path: join(sessionsRoot, projectDir, fileName),
			cwd,
			bytes: session.writer.bytes,
			entries: session.count,
			lastId: session.ids[session.count - 1] as string,
			lastActivity: session.lastActivity,
		});
	}
	return {
		kind: "home",
		path: join(dir, "agent"),
		sessionsRoot,
		sessions,
		projects: new Set(sessions.map((s) => s.cwd)).size,
		bytes,
		entries,
		leafId: null,
		leafDepth: 0,
		deepestId: null,
		deepestDepth: 0,
		longestLineBytes: longest,
		...counters,
	};
}

// ————————————————————————————————————————— a v1 file —————————————————————————————————————————

/** A version 1 session file made from a generated linear one (see `ensureV1Input`). */
export interface V1Input {
	/** `v1-of-linear-20mb`. */
	name: string;
	path: string;
	bytes: number;
	/** Entries after the header. */
	entries: number;
	compactions: number;
	/** The v3 input it was made from. */
	from: string;
}

/**
 * A v1 session file made from a generated linear input (cached beside it, in `<its dir>-v1`): the header
 * without a version, entries without `id` and `parentId` (v1 chains them in file order), each compaction's
 * `firstKeptEntryId` as the `firstKeptEntryIndex` of that record (header included), and the label entries
 * left out (v1 had none, and their `targetId` would point at nothing once ids are redrawn). Opening it
 * migrates it: pi 1.6.0 draws fresh ids in place, ours with a backup.
 */
export function ensureV1Input(source: ScaleInput, log?: (line: string) => void): V1Input {
	if (source.kind !== "file" || source.branches > 0) throw new Error(`${source.name}: only a linear file can be v1`);
	const dir = `${source.dir}-v1`;
	const metaPath = join(dir, "meta.json");
	if (existsSync(metaPath)) return JSON.parse(readFileSync(metaPath, "utf8")) as V1Input;
	log?.(`writing a v1 copy of ${source.name} in ${dir} …`);
	const partial = `${dir}.partial-${process.pid}`;
	rmSync(partial, { recursive: true, force: true });
	mkdirSync(partial, { recursive: true });
	const records = readFileSync(source.path, "utf8")
		.split("\n")
		.filter((line) => line !== "")
		.map((line) => JSON.parse(line) as Record<string, unknown>);
	// Where each entry lands in the v1 file; a label's place is taken by the entry after it.
	const indexOf = new Map<unknown, number>();
	const pendingLabels: unknown[] = [];
	let kept = 1;
	let previous: unknown = null;
	for (const record of records.slice(1)) {
		if (record.parentId !== previous) throw new Error(`${source.name}: entry ${record.id} is not on one chain`);
		previous = record.id;
		if (record.type === "label") {
			pendingLabels.push(record.id);
			continue;
		}
		for (const label of pendingLabels.splice(0)) indexOf.set(label, kept);
		indexOf.set(record.id, kept++);
	}
	const path = join(partial, basename(source.path));
	const writer = new LineWriter(path);
	const { version: _version, ...header } = records[0] as Record<string, unknown>;
	writer.line(JSON.stringify(header));
	let entries = 0;
	let compactions = 0;
	for (const record of records.slice(1)) {
		if (record.type === "label") continue;
		const { id: _id, parentId: _parentId, firstKeptEntryId, ...rest } = record;
		if (record.type === "compaction") {
			const index = indexOf.get(firstKeptEntryId);
			if (index === undefined) throw new Error(`${source.name}: compaction ${record.id} keeps from nowhere`);
			rest.firstKeptEntryIndex = index;
			compactions++;
		}
		writer.line(JSON.stringify(rest));
		entries++;
	}
	writer.close();
	const input: V1Input = {
		name: `v1-of-${source.name}`,
		path: join(dir, basename(source.path)),
		bytes: writer.bytes,
		entries,
		compactions,
		from: source.name,
	};
	writeFileSync(join(partial, "meta.json"), `${JSON.stringify(input, null, 1)}\n`);
	try {
		renameSync(partial, dir);
	} catch (error) {
		rmSync(partial, { recursive: true, force: true });
		if (!existsSync(metaPath)) throw error;
		return JSON.parse(readFileSync(metaPath, "utf8")) as V1Input;
	}
	return input;
}

// ————————————————————————————————————————— checking with pi 1.6 —————————————————————————————————————————

/**
 * Open a sample of the input with pi 1.6.0's `SessionManager.open` (a file: itself; an agent directory: its
 * largest, smallest and 18 other sessions) and check the entry count, the leaf and that
 * `buildSessionContext()` gives messages. Returns one line per file checked; throws on a mismatch.
 */
export async function checkWithPi16(input: ScaleInput): Promise<string[]> {
	const { pi16 } = await import("../test/support/pi16.ts");
	const check = (path: string, entries: number, leafId: string | null): string => {
		const manager = pi16.SessionManager.open(path);
		const got = manager.getEntryCount();
		if (got !== entries) throw new Error(`${path}: pi 1.6.0 sees ${got} entries, the generator wrote ${entries}`);
		if (leafId !== null && manager.getLeafId() !== leafId) {
			throw new Error(`${path}: pi 1.6.0's leaf is ${manager.getLeafId()}, the generator's ${leafId}`);
		}
		const context = manager.buildSessionContext();
		if (context.messages.length === 0) throw new Error(`${path}: pi 1.6.0's context has no messages`);
		return `${path}: ${got} entries, leaf ${manager.getLeafId()}, ${context.messages.length} context messages`;
	};
	if (input.kind === "file") return [check(input.path, input.entries, input.leafId)];
	const sessions = [...(input.sessions ?? [])].sort((a, b) => a.bytes - b.bytes);
	const sample = new Set<HomeSession>();
	const step = Math.max(1, Math.floor(sessions.length / 18));
	for (let i = 0; i < sessions.length; i += step) sample.add(sessions[i] as HomeSession);
	if (sessions.length > 0) sample.add(sessions[sessions.length - 1] as HomeSession);
	return [...sample].map((session) => check(session.path, session.entries, session.lastId));
}

// ————————————————————————————————————————— command line —————————————————————————————————————————

async function main(argv: readonly string[]): Promise<void> {
	const value = (flag: string): string | undefined => {
		const index = argv.indexOf(flag);
		return index >= 0 ? argv[index + 1] : undefined;
	};
	const only = value("--only")
		?.split(",")
		.map((name) => name.trim())
		.filter(Boolean);
	for (const name of only ?? []) {
		if (!(name in VARIANTS)) throw new Error(`unknown input ${name}; known: ${VARIANT_NAMES.join(", ")}`);
	}
	const huge = argv.includes("--huge") || process.env.PI_SCALE_HUGE === "1";
	const names = (only as VariantName[] | undefined) ?? VARIANT_NAMES.filter((name) => huge || !VARIANTS[name].huge);
	const options: EnsureOptions = {
		root: value("--out") ?? defaultInputRoot(),
		seed: value("--seed") === undefined ? DEFAULT_SEED : Number(value("--seed")),
		quick: argv.includes("--quick"),
		synthetic: argv.includes("--synthetic"),
		log: (line) => console.log(line),
	};
	for (const name of names) {
		const input = ensureInput(name, options);
		const what =
			input.kind === "home"
				? `${input.sessions?.length} sessions over ${input.projects} projects`
				: `leaf ${input.leafId} at depth ${input.leafDepth}, ${input.compactions} compactions, ${input.labels} labels, ` +
					`${input.branches} branches (${input.branchSummaries} with a summary), ${input.images} images`;
		console.log(
			`${input.name}: ${input.path} — ${(input.bytes / 1e6).toFixed(1)} MB, ${input.entries} entries, ${what} ` +
				`(${input.source} payloads, seed ${input.seed})`,
		);
		const checkAll = argv.includes("--check-all");
		if (argv.includes("--no-check")) continue;
		if (input.kind === "file" && statSync(input.path).size > 200e6 && !checkAll) {
			console.log("  pi 1.6.0 check skipped (over 200 MB; --check-all checks it, the benchmark checks it anyway)");
			continue;
		}
		for (const line of await checkWithPi16(input)) console.log(`  pi 1.6.0 opens ${line}`);
	}
}

if (process.argv[1]?.endsWith("scale-inputs.ts")) {
	await main(process.argv.slice(2));
}
