/**
 * pi 1.6.0 as a test oracle, with its types loosened to ours (the shapes are the same structurally).
 * The package root needs Node >= 22 and its "exports" map does not offer the subpath, so the session
 * manager's module is imported by file path; it runs on Node 20.
 */
import * as piModule from "../../node_modules/pi-coding-agent-1.6/dist/core/session-manager.js";
import type {
	AgentMessage,
	ContextEditEntry,
	FileEntry,
	SessionContext,
	SessionEntry,
	SessionHeader,
	SessionProjection,
	SessionTreeNode,
	Usage,
	UsageEntry,
} from "../../src/index.ts";

/** pi 1.6's `SessionManager`, typed with our record types. */
export interface Pi16SessionManager {
	appendMessage(message: unknown): string;
	appendThinkingLevelChange(thinkingLevel: string): string;
	appendModelChange(provider: string, modelId: string): string;
	/** Returns the entry (ours returns its id). */
	appendUsage(kind: string, provider: string, model: string, usage: Usage, note?: string): UsageEntry;
	appendCompaction(
		summary: string,
		firstKeptEntryId: string | null | undefined,
		tokensBefore: number,
		details?: unknown,
		fromHook?: boolean,
		usage?: Usage,
	): string;
	appendContextEdit(targetId: string, replacement: unknown): string;
	appendCustomEntry(customType: string, data?: unknown): string;
	appendCustomMessageEntry(customType: string, content: unknown, display: boolean, details?: unknown): string;
	appendLabelChange(targetId: string, label: string | undefined): string;
	appendSessionInfo(name: string): string;
	branch(branchFromId: string): void;
	resetLeaf(): void;
	branchWithSummary(
		branchFromId: string | null,
		summary: string,
		details?: unknown,
		fromHook?: boolean,
		usage?: Usage,
	): string;
	createBranchedSession(leafId: string): string | undefined;
	getLeafId(): string | null;
	getLeafEntry(): SessionEntry | undefined;
	getEntry(id: string): SessionEntry | undefined;
	getChildren(parentId: string): SessionEntry[];
	getLabel(id: string): string | undefined;
	getBranch(fromId?: string): SessionEntry[];
	getTree(): SessionTreeNode[];
	getEntries(): SessionEntry[];
	getEntryCount(): number;
	getHeader(): SessionHeader | null;
	getSessionName(): string | undefined;
	getSessionId(): string;
	getSessionFile(): string | undefined;
	buildSessionContext(): SessionContext;
	buildSessionProjection(): SessionProjection;
	buildContextEntries(): SessionEntry[];
}

type Build<T> = (entries: SessionEntry[], leafId?: string | null, byId?: Map<string, SessionEntry>) => T;

export const pi16: {
	CURRENT_SESSION_VERSION: number;
	buildSessionContext: Build<SessionContext>;
	buildSessionProjection: Build<SessionProjection>;
	buildContextEntries: Build<SessionEntry[]>;
	sessionEntryToContextMessages: (entry: SessionEntry) => AgentMessage[];
	projectContextEntry: (entry: SessionEntry, edit: ContextEditEntry | undefined) => AgentMessage[];
	getLatestCompactionEntry: (entries: SessionEntry[]) => SessionEntry | null;
	migrateSessionEntries: (entries: FileEntry[]) => void;
	parseSessionEntries: (content: string) => FileEntry[];
	loadEntriesFromFile: (path: string) => FileEntry[];
	SessionManager: {
		create(cwd: string, sessionDir?: string, options?: { id?: string; parentSession?: string }): Pi16SessionManager;
		open(path: string, sessionDir?: string, cwdOverride?: string): Pi16SessionManager;
		inMemory(
			cwd?: string,
			options?: { id?: string; parentSession?: string },
			entries?: FileEntry[],
		): Pi16SessionManager;
	};
} = {
	CURRENT_SESSION_VERSION: piModule.CURRENT_SESSION_VERSION,
	buildSessionContext: piModule.buildSessionContext as unknown as Build<SessionContext>,
	buildSessionProjection: piModule.buildSessionProjection as unknown as Build<SessionProjection>,
	buildContextEntries: piModule.buildContextEntries as unknown as Build<SessionEntry[]>,
	sessionEntryToContextMessages: piModule.sessionEntryToContextMessages as unknown as (
		entry: SessionEntry,
	) => AgentMessage[],
	projectContextEntry: piModule.projectContextEntry as unknown as (
		entry: SessionEntry,
		edit: ContextEditEntry | undefined,
	) => AgentMessage[],
	getLatestCompactionEntry: piModule.getLatestCompactionEntry as unknown as (
		entries: SessionEntry[],
	) => SessionEntry | null,
	migrateSessionEntries: piModule.migrateSessionEntries as unknown as (entries: FileEntry[]) => void,
	parseSessionEntries: piModule.parseSessionEntries as unknown as (content: string) => FileEntry[],
	loadEntriesFromFile: piModule.loadEntriesFromFile as unknown as (path: string) => FileEntry[],
	SessionManager: piModule.SessionManager as unknown as (typeof pi16)["SessionManager"],
};
