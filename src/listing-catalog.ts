/**
 * The listing catalog file: one row per session file listed (keyed by path, size and modification time,
 * with the fold state to go on from when the file grows), so that a repeated listing reads only files
 * that changed. It is a cache: whatever is wrong with it (damaged, truncated, another version, rows of the
 * wrong shape, unreadable) makes it count as empty, and every row is checked against a fresh `stat`.
 *
 * Two files, so that a listing reads little and a change writes little:
 * - the catalog: a header line `{"format","version","length","checksum"}`, then `length` bytes of the rows
 *   as a JSON array, whose `hashText` is `checksum`; each row without its texts (`allMessagesText` is most
 *   of a catalog's bytes), which it names instead as ranges of the texts file (`TextRef`). Small: written
 *   whole with `replace` (atomic), so two listings that write it at once each leave a whole file.
 * - the texts file beside it (`textsPathOf`): the UTF-8 texts of the rows, each starting on a 4-byte
 *   boundary, each with its own hash (`hashText`, four bytes a step) in its row. New texts are appended
 *   (not flushed: it is a cache); when more than half of it is texts no row names any more, it is written
 *   again whole. A text whose bytes do not hash to its row's hash (damaged, or written over by another
 *   listing at the same time) drops its row alone: that file is read again.
 * @module
 */
import { hashText } from "./listing-hash.ts";
import { concat } from "./listing-scan.ts";
import { isWellFormed, type ListingState, SKIPPED_KEPT, setLazyText, textBytesOf } from "./listing-summary.ts";
import { dirname, joinPath } from "./paths.ts";
import { io, type Task } from "./storage.ts";
import { decodeUtf8 } from "./utf8-decode.ts";

const FORMAT = "pi-session-tree listing catalog";
/**
 * Bumped whenever rows change meaning: a catalog of another version is rebuilt. 4: lines skipped for a
 * limit (too long, too deep) no longer count, rows keep their line count and the line limit they were read with.
 */
export const LISTING_CATALOG_VERSION = 4;

/** One listed file. */
export interface CatalogRow {
	path: string;
	size: number;
	mtimeMs: number;
	/** End of the last complete line (just after its line feed): `state` is the fold of the lines before it. */
	consumed: number;
	/** `hashText` of the up to `TAIL_CHECK_BYTES` bytes before `consumed`: the file only grew if they are unchanged. */
	tailHash: string;
	/** The limit the texts of `state` and `final` were cut at (`null`: none). */
	textLimit: number | null;
	/** The longest line read (`maxLineBytes`): a row serves only a listing with the same, which skips the same lines. */
	lineLimit: number;
	state: ListingState;
	/** The state with the file's unterminated last line folded in, when it has one. */
	final?: ListingState;
}

/**
 * Where the catalog lives by default: `<agentDir>/pi-session-tree/listing-catalog.json`, outside
 * `<agentDir>/sessions`, where pi looks for sessions.
 * @example
 * listingCatalogPath("/home/me/.pi/agent"); // "/home/me/.pi/agent/pi-session-tree/listing-catalog.json"
 */
export function listingCatalogPath(agentDir: string): string {
	return joinPath(agentDir, "pi-session-tree", "listing-catalog.json");
}

/**
 * The default catalog path for pi's sessions root `<agentDir>/sessions` (that is, beside it).
 * @example
 * listingCatalogPathForSessionsRoot("/home/me/.pi/agent/sessions"); // "/home/me/.pi/agent/pi-session-tree/listing-catalog.json"
 */
export function listingCatalogPathForSessionsRoot(sessionsRoot: string): string {
	return listingCatalogPath(dirname(joinPath(sessionsRoot)));
}

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function isSkippedLine(value: unknown): boolean {
	if (typeof value !== "object" || value === null) return false;
	const line = value as { [field: string]: unknown };
	return (
		(line.reason === "too-long" || line.reason === "too-deep") &&
		isCount(line.line) &&
		isCount(line.byteOffset) &&
		isCount(line.bytes)
	);
}

/** Skipped lines as a state keeps them: none, or some of them (at most `SKIPPED_KEPT`) and their count. */
function isSkipped(skipped: unknown, count: unknown): boolean {
	if (skipped === undefined) return count === undefined;
	return (
		Array.isArray(skipped) &&
		skipped.length > 0 &&
		skipped.length <= SKIPPED_KEPT &&
		skipped.every(isSkippedLine) &&
		isCount(count) &&
		count >= skipped.length
	);
}

