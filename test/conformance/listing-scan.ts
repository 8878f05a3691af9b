/**
 * The listing's two line scans on every runtime (Node, Bun, Deno, Chromium): the WebAssembly one runs
 * there and answers as the JavaScript one does, on the lazy open's test lines (whole entries of each kind
 * with awkward payloads, unusual ones, and their damaged copies). Deterministic, so that each runtime
 * checks the same lines.
 */
import { scanMessageFields, scanPlainEntryJson } from "../../src/listing-json-scan.ts";
import { createWasmListingScan } from "../../src/listing-scan-wasm.ts";
import type { TestApi } from "../../src/testing.ts";
import { damagedLines, described, unusualLines, wholeLines } from "./line-walk.ts";

export function runListingScanAgreement(t: TestApi): void {
	t.describe("the listing's line scans", () => {
		t.it("run in WebAssembly here, and read every line as the JavaScript scans do", () => {
			const scan = createWasmListingScan();
			t.expect(scan !== undefined).toBe(true);
			if (!scan) return;
			const whole = [...wholeLines(), ...unusualLines()];
			const lines = [...whole, ...damagedLines(whole)];
			const mismatches: string[] = [];
			let plain = 0;
			let fields = 0;
			for (const line of lines) {
				const wasm = described([scan.isPlainEntryJson(line, 0, line.length), scan.messageFields(line, 0, line.length)]);
				const javascript = described([
					scanPlainEntryJson(line, 0, line.length),
					scanMessageFields(line, 0, line.length),
				]);
				if (wasm.startsWith("[true")) plain++;
				if (!wasm.endsWith("null]")) fields++;
				if (wasm !== javascript && mismatches.length < 5)
					mismatches.push(`${new TextDecoder().decode(line.subarray(0, 160))}: ${wasm} ≠ ${javascript}`);
			}
			t.expect(mismatches).toEqual([]);
			// Not a vacuous agreement: the whole entries are plain, and their user and assistant messages have fields.
			t.expect(plain >= whole.length - 20).toBe(true);
			t.expect(fields >= 12).toBe(true);
		});
	});
}
