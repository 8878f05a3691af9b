/**
 * What the page must show, worked out in Node from the same bytes with the package's own tree (the
 * sources, not the build the page runs): a session file's tree, and the tail of a leaf's model context.
 */
import type { AgentMessage, SessionEntry, SessionHeader } from "../../../src/entries.ts";
import { parseSessionText } from "../../../src/jsonl.ts";
import { migrateToCurrentVersion } from "../../../src/migrate.ts";
import { SessionTree } from "../../../src/tree.ts";

const decoder = new TextDecoder();

/** The tree of a session file's bytes, migrated as opening migrates it. */
export function treeOf(bytes: Uint8Array): SessionTree {
	return SessionTree.fromRecords(migrateToCurrentVersion(parseSessionText(decoder.decode(bytes)).entries).entries);
}

/** The records of a session file's bytes, as written (header first). */
export function recordsOf(bytes: Uint8Array): [SessionHeader, ...SessionEntry[]] {
	return parseSessionText(decoder.decode(bytes)).entries as [SessionHeader, ...SessionEntry[]];
}

/** Message records of a file, as the session list counts them. */
export function messageCount(bytes: Uint8Array): number {
	return recordsOf(bytes).filter((record) => record.type === "message").length;
}

/** One message of a context as the page draws it: where it came from and its role. */
export interface ShownMessage {
	entryId: string;
	role: string;
}

/** The last `count` messages of `leafId`'s context, and how many it has. */
export function contextTail(tree: SessionTree, leafId: string, count: number): { total: number; tail: ShownMessage[] } {
	const projection = tree.buildSessionProjection(leafId);
	const shown = projection.entries.flatMap(({ sourceEntry, messages }) =>
		messages.map((message: AgentMessage) => ({ entryId: sourceEntry.id, role: message.role })),
	);
	return { total: shown.length, tail: shown.slice(Math.max(0, shown.length - count)) };
}

/** The ids root → `id`. */
export function pathIds(tree: SessionTree, id: string): string[] {
	return tree.getBranch(id).map((entry) => entry.id);
}