function isState(value: unknown): value is StoredState {
	if (typeof value !== "object" || value === null) return false;
	const state = value as { [field: string]: unknown };
	const header = state.phase !== "session" || typeof state.cwd === "string"; // an id may be any JSON
	return (
		(state.phase === "none" || state.phase === "session" || state.phase === "rejected") &&
		header &&
		isCount(state.lines) &&
		isSkipped(state.skipped, state.skippedCount) &&
		isCount(state.messageCount) &&
		typeof state.firstMessage === "string" &&
		(state.name === undefined || typeof state.name === "string") &&
		typeof state.lastActivity === "number" &&
		Number.isFinite(state.lastActivity) &&
		typeof state.textCut === "boolean"
	);
}

/** Where a text is in the texts file: `bytes` bytes from `at` (a multiple of 4), their `hashText`. */
export interface TextRef {
	at: number;
	bytes: number;
	hash: string;
	/** The bytes are the text's JSON (a text with a lone surrogate, which UTF-8 cannot hold). */
	json?: true;
}

/** A text-free listing state, as the catalog file keeps it. */
export type StoredState = Omit<ListingState, "text">;

/** A row as the catalog file keeps it: the texts of its states are named, not held. */
export interface StoredRow extends Omit<CatalogRow, "state" | "final"> {
	state: StoredState;
	final?: StoredState;
	text: TextRef;
	finalText?: TextRef;
}

/**
 * The texts file of the catalog at `path`: `listing-catalog.json` keeps its texts in `listing-catalog.texts`.
 * @example
 * textsPathOf("/a/pi-session-tree/listing-catalog.json"); // "/a/pi-session-tree/listing-catalog.texts"
 */
export function textsPathOf(path: string): string {
	return `${path.endsWith(".json") ? path.slice(0, -5) : path}.texts`;
}

function isTextRef(value: unknown): value is TextRef {
	if (typeof value !== "object" || value === null) return false;
	const ref = value as { [field: string]: unknown };
	return (
		isCount(ref.at) &&
		ref.at % 4 === 0 &&
		isCount(ref.bytes) &&
		typeof ref.hash === "string" &&
		(ref.json === undefined || ref.json === true)
	);
}

/** Whether `value` is a stored row, of sound shape. */
export function isStoredRow(value: unknown): value is StoredRow {
	if (!isRowFields(value)) return false;
	const row = value as unknown as { [field: string]: unknown };
	return (
		isState(row.state) &&
		isTextRef(row.text) &&
		(row.final === undefined ? row.finalText === undefined : isState(row.final) && isTextRef(row.finalText))
	);
}

