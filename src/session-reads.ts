/**
 * A session's reads that decode what they hand out. On a whole tree they are its synchronous reads; on a
 * lazily read one they first decode, with ranged reads, the deferred entries the answer holds (only
 * those: the last page of a context decodes the entries of that page), then build the answer.
 * @module
 */

import { contextEntriesOfPath } from "./context.ts";
import {
	type ContextPage,
	type ContextPageRequest,
	contextPage,
	contextPageNeeds,
	type PagePlan,
	planPage,
} from "./engine-views.ts";
import type { SessionContext, SessionEntry, SessionProjection, SessionTreeNode } from "./entries.ts";
import { EntryNotLoadedError } from "./errors.ts";
import { runTask, type Storage } from "./storage.ts";
import type { SessionTree } from "./tree.ts";

/** A read: the entries it needs whole, and how it builds its answer from the tree once they are decoded. */
export interface DecodedRead<T> {
	needs(tree: SessionTree): Iterable<SessionEntry>;
	build(tree: SessionTree): T;
}

/** A tree that changed between decoding and building (an append moved the leaf) is read again, this often. */
const ATTEMPTS = 3;

/** Run `read` on the session's current tree (`currentTree()`: a branched session's tree changes). */
export async function readDecoded<T>(
	currentTree: () => SessionTree,
	storage: Storage,
	read: DecodedRead<T>,
): Promise<T> {
	for (let attempt = 1; ; attempt++) {
		const tree = currentTree();
		const bodies = tree.bodies;
		if (!bodies) return read.build(tree);
		const loaded = await runTask(bodies.load(read.needs(tree)), storage);
		try {
			return bodies.withLoaded(loaded, () => read.build(tree));
		} catch (error) {
			if (!(error instanceof EntryNotLoadedError) || attempt >= ATTEMPTS) throw error;
		}
	}
}

/** What the context of `leafId` needs whole: the entries in it. */
function inContext(leafId: string | null | undefined): (tree: SessionTree) => SessionEntry[] {
	return (tree) => contextEntriesOfPath(tree.structureOfPath(leafId));
}

/** The reads, by name, as `Session` offers them. */
export const reads = {
	entry: (id: string): DecodedRead<SessionEntry | undefined> => ({
		needs: (tree) => [tree.structureOf(id)].filter((entry) => entry !== undefined),
		build: (tree) => tree.getEntry(id),
	}),
	entriesById: (ids: readonly string[]): DecodedRead<(SessionEntry | undefined)[]> => ({
		needs: (tree) => ids.map((id) => tree.structureOf(id)).filter((entry) => entry !== undefined),
		build: (tree) => ids.map((id) => tree.getEntry(id)),
	}),
	children: (parentId: string): DecodedRead<SessionEntry[]> => ({
		needs: (tree) => tree.structureOfChildren(parentId),
		build: (tree) => tree.getChildren(parentId),
	}),
	branch: (fromId: string | undefined): DecodedRead<SessionEntry[]> => ({
		needs: (tree) => tree.structureOfBranch(fromId),
		build: (tree) => tree.getBranch(fromId),
	}),
	entries: (): DecodedRead<SessionEntry[]> => ({
		needs: (tree) => tree.structureBetween(0, tree.size),
		build: (tree) => tree.getEntries(),
	}),
	tree: (): DecodedRead<SessionTreeNode[]> => ({
		needs: (tree) => tree.structureBetween(0, tree.size),
		build: (tree) => tree.getTree(),
	}),
	context: (leafId: string | null | undefined): DecodedRead<SessionContext> => ({
		needs: inContext(leafId),
		build: (tree) => tree.buildSessionContext(leafId),
	}),
	projection: (leafId: string | null | undefined): DecodedRead<SessionProjection> => ({
		needs: inContext(leafId),
		build: (tree) => tree.buildSessionProjection(leafId),
	}),
	contextEntries: (leafId: string | null | undefined): DecodedRead<SessionEntry[]> => ({
		needs: inContext(leafId),
		build: (tree) => tree.buildContextEntries(leafId),
	}),
	contextPage: (page: ContextPageRequest): DecodedRead<ContextPage> => {
		// Planned once for both steps (a long path's plan costs), again only if the tree moved meanwhile.
		let planned: { tree: SessionTree; size: number; leaf: string | null; plan: PagePlan } | undefined;
		const plan = (tree: SessionTree): PagePlan => {
			const { size } = tree;
			const leaf = tree.getLeafId();
			if (planned?.tree !== tree || planned.size !== size || planned.leaf !== leaf) {
				planned = { tree, size, leaf, plan: planPage(tree, page) };
			}
			return planned.plan;
		};
		return { needs: (tree) => contextPageNeeds(plan(tree)), build: (tree) => contextPage(tree, plan(tree)) };
	},
};
