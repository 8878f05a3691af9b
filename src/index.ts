/**
 * pi-session-tree: the session tree of the pi coding agent, runtime-neutral.
 *
 * The functions pi exports under the same names (`buildSessionContext`, `buildSessionProjection`,
 * `migrateSessionEntries`, `parseSessionEntries`, …) take and return the same data, so code written
 * against pi keeps working. Every public name is listed here; the modules' other exports are internals
 * of the adapters (`test/exports.test.ts` keeps this list deliberate).
 * @example
 * import { SessionTree } from "pi-session-tree";
 * const tree = SessionTree.create({ cwd: "/project" });
 * tree.appendMessage({ role: "user", content: "hello", timestamp: Date.now() });
 * console.log(tree.buildSessionContext().messages);
 * @module
 */

export type { CwdFilter, ListOptions, ListProgress, SessionInfo, SkippedLine, SkippedLines } from "./catalog.ts";
// Finding and listing sessions, and pi's layout on disk.
export { findByHeaderId, findById, findMostRecentSession, listAllSessions, listSessions } from "./catalog.ts";
export type { SessionContextSettings } from "./context.ts";
// The model context, by pi 1.6's rules.
export {
	buildContextEntries,
	buildSessionContext,
	buildSessionPath,
	buildSessionProjection,
	getLatestCompactionEntry,
	getSessionContextSettings,
	projectContextEntry,
	sessionEntryToContextMessages,
} from "./context.ts";
export type {
	ContextPage,
	ContextPageRequest,
	CreateSessionOptions,
	EngineOptions,
	OpenSessionOptions,
	OutlineNode,
	OutlinePageRequest,
	ProgressCallback,
	SessionHandle,
	SessionSummary,
} from "./engine.ts";
export { Engine, PathOutsideRootError, UnknownSessionError } from "./engine.ts";
export type * from "./entries.ts";
// The format: records, lines, migrations.
export { CURRENT_SESSION_VERSION, isSessionHeader } from "./entries.ts";
// Entries in words, for people (a navigator, a terminal, an export).
export { entryKind, entryPreview, messageText } from "./entry-text.ts";
export type { ErrorData } from "./error-data.ts";
export { InvalidArgumentError, type SessionFileChange, SessionFileChangedError } from "./errors.ts";
export type { FlatTreeNode } from "./flat-tree.ts";
export { flattenTree, unflattenTree } from "./flat-tree.ts";
export { createSessionId } from "./ids.ts";
export type { Diagnostic, DiagnosticReason, Line, LineLimits, ParseResult } from "./jsonl.ts";
export {
	DEFAULT_MAX_LINE_BYTES,
	encodeEntry,
	LineSplitter,
	lineStream,
	MAX_NESTING_DEPTH,
	parseSessionEntries,
	parseSessionText,
	SessionFormatError,
} from "./jsonl.ts";
// Where a listing catalog lives (the `catalog` option of the listings).
export { listingCatalogPath, listingCatalogPathForSessionsRoot } from "./listing-catalog.ts";
export type { ReadOptions } from "./load.ts";
export { HeaderTooLongError, SessionLimitError } from "./load.ts";
// Writer locks: the seam, and lock files as one implementation of it.
export type {
	BreakLockOptions,
	BreakLockResult,
	LockFileOptions,
	LockFiles,
	LockState,
	LockStatus,
} from "./lock-files.ts";
export { lockFiles, realmLockIdentity, SessionLockedError } from "./lock-files.ts";
export type { MigrationResult } from "./migrate.ts";
export { migrateSessionEntries, migrateToCurrentVersion } from "./migrate.ts";
export {
	defaultSessionDir,
	encodeCwd,
	InvalidSessionPathError,
	resolveAgentDir,
	sessionFileName,
	sessionsRoot,
	validateSessionId,
} from "./paths.ts";
export type { CreateOptions, Durability, LoadMode, OpenOptions, OpenReport, SessionOptions } from "./session.ts";
export { Session, SessionClosedError, SessionNotFoundError, SessionReadOnlyError } from "./session.ts";
export type {
	DirEntry,
	FileStat,
	Storage,
	StorageErrorCode,
	StorageOps,
	SyncStorage,
	Task,
} from "./storage.ts";
// The storage seam, for adapters of your own.
export { isStorageError, runTask, StorageError } from "./storage.ts";
export { replaySystemMessages } from "./system-message.ts";
export type { NewSessionOptions, RecordLocation, ResolvedLabel, SessionTreeOptions } from "./tree.ts";
// Sessions: in memory, bound to a file, and the engine a worker exposes.
export { EntryNotFoundError, EntryNotLoadedError, InvalidContextEditError, SessionTree } from "./tree.ts";
export type { BrokenLock, HeldLock, LockIdentity, LockOwner, SyncWriterLocks, WriterLocks } from "./writer-lock.ts";
