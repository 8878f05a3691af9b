/**
 * The working directory of a session file, from its header, reading only the file's first bytes: a
 * session may be hundreds of megabytes, and the page must not read (let alone parse) all of it. As pi
 * does, blank or garbage lines before the header are passed over; the header must come within 1 MiB.
 */

/** How far the header is looked for (pi's header discovery reads as far). */
const HEADER_LIMIT = 1024 * 1024;
const CHUNK = 64 * 1024;

/** The header's `cwd`; an error saying why when the file does not start like a pi session. */
export async function readSessionCwd(file: Blob): Promise<string> {
	const decoder = new TextDecoder();
	const end = Math.min(file.size, HEADER_LIMIT);
	let text = "";
	for (let offset = 0; offset < end; offset += CHUNK) {
		text += decoder.decode(await file.slice(offset, Math.min(end, offset + CHUNK)).arrayBuffer(), { stream: true });
		const complete = offset + CHUNK >= file.size;
		const lines = text.split("\n");
		// The last piece may be a line cut at the chunk's end, unless the file ends there.
		if (!complete) text = lines.pop() ?? "";
		for (const line of lines) {
			const cwd = headerCwd(line);
			if (cwd !== undefined) return cwd;
		}
		if (complete) break;
	}
	throw new Error(`no pi session header in the first ${Math.round(end / 1024)} KiB (is it a pi session file?)`);
}

/** The cwd of a header line; undefined for a line that is no JSON object (skipped, as pi does). */
function headerCwd(line: string): string | undefined {
	const trimmed = line.replace(/^\uFEFF/, "").trim();
	if (!trimmed.startsWith("{")) return undefined;
	try {
		const record = JSON.parse(trimmed) as { type?: unknown; cwd?: unknown };
		if (record.type !== "session") throw new Error("the first record is not a pi session header");
		if (typeof record.cwd !== "string") throw new Error("the session header has no cwd");
		return record.cwd;
	} catch (error) {
		if (error instanceof SyntaxError) return undefined;
		throw error;
	}
}
