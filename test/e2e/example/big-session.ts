/**
 * A long session, as a pi user's months-long one: 60,000 entries, mostly one line of user and assistant
 * messages, with a short side branch every 10,000 entries (one ending in a compaction, one in a branch
 * summary) and a label. The last entry is on the main line, so it is the leaf pi opens at, and its context
 * is tens of thousands of messages long. Deterministic: ids are counters, the clock moves one second a step.
 */

export const BIG_ENTRIES = 60_000;

interface Built {
	text: string;
	/** Ids of the side branches' first entries, and their branch points. */
	sideBranches: { from: string; first: string }[];
	/** The id the label is put on. */
	labelled: string;
}

const usage = { input: 12, output: 30, cacheRead: 0, cacheWrite: 0, totalTokens: 42 };
const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };

/** The file's text. */
export function bigSession(cwd = "/home/dev/projects/huge"): Built {
	const start = Date.parse("2026-02-01T00:00:00.000Z");
	const lines: string[] = [
		JSON.stringify({
			type: "session",
			version: 3,
			id: "0b16b16b-0000-4000-8000-000000060000",
			timestamp: new Date(start).toISOString(),
			cwd,
		}),
	];
	let count = 0;
	const add = (parentId: string | null, fields: Record<string, unknown>): string => {
		count++;
		const id = count.toString(16).padStart(8, "0");
		const timestamp = new Date(start + count * 1000).toISOString();
		lines.push(JSON.stringify({ type: fields.type ?? "message", id, parentId, timestamp, ...fields }));
		return id;
	};
	const message = (parentId: string | null, turn: number) =>
		add(
			parentId,
			turn % 2 === 0
				? {
						type: "message",
						message: { role: "user", content: `Question ${turn}: what next?`, timestamp: start + turn },
					}
				: {
						type: "message",
						message: {
							role: "assistant",
							content: [{ type: "text", text: `Answer ${turn}.` }],
							api: "anthropic-messages",
							provider: "anthropic",
							model: "claude-sonnet-4-5",
							usage: { ...usage, cost },
							stopReason: "stop",
							timestamp: start + turn,
						},
					},
		);
	const sideBranches: Built["sideBranches"] = [];
	let leaf: string | null = null;
	let labelled = "";
	for (let turn = 0; count < BIG_ENTRIES; turn++) {
		const from = leaf;
		leaf = message(leaf, turn);
		if (turn === 100) labelled = leaf;
		if (count === 30_000) leaf = add(leaf, { type: "label", targetId: labelled, label: "turn 100" });
		if (from !== null && count % 10_000 === 5 && count + 6 < BIG_ENTRIES) {
			// A side branch off the entry before: three messages, then a compaction or a branch summary.
			const first = message(from, turn);
			const last = message(message(first, turn + 1), turn + 2);
			const n = sideBranches.length;
			if (n % 2 === 0) {
				add(last, { type: "compaction", summary: `Compacted side ${n}`, firstKeptEntryId: first, tokensBefore: 1000 });
			} else {
				add(last, { type: "branch_summary", fromId: last, summary: `Summary of side branch ${n}` });
			}
			sideBranches.push({ from, first });
		}
	}
	return { text: `${lines.join("\n")}\n`, sideBranches, labelled };
}
