/**
 * One measurement of `bench/scale.ts`, in a process of its own: `node child.mjs '<task JSON>'` (the
 * benchmark bundles this file with esbuild, so no loader sits in the measured process). It does the task,
 * reads the time and `process.resourceUsage().maxRSS` right after the timed step, and only then computes
 * what the parent checks (entry count, leaf, digests of context messages or listing rows), so the check
 * never adds to a figure. The pis are imported by file path only when the task needs them.
 * @module
 */
import { createHash } from "node:crypto";
import {
	appendFileSync,
	closeSync,
	copyFileSync,
	existsSync,
	mkdirSync,
	openSync,
	readFileSync,
	readSync,
} from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import type { SessionManager as Pi073SessionManager } from "@mariozechner/pi-coding-agent";
import { createNodeStorage } from "../../adapters/node.ts";
import {
	type ContextPage,
	type ContextPageRequest,
	findMostRecentSession,
	type ListOptions,
	listAllSessions,
	runTask,
	Session,
	type SessionContext,
	type SessionInfo,
	type SessionTreeNode,
} from "../../src/index.ts";
import type { pi16 as Pi16 } from "../../test/support/pi16.ts";
import {
	type AnswerDigest,
	type ContextDigest,
	type ContextResult,
	type ForkResult,
	type ListPhase,
	type ListResult,
	type MigrateResult,
	type OpenResult,
	RESULT_MARKER,
	type RecentResult,
	type Result,
	type Sample,
	type Task,
	type TreeResult,
} from "./protocol.ts";

type Pi16Manager = (typeof Pi16)["SessionManager"];
interface Pi16Module {
	SessionManager: Pi16Manager & { listAll(): Promise<SessionInfo[]> };
	/** Exported "for testing"; `continueRecent` calls it, then opens the file it finds. */
	findMostRecentSession(sessionDir: string, cwd?: string): string | null;
}
interface Pi073Module {
	SessionManager: typeof Pi073SessionManager;
}

const importModule = async <T>(path: string): Promise<T> => (await import(pathToFileURL(path).href)) as T;

function peakRss(): number {
	return process.resourceUsage().maxRSS * 1024;
}

async function timed<T>(run: () => T | Promise<T>): Promise<{ value: T; sample: Sample }> {
	const start = performance.now();
	const value = await run();
	const ms = performance.now() - start;
	return { value, sample: { ms, peakRssBytes: peakRss() } };
}

function digestContext(context: Pick<SessionContext, "messages" | "thinkingLevel" | "model">): ContextDigest {
	const hash = createHash("sha256");
	hash.update(`${context.thinkingLevel}\n${JSON.stringify(context.model ?? null)}\n`);
	for (const message of context.messages) hash.update(`${JSON.stringify(message)}\n`);
	return { messages: context.messages.length, digest: hash.digest("hex").slice(0, 32) };
}

function lastMessages(context: SessionContext, count: number): SessionContext {
	return { ...context, messages: context.messages.slice(-count) };
}

/** Digest the leaf's context into `result`; a failure to build it is reported, not thrown (the open's figures stand). */
function checkContext(result: OpenResult, build: () => SessionContext): void {
	try {
		const context = build();
		result.context = digestContext(context);
		result.last50 = digestContext(lastMessages(context, 50));
	} catch (error) {
		result.checkError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
	}
}

/** The header and every entry as JSON, in file order (the floor's records, pi's `getEntries()`, ours). */
function digestEntries(header: unknown, entries: readonly unknown[]): AnswerDigest {
	const hash = createHash("sha256").update(`${JSON.stringify(header)}\n`);
	for (const entry of entries) hash.update(`${JSON.stringify(entry)}\n`);
	return { count: entries.length, digest: hash.digest("hex").slice(0, 32) };
}

/** The whole of an open (with `check`): every entry and the header, each entry's label in file order, the name. */
function digestWhole(
	header: unknown,
	entries: readonly { id?: string }[],
	labelOf: (id: string) => string | undefined,
	name: string | undefined,
): NonNullable<OpenResult["whole"]> {
	const hash = createHash("sha256");
	let count = 0;
	for (const { id } of entries) {
		const label = typeof id === "string" ? labelOf(id) : undefined;
		if (label === undefined) continue;
		count++;
		hash.update(`${id} ${JSON.stringify(label)}\n`);
	}
	const labels = { count, digest: hash.digest("hex").slice(0, 32) };
	return { entries: digestEntries(header, entries), labels, name: name ?? null };
}

