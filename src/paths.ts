/**
 * pi's on-disk layout: `<agentDir>/sessions/--<encoded cwd>--/<timestamp>_<sessionId>.jsonl`, and the
 * checks that keep caller-supplied ids and names inside the sessions directory. Paths use `/`.
 * @module
 */
import { InvalidSessionPathError } from "./errors.ts";

export { InvalidSessionPathError };

/**
 * The agent directory: `PI_CODING_AGENT_DIR` with a leading `~` expanded, or `<home>/.pi/agent`.
 * @example
 * resolveAgentDir(undefined, "/home/me"); // "/home/me/.pi/agent"
 */
export function resolveAgentDir(envValue: string | undefined, home: string): string {
	if (envValue) {
		if (envValue === "~") return home;
		if (envValue.startsWith("~/")) return joinPath(home, envValue.slice(2));
		return envValue;
	}
	return joinPath(home, ".pi", "agent");
}

/** `<agentDir>/sessions`. */
export function sessionsRoot(agentDir: string): string {
	return joinPath(agentDir, "sessions");
}

/**
 * The directory name pi uses for a working directory: leading separator removed, `/ \ :` become `-`.
 * @example
 * encodeCwd("/home/me/project"); // "--home-me-project--"
 */
export function encodeCwd(cwd: string): string {
	if (cwd.includes("\0")) throw new InvalidSessionPathError(`cwd contains a NUL character: ${JSON.stringify(cwd)}`);
	return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/** `<agentDir>/sessions/--<cwd>--`. */
export function defaultSessionDir(cwd: string, agentDir: string): string {
	return joinPath(sessionsRoot(agentDir), encodeCwd(cwd));
}

/** pi 1.6's session id pattern: letters, digits, `.`, `_`, `-`, starting and ending with a letter or digit. */
const SESSION_ID = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
/** Longer ids would not fit a file name (255 bytes with the timestamp and `.jsonl`); pi fails later, at the write. */
const MAX_SESSION_ID_LENGTH = 200;

/**
 * Accept a caller-supplied session id only if it is a plain name, by pi 1.6's rule (which also keeps it
 * inside the sessions directory): letters, digits, `.`, `_`, `-`, starting and ending with a letter or digit.
 * @example
 * validateSessionId("01934f2a-7b3c-7def-8abc-0123456789ab");
 */
export function validateSessionId(id: string): string {
	if (typeof id !== "string" || id.length > MAX_SESSION_ID_LENGTH || !SESSION_ID.test(id)) {
		throw new InvalidSessionPathError(
			`invalid session id ${JSON.stringify(id)}: use letters, digits, ".", "_", "-", starting and ending with a letter or digit (at most ${MAX_SESSION_ID_LENGTH} characters)`,
		);
	}
	return id;
}

/**
 * pi's file name: the ISO timestamp with `:` and `.` replaced by `-`, `_`, the session id, `.jsonl`.
 * @example
 * sessionFileName("2025-01-01T10:00:00.000Z", "abc"); // "2025-01-01T10-00-00-000Z_abc.jsonl"
 */
export function sessionFileName(isoTimestamp: string, sessionId: string): string {
	return `${isoTimestamp.replace(/[:.]/g, "-")}_${validateSessionId(sessionId)}.jsonl`;
}

/** The session id in a pi file name, or `undefined` when the name is not one. */
export function sessionIdOfFileName(name: string): string | undefined {
	const match = /^[0-9T-]+Z_(.+)\.jsonl$/.exec(name);
	return match && SESSION_ID.test(match[1] as string) ? match[1] : undefined;
}

/**
 * A Windows path: one that starts with a drive (`C:\`, `C:/`) or a UNC prefix (`\\server`). In it `\` is a
 * separator too, as on Windows; in any other path only `/` separates, and `\` is part of a name (POSIX
 * allows it in file names).
 */
function isWindowsPath(path: string): boolean {
	return /^(?:[A-Za-z]:[/\\]|\\\\)/.test(path);
}

/** The separators of `path`: `/`, and `\` too in a Windows path (see `isWindowsPath`). */
function separatorsOf(path: string): RegExp {
	return isWindowsPath(path) ? /[/\\]/ : /\//;
}

/**
 * Join path parts with `/`, without doubling separators. A `\` is a separator only when the first part
 * is a Windows path; otherwise it stays in the name that holds it.
 * @example
 * joinPath("/a/", "b\\c.jsonl"); // "/a/b\\c.jsonl"
 */
export function joinPath(...parts: string[]): string {
	const kept = parts.filter((part) => part !== "");
	const windows = kept.length > 0 && isWindowsPath(kept[0] as string);
	const trailing = windows ? /[/\\]+$/ : /\/+$/;
	const edges = windows ? /^[/\\]+|[/\\]+$/g : /^\/+|\/+$/g;
	return kept
		.map((part, index) => (index === 0 ? part.replace(trailing, "") || "/" : part.replace(edges, "")))
		.join("/")
		.replace(/^\/\//, "/");
}

/**
 * The directory part of a path. Only `/` separates, except in a Windows path (`C:\…`, `\\server\…`),
 * where `\` does too: a POSIX file name holding `\` stays one name.
 * @example
 * dirname("/sessions/a\\b.jsonl"); // "/sessions"
 */
export function dirname(path: string): string {
	const cut = isWindowsPath(path) ? Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) : path.lastIndexOf("/");
	if (cut === 2 && /^[A-Za-z]:/.test(path)) return path.slice(0, 3); // "C:\x" is in "C:\"
	return cut <= 0 ? (cut === 0 ? "/" : ".") : path.slice(0, cut);
}

/**
 * `path` with `.` and empty names dropped and each `..` taking away the name before it (never above the
 * root: `/..` is `/`); `undefined` for a relative path, whose meaning depends on the storage. Only `/`
 * separates, except in a Windows path (see `dirname`). Used to check a path against a sessions root.
 * @example
 * normalizeAbsolutePath("/a/./b/../c"); // "/a/c"
 */
export function normalizeAbsolutePath(path: string): string | undefined {
	const windows = isWindowsPath(path);
	if (!windows && !path.startsWith("/")) return undefined;
	const [prefix, rest] = windows
		? /^[A-Za-z]:/.test(path)
			? [path.slice(0, 2).toUpperCase(), path.slice(2)]
			: ["/", path]
		: ["", path];
	const names: string[] = [];
	for (const name of rest.split(separatorsOf(path))) {
		if (name === "" || name === ".") continue;
		if (name === "..") names.pop();
		else names.push(name);
	}
	return `${prefix}/${names.join("/")}`;
}

/**
 * Whether `path` is `root` or lies under it, both normalised (`normalizeAbsolutePath`); false for a
 * relative path.
 * @example
 * isInsideRoot("/pi/agent/sessions/x.jsonl", "/pi/agent"); // true
 * isInsideRoot("/pi/agent/../other", "/pi/agent"); // false
 */
export function isInsideRoot(path: string, root: string): boolean {
	const normalPath = normalizeAbsolutePath(path);
	const normalRoot = normalizeAbsolutePath(root);
	if (normalPath === undefined || normalRoot === undefined) return false;
	if (normalRoot.endsWith("/")) return normalPath.startsWith(normalRoot);
	return normalPath === normalRoot || normalPath.startsWith(`${normalRoot}/`);
}
