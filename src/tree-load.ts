/**
 * Loading a session tree from records. Malformed input never hangs or throws; each case is resolved by one
 * deterministic rule and reported as a diagnostic:
 * - an entry without a string `id` is kept in `getEntries()` but not indexed;
 * - a duplicate `id`: the first entry keeps it, the later one is kept but not indexed;
 * - a self-parent, a missing parent or a parent that appears only later in the file (which is what every
 *   `parentId` cycle needs) makes the entry a root. A parent therefore always precedes its child, so the
 *   index can hold no cycle.
 * Only a missing header throws: then the records are no session at all.
 * @module
 */
import { type FileEntry, isSessionHeader, type SessionEntry, type SessionHeader } from "./entries.ts";
import { type Diagnostic, type DiagnosticReason, excerptOf, SessionFormatError } from "./jsonl.ts";
import type { IndexNode, TreeIndex } from "./tree-index.ts";

/** Where a record came from, for diagnostics. */
export interface RecordLocation {
	line: number;
	byteOffset: number;
	excerpt?: string;
}

/** The header that leads `records`; throws a `SessionFormatError` located at the first record otherwise. */
export function headerOfRecords(
	records: readonly FileEntry[],
	options: { file?: string; locations?: readonly RecordLocation[] },
): SessionHeader {
	const header = records[0];
	if (header && isSessionHeader(header)) return header;
	throw new SessionFormatError("first record is not a session header", {
		file: options.file,
		line: options.locations?.[0]?.line ?? 1,
		byteOffset: options.locations?.[0]?.byteOffset ?? 0,
		excerpt: header ? excerptOf(JSON.stringify(header)) : "",
	});
}

/** Indexes existing entries into a `TreeIndex`, applying the rules above, and keeps their diagnostics. */
export class TreeLoader {
	/** Problems found while indexing, in the order they were found. */
	readonly diagnostics: Diagnostic[] = [];
	readonly #index: TreeIndex;
	/** Diagnostics of entries whose parent was not (yet) seen, by that parent id. */
	readonly #waitingForParent = new Map<string, Diagnostic[]>();

	constructor(index: TreeIndex) {
		this.#index = index;
	}

	/** Index an entry without changing it; returns its diagnostic when it is malformed (it is kept either way). */
	add(entry: SessionEntry, location: RecordLocation | undefined): Diagnostic | undefined {
		const index = this.#index;
		const position = index.entries.length;
		index.entries.push(entry);

		const { id, parentId } = entry;
		if (typeof id !== "string" || id === "") {
			return this.#report(entry, position, location, "missing-id", "entry has no id; kept but not indexed");
		}
		const node = index.claim(entry);
		if (!node) {
			const message = `id ${id} is already used by an earlier entry; kept but not indexed`;
			return this.#report(entry, position, location, "duplicate-id", message);
		}
		let diagnostic: Diagnostic | undefined;
		let parent: IndexNode | null = null;
		if (parentId === id) {
			const message = `entry ${id} is its own parent; treated as a root`;
			diagnostic = this.#report(entry, position, location, "self-parent", message);
		} else if (typeof parentId === "string") {
			// Most entries follow the one before: the last one linked is then the parent, found without a lookup.
			const last = index.leaf;
			parent = last !== null && last.entry.id === parentId ? last : (index.nodes.get(parentId) ?? null);
			if (!parent) {
				const message = `parent ${parentId} of ${id} not found before it; treated as a root`;
				diagnostic = this.#report(entry, position, location, "missing-parent", message);
				const waiting = this.#waitingForParent.get(parentId);
				if (waiting) waiting.push(diagnostic);
				else this.#waitingForParent.set(parentId, [diagnostic]);
			}
		} else if (parentId !== null) {
			const message = `entry ${id} has no valid parentId; treated as a root`;
			diagnostic = this.#report(entry, position, location, "missing-parent", message);
		}
		// A well-formed file waits for nothing: skip the lookup then.
		if (this.#waitingForParent.size > 0) {
			const waiting = this.#waitingForParent.get(id);
			if (waiting) {
				for (const early of waiting) {
					early.reason = "forward-parent";
					early.message = `parent ${id} appears only later in the file (a cycle or reordered lines); treated as a root`;
				}
				this.#waitingForParent.delete(id);
			}
		}

		index.attach(node, parent);
		return diagnostic;
	}

	/** Record a diagnostic for the entry at `position`; without a location, its line is guessed from it. */
	#report(
		entry: SessionEntry,
		position: number,
		location: RecordLocation | undefined,
		reason: DiagnosticReason,
		message: string,
	): Diagnostic {
		const diagnostic: Diagnostic = {
			reason,
			line: location ? location.line : position + 2,
			byteOffset: location ? location.byteOffset : -1,
			excerpt: location?.excerpt ?? excerptOf(JSON.stringify(entry)),
			message,
		};
		this.diagnostics.push(diagnostic);
		return diagnostic;
	}
}
