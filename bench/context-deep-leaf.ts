/**
 * Benchmark: the model context of the deepest leaf of a ~100 MB session whose ~59,000 entries are all on
 * one path, side by side with pi 1.6.0's and pi 0.73.1's `buildSessionContext` and with the floor
 * (`JSON.parse` of every line). Absolute times on shared machines are noise; the ratios are the result.
 * Beside each time: the heap the call left allocated (measured before any collection), as its memory cost.
 * Every context is checked to be pi 1.6.0's, as a whole, before anything is timed.
 * Run: `npx tsx bench/context-deep-leaf.ts [--quick]` (`--quick`: a 20 MB session, 5 samples after 1 warm-up
 * round); under `npm run bench` (bench/run.ts) it reports its rows to the suite.
 * @module
 */
import {
	type SessionEntry as PiSessionEntry,
	buildSessionContext as pi073BuildSessionContext,
} from "@mariozechner/pi-coding-agent";
import { buildSessionContext as pi16BuildSessionContext } from "../node_modules/pi-coding-agent-1.6/dist/core/session-manager.js";
import { buildSessionContext, type SessionContext, type SessionEntry, SessionTree } from "../src/index.ts";
import { generateLinearSession } from "./generate.ts";
import { type BenchRow, type Measure, measureOf, reportRow } from "./suite/rows.ts";
import { firstDifference, isQuick, relaunchWithGc, sizeText } from "./worker-support.ts";

const QUICK = isQuick();
const TARGET_BYTES = QUICK ? 20e6 : 100e6;
const WARMUP = QUICK ? 1 : 3;
const SAMPLES = QUICK ? 5 : 11;
/** Pause after each gc(): V8 sweeps concurrently, and on a small machine that work would land in the sample. */
const SETTLE_MS = 100;
const settle = new Int32Array(new SharedArrayBuffer(4));

interface Case {
	name: string;
	run: () => unknown;
}

/**
 * Samples per case: ms, and MB of heap the call left allocated. Cases take turns in every round, the first
 * one a different case each round, so drift in machine load (and what the case before left) hits all alike.
 */
function measure(cases: readonly Case[]): { ms: number[]; heapMb: number[] }[] {
	const samples = cases.map(() => ({ ms: [] as number[], heapMb: [] as number[] }));
	let sink: unknown;
	for (let round = 0; round < WARMUP + SAMPLES; round++) {
		const shift = round % cases.length;
		[...cases.slice(shift), ...cases.slice(0, shift)].forEach((benchCase) => {
			const index = cases.indexOf(benchCase);
			globalThis.gc?.();
			Atomics.wait(settle, 0, 0, SETTLE_MS);
			const heapBefore = process.memoryUsage().heapUsed;
			const start = performance.now();
			sink = benchCase.run();
			const elapsed = performance.now() - start;
			const heapAfter = process.memoryUsage().heapUsed;
			if (round >= WARMUP) {
				samples[index]?.ms.push(elapsed);
				samples[index]?.heapMb.push((heapAfter - heapBefore) / 1e6);
			}
		});
	}
	// Keep the last result observable so no engine can treat the work as dead.
	if (sink === undefined) throw new Error("a case returned nothing");
	return samples;
}

/** The entries from `leafId` up to the root, through the map (no cycle check: the generated path has none). */
function walkPath(byId: ReadonlyMap<string, SessionEntry>, leafId: string): SessionEntry[] {
	const reversed: SessionEntry[] = [];
	for (let entry = byId.get(leafId); entry; entry = entry.parentId ? byId.get(entry.parentId) : undefined) {
		reversed.push(entry);
	}
	return reversed.reverse();
}