const CHUNK_BYTES = 16 << 20;

/** Ranged reads of the file; `onChunk` gets each chunk as read (the buffer is reused). */
function readChunks(path: string, onChunk: (chunk: Buffer) => void): void {
	const fd = openSync(path, "r");
	try {
		const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
		for (let read = readSync(fd, buffer, 0, CHUNK_BYTES, null); read > 0; ) {
			onChunk(buffer.subarray(0, read));
			read = readSync(fd, buffer, 0, CHUNK_BYTES, null);
		}
	} finally {
		closeSync(fd);
	}
}

/** The floor of a lazy index: read every byte and count the lines. */
function floorScan(path: string): number {
	let lines = 0;
	readChunks(path, (chunk) => {
		for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
	});
	return lines;
}

/** The floor of a full load: read in ranges, `JSON.parse` every line, keep every object. */
function floorParse(path: string): unknown[] {
	const records: unknown[] = [];
	let carry: Buffer | undefined;
	readChunks(path, (chunk) => {
		let start = 0;
		let end = chunk.indexOf(10);
		if (carry) {
			if (end < 0) {
				carry = Buffer.concat([carry, chunk]);
				return;
			}
			records.push(JSON.parse(Buffer.concat([carry, chunk.subarray(0, end)]).toString("utf8")));
			carry = undefined;
			start = end + 1;
			end = chunk.indexOf(10, start);
		}
		for (; end >= 0; end = chunk.indexOf(10, start)) {
			if (end > start) records.push(JSON.parse(chunk.toString("utf8", start, end)));
			start = end + 1;
		}
		// The chunk's buffer is reused: keep a copy of the unfinished line.
		if (start < chunk.length) carry = Buffer.from(chunk.subarray(start));
	});
	if (carry && carry.length > 0) records.push(JSON.parse(carry.toString("utf8")));
	return records;
}

async function open(task: Extract<Task, { kind: "open" }>): Promise<OpenResult> {
	const { impl, path, check } = task;
	if (impl === "floor-scan" || impl === "floor-parse") {
		const rssBeforeBytes = process.memoryUsage().rss;
		if (impl === "floor-scan") {
			const { value: lines, sample } = await timed(() => floorScan(path));
			return { kind: "open", rssBeforeBytes, open: sample, entries: lines - 1, leafId: null };
		}
		const { value: records, sample } = await timed(() => floorParse(path));
		const last = records[records.length - 1] as { id?: string } | undefined;
		const result: OpenResult = {
			kind: "open",
			rssBeforeBytes,
			open: sample,
			entries: records.length - 1,
			leafId: last?.id ?? null,
		};
		// The floor has no labels or name: its records alone are checked.
		if (check) result.whole = { entries: digestEntries(records[0], records.slice(1)) };
		return result;
	}
	if (impl === "pi16" || impl === "pi073") {
		const { SessionManager } =
			impl === "pi16"
				? await importModule<Pi16Module>(task.modules.pi16)
				: await importModule<Pi073Module>(task.modules.pi073);
		const rssBeforeBytes = process.memoryUsage().rss;
		const { value: manager, sample } = await timed(() => SessionManager.open(path));
		const result: OpenResult = {
			kind: "open",
			rssBeforeBytes,
			open: sample,
			entries:
				impl === "pi16" ? (manager as ReturnType<Pi16Manager["open"]>).getEntryCount() : manager.getEntries().length,
			leafId: manager.getLeafId(),
		};
		if (impl === "pi16") {
			// pi 1.6.0's way to the leaf's last 50 messages: the whole context, then its tail (timed every round).
			try {
				const { value, sample: pageSample } = await timed(() => {
					const context = manager.buildSessionContext() as unknown as SessionContext;
					return { context, last: lastMessages(context, 50) };
				});
				result.page = pageSample;
				if (check) {
					result.context = digestContext(value.context);
					result.last50 = digestContext(value.last);
					// Where the page starts and the entry of each of its messages, as ours' page says them.
					const { entries } = (manager as ReturnType<Pi16Manager["open"]>).buildSessionProjection();
					const ids = entries.flatMap((entry) => entry.messages.map(() => entry.sourceEntry.id));
					result.last50Place = JSON.stringify([Math.max(0, ids.length - 50), ids.slice(-50)]);
				}
			} catch (error) {
				result.checkError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
			}
		} else if (check) checkContext(result, () => manager.buildSessionContext() as unknown as SessionContext);
		if (check) {
			const label = (id: string) => manager.getLabel(id);
			result.whole = digestWhole(manager.getHeader(), manager.getEntries(), label, manager.getSessionName());
		}
		return result;
	}
	const storage = createNodeStorage();
	const rssBeforeBytes = process.memoryUsage().rss;
	const load = impl === "ours-full" ? "full" : "lazy";
	const { value: session, sample } = await timed(() => Session.open(storage, path, { readOnly: true, load }));
	const result: OpenResult = {
		kind: "open",
		rssBeforeBytes,
		open: sample,
		entries: session.tree.getEntryCount(),
		leafId: session.tree.getLeafId(),
	};
	if (impl === "ours-lazy") {
		// The paged read of a lazily opened session; measured only once `Session` has it.
		const contextPage = (session as unknown as { contextPage?: (page: ContextPageRequest) => Promise<ContextPage> })
			.contextPage;
		result.pageSupported = typeof contextPage === "function";
		if (typeof contextPage === "function") {
			const { value: page, sample: pageSample } = await timed(() => contextPage.call(session, { last: 50 }));
			result.page = pageSample;
			result.pageTotal = page.total;
			result.last50 = digestContext(page);
			result.last50Place = JSON.stringify([page.offset, page.entryIds]);
		}
	} else if (check) checkContext(result, () => session.tree.buildSessionContext());
	// Every entry, after the timings: on a lazy open this decodes every body.
	if (check) {
		const { tree } = session;
		const label = (id: string) => tree.getLabel(id);
		result.whole = digestWhole(session.header, await session.getEntries(), label, tree.getSessionName());
	}
	await session.close();
	return result;
}

