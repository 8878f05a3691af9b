/**
 * Benchmark: the cost of one append to an in-memory file as the file grows. ZenFS's stock `InMemory`
 * backend copies the whole file on every append that grows it; `createMemoryStorage` keeps file contents in
 * resizable buffers so an append costs its own size. Both are driven through the same adapter
 * (`createZenfsStorage`), side by side, with 500-byte appends (a typical message line) to files of 1, 16
 * and 64 MiB, and every file is read back and checked at the end.
 * Run: `npx tsx bench/memory-appends.ts`.
 * @module
 */
import { InMemory, resolveMountConfig } from "@zenfs/core";
import { createMemoryStorage, createZenfsStorage } from "../adapters/zenfs.ts";
import type { Storage } from "../src/storage.ts";
import { median } from "./worker-support.ts";

const SIZES_MIB = [1, 16, 64];
const APPENDS = 200;
const ROUNDS = 3;
const LINE = new TextEncoder().encode(`${"y".repeat(499)}\n`);
const MIB = new Uint8Array(1 << 20).fill(120);

const cases: { name: string; make: () => Promise<Storage> }[] = [
	{
		name: "ZenFS InMemory (stock)",
		make: async () => createZenfsStorage(await resolveMountConfig({ backend: InMemory })),
	},
	{ name: "createMemoryStorage", make: () => createMemoryStorage() },
];

/** Milliseconds per append of `LINE` to a file already `mib` MiB long; the median of `ROUNDS`. */
async function perAppend(storage: Storage, path: string, mib: number): Promise<number> {
	for (let i = 0; i < mib; i++) await storage.append(path, MIB, false);
	const rounds: number[] = [];
	for (let round = 0; round < ROUNDS; round++) {
		const start = performance.now();
		for (let i = 0; i < APPENDS; i++) await storage.append(path, LINE, false);
		rounds.push((performance.now() - start) / APPENDS);
	}
	const expectedSize = mib * MIB.length + ROUNDS * APPENDS * LINE.length;
	const bytes = await storage.readRange(path, 0, expectedSize + 1);
	if (bytes.length !== expectedSize || bytes[expectedSize - 1] !== 10 || bytes[mib * MIB.length - 1] !== 120)
		throw new Error(`${path}: read back ${bytes.length} bytes, expected ${expectedSize}`);
	return median(rounds);
}

console.log(`one append (${LINE.length} bytes) to an in-memory file of a given size — node ${process.version}`);
console.log(`median of ${ROUNDS} rounds of ${APPENDS} awaited appends\n`);
const head = `${"file size".padEnd(12)}${cases.map((c) => c.name.padStart(26)).join("")}${"stock ÷ ours".padStart(14)}`;
console.log(head);
console.log("-".repeat(head.length));
for (const mib of SIZES_MIB) {
	const times: number[] = [];
	for (const { make } of cases) {
		const storage = await make();
		await storage.mkdir("/bench");
		times.push(await perAppend(storage, `/bench/${mib}.jsonl`, mib));
	}
	const [stock = 0, ours = 0] = times;
	console.log(
		`${`${mib} MiB`.padEnd(12)}${times.map((t) => `${t.toFixed(3)} ms`.padStart(26)).join("")}${`${(stock / ours).toFixed(1)}×`.padStart(14)}`,
	);
}
