/**
 * Synthetic v3 sessions for benchmarks, built in memory from the real payloads of the two v1 sessions in
 * the shared corpus: one linear chain (every entry's parent is the previous entry) with a few compactions
 * and labels, deterministic for a given seed. Nothing is written to disk.
 * @module
 */
import type { FileEntry } from "../src/index.ts";
import { CORPUS_FILES, corpusDir, requireCorpus } from "../test/support/corpus.ts";
import { seededUint32 } from "../test/support/random.ts";

/** Where the real pi sessions live (read-only): `PI_CORPUS_DIR`, or `shared/corpus` beside the repository. */
export const CORPUS_DIR: string = corpusDir();

/** Record kinds whose payloads are cycled into the chain. */
const PAYLOAD_TYPES = new Set(["message", "thinking_level_change", "model_change"]);

export interface GenerateOptions {
	/** Stop once the JSONL reaches this many bytes (default 100 MB, about 59,000 entries). */
	targetBytes?: number;
	seed?: number;
	/** Compactions, spread evenly over the file (default 5). */
	compactions?: number;
	/** Label entries, spread evenly over the file (default 8). */
	labels?: number;
	corpusDir?: string;
}

export interface GeneratedSession {
	/** The records as a loader sees them (header first): parsed from `lines`, so no two share objects. */
	records: FileEntry[];
	/** One JSONL line per record, without the terminating `\n`. */
	lines: string[];
	/** UTF-8 size of the JSONL text, newlines included. */
	bytes: number;
	compactions: number;
	labels: number;
}

type Payload = { type: string; [field: string]: unknown };

function hex8(value: number): string {
	return value.toString(16).padStart(8, "0");
}

function readCorpus(dir: string): { payloads: Payload[]; summaries: { summary: string; tokensBefore: number }[] } {
	const payloads: Payload[] = [];
	const summaries: { summary: string; tokensBefore: number }[] = [];
	const corpus = requireCorpus(dir); // throws naming the directory when the corpus is not there
	for (const file of CORPUS_FILES) {
		for (const line of corpus.readTextSync(file).split("\n")) {
			if (line.trim() === "") continue;
			const record = JSON.parse(line) as Payload;
			if (PAYLOAD_TYPES.has(record.type)) payloads.push(record);
			else if (record.type === "compaction") {
				summaries.push({ summary: record.summary as string, tokensBefore: record.tokensBefore as number });
			}
		}
	}
	if (payloads.length === 0 || summaries.length === 0) throw new Error(`no payloads or compactions in ${dir}`);
	return { payloads, summaries };
}

/**
 * A linear v3 session of about `targetBytes` of JSONL. Each compaction keeps from an entry a few hundred
 * entries back on the path; each label targets a recent entry.
 * @example
 * const { records, lines, bytes } = generateLinearSession({ targetBytes: 10_000_000, seed: 1 });
 */
export function generateLinearSession(options: GenerateOptions = {}): GeneratedSession {
	const { targetBytes = 100_000_000, seed = 42, compactions = 5, labels = 8 } = options;
	const { payloads, summaries } = readCorpus(options.corpusDir ?? CORPUS_DIR);
	const random = seededUint32(seed);
	const taken = new Set<string>();
	// 8-hex ids collide at this scale (birthday bound), so retry as pi does.
	const newId = (): string => {
		let id = hex8(random());
		while (taken.has(id)) id = hex8(random());
		taken.add(id);
		return id;
	};

	let clock = Date.UTC(2025, 0, 1);
	const tick = (): number => {
		clock += 200 + (random() % 30_000);
		return clock;
	};
	const sessionId = [hex8(random()), hex8(random()), hex8(random()), hex8(random())].join("");
	const header = {
		type: "session",
		version: 3,
		id: `${sessionId.slice(0, 8)}-${sessionId.slice(8, 12)}-${sessionId.slice(12, 16)}-${sessionId.slice(16, 20)}-${sessionId.slice(20)}`,
		timestamp: new Date(tick()).toISOString(),
		cwd: "/bench/project",
	};

	const lines: string[] = [];
	let bytes = 0;
	const push = (record: object): void => {
		const line = JSON.stringify(record);
		lines.push(line);
		bytes += Buffer.byteLength(line) + 1;
	};
	push(header);

	const path: string[] = [];
	// Field order per kind follows pi's writer: type, id, parentId, timestamp, then the kind's own fields.
	const append = (type: string, fields: object, time = tick()): void => {
		const id = newId();
		push({ type, id, parentId: path[path.length - 1] ?? null, timestamp: new Date(time).toISOString(), ...fields });
		path.push(id);
	};

	let compactionCount = 0;
	let labelCount = 0;
	for (let i = 0; bytes < targetBytes; i++) {
		if (bytes >= (targetBytes * (compactionCount + 1)) / (compactions + 1) && compactionCount < compactions) {
			const { summary, tokensBefore } = summaries[compactionCount % summaries.length] as (typeof summaries)[0];
			const keptBack = 200 + (random() % 300);
			const firstKeptEntryId = path[Math.max(0, path.length - keptBack)];
			append("compaction", { summary, firstKeptEntryId, tokensBefore });
			compactionCount++;
		}
		if (bytes >= (targetBytes * (labelCount + 0.5)) / labels && labelCount < labels) {
			const targetId = path[path.length - 1 - (random() % Math.min(path.length, 50))];
			append("label", { targetId, label: `checkpoint-${labelCount + 1}` });
			labelCount++;
		}
		const { type, timestamp: _v1Timestamp, ...fields } = payloads[i % payloads.length] as Payload;
		if (type === "message") {
			// The message keeps its own content but gets a timestamp consistent with its entry.
			const time = tick();
			append(type, { message: { ...(fields.message as object), timestamp: time } }, time);
		} else append(type, fields);
	}

	return {
		records: lines.map((line) => JSON.parse(line) as FileEntry),
		lines,
		bytes,
		compactions: compactionCount,
		labels: labelCount,
	};
}