function isRowFields(value: unknown): value is CatalogRow {
	if (typeof value !== "object" || value === null) return false;
	const row = value as { [field: string]: unknown };
	return (
		typeof row.path === "string" &&
		isCount(row.size) &&
		typeof row.mtimeMs === "number" &&
		Number.isFinite(row.mtimeMs) &&
		isCount(row.consumed) &&
		row.consumed <= row.size &&
		typeof row.tailHash === "string" &&
		(row.textLimit === null || isCount(row.textLimit)) &&
		isCount(row.lineLimit)
	);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Size and modification time of a file, as `stat` gave them. */
export interface FileVersion {
	size: number;
	mtimeMs: number;
}

/**
 * The catalog file's bytes (the rows only: their texts are in the texts file). `texts`: the texts file as
 * this writer left it, knowing every text there to be where its row says (a listing that finds the texts
 * file so need not hash the texts again); unset when it does not know.
 */
export function encodeCatalog(rows: Iterable<StoredRow>, texts?: FileVersion): Uint8Array[] {
	const body = encoder.encode(JSON.stringify([...rows]));
	const header: { [field: string]: unknown } = {
		format: FORMAT,
		version: LISTING_CATALOG_VERSION,
		length: body.length,
		checksum: hashText(body),
	};
	if (texts) header.texts = { size: texts.size, mtimeMs: texts.mtimeMs };
	return [encoder.encode(`${JSON.stringify(header)}\n`), body];
}

function isFileVersion(value: unknown): value is FileVersion {
	const version = value as FileVersion | null | undefined;
	return typeof version?.size === "number" && typeof version.mtimeMs === "number";
}

/** The texts file version a catalog file's header vouches for, if any. */
function textsVersionOf(bytes: Uint8Array): FileVersion | undefined {
	try {
		const newline = bytes.indexOf(0x0a);
		const texts = JSON.parse(decoder.decode(bytes.subarray(0, newline))).texts;
		return isFileVersion(texts) ? texts : undefined;
	} catch {
		return undefined;
	}
}

/** The stored rows of a catalog file's bytes, by path; `null` if it is not a whole, sound catalog of this version. */
export function decodeCatalog(bytes: Uint8Array): Map<string, StoredRow> | null {
	try {
		const newline = bytes.indexOf(0x0a);
		if (newline < 0) return null;
		const header = JSON.parse(decoder.decode(bytes.subarray(0, newline)));
		const body = bytes.subarray(newline + 1);
		if (header?.format !== FORMAT || header.version !== LISTING_CATALOG_VERSION) return null;
		if (header.length !== body.length || header.checksum !== hashText(body)) return null;
		const rows: unknown = JSON.parse(decoder.decode(body));
		if (!Array.isArray(rows)) return null;
		const byPath = new Map<string, StoredRow>();
		// A row of the wrong shape is dropped alone: its file is read again.
		for (const row of rows) if (isStoredRow(row)) byPath.set(row.path, row);
		return byPath;
	} catch {
		return null;
	}
}

/** The catalog as read, and which version of its file that was (to tell whether someone rewrote it since). */
export interface LoadedCatalog {
	/** The rows asked for (`loadCatalog`'s `wanted`) whose texts were found sound, texts included. */
	rows: Map<string, CatalogRow>;
	/** Every row of the file, as stored. */
	stored: Map<string, StoredRow>;
	/** The stored form of each row of `rows`: a row kept as it was is written again without its texts. */
	storedOf: Map<CatalogRow, StoredRow>;
	/** Size and modification time of the file read; `null` when there was none (or it could not be read). */
	version: FileVersion | null;
	/** The texts file version its header vouches for. */
	texts?: FileVersion;
}

/**
 * Whether two modification times, each from a `stat` of some runtime, are the same time. Node and Bun give
 * fractions of a millisecond, Deno whole milliseconds (the fraction dropped): a catalog one runtime wrote
 * still serves another, as the same file to the millisecond.
 */
export function sameModificationTime(a: number, b: number): boolean {
	return a === b || (Number.isInteger(a) !== Number.isInteger(b) && Math.floor(a) === Math.floor(b));
}

/** A catalog's text: how to decode it, and the UTF-8 bytes it is decoded from (not for a text kept as JSON). */
interface StoredText {
	decode: () => string;
	utf8?: () => Uint8Array;
}

/**
 * The text `ref` names in `texts` (the texts file's bytes from `from`): `undefined` if it is not there
 * whole and sound, else how to decode it (when first asked: its hash is checked now).
 */
function textAt(
	texts: Uint8Array,
	from: number,
	ref: TextRef,
	trusted: boolean,
	copy: boolean,
): StoredText | undefined {
	const start = ref.at - from;
	if (start < 0 || start + ref.bytes > texts.length) return undefined;
	const bytes = copy ? texts.slice(start, start + ref.bytes) : texts.subarray(start, start + ref.bytes);
	if (!trusted && hashText(bytes) !== ref.hash) return undefined;
	// Sound UTF-8: this catalog's encoder wrote it.
	if (!ref.json) return { decode: () => decodeUtf8(bytes), utf8: () => bytes };
	try {
		const parsed: unknown = JSON.parse(decoder.decode(bytes));
		return typeof parsed === "string" ? { decode: () => parsed } : undefined;
	} catch {
		return undefined;
	}
}

/** The row of a stored row whose texts are in `texts`, or `undefined` when one of them is not sound. */
function resolveRow(
	stored: StoredRow,
	texts: Uint8Array,
	from: number,
	trusted: boolean,
	copy: boolean,
): CatalogRow | undefined {
	const text = textAt(texts, from, stored.text, trusted, copy);
	if (text === undefined) return undefined;
	const { text: _text, finalText, state: storedState, final: storedFinal, ...fields } = stored;
	const state = { ...storedState, text: "" };
	setLazyText(state, text.decode, () => stored.text.bytes, text.utf8);
	const row: CatalogRow = { ...fields, state };
	if (storedFinal && finalText) {
		const last = textAt(texts, from, finalText, trusted, copy);
		if (last === undefined) return undefined;
		const final = { ...storedFinal, text: "" };
		setLazyText(final, last.decode, () => finalText.bytes, last.utf8);
		row.final = final;
	}
	return row;
}

function* readCatalogFile(path: string): Task<Pick<LoadedCatalog, "stored" | "version" | "texts">> {
	try {
		const stat = yield* io("stat", path);
		if (!stat?.isFile) return { stored: new Map(), version: null };
		const bytes = yield* io("readRange", path, 0, stat.size + 1);
		const stored = bytes.length === stat.size ? decodeCatalog(bytes) : null;
		const version = { size: stat.size, mtimeMs: stat.mtimeMs };
		return stored ? { stored, version, texts: textsVersionOf(bytes) } : { stored: new Map(), version };
	} catch {
		return { stored: new Map(), version: null };
	}
}

/**
 * Read the catalog at `path`: empty when it is missing, unreadable or unsound. The texts of the rows that
 * `wanted` accepts (every row by default) are read from the texts file, with one ranged read.
 */
export function* loadCatalog(path: string, wanted: (path: string) => boolean = () => true): Task<LoadedCatalog> {
	const { stored, version, texts: vouched } = yield* readCatalogFile(path);
	const rows = new Map<string, CatalogRow>();
	const storedOf = new Map<CatalogRow, StoredRow>();
	const asked = [...stored.values()].filter((row) => wanted(row.path));
	let from = Number.POSITIVE_INFINITY;
	let to = 0;
	let askedBytes = 0;
	for (const row of asked) {
		for (const ref of row.finalText ? [row.text, row.finalText] : [row.text]) {
			from = Math.min(from, ref.at);
			to = Math.max(to, ref.at + ref.bytes);
			askedBytes += ref.bytes;
		}
	}
	// Each row's text a view of the bytes read where the rows asked for hold at least half of them (a row
	// kept then keeps at most twice the texts alive), a copy of its own where they hold less.
	const copy = askedBytes < (to - from) / 2;
	if (asked.length > 0) {
		let texts: Uint8Array | undefined;
		let trusted = false;
		try {
			// The texts file its writer vouched for, unchanged since: its texts need no hashing.
			const stat = vouched && (yield* io("stat", textsPathOf(path)));
			trusted =
				!!stat && !!vouched && stat.size === vouched.size && sameModificationTime(stat.mtimeMs, vouched.mtimeMs);
			texts = yield* io("readRange", textsPathOf(path), from, to);
			// And still unchanged once read: another listing may have rewritten it in between.
			const after = trusted && (yield* io("stat", textsPathOf(path)));
			trusted =
				!!after && !!vouched && after.size === vouched.size && sameModificationTime(after.mtimeMs, vouched.mtimeMs);
		} catch {
			// No texts file: no row can be used.
		}
		for (const storedRow of texts ? asked : []) {
			const row = resolveRow(storedRow, texts as Uint8Array, from, trusted, copy);
			if (!row) continue;
			rows.set(row.path, row);
			storedOf.set(row, storedRow);
		}
	}
	return { rows, stored, storedOf, version, texts: vouched };
}

/** Bytes of padding that bring `at` to a multiple of 4. */
function padOf(at: number): number {
	return (4 - (at % 4)) % 4;
}

/** A text's bytes as the texts file keeps them, and whether they are its JSON. */
function encodeText(text: string): { bytes: Uint8Array; json: boolean } {
	return isWellFormed(text)
		? { bytes: encoder.encode(text), json: false }
		: { bytes: encoder.encode(JSON.stringify(text)), json: true };
}

/** Texts to add to a texts file: the chunks (each padded to 4 bytes) and the refs they get from `at`. */
class TextWriter {
	readonly chunks: Uint8Array[] = [];
	at: number;
	constructor(at: number) {
		this.at = at + padOf(at);
		if (at % 4 !== 0) this.chunks.push(new Uint8Array(padOf(at)));
	}
	/** Add bytes (already in the texts file's form) with their hash; their ref. */
	addBytes(bytes: Uint8Array, hash: string, json: boolean): TextRef {
		const ref: TextRef = { at: this.at, bytes: bytes.length, hash };
		if (json) ref.json = true;
		this.chunks.push(bytes);
		const pad = padOf(bytes.length);
		if (pad > 0) this.chunks.push(new Uint8Array(pad));
		this.at += bytes.length + pad;
		return ref;
	}
	add(text: string): TextRef {
		const { bytes, json } = encodeText(text);
		return this.addBytes(bytes, hashText(bytes), json);
	}
	get length(): number {
		return this.chunks.reduce((sum, chunk) => sum + chunk.length, 0);
	}
}

/** The stored form of a row, its texts added to `writer`. */
function storeRow(row: CatalogRow, writer: TextWriter): StoredRow {
	const { state: _state, final: _final, ...fields } = row;
	const stored: StoredRow = { ...fields, state: withoutText(row.state), text: storeText(row.state, writer) };
	if (row.final) {
		stored.final = withoutText(row.final);
		stored.finalText = storeText(row.final, writer);
	}
	return stored;
}

/** A state's fields but its text (which is not read: it may be held as bytes, not decoded yet). */
function withoutText(state: ListingState): StoredState {
	const fields: { [field: string]: unknown } = {};
	for (const key of Object.keys(state)) if (key !== "text") fields[key] = state[key as keyof ListingState];
	return fields as unknown as StoredState;
}

/** Add a state's text to `writer`: its bytes as the listing holds them, or the text encoded. */
function storeText(state: ListingState, writer: TextWriter): TextRef {
	const bytes = textBytesOf(state);
	return bytes ? writer.addBytes(bytes, hashText(bytes), false) : writer.add(state.text);
}

function refsOf(row: StoredRow): TextRef[] {
	return row.finalText ? [row.text, row.finalText] : [row.text];
}

/** Bytes a text takes in the texts file, padding included. */
function spanOf(ref: TextRef): number {
	return ref.bytes + padOf(ref.bytes);
}

/** Past this many bytes more than twice what its rows name, the texts file is written again. */
const SLACK_BYTES = 1 << 20;

/**
 * Write the catalog: `ours` (the rows of what was just listed, `inScope`) over the rows of the other
 * files as the file holds them now (another listing may have written it since `loaded` was read). New
 * texts are appended to the texts file, or the texts file is written again with only the texts in use.
 * Best effort, as befits a cache: a catalog that cannot be written is left as it is. Gives the catalog as
 * written (`ours` as its rows, every row as stored, the version of its file once written), or `undefined`
 * when it could not be written or its texts could not be confirmed where its rows say (another writer
 * appended to the texts file at the same time): a reader of the file then finds out by their hashes.
 */
export function* saveCatalog(
	path: string,
	loaded: LoadedCatalog,
	ours: Iterable<CatalogRow>,
	inScope: (path: string) => boolean,
): Task<LoadedCatalog | undefined> {
	try {
		const stat = yield* io("stat", path);
		const unchanged =
			stat === null
				? loaded.version === null
				: stat.size === loaded.version?.size && stat.mtimeMs === loaded.version.mtimeMs;
		const current = unchanged ? loaded.stored : (yield* readCatalogFile(path)).stored;
		const others: StoredRow[] = [];
		for (const row of current.values()) if (!inScope(row.path)) others.push(row);
		/** Our rows the file holds already (written again as stored), and those whose texts it does not. */
		const keptOurs: [CatalogRow, StoredRow][] = [];
		const fresh: CatalogRow[] = [];
		for (const row of ours) {
			const stored = loaded.storedOf.get(row);
			if (stored) keptOurs.push([row, stored]);
			else fresh.push(row);
		}
		const textsPath = textsPathOf(path);
		const textsStat = yield* io("stat", textsPath);
		const textsSize = textsStat?.isFile ? textsStat.size : null;
		const appendAt = textsSize ?? 0;
		const appended = new TextWriter(appendAt);
		const storedOf = new Map<CatalogRow, StoredRow>();
		for (const row of fresh) storedOf.set(row, storeRow(row, appended));
		let live = appended.length;
		for (const row of [...others, ...keptOurs.map(([, stored]) => stored)])
			for (const ref of refsOf(row)) live += spanOf(ref);
		yield* io("mkdir", dirname(path));
		/** The texts file as we leave it, if every text we name in it is surely where we say. */
		let vouch: FileVersion | undefined;
		let written: StoredRow[];
		if (textsSize !== null && appendAt + appended.length <= 2 * live + SLACK_BYTES) {
			const bytes = concat(appended.chunks, appended.length);
			if (fresh.length > 0) yield* io("append", textsPath, bytes, false);
			const freshStored = [...storedOf.values()];
			for (const [row, stored] of keptOurs) storedOf.set(row, stored);
			written = [...freshStored, ...others, ...keptOurs.map(([, stored]) => stored)];
			// The texts of the rows kept are where they say if the file is still the one vouched for when they
			// were read (it only grew since); ours, if they read back where we say.
			const wasVouched =
				unchanged &&
				!!loaded.texts &&
				!!textsStat &&
				loaded.texts.size === textsStat.size &&
				sameModificationTime(loaded.texts.mtimeMs, textsStat.mtimeMs);
			if (others.length + keptOurs.length === 0 || wasVouched) vouch = yield* confirmed(textsPath, appendAt, [bytes]);
		} else {
			// Written again: the texts of the rows kept (those still sound), then the new ones.
			const old = textsSize ? yield* io("readRange", textsPath, 0, textsSize) : new Uint8Array(0);
			const writer = new TextWriter(0);
			storedOf.clear();
			const movedOthers: StoredRow[] = [];
			for (const row of others) {
				const moved = moveTexts(row, old, writer);
				if (moved) movedOthers.push(moved);
			}
			for (const [row, stored] of keptOurs) {
				const moved = moveTexts(stored, old, writer);
				if (moved) storedOf.set(row, moved);
			}
			for (const row of fresh) storedOf.set(row, storeRow(row, writer));
			yield* io("replace", textsPath, writer.chunks);
			written = [...movedOthers, ...storedOf.values()];
			vouch = yield* confirmed(textsPath, 0, writer.chunks);
		}
		yield* io("replace", path, encodeCatalog(written, vouch));
		if (!vouch) return undefined;
		const version = yield* io("stat", path);
		const rows = new Map([...storedOf.keys()].map((row) => [row.path, row] as const));
		const stored = new Map(written.map((row) => [row.path, row] as const));
		return {
			rows,
			stored,
			storedOf,
			version: version && { size: version.size, mtimeMs: version.mtimeMs },
			texts: vouch,
		};
	} catch {
		// A read-only or full storage: the next listing reads the files again.
		return undefined;
	}
}

/**
 * The version of the texts file if the bytes at `at` are `chunks` (read back: another listing may have
 * appended to it, or replaced it, at the same time) and it did not change while they were compared.
 */
function* confirmed(path: string, at: number, chunks: readonly Uint8Array[]): Task<FileVersion | undefined> {
	const before = yield* io("stat", path);
	const length = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
	const bytes = yield* io("readRange", path, at, at + length);
	if (!before || bytes.length !== length) return undefined;
	let offset = 0;
	for (const chunk of chunks) {
		for (let i = 0; i < chunk.length; i++) if (bytes[offset + i] !== chunk[i]) return undefined;
		offset += chunk.length;
	}
	const after = yield* io("stat", path);
	return after && after.size === before.size && after.mtimeMs === before.mtimeMs ? after : undefined;
}

/** A stored row with its texts copied from `old` (the whole texts file) to `writer`; `undefined` if one is not sound. */
function moveTexts(row: StoredRow, old: Uint8Array, writer: TextWriter): StoredRow | undefined {
	const move = (ref: TextRef): TextRef | undefined => {
		if (ref.at + ref.bytes > old.length) return undefined;
		const bytes = old.subarray(ref.at, ref.at + ref.bytes);
		return hashText(bytes) === ref.hash ? writer.addBytes(bytes, ref.hash, ref.json === true) : undefined;
	};
	const text = move(row.text);
	if (!text) return undefined;
	const moved: StoredRow = { ...row, text };
	if (row.finalText) {
		const finalText = move(row.finalText);
		if (!finalText) return undefined;
		moved.finalText = finalText;
	}
	return moved;
}