async function context(task: Extract<Task, { kind: "context" }>): Promise<ContextResult> {
	let build: () => SessionContext;
	let leafId: string | null;
	let openSample: Sample;
	if (task.impl === "pi16") {
		const { SessionManager } = await importModule<Pi16Module>(task.modules.pi16);
		const { value: manager, sample } = await timed(() => SessionManager.open(task.path));
		openSample = sample;
		leafId = manager.getLeafId();
		build = () => manager.buildSessionContext();
	} else {
		const storage = createNodeStorage();
		const { value: session, sample } = await timed(() =>
			Session.open(storage, task.path, { readOnly: true, load: "full" }),
		);
		openSample = sample;
		leafId = session.tree.getLeafId();
		build = () => session.tree.buildSessionContext();
	}
	const first = await timed(build);
	const repeatMs: number[] = [];
	const repeatDigests: string[] = [];
	for (let i = 0; i < task.repeats; i++) {
		const { value, sample } = await timed(build);
		repeatMs.push(sample.ms);
		// Digested at once, untimed: five contexts kept would weigh on the peak RSS.
		if (task.check) repeatDigests.push(digestContext(value).digest);
	}
	const peakRssBytes = peakRss();
	const result: ContextResult = {
		kind: "context",
		open: openSample,
		leafId,
		firstMs: first.sample.ms,
		repeatMs,
		peakRssBytes,
		context: digestContext(first.value),
	};
	if (task.check) result.repeatDigests = repeatDigests;
	return result;
}

function listingPhase(sample: Sample, infos: readonly SessionInfo[]): ListPhase {
	const rows = infos.map((info) =>
		createHash("sha256")
			.update(
				JSON.stringify([
					info.path,
					info.id,
					info.cwd,
					info.name ?? null,
					info.parentSessionPath ?? null,
					info.created.toISOString(),
					info.modified.toISOString(),
					info.messageCount,
					info.firstMessage,
					info.allMessagesText,
				]),
			)
			.digest("hex")
			.slice(0, 16),
	);
	const digest = createHash("sha256").update(rows.join("\n")).digest("hex").slice(0, 32);
	return { ...sample, sessions: infos.length, digest, rows };
}

