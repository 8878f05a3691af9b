/**
 * pi 0.73.1 as a test oracle, with its types loosened to ours (the shapes are the same structurally).
 */
import * as piPackage from "@mariozechner/pi-coding-agent";
import type { FileEntry, SessionContext, SessionEntry } from "../../src/index.ts";

export const pi: {
	buildSessionContext: (
		entries: SessionEntry[],
		leafId?: string | null,
		byId?: Map<string, SessionEntry>,
	) => SessionContext;
	migrateSessionEntries: (entries: FileEntry[]) => void;
	parseSessionEntries: (content: string) => FileEntry[];
	SessionManager: typeof piPackage.SessionManager;
} = {
	buildSessionContext: piPackage.buildSessionContext as unknown as (
		entries: SessionEntry[],
		leafId?: string | null,
		byId?: Map<string, SessionEntry>,
	) => SessionContext,
	migrateSessionEntries: piPackage.migrateSessionEntries as unknown as (entries: FileEntry[]) => void,
	parseSessionEntries: piPackage.parseSessionEntries as unknown as (content: string) => FileEntry[],
	SessionManager: piPackage.SessionManager,
};

/**
 * pi's context with the one deliberate difference undone: old files' `content: null` becomes `[]` in
 * ours (pi passes `null` on to the model).
 */
export function piContextAsOurs(context: SessionContext): SessionContext {
	return {
		...context,
		messages: context.messages.map((message) =>
			"content" in message && message.content === null ? { ...message, content: [] } : message,
		),
	};
}
