/**
 * New session files made from existing sessions: pi's `forkFrom` (a whole other session's history) and
 * `createBranchedSession` (one branch of this session, continued in a new file).
 * @module
 */
import { SessionFormatError, SessionNotFoundError } from "./errors.ts";
import { encodeEntry } from "./jsonl.ts";
import { encodeChunks } from "./line-bytes.ts";
import { type ReadOptions, readSessionFile } from "./load.ts";
import { openSessionFile } from "./open-session.ts";
import { joinPath, sessionFileName, validateSessionId } from "./paths.ts";
import { emptyReport, SessionCore } from "./session-core.ts";
import { io, type Task } from "./storage.ts";
import { SessionTree } from "./tree.ts";

/**
 * pi's `forkFrom`: a new session in `sessionDir` for `targetCwd` holding the source's whole history,
 * `parentSession` pointing at the source. Written at once with an exclusive create; the source is only
 * read. The caller takes the new file's writer lock (nobody else knows its name before this returns).
 */
export function* forkFromTask(
	sourcePath: string,
	targetCwd: string,
	sessionDir: string,
	options: ReadOptions & { durable?: boolean; id?: string } = {},
): Task<SessionCore> {
	if (options.id !== undefined) validateSessionId(options.id);
	const source = yield* readSessionFile(sourcePath, options);
	if (!source) throw new SessionNotFoundError(sourcePath, `${sourcePath}: cannot fork: no such session file`);
	if ("empty" in source) {
		const where = { file: sourcePath, line: 1, byteOffset: 0, excerpt: "" };
		throw new SessionFormatError("cannot fork: the session file is empty", where);
	}
	const tree = SessionTree.create({ cwd: targetCwd, parentSession: sourcePath, id: options.id });
	const path = joinPath(sessionDir, sessionFileName(tree.getHeader().timestamp, tree.getSessionId()));
	yield* io("mkdir", sessionDir);
	const lines = [tree.getHeader(), ...source.records.slice(1)].map((record) => encodeEntry(record));
	yield* io("createExclusive", path, encodeChunks(lines), options.durable ?? false);
	return yield* openSessionFile(path, {
		sessionDir,
		maxLineBytes: options.maxLineBytes,
		maxEntries: options.maxEntries,
	});
}

/**
 * pi's `createBranchedSession`: a core holding the root → `leafId` path of `source` with its labels, its
 * header's `parentSession` pointing at the source's file, to continue in a new file next to it (none
 * for an in-memory session). Nothing is locked or written here: the caller locks the new file, writes
 * it (`persist`) and only then lets go of the source.
 */
export function branchIntoNewFile(source: SessionCore, leafId: string): SessionCore {
	// A lazily read source's entries stay deferred, decoded from the source's file until the new file is
	// written (then the new tree holds them whole: see `SessionCore.persist`).
	const tree = SessionTree.create({ cwd: source.cwd, parentSession: source.path }, source.tree.bodies);
	for (const entry of source.tree.forkEntries(leafId)) tree.addEntry(entry);
	const fileName = sessionFileName(tree.getHeader().timestamp, tree.getSessionId());
	return new SessionCore({
		tree,
		path: source.path && joinPath(source.sessionDir, fileName),
		sessionDir: source.sessionDir,
		readOnly: false,
		fileExists: false,
		report: emptyReport(true),
	});
}