async function list(task: Extract<Task, { kind: "list" }>): Promise<ListResult> {
	let listAll: () => Promise<SessionInfo[]>;
	if (task.impl === "pi16") {
		// pi 1.6 lists `<PI_CODING_AGENT_DIR>/sessions`: the parent sets the variable for this child.
		const { SessionManager } = await importModule<Pi16Module>(task.modules.pi16);
		listAll = () => SessionManager.listAll();
	} else {
		const storage = createNodeStorage();
		// The persistent catalog option, when `ListOptions` has it; an older `listAllSessions` ignores it.
		const options: ListOptions & { catalog?: string } =
			task.impl === "ours-catalog" ? { catalog: task.catalogPath } : {};
		listAll = () => listAllSessions(storage, task.sessionsRoot, options);
	}
	const rssBeforeBytes = process.memoryUsage().rss;
	const phases: ListPhase[] = [];
	for (let phase = 0; phase < 3; phase++) {
		if (phase === 2) for (const { path, line } of task.appends) appendFileSync(path, line);
		// Every row's text read inside the timing: ours decodes it when first read, pi has built it already.
		const { value, sample } = await timed(async () => {
			const infos = await listAll();
			let characters = 0;
			for (const info of infos) characters += info.allMessagesText.length;
			if (characters < 0) throw new Error("unreachable");
			return infos;
		});
		phases.push(listingPhase(sample, value));
	}
	const result: ListResult = { kind: "list", rssBeforeBytes, phases };
	if (task.impl === "ours-catalog")
		result.catalogWritten = task.catalogPath !== undefined && existsSync(task.catalogPath);
	return result;
}

const describeError = (error: unknown): string =>
	error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/** Pre-order over the roots: each node's entry as JSON, label, label time and number of children (the shape). */
function digestTree(roots: readonly SessionTreeNode[]): AnswerDigest {
	const hash = createHash("sha256");
	let count = 0;
	const stack = [...roots].reverse();
	for (let node = stack.pop(); node; node = stack.pop()) {
		count++;
		hash.update(
			`${JSON.stringify(node.entry)} ${node.label ?? ""} ${node.labelTimestamp ?? ""} ${node.children.length}\n`,
		);
		for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as SessionTreeNode);
	}
	return { count, digest: hash.digest("hex").slice(0, 32) };
}

async function tree(task: Extract<Task, { kind: "tree" }>): Promise<TreeResult> {
	let getTree: () => SessionTreeNode[];
	let openSample: Sample;
	if (task.impl === "pi16") {
		const { SessionManager } = await importModule<Pi16Module>(task.modules.pi16);
		const { value: manager, sample } = await timed(() => SessionManager.open(task.path));
		openSample = sample;
		getTree = () => manager.getTree();
	} else {
		const storage = createNodeStorage();
		const { value: session, sample } = await timed(() =>
			Session.open(storage, task.path, { readOnly: true, load: "full" }),
		);
		openSample = sample;
		getTree = () => session.tree.getTree();
	}
	const { value: roots, sample } = await timed(getTree);
	return { kind: "tree", open: openSample, tree: sample, answer: digestTree(roots) };
}

async function recent(task: Extract<Task, { kind: "recent" }>): Promise<RecentResult> {
	if (task.impl === "pi16") {
		const pi = await importModule<Pi16Module>(task.modules.pi16);
		const { value, sample } = await timed(() => pi.findMostRecentSession(task.dir));
		return { kind: "recent", sample, path: value };
	}
	const storage = createNodeStorage();
	const { value, sample } = await timed(() => runTask(findMostRecentSession(task.dir), storage));
	return { kind: "recent", sample, path: value };
}

/** A working copy of `path` in `workDir` (untimed). */
function copyInto(path: string, workDir: string): string {
	mkdirSync(workDir, { recursive: true });
	const copy = join(workDir, basename(path));
	copyFileSync(path, copy);
	return copy;
}

/** The JSON lines of a file, parsed. */
function records(path: string): Record<string, unknown>[] {
	return readFileSync(path, "utf8")
		.split("\n")
		.filter((line) => line.trim() !== "")
		.map((line) => JSON.parse(line) as Record<string, unknown>);
}

function digestLines(lines: readonly string[]): AnswerDigest {
	const hash = createHash("sha256");
	for (const line of lines) hash.update(`${line}\n`);
	return { count: lines.length - 1, digest: hash.digest("hex").slice(0, 32) };
}

/**
 * A branched file as both must write it: the header without its fresh id and timestamp (its
 * `parentSession` by file name: each wrote next to its own copy), the entries as written, except that
 * the label entries the fork made get ids numbered in order (both draw them at random).
 */
function digestForked(path: string): AnswerDigest {
	const labels = new Map<string, string>();
	const lines = records(path).map((record) => {
		if (record.type === "session") {
			const { id: _id, timestamp: _timestamp, parentSession, ...rest } = record;
			return JSON.stringify([rest, typeof parentSession === "string" ? basename(parentSession) : parentSession]);
		}
		if (record.type === "label" && typeof record.id === "string") labels.set(record.id, `label-${labels.size}`);
		const parentId = typeof record.parentId === "string" ? (labels.get(record.parentId) ?? record.parentId) : null;
		return JSON.stringify({ ...record, id: labels.get(record.id as string) ?? record.id, parentId });
	});
	return digestLines(lines);
}

