/**
 * Whether two opens of one file read the same: a full open (`load: "full"`) and a lazy one. Used by the
 * lazy-open tests and the fuzz tests (test/lazy-open.test.ts, test/fuzz.test.ts).
 */
import { expect } from "vitest";
import type { Session } from "../../src/index.ts";

/** Every read of the two sessions agrees; `full` was opened with `load: "full"`. */
export async function expectSameReads(full: Session, lazy: Session): Promise<void> {
	const tree = full.tree;
	expect(lazy.lazy).toBe(true);
	expect(lazy.report).toEqual(full.report);
	expect(lazy.tree.getLeafId()).toBe(tree.getLeafId());
	expect(lazy.tree.getSessionName()).toBe(tree.getSessionName());
	expect([...lazy.tree.getLabels()]).toEqual([...tree.getLabels()]);
	expect(lazy.tree.size).toBe(tree.size);
	expect(await lazy.getEntries()).toEqual(tree.getEntries());
	expect(await lazy.getTree()).toEqual(tree.getTree());
	expect(lazy.outline()).toEqual(full.outline());
	const leaves: (string | null | undefined)[] = [undefined, null];
	for (const entry of tree.getEntries()) {
		const id = entry.id;
		if (tree.getEntry(id) !== entry) continue; // a duplicate id: the first keeps it
		leaves.push(id);
		expect(await lazy.getEntry(id)).toEqual(entry);
		expect(await lazy.getChildren(id)).toEqual(tree.getChildren(id));
		expect(await lazy.getBranch(id)).toEqual(tree.getBranch(id));
	}
	for (const leaf of leaves) {
		const projection = tree.buildSessionProjection(leaf);
		expect(await lazy.buildSessionContext(leaf)).toEqual(tree.buildSessionContext(leaf));
		expect(await lazy.buildSessionProjection(leaf)).toEqual(projection);
		expect(await lazy.buildContextEntries(leaf)).toEqual(tree.buildContextEntries(leaf));
		// Pages, against slices of the whole projection.
		const ids = projection.entries.flatMap(({ sourceEntry, messages }) => messages.map(() => sourceEntry.id));
		const total = projection.messages.length;
		for (const page of [{ last: 1 }, { last: 3 }, { offset: 1, limit: 2 }, { offset: total - 1 }, {}]) {
			const offset =
				"last" in page ? Math.max(0, total - (page.last as number)) : Math.min(total, Math.max(0, page.offset ?? 0));
			const end = "limit" in page ? offset + (page.limit as number) : undefined;
			const expected = {
				messages: projection.messages.slice(offset, end),
				entryIds: ids.slice(offset, end),
				total,
				offset,
				thinkingLevel: projection.thinkingLevel,
				model: projection.model,
			};
			expect(await lazy.contextPage({ leafId: leaf, ...page })).toEqual(expected);
			expect(await full.contextPage({ leafId: leaf, ...page })).toEqual(expected);
		}
	}
}
