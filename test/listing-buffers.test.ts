/**
 * A cold listing reads its files into a few buffers it reuses (`readReusing`, a pair for each file read at
 * once), not a new buffer per read. So what it keeps for a catalog row's tail hash (the bytes before the end of the last whole line) must be copied out as it goes: the row
 * says "only grew" only when those bytes are unchanged. Here files of several chunks, with lines shorter
 * and longer than a chunk and a last line that may not end, are scanned from their start and from a line
 * boundary, and the hash must be that of the file's own bytes, found without reading them again.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../adapters/zenfs.ts";
import { listAllSessions } from "../src/catalog.ts";
import { hashText } from "../src/listing-hash.ts";
import { LISTING_CHUNK_BYTES, scanListing, TAIL_CHECK_BYTES } from "../src/listing-scan.ts";
import { emptyListingState } from "../src/listing-summary.ts";
import { runTask, type Storage } from "../src/storage.ts";
import { propertyRuns } from "./support/runs.ts";

const encoder = new TextEncoder();

/** A session file of `lines` user messages of the given lengths; the last line unterminated when `torn`. */
function fileOf(lengths: readonly number[], torn: boolean): Uint8Array {
	const header = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n';
	const lines = lengths.map(
		(length, index) =>
			`{"type":"message","id":"${index.toString(16).padStart(8, "0")}","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"${"x".repeat(length)}","timestamp":1}}\n`,
	);
	const text = header + lines.join("");
	return encoder.encode(torn ? text.slice(0, -1 - (lengths.at(-1) ?? 0) / 2) : text);
}

/**
 * The storage, with every range it is asked to read noted; and a buffer it is given to read into written
 * over whole first (its bytes past the range too), as a read into it may: bytes the scan kept as a view of
 * an earlier read into the same buffer are then garbage by the time it uses them. (Only that buffer: the
 * other one of the pair may be the task's while a read ahead fills this one.)
 */
function noting(storage: Storage): { storage: Storage; reads: [number, number][] } {
	const reads: [number, number][] = [];
	return {
		reads,
		storage: {
			...storage,
			readRange: (path, start, end, into) => {
				reads.push([start, end]);
				if (into) new Uint8Array(into.buffer, into.byteOffset, into.byteLength).fill(0x7e);
				return storage.readRange(path, start, end, into);
			},
		},
	};
}

/** Scan `bytes` from `offset` (a line boundary); the tail hash must be that of the bytes themselves. */
async function expectTailHash(bytes: Uint8Array, offset: number): Promise<void> {
	const memory = await createMemoryStorage();
	await memory.mkdir("/s");
	await memory.append("/s/f.jsonl", bytes, false);
	const state = emptyListingState();
	if (offset > 0) state.phase = "session";
	const { storage, reads } = noting(memory);
	const scan = await runTask(scanListing("/s/f.jsonl", bytes.length, state, offset, undefined, undefined), storage);
	const checkStart = Math.max(0, scan.consumed - TAIL_CHECK_BYTES);
	expect(scan.tailHash).toBe(hashText(bytes.subarray(checkStart, scan.consumed)));
	// Read again only when this scan did not read those bytes (they lie before its offset): a read again is
	// one that starts before where the reads so far ended (the scan's go on from there).
	let readTo = offset;
	let reread = false;
	for (const [start, end] of reads) {
		if (start < readTo) reread = true;
		readTo = Math.max(readTo, end);
	}
	expect(reread).toBe(scan.consumed === offset || checkStart < offset);
}

/** The line boundaries of `bytes`: 0 and just after each line feed. */
function boundariesOf(bytes: Uint8Array): number[] {
	const boundaries = [0];
	for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) boundaries.push(at + 1);
	return boundaries;
}

describe("a cold listing's tail hash", () => {
	it("is the hash of the bytes before its last whole line's end, wherever chunks and lines end", async () => {
		const lengthArbitrary = fc.oneof(
			fc.integer({ min: 0, max: 3000 }),
			fc.integer({ min: TAIL_CHECK_BYTES - 300, max: TAIL_CHECK_BYTES + 300 }),
			fc.integer({ min: LISTING_CHUNK_BYTES / 2, max: LISTING_CHUNK_BYTES * 2 }),
		);
		await fc.assert(
			fc.asyncProperty(
				fc.array(lengthArbitrary, { minLength: 1, maxLength: 12 }),
				fc.boolean(),
				fc.nat(),
				async (lengths, torn, from) => {
					const bytes = fileOf(lengths, torn);
					const boundaries = boundariesOf(bytes);
					// From the start, or from a line boundary (where a catalog row stopped).
					await expectTailHash(bytes, boundaries[from % boundaries.length] as number);
				},
			),
			{ numRuns: propertyRuns(40) },
		);
	}, 120_000);

	it("is so where the last whole line ends in one chunk and the torn one runs past the next", async () => {
		const chunk = LISTING_CHUNK_BYTES;
		// The last line feed early in a chunk (its 4 KiB before it partly in the chunk before), a long torn line
		// after it through the next chunks: the bytes of the hash come from two reads long since reused.
		for (const lengths of [
			[chunk - 600, 2 * chunk],
			[200_000, 400_000],
			[chunk - 100, 10, chunk + TAIL_CHECK_BYTES],
			[10, 20, 3 * chunk],
		]) {
			const bytes = fileOf(lengths, true);
			for (const offset of boundariesOf(bytes)) await expectTailHash(bytes, offset);
		}
	});

	it("comes with reads into a pair of buffers for each file read at once, whatever the number of files", async () => {
		const memory = await createMemoryStorage();
		const root = "/agent/sessions";
		for (let index = 0; index < 40; index++) {
			const dir = `${root}/--p${index % 4}--`;
			await memory.mkdir(dir);
			await memory.append(`${dir}/s${index}.jsonl`, fileOf([1000 + index, 20_000], false), false);
		}
		const into = new Set<ArrayBufferLike>();
		let reads = 0;
		const storage: Storage = {
			...memory,
			readRange: (path, start, end, buffer) => {
				if (path.endsWith(".jsonl")) reads++;
				if (buffer) into.add(buffer.buffer);
				return memory.readRange(path, start, end, buffer);
			},
		};
		const listed = await listAllSessions(storage, root, { concurrency: 3 });
		expect(listed).toHaveLength(40);
		expect(reads).toBeGreaterThanOrEqual(40);
		// Each file is read into its lane's buffer, made again only to grow (the files grow by a byte each).
		expect(into.size).toBeGreaterThan(0);
		expect(into.size).toBeLessThanOrEqual(3 * 2 * 2);
	});
});
