import { expect, it } from "vitest";
import { bigSession } from "./fixtures/big-session.ts";

// The crash tests fork a big session's leaf and expect exactly the path's lines: the fixture must end on its
// path whatever the seed (seed 259922791 once ended on an abandoned side answer, which became the leaf).
it("a big session ends on its path, so its leaf is the path's last entry, for any seed", () => {
	for (let seed = 0; seed < 40; seed++) {
		for (const version of [2, 3] as const) {
			const session = bigSession(version, 120_000 + seed * 3_000, seed * 7_919);
			const lineCount = session.bytes.toString("utf8").trimEnd().split("\n").length;
			expect(session.pathLines.at(-1), `seed ${seed}, v${version}`).toBe(lineCount - 1);
		}
	}
	// And the seed that found it.
	const found = bigSession(3, 12 * 2 ** 20, 259922791 + 3);
	expect(found.pathLines.at(-1)).toBe(found.entries);
});
