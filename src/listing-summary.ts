/**
 * pi 1.6's `SessionInfo` rules as a fold over a session's records: a small state of plain JSON data that
 * takes one record at a time, so that a listing can stop anywhere, keep the state, and go on when the file
 * grows. The one copy of these rules: `sessionInfoTask` (every line parsed) folds with it too.
 * @module
 */
import { MAX_NESTING_DEPTH, nestsDeeperThan } from "./jsonl.ts";
import { normalizeSessionName } from "./tree.ts";
import { decodeUtf8 } from "./utf8-decode.ts";

/** pi's `SessionInfo`: what a session picker shows. */
export interface SessionInfo {
	path: string;
	/** The header's id; as in pi 1.6, a damaged header's may be any JSON value (or missing), and is listed as it is. */
	id: string;
	/** Working directory where the session was started; empty for old sessions. */
	cwd: string;
	name?: string;
	parentSessionPath?: string;
	created: Date;
	modified: Date;
	messageCount: number;
	firstMessage: string;
	allMessagesText: string;
}

/**
 * Where a file's records stand: none yet (only blank or unreadable lines so far), a session (its header was
 * read), or no session (its first record is no header: nothing after it matters).
 */
export type ListingPhase = "none" | "session" | "rejected";

/**
 * What a listing keeps of a session's records so far. Plain JSON data (a catalog row holds it), but for
 * `text`, which may be decoded when first read (`setLazyText`, `foldTextPieces`): copy a state by spreading it.
 */
export interface ListingState {
	phase: ListingPhase;
	/** The header's `id` (any JSON: pi 1.6 lists it as it is), `cwd` (as pi shows it), and its `parentSession` and `timestamp` as written. */
	id?: unknown;
	cwd?: string;
	parentSession?: unknown;
	timestamp?: unknown;
	messageCount: number;
	firstMessage: string;
	name?: string;
	/** Latest activity of a user or assistant message, in ms (0 for none). */
	lastActivity: number;
	/** The texts of user and assistant messages joined by spaces, cut at the state's text limit. */
	text: string;
	/** Some text was left out: the text limit was reached. */
	textCut: boolean;
	/** Lines read so far, blank and skipped ones too (a skipped line is named by its number). */
	lines: number;
	/** The first lines skipped for a limit (at most `SKIPPED_KEPT`), in file order; none when unset. */
	skipped?: SkippedLine[];
	/** How many lines were skipped for a limit in all (set with `skipped`). */
	skippedCount?: number;
}

/**
 * A line a listing skipped, as reads skip it: longer than the listing's `maxLineBytes` (`too-long`), or
 * nested deeper than `MAX_NESTING_DEPTH` (`too-deep`). It adds nothing to the listing.
 */
export interface SkippedLine {
	reason: "too-long" | "too-deep";
	/** 1-based line number. */
	line: number;
	/** Byte offset of its first byte. */
	byteOffset: number;
	/** Its bytes, without its line end. */
	bytes: number;
}

/** Skipped lines a state names one by one: a file of a million of them still has a small row. */
export const SKIPPED_KEPT = 16;

/** The state before the first line. */
export function emptyListingState(): ListingState {
	return { phase: "none", messageCount: 0, firstMessage: "", lastActivity: 0, text: "", textCut: false, lines: 0 };
}

/**
 * Note a skipped line. A new array, never the old one changed: copies of a state (by spreading) share it.
 */
export function noteSkipped(state: ListingState, line: SkippedLine): void {
	if (state.phase === "rejected") return;
	const kept = state.skipped ?? [];
	state.skipped = kept.length < SKIPPED_KEPT ? [...kept, line] : kept;
	state.skippedCount = (state.skippedCount ?? 0) + 1;
}

/**
 * Whether a line's parsed value is what reads skip as nested too deep (`parseLine`'s rule): an object with
 * a string `type` nesting deeper than `MAX_NESTING_DEPTH`. `length`: the line's length, bytes or
 * characters (each level takes two of them, so a short line is not walked).
 */
export function isTooDeep(value: unknown, length: number): boolean {
	if (length <= 2 * MAX_NESTING_DEPTH || typeof value !== "object" || value === null || Array.isArray(value)) {
		return false;
	}
	return typeof (value as { type?: unknown }).type === "string" && nestsDeeperThan(value, MAX_NESTING_DEPTH);
}

/**
 * Cut `text` to at most `limit` UTF-16 code units, one fewer rather than split a surrogate pair. Cutting
 * a cut text again at the same or a smaller limit gives what cutting the whole text would.
 */
export function cutText(text: string, limit: number | undefined): string {
	if (limit === undefined || text.length <= limit) return text;
	const last = text.charCodeAt(limit - 1);
	const next = text.charCodeAt(limit);
	const splitsPair = last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
	return text.slice(0, splitsPair ? limit - 1 : limit);
}

