/**
 * Labels and the session name: what label and `session_info` entries resolve to, and how labels are
 * carried into a fork (pi's `createBranchedSession`).
 * @module
 */
import type { CompactionEntry, LabelEntry, SessionEntry } from "./entries.ts";
import { createEntryId } from "./ids.ts";

/** A label as resolved from the latest label entry for its target. */
export interface ResolvedLabel {
	label: string;
	timestamp: string;
}

/**
 * Session names are one-line titles, as pi 1.6 writes them: each run of line breaks becomes one space,
 * surrounding space is trimmed, and an empty name (or one that is not a string) means none.
 */
export function normalizeSessionName(name: unknown): string | undefined {
	return typeof name === "string" ? name.replace(/[\r\n]+/g, " ").trim() || undefined : undefined;
}

/** Apply a label entry: the latest one for a target wins, and an empty label clears it. */
export function applyLabel(labels: Map<string, ResolvedLabel>, entry: LabelEntry): void {
	if (entry.label) labels.set(entry.targetId, { label: entry.label, timestamp: entry.timestamp });
	else labels.delete(entry.targetId);
}

/**
 * The entries of a fork of `branch` (a root → leaf path): the path without label entries, then one
 * label entry for each of `labels` whose target is on that path, chained after it and carrying the
 * label's own timestamp. The source entries are not changed.
 */
export function forkOfBranch(
	branch: readonly SessionEntry[],
	labels: ReadonlyMap<string, ResolvedLabel>,
): SessionEntry[] {
	// An entry whose parent was a dropped label is re-linked to the entry before it, so the fork stays
	// one chain; a compaction that kept from a dropped label keeps from the entry after it (as pi 1.6).
	const labelsBefore: string[] = [];
	const keptFrom = new Map<string, string>();
	const path: SessionEntry[] = [];
	for (const entry of branch) {
		if (entry.type === "label") {
			labelsBefore.push(entry.id);
			continue;
		}
		for (const labelId of labelsBefore.splice(0)) keptFrom.set(labelId, entry.id);
		const parentId = path[path.length - 1]?.id ?? null;
		const firstKept = entry.type === "compaction" ? keptFrom.get(entry.firstKeptEntryId) : undefined;
		if (firstKept !== undefined) path.push({ ...entry, parentId, firstKeptEntryId: firstKept } as CompactionEntry);
		else path.push(entry.parentId === parentId ? entry : { ...entry, parentId });
	}
	const onPath = new Set(path.map((entry) => entry.id));
	const forked: LabelEntry[] = [];
	let parentId = path[path.length - 1]?.id ?? null;
	for (const [targetId, { label, timestamp }] of labels) {
		if (!onPath.has(targetId)) continue;
		const id = createEntryId(onPath);
		onPath.add(id);
		forked.push({ type: "label", id, parentId, timestamp, targetId, label });
		parentId = id;
	}
	return [...path, ...forked];
}
