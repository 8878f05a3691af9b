/**
 * The tree's appends, by name. Their signatures are written once, on `SessionTree`; `Session`, `Engine`
 * and the pi-compatible facade derive theirs from it (with a handle first, or a promise of the id).
 * @module
 */

/** Methods of `SessionTree` that append one entry and return its id, in the order the docs list them. */
export const APPEND_METHODS = [
	"appendMessage",
	"appendThinkingLevelChange",
	"appendModelChange",
	"appendCompaction",
	"appendUsage",
	"appendContextEdit",
	"appendCustomEntry",
	"appendCustomMessageEntry",
	"appendSessionInfo",
	"appendLabelChange",
	"branchWithSummary",
] as const;

export type AppendMethod = (typeof APPEND_METHODS)[number];
