/**
 * Where the real pi session corpus is, and what a run does without it: the one place that knows.
 *
 * The corpus (two real v1 sessions written by pi, ~3.3 MB; see its README.md) is not part of the
 * repository: it lives in `../shared/corpus/` beside it, or where `PI_CORPUS_DIR` says (Node, Bun and Deno;
 * Chromium imports `../shared/corpus/*.jsonl` with `import.meta.glob`, which takes no variables). Every test
 * that uses it also runs on the generated fixtures (`test/fixtures/generate.ts`), so a fresh clone tests
 * the same paths; the corpus adds real data on top.
 *
 * Without it, `describeWithCorpus` registers the corpus tests as skipped, titled
 * "… (corpus not found at <dir>)"; with `CI` set (`CI=true`, as CI services set it), it registers one
 * failing test instead, saying the corpus is required in CI. The benchmarks call `requireCorpus()`, which
 * throws naming the directory.
 *
 * Runtime-neutral: no static `node:*` import (Chromium imports this module too); Node, Bun and Deno reach
 * `node:fs` through `process.getBuiltinModule` (Node ≥ 20.16).
 * @module
 */

/** The corpus files the tests use. */
export const CORPUS_FILES: readonly CorpusFile[] = ["pi-v1-large-session.jsonl", "pi-v1-before-compaction.jsonl"];
export type CorpusFile = "pi-v1-large-session.jsonl" | "pi-v1-before-compaction.jsonl";

/** The corpus as a test sees it: where it was looked for, whether it is there, and its files' bytes. */
export interface Corpus {
	/** The directory looked in (a path; in Chromium, the glob's directory relative to the test). */
	dir: string;
	/** Every file of `CORPUS_FILES` is there. */
	found: boolean;
	/** A file's bytes; rejects when the corpus was not found. */
	read(file: CorpusFile): Promise<Uint8Array>;
}

/** The corpus on a file system (Node, Bun, Deno), with synchronous access for tests that need it. */
export interface DiskCorpus extends Corpus {
	/** A file's absolute path (it may not exist: check `found`). */
	path(file: CorpusFile): string;
	readSync(file: CorpusFile): Uint8Array;
	readTextSync(file: CorpusFile): string;
}

type Env = Record<string, string | undefined>;

/** The process environment: `process.env` (Node, Bun, Deno), else Vite's `import.meta.env` (Chromium). */
function environment(): Env {
	const nodeProcess = (globalThis as { process?: { env?: Env } }).process;
	return nodeProcess?.env ?? (import.meta as ImportMeta & { env?: Env }).env ?? {};
}

/** Whether this run is a CI run (`CI` set to anything but empty, `0` or `false`), where the corpus is required. */
export function isCi(env: Env = environment()): boolean {
	const value = env.CI?.trim().toLowerCase();
	return value !== undefined && value !== "" && value !== "0" && value !== "false";
}

function nodeModules(): {
	fs: typeof import("node:fs");
	url: typeof import("node:url");
	path: typeof import("node:path");
} {
	const nodeProcess = (globalThis as { process?: NodeJS.Process }).process;
	if (!nodeProcess?.getBuiltinModule) {
		throw new Error("test/support/corpus.ts: reading files needs process.getBuiltinModule (Node ≥ 20.16, Bun, Deno)");
	}
	return {
		fs: nodeProcess.getBuiltinModule("node:fs"),
		url: nodeProcess.getBuiltinModule("node:url"),
		path: nodeProcess.getBuiltinModule("node:path"),
	};
}

/** `PI_CORPUS_DIR`, or `shared/corpus` beside the repository (this file is `<repo>/test/support/corpus.ts`). */
export function corpusDir(env: Env = environment()): string {
	const { url, path } = nodeModules();
	if (env.PI_CORPUS_DIR) return path.resolve(env.PI_CORPUS_DIR);
	return url.fileURLToPath(new URL("../../../shared/corpus", import.meta.url));
}

function notFound(dir: string, file: CorpusFile): Error {
	return new Error(`the pi session corpus was not found at ${dir} (no ${file}); see test/support/corpus.ts`);
}

