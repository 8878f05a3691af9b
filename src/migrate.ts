/**
 * Format migrations v1 → v2 → v3 as pure functions: they return new records and never touch their input.
 * - v1 → v2: entries get `id`/`parentId` (a linear chain); compaction `firstKeptEntryIndex` (an index into
 *   the file's records, header included) becomes `firstKeptEntryId` when it names the compaction itself or
 *   an entry before it (as pi 1.6.0; otherwise none, with a warning).
 * - v2 → v3: message role `hookMessage` becomes `custom`.
 * @module
 */
import { CURRENT_SESSION_VERSION, type FileEntry, isSessionHeader, type SessionHeader } from "./entries.ts";
import { createEntryId, seededEntryIds } from "./ids.ts";

/** What a migration did. */
export interface MigrationResult {
	entries: FileEntry[];
	/** True when any record changed (the file then needs rewriting). */
	changed: boolean;
	/** Version found in the header (1 when absent). */
	fromVersion: number;
	/** Problems that could not be migrated faithfully, such as a compaction index that points nowhere. */
	warnings: string[];
}

type Record_ = { [field: string]: unknown; type: string };

/**
 * The version a file declares: v1 files have none. As in pi, a version that is not a number is read as
 * one (`"3"` is 3), and one that is no number at all is not migrated (it is taken as current).
 */
export function sessionVersion(entries: readonly FileEntry[]): number {
	const header = entries.find(isSessionHeader) as SessionHeader | undefined;
	const declared: unknown = header?.version;
	if (declared === undefined || declared === null) return 1;
	const version = Number(declared);
	return Number.isNaN(version) ? CURRENT_SESSION_VERSION : version;
}

/** v1 → v2: a linear chain of fresh ids; compaction indices become ids. */
export function migrateV1ToV2(
	entries: readonly FileEntry[],
	newId: (taken: ReadonlySet<string>) => string = createEntryId,
): { entries: FileEntry[]; warnings: string[] } {
	const taken = new Set<string>();
	const idByIndex: (string | undefined)[] = entries.map((entry) => {
		if (isSessionHeader(entry)) return undefined;
		const id = newId(taken);
		taken.add(id);
		return id;
	});
	const warnings: string[] = [];
	let previousId: string | null = null;
	const migrated = entries.map((entry, index): FileEntry => {
		if (isSessionHeader(entry)) return { ...entry, version: 2 };
		const id = idByIndex[index] as string;
		const parentId = previousId;
		previousId = id;
		const { firstKeptEntryIndex, ...rest } = entry as Record_;
		if (entry.type !== "compaction" || typeof firstKeptEntryIndex !== "number") {
			return { ...entry, id, parentId } as FileEntry;
		}
		// As pi 1.6.0: only the compaction itself or an entry before it (a later one has no id yet when pi's
		// migration reaches the compaction, and the compaction is left keeping nothing named).
		const firstKeptEntryId = firstKeptEntryIndex <= index ? idByIndex[firstKeptEntryIndex] : undefined;
		if (firstKeptEntryId === undefined) {
			const what = firstKeptEntryIndex > index ? "a later record" : "not an entry";
			warnings.push(`compaction at record ${index} keeps from record ${firstKeptEntryIndex}, which is ${what}`);
			return { ...rest, id, parentId } as FileEntry;
		}
		return { ...rest, id, parentId, firstKeptEntryId } as FileEntry;
	});
	return { entries: migrated, warnings };
}

/** v2 → v3: message role `hookMessage` becomes `custom`. */
export function migrateV2ToV3(entries: readonly FileEntry[]): FileEntry[] {
	return entries.map((entry): FileEntry => {
		if (isSessionHeader(entry)) return { ...entry, version: 3 };
		const message = entry.type === "message" ? (entry as Record_).message : undefined;
		if (typeof message === "object" && message !== null && (message as Record_).role === "hookMessage") {
			return { ...entry, message: { ...message, role: "custom" } } as FileEntry;
		}
		return entry;
	});
}

/**
 * Bring records to the current version. Idempotent: current records come back unchanged with `changed: false`.
 * @example
 * const { entries, changed } = migrateToCurrentVersion(parseSessionEntries(text));
 */
export function migrateToCurrentVersion(entries: readonly FileEntry[]): MigrationResult {
	const fromVersion = sessionVersion(entries);
	let current = entries as FileEntry[];
	const warnings: string[] = [];
	if (fromVersion < 2) {
		// Ids from the header, so that every read of a v1 file (read-only ones write nothing back) names its
		// entries alike, and migrating it on disk keeps those names.
		const header = current.find(isSessionHeader);
		const seed = header ? `${String(header.id)}|${String(header.timestamp)}` : "";
		const step = migrateV1ToV2(current, seededEntryIds(seed));
		current = step.entries;
		warnings.push(...step.warnings);
	}
	if (fromVersion < 3) current = migrateV2ToV3(current);
	return { entries: current, changed: fromVersion < CURRENT_SESSION_VERSION, fromVersion, warnings };
}

/**
 * pi's `migrateSessionEntries`: migrates the array in place (pi's contract) and says whether anything changed.
 * @example
 * const entries = parseSessionEntries(text);
 * if (migrateSessionEntries(entries)) console.log("migrated to v3");
 */
export function migrateSessionEntries(entries: FileEntry[]): boolean {
	const result = migrateToCurrentVersion(entries);
	// Migration keeps the record count, so records are replaced slot by slot (no huge spread).
	result.entries.forEach((entry, index) => {
		entries[index] = entry;
	});
	return result.changed;
}
