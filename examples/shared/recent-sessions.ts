/**
 * The part of `examples/bun/recent.ts` and `examples/deno/recent.ts` that does not depend on the runtime:
 * the most recent pi sessions under a sessions root, and the size of the model context of each one's
 * current leaf, read without changing anything.
 *
 * Strictly read-only: the listing is given no catalog (so none is written), and each session is opened
 * with `readOnly: true` (no writer lock taken, nothing repaired or migrated on disk) and `load: "lazy"`
 * (the structure is indexed; only the bodies of the context's entries are decoded, a page at a time).
 * @module
 */
import { fileURLToPath } from "node:url";
import { listAllSessions, messageText, Session, type SessionInfo } from "pi-session-tree";
import { createNodeStorage } from "pi-session-tree/node"; // node:fs, which Bun and Deno both provide

export interface RecentSession {
	info: SessionInfo;
	/** Entries in the file (every branch). */
	entries: number;
	/** Messages the model would be sent from the current leaf. */
	messages: number;
	/** Characters of their text (tool calls as their arguments' JSON, images as a short placeholder). */
	characters: number;
	/** What opening found (an old version, damaged lines), or why the session could not be read. */
	notes: string[];
}

/** The sample sessions bundled with the package (in its `dist/`, beside the module the package root is). */
export function samplesRoot(): string {
	return fileURLToPath(new URL("./samples/sessions", import.meta.resolve("pi-session-tree")));
}

/** The `count` most recently active sessions under `root`, newest first (pi's `listAll` order). */
export async function recentSessions(root: string, count: number): Promise<RecentSession[]> {
	const storage = createNodeStorage();
	// Without `catalog`, the listing reads the files and writes nothing; the texts are not needed here.
	const listed = await listAllSessions(storage, root, { allMessagesTextLimit: 0 });
	const recent: RecentSession[] = [];
	for (const info of listed.slice(0, count)) {
		try {
			const session = await Session.open(storage, info.path, { readOnly: true, load: "lazy" });
			try {
				recent.push({ info, entries: session.tree.size, ...(await contextSize(session)) });
			} finally {
				await session.close();
			}
		} catch (error) {
			recent.push({ info, entries: 0, messages: 0, characters: 0, notes: [`not readable: ${error}`] });
		}
	}
	return recent;
}

/** Count the context of the leaf page by page, so a huge session is never decoded whole. */
async function contextSize(session: Session): Promise<Pick<RecentSession, "messages" | "characters" | "notes">> {
	let characters = 0;
	let offset = 0;
	for (;;) {
		const page = await session.contextPage({ offset, limit: 200 });
		for (const message of page.messages) characters += messageText(message).length;
		offset += page.messages.length;
		if (offset >= page.total || page.messages.length === 0) break;
	}
	// Read-only, what a normal open would fix on disk is only reported here (and left as it is).
	const { diagnostics, migratedFrom } = session.report;
	const notes: string[] = [];
	if (migratedFrom) notes.push(`a version ${migratedFrom.version} file, read as version 3 in memory`);
	if (diagnostics[0]) notes.push(`${diagnostics.length} bad line(s), the first is line ${diagnostics[0].line}`);
	return { messages: offset, characters, notes };
}

const number = new Intl.NumberFormat("en-US");

/** A few lines per session: when, id and name; where; the context's size; notes; the file. */
export function describe(session: RecentSession, index: number): string {
	const { info } = session;
	const when = Number.isNaN(info.modified.getTime()) ? "(no date)" : info.modified.toISOString().slice(0, 16);
	const title = (info.name ?? info.firstMessage).replace(/\s+/g, " ").trim() || "(no messages)";
	// About four characters a token: a rough rule for English text and code, not a tokenizer.
	const tokens = Math.ceil(session.characters / 4);
	const size = `${number.format(session.messages)} messages, ${number.format(session.characters)} characters (~${number.format(tokens)} tokens)`;
	return [
		`${index + 1}. ${when.replace("T", " ")}  ${String(info.id).slice(0, 8)}  ${title.length > 60 ? `${title.slice(0, 59)}…` : title}`,
		`   cwd ${info.cwd || "(unknown)"}, ${number.format(session.entries)} entries`,
		`   context of the leaf: ${size}`,
		...session.notes.map((note) => `   note: ${note}`),
		`   ${info.path}`,
	].join("\n");
}
