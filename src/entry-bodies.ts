/**
 * The bodies of a lazily opened session: where each deferred entry's line lies in its file, the entries
 * decoded lately (a cache bounded in bytes), and the task that decodes the ones a read asks for with
 * ranged reads. The tree keeps a deferred entry's structure (line-structure.ts); this module turns that
 * into the whole entry, exactly as `JSON.parse` of its line gives it.
 * @module
 */
import type { SessionEntry } from "./entries.ts";
import { EntryNotLoadedError } from "./errors.ts";
import { excerptOf, MAX_NESTING_DEPTH, nestsDeeperThan, SessionFormatError } from "./jsonl.ts";
import { io, type Task } from "./storage.ts";
import { decodeUtf8 } from "./utf8-decode.ts";

export { EntryNotLoadedError };

/** Where a deferred entry's line lies: its bytes (terminator excluded) and its 1-based number. */
export interface LineSpan {
	offset: number;
	length: number;
	line: number;
}

function grown(array: Float64Array): Float64Array<ArrayBuffer> {
	const bigger = new Float64Array(array.length * 2);
	bigger.set(array);
	return bigger;
}

/** Entries decoded lately are kept up to about this many bytes of their lines. */
const CACHE_BYTES = 64 << 20;
/** Lines closer than this are read together, up to `READ_BYTES` a read. */
const GAP_BYTES = 64 << 10;
const READ_BYTES = 8 << 20;

/**
 * The key under which a deferred entry's structure holds the number of its line's span here: a number in
 * the object, not an entry of a map, since a session may have millions. A copy of the structure (a fork
 * gives it another parent) copies the key too, so it stays deferred to the same line. A structure is made
 * with the key in it (-1: no span yet; see line-structure.ts), so that setting it changes no object's shape.
 */
export const SPAN_SLOT: unique symbol = Symbol("pi-session-tree span");
const SPAN = SPAN_SLOT;
type Deferred = SessionEntry & { [SPAN]?: number };

/** The deferred entries of one file and what has been decoded of them. */
export class EntryBodies {
	readonly path: string;
	/** The spans, by number: offsets (a file may pass 4 GiB), lengths and line numbers. */
	#offsets = new Float64Array(1024);
	#lengths = new Float64Array(1024);
	#lines = new Float64Array(1024);
	#count = 0;
	/** Decoded entries by their structure, oldest first (a `Map` keeps insertion order: the LRU order). */
	readonly #cache = new Map<SessionEntry, SessionEntry>();
	#cachedBytes = 0;
	/** Entries a read has just decoded, valid while it builds its answer (see `withLoaded`). */
	#loaded: ReadonlyMap<SessionEntry, SessionEntry> | undefined;

	constructor(path: string) {
		this.path = path;
	}

	/** Mark `structure` as the deferred entry of the line at `span`. */
	defer(structure: SessionEntry, span: LineSpan): void {
		if (this.#count === this.#offsets.length) {
			this.#offsets = grown(this.#offsets);
			this.#lengths = grown(this.#lengths);
			this.#lines = grown(this.#lines);
		}
		const index = this.#count++;
		this.#offsets[index] = span.offset;
		this.#lengths[index] = span.length;
		this.#lines[index] = span.line;
		(structure as Deferred)[SPAN] = index;
	}