/**
 * The text of a user or assistant message's content: a string, or its text blocks' texts joined by spaces
 * (a text that is no string as `join` gives it, as pi's listing does). Where pi's listing throws on the
 * content (neither a string nor an array, a block that is null, a text `String` cannot convert), the
 * session is left out of pi's listing; here that content has no text (README: differences from pi).
 */
export function textOf(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	const texts: string[] = [];
	for (const block of content) if (block?.type === "text") texts.push(joinedText(block.text));
	return texts.join(" ");
}

function joinedText(text: unknown): string {
	if (text === undefined || text === null) return "";
	try {
		return String(text);
	} catch {
		return "";
	}
}

/** `new Date(value).getTime()`, or NaN where `Date` throws (an object whose own `toString` is no function). */
function timeOf(value: unknown): number {
	try {
		return new Date(value as never).getTime();
	} catch {
		return Number.NaN;
	}
}

/**
 * Every time past the last one a `Date` can hold gives an invalid `modified` date: one stands for them all,
 * so that the state stays JSON (which has no `Infinity`).
 */
const PAST_LAST_DATE = 8.64e15 + 1;

/**
 * Fold one record that follows the header (pi 1.6's `buildSessionInfo` loop). Where pi's listing throws
 * (a name that is no string, a message entry without a message), the record only counts as it can.
 */
function foldRecord(state: ListingState, record: { [field: string]: unknown }, textLimit: number | undefined): void {
	if (record.type === "session_info") state.name = normalizeSessionName(record.name);
	if (record.type !== "message") return;
	state.messageCount++;
	const message = record.message as { role?: unknown; content?: unknown; timestamp?: unknown };
	// As pi: only user and assistant messages that have content count as activity and text.
	if (typeof message !== "object" || message === null || !("content" in message)) return;
	if (message.role !== "user" && message.role !== "assistant") return;
	// As pi: a time that is not a string is still given to `Date` (a number is milliseconds).
	const activity = typeof message.timestamp === "number" ? message.timestamp : timeOf(record.timestamp);
	foldText(state, message.role, activity, textOf(message.content), textLimit);
}

/**
 * Fold what a user or assistant message with content gives beyond its count: its activity time (NaN for
 * none) and its text (`foldRecord`'s rules; a listing that reads the message's fields off its bytes too).
 */
export function foldText(
	state: ListingState,
	role: "user" | "assistant",
	activity: number,
	text: string,
	textLimit: number | undefined,
): void {
	if (!Number.isNaN(activity)) state.lastActivity = Math.min(Math.max(state.lastActivity, activity), PAST_LAST_DATE);
	if (!text) return;
	if (!state.firstMessage && role === "user") state.firstMessage = text;
	if (state.textCut) return;
	const joined = state.text ? `${state.text} ${text}` : text;
	state.textCut = textLimit !== undefined && joined.length > textLimit;
	state.text = cutText(joined, textLimit);
}

/** Take the header's fields. */
function startSession(state: ListingState, header: { [field: string]: unknown }): void {
	const { id, cwd, parentSession, timestamp } = header;
	state.phase = "session";
	if (id !== undefined) state.id = id;
	state.cwd = typeof cwd === "string" ? cwd : "";
	if (parentSession !== undefined) state.parentSession = parentSession;
	if (timestamp !== undefined) state.timestamp = timestamp;
}

/**
 * Fold one line's parsed JSON (`undefined` for a line that is not JSON), by pi 1.6's listing rules: lines
 * that are not JSON, and JSON that is falsy, are skipped; the first other value must have `type`
 * `"session"` (any id will do, as pi lists it), else the file is no session and nothing after it matters.
 */
export function foldValue(state: ListingState, value: unknown, textLimit: number | undefined): void {
	if (!value || state.phase === "rejected") return;
	const record = value as { [field: string]: unknown };
	if (state.phase === "session") foldRecord(state, record, textLimit);
	else if (record.type === "session") startSession(state, record);
	else state.phase = "rejected";
}

/** States whose `text` is decoded when first read (a catalog's rows): how to decode it, and from how many bytes. */
const lazyTexts = new WeakMap<ListingState, () => string>();
const lazyTextBytes = new WeakMap<ListingState, () => number>();
/** The bytes a lazy text is decoded from, where they are at hand (see `allMessagesTextUtf8`). */
const lazyTextUtf8 = new WeakMap<ListingState, () => Uint8Array>();
/** Rows whose `allMessagesText` is still the lazy text of these bytes, whole (not cut, not set since). */
const infoTextUtf8 = new WeakMap<SessionInfo, () => Uint8Array>();