/** A migrated file with every id (both draw them at random) replaced by the index of its entry. */
function digestMigrated(path: string): AnswerDigest {
	// A reference is to the latest entry before it with that id: pi 1.6.0's migration can draw an id it
	// already gave (seen in 1 of 5 migrations of the 59,291 entries of v1-of-linear-100mb), and a map of the
	// whole file would send the earlier one's children to the later one. Own ids are replaced last.
	const seen = new Map<unknown, string>();
	const lines = records(path).map((record, at) => {
		const copy: Record<string, unknown> = { ...record };
		if (record.type === "session") return JSON.stringify(copy);
		for (const key of ["parentId", "firstKeptEntryId", "targetId", "fromId"]) {
			if (typeof copy[key] === "string") copy[key] = seen.get(copy[key]) ?? copy[key];
		}
		seen.set(record.id, `#${at}`);
		copy.id = `#${at}`;
		return JSON.stringify(copy);
	});
	return digestLines(lines);
}

async function fork(task: Extract<Task, { kind: "fork" }>): Promise<ForkResult> {
	const copy = copyInto(task.path, task.workDir);
	let openSample: Sample;
	let forkSample: Sample;
	let forked: string | undefined;
	/** The file the session writes to after the fork (both go on in the new one). */
	let after: string | undefined;
	if (task.impl === "pi16") {
		const { SessionManager } = await importModule<Pi16Module>(task.modules.pi16);
		const opened = await timed(() => SessionManager.open(copy));
		openSample = opened.sample;
		const done = await timed(() => opened.value.createBranchedSession(task.leafId));
		forkSample = done.sample;
		forked = done.value;
		after = opened.value.getSessionFile();
	} else {
		const storage = createNodeStorage();
		const opened = await timed(() => Session.open(storage, copy));
		openSample = opened.sample;
		const done = await timed(() => opened.value.createBranchedSession(task.leafId));
		forkSample = done.sample;
		forked = done.value;
		after = opened.value.path;
		await opened.value.close();
	}
	const result: ForkResult = { kind: "fork", open: openSample, fork: forkSample, answer: { count: 0, digest: "" } };
	try {
		if (!forked) throw new Error("createBranchedSession returned no file");
		result.answer = digestForked(forked);
		// The path returned, told by its directory under the work directory (its name holds a fresh id and time).
		result.place = JSON.stringify([relative(task.workDir, dirname(forked)), after === forked]);
	} catch (error) {
		result.checkError = describeError(error);
	}
	return result;
}

async function migrate(task: Extract<Task, { kind: "migrate" }>): Promise<MigrateResult> {
	const copy = copyInto(task.path, task.workDir);
	let sample: Sample;
	let backupPath: string | undefined;
	if (task.impl === "pi16") {
		const { SessionManager } = await importModule<Pi16Module>(task.modules.pi16);
		sample = (await timed(() => SessionManager.open(copy))).sample;
	} else {
		const storage = createNodeStorage();
		const opened = await timed(() => Session.open(storage, copy));
		sample = opened.sample;
		backupPath = opened.value.report.migratedFrom?.backupPath;
		await opened.value.close();
	}
	const result: MigrateResult = { kind: "migrate", migrate: sample, answer: { count: 0, digest: "" } };
	if (backupPath !== undefined) result.backupPath = backupPath;
	try {
		result.answer = digestMigrated(copy);
		if (backupPath !== undefined) result.backupIntact = readFileSync(backupPath).equals(readFileSync(task.path));
	} catch (error) {
		result.checkError = describeError(error);
	}
	return result;
}

async function run(task: Task): Promise<Result> {
	switch (task.kind) {
		case "open":
			return open(task);
		case "context":
			return context(task);
		case "list":
			return list(task);
		case "tree":
			return tree(task);
		case "recent":
			return recent(task);
		case "fork":
			return fork(task);
		case "migrate":
			return migrate(task);
	}
}

const task = JSON.parse(process.argv[2] ?? "null") as Task | null;
if (!task) throw new Error("usage: node child.mjs '<task JSON>' (bench/scale.ts starts it)");
const result = await run(task);
process.stdout.write(`${RESULT_MARKER}${JSON.stringify(result)}\n`, () => process.exit(0));
