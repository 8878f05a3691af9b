/**
 * What the tool writes and how: standard output for answers, standard error for notes and progress;
 * colour only on a terminal and never with `NO_COLOR`; a progress bar only when standard error is a terminal.
 *
 * A session may hold anything, escape sequences among it (bash output is full of them; one can set the
 * window's title, write the clipboard, clear the screen). So every line written is made printable first:
 * control characters, DEL, C1 and the bidirectional overrides are written as `\uXXXX`. Colours are
 * therefore not escape sequences while a line is composed but markers (private-use characters around an
 * SGR number), turned into colour codes, or removed, only after that: a session's text can at most colour
 * itself, never move the cursor or talk to the terminal.
 * @module
 */

/** Colour functions: each wraps its text in the markers of one SGR attribute. */
export interface Colors {
	bold(text: string): string;
	dim(text: string): string;
	red(text: string): string;
	green(text: string): string;
	yellow(text: string): string;
	magenta(text: string): string;
	cyan(text: string): string;
}

export interface Output {
	/** Write a line (a line feed is added) to standard output. */
	line(text?: string): void;
	/** Write a document (an export) to standard output: its bytes as they are, made printable only on a terminal. */
	write(text: string): void;
	/**
	 * Write a value as JSON (indented by two spaces) and a line feed: as it is to a pipe; on a terminal with
	 * every character it would act on escaped as `\uXXXX`, which is the same JSON. Never coloured, so no text
	 * of a session is taken for a colour marker.
	 */
	json(value: unknown): void;
	/**
	 * Write JSON already made (UTF-8), or a piece of it that ends between characters, as `json` writes JSON:
	 * as it is to a pipe. Settles once the bytes are written (the caller may then write over them).
	 */
	jsonBytes(json: Uint8Array): Promise<void>;
	/** A note for the user on standard error. */
	note(text: string): void;
	/** Colours for standard output (markers that `line` drops where colour is off). */
	readonly color: Colors;
	/** `(done, total)` drawn as a bar on standard error when it is a terminal; nothing otherwise. */
	progress(label: string): { update(done: number, total: number): void; end(): void };
}

interface Stream {
	/** Writes `chunk`; calls `done` once it is written (given the error if it could not be). */
	write(chunk: string | Uint8Array, done?: (error?: Error | null) => void): unknown;
	isTTY?: boolean;
}

const OPEN = "\uE000";
const CLOSE = "\uE001";
const MARKER = /\uE000(\d{1,2})\uE001/g;

/** SGR numbers: [on, off]. */
const SGR: Record<keyof Colors, [number, number]> = {
	bold: [1, 22],
	dim: [2, 22],
	red: [31, 39],
	green: [32, 39],
	yellow: [33, 39],
	magenta: [35, 39],
	cyan: [36, 39],
};

const mark = (code: number) => `${OPEN}${code}${CLOSE}`;

const colors = Object.fromEntries(
	Object.entries(SGR).map(([name, [on, off]]) => [
		name,
		// A nested colour's off code would end the outer one too: the outer's on code follows it again.
		(text: string) => `${mark(on)}${text.replaceAll(mark(off), `${mark(off)}${mark(on)}`)}${mark(off)}`,
	]),
) as unknown as Colors;

/** Characters a terminal acts on instead of showing (C0, DEL, C1, line and paragraph separators, bidi controls). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same, but for line feeds and tabs. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
const CONTROLS_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escaped = (character: string) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** `text` with every character a terminal would act on written as `\uXXXX` (line feeds and tabs kept when `lines`). */
export function printable(text: string, lines = false): string {
	return text.replace(lines ? CONTROLS_BUT_LINES : CONTROLS, escaped);
}

function colorsOn(stream: Stream, env: Record<string, string | undefined>): boolean {
	if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
	return stream.isTTY === true;
}

export function terminalOutput(
	stdout: Stream = process.stdout,
	stderr: Stream = process.stderr,
	env: Record<string, string | undefined> = process.env,
): Output {
	const coloured = colorsOn(stdout, env);
	const finish = (text: string) =>
		printable(text, true).replace(MARKER, (_, code: string) => (coloured ? `\x1b[${code}m` : ""));
	return {
		line: (text = "") => stdout.write(`${finish(text)}\n`),
		write: (text) => stdout.write(stdout.isTTY === true ? printable(text, true) : text),
		json: (value) => {
			const text = JSON.stringify(value, null, 2);
			stdout.write(`${stdout.isTTY === true ? printable(text, true) : text}\n`);
		},
		jsonBytes: (json) =>
			new Promise((resolve, reject) => {
				const chunk = stdout.isTTY === true ? printable(new TextDecoder().decode(json), true) : json;
				stdout.write(chunk, (error) => (error ? reject(error) : resolve()));
			}),
		note: (text) => stderr.write(`${printable(text, true).replace(MARKER, "")}\n`),
		color: colors,
		progress(label) {
			if (stderr.isTTY !== true) return { update() {}, end() {} };
			let drawn = false;
			return {
				update(done, total) {
					const width = 24;
					const filled = total > 0 ? Math.round((done / total) * width) : 0;
					const bar = `${"#".repeat(filled)}${"-".repeat(width - filled)}`;
					stderr.write(`\r${printable(label)} [${bar}] ${done}/${total}`);
					drawn = true;
				},
				end() {
					if (drawn) stderr.write("\r\x1b[2K");
				},
			};
		},
	};
}

/** One line of at most `width` characters of any value: line breaks and tabs as spaces, the rest cut with an ellipsis. */
export function oneLine(text: unknown, width: number): string {
	const flat = String(text ?? "")
		.replace(/\s+/g, " ")
		.trim();
	return flat.length <= width ? flat : `${flat.slice(0, Math.max(0, width - 1))}…`;
}

/** Bytes as B, KB, MB or GB (powers of 1024), one decimal from KB up. */
export function formatBytes(bytes: number): string {
	const units = ["B", "KB", "MB", "GB", "TB"];
	let value = bytes;
	let unit = 0;
	while (value >= 1024 && unit < units.length - 1) {
		value /= 1024;
		unit++;
	}
	return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** "1 entry", "2 entries". */
export function plural(count: number, word: string, words = `${word}s`): string {
	return `${count} ${count === 1 ? word : words}`;
}