/**
 * A text of more UTF-8 bytes than this may not fit in a string (V8's longest is 2^29 − 24 UTF-16 units, and
 * UTF-8 takes at least a byte for each): it is decoded at once, and a session whose text cannot be a string
 * is no row, as in pi (whose listing fails on it).
 */
const LONGEST_LAZY_TEXT_BYTES = 2 ** 29 - 24;

/**
 * Make `state.text` a text decoded when first read, once (a catalog's texts are most of its bytes, and a
 * listing that serves a row from it need not decode the row's text until someone reads it). The
 * `SessionInfo` of the state decodes it only when its `allMessagesText` is read.
 */
export function setLazyText(
	state: ListingState,
	decode: () => string,
	byteLength: () => number,
	utf8?: () => Uint8Array,
): void {
	let text: string | undefined;
	let undecoded: (() => string) | undefined = decode;
	const once = () => {
		if (undecoded) {
			text = undecoded();
			// Decoded: the bytes it came from are let go (a listing's texts would otherwise be held twice).
			undecoded = undefined;
			lazyTextBytes.delete(state);
			lazyTextUtf8.delete(state);
		}
		return text as string;
	};
	lazyTexts.set(state, once);
	lazyTextBytes.set(state, byteLength);
	if (utf8) lazyTextUtf8.set(state, utf8);
	Object.defineProperty(state, "text", {
		get: once,
		set(value: string) {
			lazyTexts.delete(state);
			lazyTextUtf8.delete(state);
			Object.defineProperty(state, "text", { value, writable: true, enumerable: true, configurable: true });
		},
		enumerable: true,
		configurable: true,
	});
}

const encoder = new TextEncoder();

/** A session's text as UTF-8 bytes while its file is read (`foldTextPieces`): decoded when first read. */
class TextBytes {
	bytes = new Uint8Array(256);
	length = 0;
	/** Room for `more` bytes. */
	reserve(more: number): void {
		if (this.length + more <= this.bytes.length) return;
		const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + more));
		grown.set(this.bytes.subarray(0, this.length));
		this.bytes = grown;
	}
	add(from: Uint8Array, start: number, end: number): void {
		this.reserve(end - start);
		this.bytes.set(from.subarray(start, end), this.length);
		this.length += end - start;
	}
	view(): Uint8Array {
		return this.bytes.subarray(0, this.length);
	}
}

const textBytes = new WeakMap<ListingState, TextBytes>();

/** Let go of the room a state's text bytes keep to grow (when a file has been read to its end). */
export function trimTextBytes(state: ListingState): void {
	const held = textBytes.get(state);
	if (held && held.bytes.length - held.length > held.length >>> 3) held.bytes = held.bytes.slice(0, held.length);
}

/** The UTF-8 bytes of a state's text, while it is held as bytes (decoding them gives `state.text`). */
export function textBytesOf(state: ListingState): Uint8Array | undefined {
	return textBytes.get(state)?.view();
}

/** A piece of a message's text in a line's bytes: `[start, end)` as UTF-8, or a string (an escaped one, parsed). */
export type TextPiece = [number, number] | string;

/** A string that UTF-8 holds as it is (no lone surrogate). */
export function isWellFormed(text: string): boolean {
	return (text as { isWellFormed?: () => boolean }).isWellFormed?.() ?? !/\p{Cs}/u.test(text);
}

/**
 * Fold a user or assistant message whose text is the `pieces` joined by spaces (`foldText`'s rules), keeping
 * the session's text as bytes copied from the line, not decoded: a listing decodes a text only when its
 * `allMessagesText` is read. Falls back to `foldText` where bytes cannot do: a text limit (it counts
 * UTF-16 code units), a text that is a string already (a grown file's), a lone surrogate.
 */
export function foldTextPieces(
	state: ListingState,
	role: "user" | "assistant",
	activity: number,
	bytes: Uint8Array,
	pieces: readonly TextPiece[],
	textLimit: number | undefined,
): void {
	const decode = () =>
		pieces.map((piece) => (typeof piece === "string" ? piece : decodeUtf8(bytes, piece[0], piece[1]))).join(" ");
	let held = textBytes.get(state);
	const empty =
		pieces.length === 0 ||
		(pieces.length === 1 && (typeof pieces[0] === "string" ? pieces[0] === "" : pieces[0]?.[0] === pieces[0]?.[1]));
	if (
		textLimit !== undefined ||
		(!held && (state.textCut || state.text !== "")) ||
		pieces.some((piece) => typeof piece === "string" && !isWellFormed(piece))
	) {
		foldText(state, role, activity, decode(), textLimit);
		return;
	}
	if (!Number.isNaN(activity)) state.lastActivity = Math.min(Math.max(state.lastActivity, activity), PAST_LAST_DATE);
	if (empty) return;
	if (!state.firstMessage && role === "user") state.firstMessage = decode();
	if (!held) held = holdText(state);
	else held.add(SPACE, 0, 1);
	for (let k = 0; k < pieces.length; k++) {
		const piece = pieces[k] as TextPiece;
		if (k > 0) held.add(SPACE, 0, 1);
		if (typeof piece === "string") {
			const encoded = encoder.encode(piece);
			held.add(encoded, 0, encoded.length);
		} else held.add(bytes, piece[0], piece[1]);
	}
}