/** The corpus on disk (Node, Bun, Deno). */
export function diskCorpus(dir: string = corpusDir()): DiskCorpus {
	const { fs, path } = nodeModules();
	const at = (file: CorpusFile) => path.join(dir, file);
	const found = CORPUS_FILES.every((file) => fs.existsSync(at(file)));
	const readSync = (file: CorpusFile): Uint8Array => {
		if (!found) throw notFound(dir, file);
		return new Uint8Array(fs.readFileSync(at(file)));
	};
	return {
		dir,
		found,
		path: at,
		readSync,
		readTextSync: (file) => new TextDecoder().decode(readSync(file)),
		read: async (file) => readSync(file),
	};
}

/**
 * The corpus in Chromium, from `import.meta.glob(".../shared/corpus/*.jsonl", { query: "?raw", import: "default" })`
 * (lazy: a missing corpus is an empty glob, and bundles fine). `dir` is the glob's directory, for messages.
 */
export function globCorpus(modules: Record<string, () => Promise<unknown>>, dir: string): Corpus {
	const loaders = new Map(Object.entries(modules).map(([key, load]) => [key.slice(key.lastIndexOf("/") + 1), load]));
	const found = CORPUS_FILES.every((file) => loaders.has(file));
	return {
		dir,
		found,
		read: async (file) => {
			const load = loaders.get(file);
			if (!found || !load) throw notFound(dir, file);
			return new TextEncoder().encode((await load()) as string);
		},
	};
}

/** The corpus, or an error naming where it was looked for (benchmarks, scripts). */
export function requireCorpus(dir: string = corpusDir()): DiskCorpus {
	const corpus = diskCorpus(dir);
	if (!corpus.found) {
		const missing = CORPUS_FILES.filter((file) => !nodeModules().fs.existsSync(corpus.path(file)));
		throw new Error(
			`the pi session corpus is missing: ${missing.join(", ")} not found in ${dir}. ` +
				"Put the corpus there (see test/support/corpus.ts) or point PI_CORPUS_DIR at it.",
		);
	}
	return corpus;
}

/** The test framework calls `describeWithCorpus` needs: vitest, `bun:test` and `node:test` all fit. */
export interface CorpusTestApi {
	describe(name: string, fn: () => void): void;
	it(name: string, fn: () => Promise<void> | void): void;
	/** `describe.skip`: registers the group, its tests reported as skipped. */
	describeSkip(name: string, fn: () => void): void;
}

/** The title of a skipped corpus group, and of the failing test in CI. */
export function corpusMissingReason(corpus: Pick<Corpus, "dir">): string {
	return `corpus not found at ${corpus.dir}`;
}

/**
 * Register `body` (tests that read `corpus`) as the group `title` when the corpus is there. Otherwise:
 * in CI, one failing test saying the corpus is required; elsewhere the group is registered skipped, its
 * title ending "(corpus not found at <dir>)". `body` runs at registration either way, so it must read the
 * corpus only inside its tests.
 * @example
 * describeWithCorpus({ describe, it, describeSkip: describe.skip }, diskCorpus(), "corpus files", () => {
 *   it("migrates", async () => { const bytes = await corpus.read("pi-v1-large-session.jsonl"); … });
 * });
 */
export function describeWithCorpus(t: CorpusTestApi, corpus: Corpus, title: string, body: () => void): void {
	if (corpus.found) {
		t.describe(title, body);
	} else if (isCi()) {
		t.describe(title, () => {
			t.it(`the corpus is required in CI (CI is set): ${corpusMissingReason(corpus)}`, () => {
				throw new Error(
					`${corpusMissingReason(corpus)}: CI runs must test the real pi sessions too. Put the corpus ` +
						"there (../shared/corpus beside the repository, or set PI_CORPUS_DIR), or unset CI to skip these tests.",
				);
			});
		});
	} else {
		t.describeSkip(`${title} (${corpusMissingReason(corpus)})`, body);
	}
}