	/** Where the line of a deferred entry is; `undefined` for an entry that is whole. */
	#spanOf(entry: SessionEntry): LineSpan | undefined {
		const index = (entry as Deferred)[SPAN];
		if (index === undefined || index < 0) return undefined;
		return {
			offset: this.#offsets[index] as number,
			length: this.#lengths[index] as number,
			line: this.#lines[index] as number,
		};
	}

	isDeferred(entry: SessionEntry): boolean {
		return ((entry as Deferred)[SPAN] ?? -1) >= 0;
	}

	/** The whole entry of `entry`: itself when it is not deferred; an `EntryNotLoadedError` when not decoded. */
	whole(entry: SessionEntry): SessionEntry {
		if (((entry as Deferred)[SPAN] ?? -1) < 0) return entry;
		const decoded = this.#loaded?.get(entry) ?? this.#cache.get(entry);
		if (!decoded) throw new EntryNotLoadedError(entry.id, this.path);
		return decoded;
	}

	/** Run `build` with `loaded` (the result of `load`) at hand for `whole`: they cannot be evicted meanwhile. */
	withLoaded<T>(loaded: ReadonlyMap<SessionEntry, SessionEntry>, build: () => T): T {
		const outer = this.#loaded;
		this.#loaded = outer ? new Map([...outer, ...loaded]) : loaded;
		try {
			return build();
		} finally {
			this.#loaded = outer;
		}
	}

	/** Decode the deferred ones of `entries` (those cached are taken from the cache), reading their lines. */
	*load(entries: Iterable<SessionEntry>): Task<Map<SessionEntry, SessionEntry>> {
		const loaded = new Map<SessionEntry, SessionEntry>();
		const wanted: [SessionEntry, LineSpan][] = [];
		for (const entry of entries) {
			const span = this.#spanOf(entry);
			if (!span || loaded.has(entry)) continue;
			const cached = this.#cache.get(entry);
			if (cached) {
				loaded.set(entry, cached);
				this.#cache.delete(entry);
				this.#cache.set(entry, cached); // most recently used
			} else {
				loaded.set(entry, entry); // a mark: filled below
				wanted.push([entry, span]);
			}
		}
		wanted.sort((a, b) => a[1].offset - b[1].offset);
		for (let first = 0; first < wanted.length; ) {
			const start = (wanted[first] as [SessionEntry, LineSpan])[1].offset;
			let last = first;
			let end = start + (wanted[first] as [SessionEntry, LineSpan])[1].length;
			while (last + 1 < wanted.length) {
				const span = (wanted[last + 1] as [SessionEntry, LineSpan])[1];
				if (span.offset - end > GAP_BYTES || span.offset + span.length - start > READ_BYTES) break;
				end = Math.max(end, span.offset + span.length);
				last++;
			}
			// Into a buffer used again by the next read: nothing is kept of the bytes but what is decoded from them.
			const bytes = yield* io("readReusing", this.path, start, end);
			for (let index = first; index <= last; index++) {
				const [structure, span] = wanted[index] as [SessionEntry, LineSpan];
				const entry = this.#decode(
					structure,
					span,
					bytes.subarray(span.offset - start, span.offset - start + span.length),
				);
				loaded.set(structure, entry);
				this.#remember(structure, entry, span.length);
			}
			first = last + 1;
		}
		return loaded;
	}

	/**
	 * The entry of a deferred line, checked against the structure read when the file was opened. A line
	 * whose brackets and quotes were whole but whose inside is not JSON (see line-structure.ts) fails here.
	 */
	#decode(structure: SessionEntry, span: LineSpan, bytes: Uint8Array): SessionEntry {
		// As a full open reads a line: bytes that are not UTF-8 become U+FFFD, a BOM stays.
		const text = decodeUtf8(bytes);
		const where = { file: this.path, line: span.line, byteOffset: span.offset, excerpt: excerptOf(text) };
		let entry: SessionEntry;
		try {
			entry = JSON.parse(text) as SessionEntry;
		} catch (error) {
			const detail = error instanceof Error ? error.message : String(error);
			const problem =
				bytes.length === span.length
					? `line ${span.line} is damaged inside (${detail}): a lazy open indexed it; open the file with load: "full" to skip it`
					: `line ${span.line} is no longer whole: the file changed under the open session; open it again`;
			throw new SessionFormatError(problem, where);
		}
		if (text.length > 2 * MAX_NESTING_DEPTH && nestsDeeperThan(entry, MAX_NESTING_DEPTH)) {
			// The open's walk refused such lines: this one changed under the session.
			const problem = `line ${span.line} nests deeper than ${MAX_NESTING_DEPTH} levels: the file changed under the open session; open it again`;
			throw new SessionFormatError(problem, where);
		}
		if (bytes.length !== span.length || entry?.id !== structure.id || entry?.type !== structure.type) {
			const problem = `line ${span.line} no longer holds entry ${String(structure.id)}: the file changed under the open session; open it again`;
			throw new SessionFormatError(problem, where);
		}
		// A fork's copy of a deferred entry has its own parent.
		return entry.parentId === structure.parentId ? entry : { ...entry, parentId: structure.parentId };
	}

	#remember(structure: SessionEntry, entry: SessionEntry, bytes: number): void {
		if (bytes > CACHE_BYTES / 4) return; // a huge line is not worth evicting everything for
		// Two reads at once may both have decoded it: counted once.
		if (!this.#cache.has(structure)) this.#cachedBytes += bytes;
		this.#cache.set(structure, entry);
		for (const oldest of this.#cache.keys()) {
			if (this.#cachedBytes <= CACHE_BYTES) break;
			this.#cache.delete(oldest);
			this.#cachedBytes -= this.#spanOf(oldest)?.length ?? 0;
		}
	}
}