const SPACE = Uint8Array.of(0x20);

/**
 * Start holding a state's text as bytes. A function of its own: a closure shares its context with every
 * other closure of the call that makes it, and one there would keep the line's bytes (a whole chunk) alive.
 */
function holdText(state: ListingState): TextBytes {
	const kept = new TextBytes();
	textBytes.set(state, kept);
	setLazyText(
		state,
		() => {
			textBytes.delete(state);
			return decodeUtf8(kept.bytes, 0, kept.length);
		},
		() => kept.length,
		() => kept.view(),
	);
	return kept;
}

/**
 * Define `info.allMessagesText` as the lazy text, cut, computed when first read. It stays an accessor (the
 * value kept once read): redefining it then would fail on a row its receiver froze.
 */
function defineLazyText(info: SessionInfo, text: () => string, textLimit: number | undefined): void {
	let value: string | undefined;
	Object.defineProperty(info, "allMessagesText", {
		get() {
			if (value === undefined) {
				value = cutText(text(), textLimit);
				infoTextUtf8.delete(info); // the text is at hand now: its bytes are not kept for it as well
			}
			return value;
		},
		set(next: string) {
			value = next;
			infoTextUtf8.delete(info);
		},
		enumerable: true,
		configurable: true,
	});
}

/**
 * A header value as a row of its own may hold it: an object (a damaged header's id) copied, so that a
 * caller who changes it changes no state a catalog keeps for the next listing.
 */
function ownCopy(value: unknown): unknown {
	return typeof value === "object" && value !== null ? structuredClone(value) : value;
}

/** The `SessionInfo` of a state, or `null` when it is no session. `mtimeMs` is the file's modification time. */
export function listingInfo(
	path: string,
	state: ListingState,
	mtimeMs: number,
	textLimit: number | undefined,
): SessionInfo | null {
	if (state.phase !== "session") return null;
	// As pi: a header time that is no string gives no time; the file's then, rounded to a millisecond as Node's `mtime`.
	const created = typeof state.timestamp === "string" ? Date.parse(state.timestamp) : Number.NaN;
	const modified = state.lastActivity > 0 ? state.lastActivity : Number.isNaN(created) ? Math.round(mtimeMs) : created;
	let lazy = lazyTexts.get(state);
	if (lazy && (lazyTextBytes.get(state)?.() ?? 0) > LONGEST_LAZY_TEXT_BYTES) {
		try {
			const text = lazy();
			lazy = () => text;
		} catch {
			return null; // longer than a string can be
		}
	}
	const info: SessionInfo = {
		path,
		id: ownCopy(state.id) as string, // as written: pi 1.6 lists a header whose id is no string too
		cwd: state.cwd ?? "",
		name: state.name,
		parentSessionPath: ownCopy(state.parentSession) as string | undefined,
		created: new Date(timeOf(state.timestamp)),
		modified: new Date(modified),
		messageCount: state.messageCount,
		firstMessage: state.firstMessage || "(no messages)",
		allMessagesText: lazy ? "" : cutText(state.text, textLimit),
	};
	if (lazy) {
		defineLazyText(info, lazy, textLimit);
		const utf8 = lazyTextUtf8.get(state);
		// No cut: a limit counts UTF-16 units, of which the text has at most as many as it has bytes.
		const bytes = lazyTextBytes.get(state)?.() ?? Number.POSITIVE_INFINITY;
		if (utf8 && bytes <= (textLimit ?? Number.POSITIVE_INFINITY)) infoTextUtf8.set(info, utf8);
	}
	return info;
}

/**
 * The bytes `info.allMessagesText` is decoded from (leniently, as UTF-8), while that is still so: a listing's
 * row whose text was not cut or set since. For writers that want the text as UTF-8 without decoding it
 * (the CLI's `ls --json`); `undefined` when the bytes are not at hand. Check them with `isUtf8` first: where
 * they are not sound UTF-8, the text holds replacement characters instead.
 */
export function allMessagesTextUtf8(info: SessionInfo): Uint8Array | undefined {
	return infoTextUtf8.get(info)?.();
}
