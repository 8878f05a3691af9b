/**
 * The sample sessions bundled with the package (`dist/samples/sessions`, laid out as pi lays out
 * `~/.pi/agent/sessions`), which `pi-sessions` shows on a machine without pi sessions: made by the
 * project's own fixture generator (test/fixtures/generate.ts). A branched, compacted, labelled and named
 * v3 session, a v2 session with an abandoned branch, a v1 file, and a damaged file (a line that is not
 * JSON; its own id, so an id names one sample). Each file's modification time is its last entry's time,
 * so listings come out the same on every machine.
 * @module
 */
import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeCwd, sessionFileName } from "../src/index.ts";
import { type FixtureName, sessionFixture } from "../test/fixtures/generate.ts";

const SAMPLES: readonly { fixture: FixtureName; id?: string }[] = [
	{ fixture: "v3-current.jsonl" },
	{ fixture: "v2-branching.jsonl" },
	{ fixture: "v1-linear.jsonl" },
	{ fixture: "v3-garbage-line.jsonl", id: "0badf11e-5e55-4d0e-9a1b-d4a3a9ed1e00" },
];

function lastTime(lines: readonly string[]): Date {
	for (let index = lines.length - 1; index >= 0; index--) {
		try {
			const time = new Date((JSON.parse(lines[index] as string) as { timestamp?: string }).timestamp ?? "");
			if (!Number.isNaN(time.getTime())) return time;
		} catch {
			// a damaged line: look further back
		}
	}
	throw new Error("a sample without a timestamp");
}

/** Write the samples under `root` (replacing what was there); returns their paths. */
export function writeSamples(root: string): string[] {
	rmSync(root, { recursive: true, force: true });
	return SAMPLES.map(({ fixture, id }) => {
		const lines = sessionFixture(fixture).text.split("\n");
		const header = JSON.parse(lines[0] as string) as { id: string; timestamp: string; cwd: string };
		if (id !== undefined) {
			header.id = id;
			lines[0] = JSON.stringify(header);
		}
		const dir = join(root, encodeCwd(header.cwd));
		mkdirSync(dir, { recursive: true });
		const path = join(dir, sessionFileName(header.timestamp, header.id));
		writeFileSync(path, lines.join("\n"));
		const time = lastTime(lines);
		utimesSync(path, time, time);
		return path;
	});
}
