/**
 * What the tool writes and how: standard output for answers, standard error for notes and progress;
 * colour only on a terminal and never with `NO_COLOR`; a progress bar only when standard error is a terminal.
 * @module
 */
import pc from "picocolors";

export type Colors = ReturnType<typeof pc.createColors>;

export interface Output {
	/** Write a line (a line feed is added) to standard output. */
	line(text?: string): void;
	/** Write text as it is to standard output. */
	write(text: string): void;
	/** A note for the user on standard error. */
	note(text: string): void;
	/** Colours for standard output (no-ops where colour is off). */
	readonly color: Colors;
	/** `(done, total)` drawn as a bar on standard error when it is a terminal; nothing otherwise. */
	progress(label: string): { update(done: number, total: number): void; end(): void };
}

interface Stream {
	write(text: string): unknown;
	isTTY?: boolean;
	columns?: number;
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
	const color = pc.createColors(colorsOn(stdout, env));
	return {
		line: (text = "") => stdout.write(`${text}\n`),
		write: (text) => stdout.write(text),
		note: (text) => stderr.write(`${text}\n`),
		color,
		progress(label) {
			if (stderr.isTTY !== true) return { update() {}, end() {} };
			let drawn = false;
			return {
				update(done, total) {
					const width = 24;
					const filled = total > 0 ? Math.round((done / total) * width) : 0;
					const bar = `${"#".repeat(filled)}${"-".repeat(width - filled)}`;
					stderr.write(`\r${label} [${bar}] ${done}/${total}`);
					drawn = true;
				},
				end() {
					if (drawn) stderr.write("\r\x1b[2K");
				},
			};
		},
	};
}

/** One line of at most `width` characters: line breaks and tabs as spaces, the rest cut with an ellipsis. */
export function oneLine(text: string, width: number): string {
	const flat = text.replace(/\s+/g, " ").trim();
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