function median(values: readonly number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Where a context differs from pi 1.6.0's (the whole of it: messages, thinking level, model), or undefined. */
function contextDifference(context: unknown, reference: SessionContext): string | undefined {
	return firstDifference(context, reference);
}

function main(): void {
	let start = performance.now();
	const session = generateLinearSession({ targetBytes: TARGET_BYTES });
	const generatedMs = performance.now() - start;
	const { records, lines } = session;
	// Same arrays and map for both implementations; the casts only bridge the two packages' type declarations.
	const entries = records.slice(1) as SessionEntry[];
	const piEntries = entries as unknown as PiSessionEntry[];
	const byId = new Map(entries.map((entry) => [entry.id, entry]));
	const piById = byId as unknown as Map<string, PiSessionEntry>;
	const leafId = (entries[entries.length - 1] as SessionEntry).id;
	start = performance.now();
	const tree = SessionTree.fromRecords(records);
	const treeMs = performance.now() - start;
	if (tree.getBranch(leafId).length !== entries.length) throw new Error("the generated session is not one path");

	// pi 1.6.0 is the contract; 0.73.1 gives the same context for what it wrote (no system messages or edits).
	const pi16 = (withMap: boolean) =>
		pi16BuildSessionContext(piEntries as never, leafId, withMap ? (piById as never) : undefined);
	const pi073 = (withMap: boolean) => pi073BuildSessionContext(piEntries, leafId, withMap ? piById : undefined);
	const reference = pi16(true) as unknown as SessionContext;
	// Every answer against pi 1.6.0's with the map given, before timing: a wrong one marks its row.
	const differences = {
		pi16WithoutMap: contextDifference(pi16(false), reference),
		pi073WithMap: contextDifference(pi073(true), reference),
		pi073WithoutMap: contextDifference(pi073(false), reference),
		oursWithMap: contextDifference(buildSessionContext(entries, leafId, byId), reference),
		oursWithoutMap: contextDifference(buildSessionContext(entries, leafId), reference),
		oursTree: contextDifference(tree.buildSessionContext(leafId), reference),
	};

	const cases: Case[] = [
		{
			name: "floor: JSON.parse of every line",
			run: () => {
				let parsed = 0;
				for (const line of lines) if (JSON.parse(line)) parsed++;
				return parsed;
			},
		},
		{ name: "pi 1.6.0  buildSessionContext(entries, leaf, byId)", run: () => pi16(true) },
		{ name: "pi 1.6.0  buildSessionContext(entries, leaf)", run: () => pi16(false) },
		{ name: "pi 0.73.1 buildSessionContext(entries, leaf, byId)", run: () => pi073(true) },
		{ name: "pi 0.73.1 buildSessionContext(entries, leaf)", run: () => pi073(false) },
		{
			name: "ours      buildSessionContext(entries, leaf, byId)",
			run: () => buildSessionContext(entries, leafId, byId),
		},
		{ name: "ours      buildSessionContext(entries, leaf)", run: () => buildSessionContext(entries, leafId) },
		{ name: "ours      SessionTree#buildSessionContext(leaf)", run: () => tree.buildSessionContext(leafId) },
		// What any free function given byId does first: the path, leaf to root, one map lookup a step.
		{ name: "walk: the path through byId, nothing else", run: () => walkPath(byId, leafId) },
	];
	// The floor's and the walk's answers too (the lines parsed; the path, every entry in order), before timing.
	const walked = walkPath(byId, leafId);
	if (cases[0]?.run() !== lines.length || walked.length !== entries.length || walked.some((e, i) => e !== entries[i])) {
		throw new Error("the floor's count of parsed lines or the walk's path is wrong: no figure is reported");
	}
	const samples = measure(cases);
	const medians = samples.map((sample) => median(sample.ms));
	const heaps = samples.map((sample) => median(sample.heapMb));
	const [
		floor = 0,
		pi16WithMap = 0,
		pi16BuildsMap = 0,
		pi073WithMap = 0,
		,
		oursWithMap = 0,
		oursBuildsMap = 0,
		oursTree = 0,
		walk = 0,
	] = medians;

	const mb = (bytes: number): string => (bytes / 1e6).toFixed(2);
	console.log(
		`context of the deepest leaf — node ${process.version}, median of ${SAMPLES} samples after ${WARMUP} warm-up` +
			(QUICK ? " (--quick)" : ""),
	);
	const gc = typeof globalThis.gc === "function" ? `yes, then ${SETTLE_MS} ms to settle` : "no (no --expose-gc)";
	console.log(`  gc between samples: ${gc}`);
	console.log(
		`session: ${entries.length} entries on one path, ${mb(session.bytes)} MB (${session.bytes} bytes) of JSONL, ` +
			`${session.compactions} compactions, ${session.labels} labels; generated in ${(generatedMs / 1000).toFixed(1)} s`,
	);
	const wrong = Object.entries(differences).filter(([, difference]) => difference !== undefined);
	console.log(
		`leaf context: ${reference.messages.length} messages, thinking level ${reference.thinkingLevel}, ` +
			`model ${reference.model?.provider}/${reference.model?.modelId}; ` +
			(wrong.length === 0
				? "every case's is pi 1.6.0's (checked, whole)"
				: `DIFFERS from pi 1.6.0's in ${wrong.length}`),
	);
	for (const [name, difference] of wrong) console.log(`  ${name}: ${difference}`);
	console.log(`SessionTree.fromRecords (once, not in the table): ${treeMs.toFixed(1)} ms\n`);
	console.log(`${"case".padEnd(52)}${"median ms".padStart(11)}${"÷ floor".padStart(10)}${"heap MB".padStart(10)}`);
	cases.forEach((benchCase, index) => {
		const ms = medians[index] ?? 0;
		const heap = (heaps[index] ?? 0).toFixed(1).padStart(10);
		console.log(
			`${benchCase.name.padEnd(52)}${ms.toFixed(2).padStart(11)}${(ms / floor).toFixed(4).padStart(10)}${heap}`,
		);
	});
	const speedUp = (pi: number, ours: number): string => `${(pi / ours).toFixed(1)}×`.padStart(9);
	console.log("\nspeed-up, pi ÷ ours (medians):");
	console.log(`  pi 1.6.0, byId given                     ${speedUp(pi16WithMap, oursWithMap)}`);
	console.log(`  pi 1.6.0, map built inside the call      ${speedUp(pi16BuildsMap, oursBuildsMap)}`);
	console.log(`  pi 1.6.0 with byId vs SessionTree        ${speedUp(pi16WithMap, oursTree)}`);
	console.log(`  pi 0.73.1, byId given                    ${speedUp(pi073WithMap, oursWithMap)}`);
	console.log(`the walk alone ÷ pi 1.6.0 (byId given)   ${(walk / pi16WithMap).toFixed(2).padStart(8)}×`);

	// The suite's rows: each figure the medians and ranges of its case's samples.
	const of = (index: number): Measure | undefined => measureOf(samples[index]?.ms ?? []);
	const size = `linear ${sizeText(session.bytes)}`;
	const checked = "the whole context (every message, thinking level, model), equal to pi 1.6.0's with byId given";
	const problemOf = (...names: (keyof typeof differences)[]): string | undefined => {
		const found = names.flatMap((name) => (differences[name] ? [`${name}: ${differences[name]}`] : []));
		return found.length > 0 ? `context differs from pi 1.6.0's: ${found.join("; ")}` : undefined;
	};
	const pi073Note = (name: keyof typeof differences): string | undefined =>
		differences[name] ? `pi 0.73.1's context differs from pi 1.6.0's (${differences[name]})` : undefined;
	const base = {
		bench: "context-deep-leaf",
		size: { bytes: session.bytes, entries: entries.length },
		floor: of(0),
		checked,
	} satisfies Partial<BenchRow>;
	const rows: BenchRow[] = [
		{
			...base,
			name: `context of the deepest leaf (buildSessionContext), ${size}`,
			ours: of(5),
			pi16: of(1),
			pi073: of(3),
			goals: [{ kind: "ratio", max: 0.3, against: "pi16" }],
			note:
				pi073Note("pi073WithMap") ??
				`each given the id map (byId); floor: JSON.parse of every line; the walk of the path alone (leaf to root through byId, which any such function does first) takes ${(walk / pi16WithMap).toFixed(2)}× pi 1.6.0's whole call`,
			problem: problemOf("oursWithMap"),
		},
		{
			...base,
			name: `context of the deepest leaf (buildSessionContext, map built inside), ${size}`,
			ours: of(6),
			pi16: of(2),
			pi073: of(4),
			note: pi073Note("pi073WithoutMap") ?? "no byId given: each builds its id map inside the call",
			problem: problemOf("oursWithoutMap", "pi16WithoutMap"),
		},
		{
			...base,
			name: `context of the deepest leaf (SessionTree#buildSessionContext), ${size}`,
			ours: of(7),
			pi16: of(1),
			pi073: of(3),
			note: "ours from the tree an open session holds; pi's buildSessionContext with byId",
			problem: problemOf("oursTree"),
		},
	];
	for (const row of rows) reportRow(row);
	if (rows.some((row) => row.problem)) process.exitCode = 1;
}

if (!relaunchWithGc()) main();
