/**
 * `show`: one entry, decoded from its line. `--json` prints the entry as the file holds it; otherwise its
 * kind, place in the tree and what it says.
 * @module
 */
import { fieldText, labelText } from "../../../src/entry-text.ts";
import { entryKind, entryPreview } from "../../../src/index.ts";
import { CliError } from "../errors.ts";
import { withSession } from "../read-session.ts";
import type { RunContext } from "../run-context.ts";

export async function showCommand(
	context: RunContext,
	name: string,
	entryId: string,
	options: { json: boolean },
): Promise<void> {
	await withSession(context, name, async (session) => {
		const entry = await session.getEntry(entryId);
		if (!entry) throw new CliError(`no entry ${entryId} in ${session.path}`);
		const { output } = context;
		if (options.json) {
			output.json(entry);
			return;
		}
		const { color } = output;
		const role = entry.type === "message" ? (entry.message as { role?: string } | undefined)?.role : undefined;
		const children = session.tree.structureOfChildren(entry.id).length;
		const label = session.tree.getLabel(entry.id);
		output.line(
			`${color.cyan(entry.id)} ${color.bold(entryKind({ type: entry.type, role }))}${label ? ` ${color.yellow(`[${labelText(label)}]`)}` : ""}`,
		);
		output.line(
			color.dim(
				`${fieldText(entry.timestamp) || "(no time)"} · parent ${entry.parentId ?? "none (a root)"} · ${children} ${children === 1 ? "child" : "children"}${entry.id === session.tree.getLeafId() ? " · the current leaf" : ""}`,
			),
		);
		output.line();
		output.line(entryPreview(entry));
	});
}
