/**
 * The structure of a big line without its bodies: what a lazy open keeps of an entry. A line is walked
 * once without decoding: strings are skipped from quote to unescaped quote (the runtime's own byte
 * search), brackets are matched between them and every byte there must be one JSON allows there, and
 * only the values of the few structural keys of the entry and of its `message` are read. Parsing every
 * line is what makes opening cost what pi's does; this costs a fraction of it.
 *
 * What the walk proves of a line, and so what a lazy open tells apart exactly as a full open does: it is
 * one whole JSON object. A line cut at any byte (a torn append) ends inside a string or an open bracket;
 * two lines run together after a torn one (the next append fused onto it) leave a bracket open, or put
 * the second line's text where only JSON punctuation may stand; both are refused here and parsed (and
 * reported) the ordinary way. What it does not check is the inside of strings (a raw control character,
 * a bad escape, UTF-8) and the order of the tokens between strings beyond where a string may start: a
 * line damaged only so is indexed, and reading its body gives a `SessionFormatError` naming the line (a
 * full open skips it); bytes that are not UTF-8 read, as in a full open, with U+FFFD, but without the
 * `invalid-utf8` diagnostic.
 * @module
 */
import { isWord } from "./byte-words.ts";
import type { SessionEntry } from "./entries.ts";
import { SPAN_SLOT } from "./entry-bodies.ts";
import { MAX_NESTING_DEPTH } from "./jsonl.ts";
import {
	createWasmLineWalk,
	VALUE_ESCAPED,
	VALUE_OBJECT,
	VALUE_STRING,
	type WalkedSpans,
	type WalkTables,
	type WasmLineWalk,
} from "./line-walk-wasm.ts";
import { decodeUtf8 } from "./utf8-decode.ts";

/** Lines shorter than this are kept whole: their structure would take about as much memory as they do. */
export const DEFER_LINE_BYTES = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** Entry kinds kept whole however long: the tree's labels, name and settings, and the compaction rules read them. */
const KEPT_WHOLE: ReadonlySet<string> = new Set([
	"compaction",
	"label",
	"session_info",
	"model_change",
	"thinking_level_change",
]);

const encoder = new TextEncoder();
// A value may begin with U+FEFF, which JSON.parse keeps: it is not a byte-order mark here.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** The entry's keys whose values are structure (`message` is entered; `summary` only says whether it is empty). */
const TOP_NAMES = [
	"type",
	"id",
	"parentId",
	"timestamp",
	"targetId",
	"fromId",
	"customType",
	"display",
	"replacement",
	"summary",
	"message",
];
const TOP_KEYS = TOP_NAMES.map((key) => encoder.encode(key));
const REPLACEMENT = TOP_NAMES.indexOf("replacement");
const TYPE = TOP_NAMES.indexOf("type");
const PARENT_ID = TOP_NAMES.indexOf("parentId");
const SUMMARY = TOP_NAMES.indexOf("summary");
const MESSAGE = TOP_NAMES.indexOf("message");
/** The message's keys whose values are structure. */
const MESSAGE_NAMES = ["role", "provider", "model"];
const MESSAGE_KEYS = MESSAGE_NAMES.map((key) => encoder.encode(key));

/** Index in `keys` of the key `bytes[start, end)` (its raw bytes: a key written with an escape matches none), or -1. */
function keyIndex(bytes: Uint8Array, start: number, end: number, keys: readonly Uint8Array[]): number {
	for (let index = 0; index < keys.length; index++)
		if (isWord(bytes, start, end, keys[index] as Uint8Array)) return index;
	return -1;
}

/**
 * Bytes that may stand between strings in JSON: whitespace, punctuation, and what numbers, `true`,
 * `false` and `null` are made of. Two lines run together after a cut inside a string put the text of the
 * second line's strings between "strings" (its keys, at least, hold other letters), so this catches them.
 */
const BETWEEN_STRINGS = new Uint8Array(256);
for (const byte of encoder.encode(" \t\r{}[]:,0123456789+-.eEtruefalsn")) BETWEEN_STRINGS[byte] = 1;

/**
 * The closing quote of the string that opens at `open`: the next quote not escaped (preceded by an even
 * number of backslashes); -1 if none. Escapes themselves are not checked (damage inside a string).
 */
function closingQuote(bytes: Uint8Array, open: number): number {
	for (let close = bytes.indexOf(QUOTE, open + 1); close !== -1; close = bytes.indexOf(QUOTE, close + 1)) {
		let backslashes = 0;
		while (bytes[close - 1 - backslashes] === BACKSLASH) backslashes++;
		if ((backslashes & 1) === 0) return close;
	}
	return -1;
}

function isWhitespace(byte: number | undefined): boolean {
	return byte === 0x20 || byte === 0x09 || byte === 0x0d;
}

function hasBackslash(bytes: Uint8Array, start: number, end: number): boolean {
	for (let at = start; at < end; at++) if (bytes[at] === BACKSLASH) return true;
	return false;
}

/** A value that is not a string, from its text in a gap between strings (`undefined` when it is not JSON). */
function scalarOf(bytes: Uint8Array, start: number, end: number): unknown {
	try {
		return JSON.parse(decoder.decode(bytes.subarray(start, end)));
	} catch {
		return undefined;
	}
}

/**
 * The few values that repeat from entry to entry (kinds, roles, providers, models), one string each:
 * a million entries then hold a few strings, not a million copies.
 */
const repeated = new Map<string, string>();

function shared(text: string): string {
	const known = repeated.get(text);
	if (known !== undefined) return known;
	if (repeated.size < 4096) repeated.set(text, text);
	return text;
}

/** The slots whose values are shared strings: the entry's kind, and the message's keys (role, provider, model). */
function isSharedSlot(slot: number): boolean {
	return slot === TYPE || slot >= TOP_NAMES.length;
}

/** Per slot of a shared value, the last few distinct values read. */
const RECENT_VALUES = 4;
const recentBySlot: (string[] | undefined)[] = Array.from(
	{ length: TOP_NAMES.length + MESSAGE_NAMES.length },
	(_, slot) => (isSharedSlot(slot) ? [] : undefined),
);

/**
 * Whether `bytes[start, end)`, as the text of a JSON string, is `text`: only for bytes that are ASCII and
 * no backslash, whose text is the bytes themselves (anything else is decoded).
 */
function isAsciiText(bytes: Uint8Array, start: number, end: number, text: string): boolean {
	if (text.length !== end - start) return false;
	for (let at = start; at < end; at++) {
		const byte = bytes[at] as number;
		if (byte >= 0x80 || byte === BACKSLASH || text.charCodeAt(at - start) !== byte) return false;
	}
	return true;
}

/** The id of the last entry walked: the next one's parent, in a linear session, so its string is shared. */
let lastId: unknown;

/** The string of the quoted JSON string `bytes[open, close]`, decoded; `undefined` when it is not valid. */
function stringAt(bytes: Uint8Array, open: number, close: number): unknown {
	let escaped = false;
	for (let at = open + 1; at < close && !escaped; at++) escaped = bytes[at] === BACKSLASH;
	return escaped ? scalarOf(bytes, open, close + 1) : decodeUtf8(bytes, open + 1, close);
}

/** The brackets open at each depth of the line being walked (`{` or `[`), reused from line to line. */
let opened: Uint8Array = new Uint8Array(64);

function grown(array: Uint8Array): Uint8Array {
	const bigger = new Uint8Array(array.length * 2);
	bigger.set(array);
	return bigger;
}

/** A key's value waiting to be read: where it is written (in the entry or its message) and its name. */
interface PendingValue {
	inMessage: boolean;
	index: number;
}

/** The structural values of a walked line: of the entry (`top`) and of its message object, if it has one. */
interface Walked {
	top: Record<string, unknown>;
	message?: Record<string, unknown>;
}

/**
 * Walk a line (see the module's comment) in JavaScript: `undefined` unless it is one whole JSON object;
 * otherwise its structural values.
 */
function walk(bytes: Uint8Array, maxDepth: number): Walked | undefined {
	const length = bytes.length;
	let start = 0;
	while (isWhitespace(bytes[start])) start++;
	if (bytes[start] !== 0x7b) return undefined;
	const top: Record<string, unknown> = {};
	let message: Record<string, unknown> | undefined;
	let messageDepth = -1;
	let depth = 0;
	let pending: PendingValue | undefined;
	let at = start;
	/** The last byte before the next string that is not whitespace: a string may only follow `:`, `,`, `{` or `[`. */
	let last = 0;
	for (;;) {
		const open = bytes.indexOf(QUOTE, at);
		const gapEnd = open < 0 ? length : open;
		// The gap between strings: brackets, and the values of pending keys that are not strings.
		for (let k = at; k < gapEnd; k++) {
			const byte = bytes[k] as number;
			if (BETWEEN_STRINGS[byte] !== 1) return undefined;
			if (!isWhitespace(byte)) last = byte;
			if (byte === 0x7b || byte === 0x5b) {
				if (pending) {
					// The message object is entered, a replacement object is one; any other container is unusual.
					const opensObject = byte === 0x7b && !pending.inMessage;
					if (opensObject && pending.index === MESSAGE) {
						message = {};
						top.message = message;
						messageDepth = depth + 1;
					} else if (opensObject && pending.index === REPLACEMENT) top.replacement = {};
					else return undefined;
					pending = undefined;
				}
				if (depth >= maxDepth) return undefined; // too deep to defer: a full parse reports it
				if (depth === opened.length) opened = grown(opened);
				opened[depth++] = byte;
			} else if (byte === 0x7d || byte === 0x5d) {
				// A closing bracket must close the last one opened, of its own kind.
				if (depth === 0 || opened[depth - 1] !== byte - 2) return undefined;
				if (pending) takeScalar(bytes, at, k, pending, pending.inMessage ? message : top);
				pending = undefined;
				if (depth === messageDepth) messageDepth = -1;
				depth--;
				// The object closes: only whitespace may follow.
				if (depth === 0) {
					let rest = k + 1;
					while (isWhitespace(bytes[rest])) rest++;
					return rest === length ? { top, message } : undefined;
				}
			} else if (byte === 0x2c && pending) {
				takeScalar(bytes, at, k, pending, pending.inMessage ? message : top);
				pending = undefined;
			}
		}
		if (open < 0) return undefined; // the line ends with a bracket open
		if (last !== COLON && last !== 0x2c && last !== 0x7b && last !== 0x5b) return undefined;
		const close = closingQuote(bytes, open);
		if (close < 0) return undefined; // the line ends inside a string
		let next = close + 1;
		while (isWhitespace(bytes[next])) next++;
		if (bytes[next] === COLON) {
			// A key: of the entry (depth 1) or of its message.
			// A key written with an escape may be a structural one in disguise: left to a full parse.
			if ((depth === 1 || depth === messageDepth) && hasBackslash(bytes, open + 1, close)) return undefined;
			if (depth === 1) {
				const index = keyIndex(bytes, open + 1, close, TOP_KEYS);
				pending = index < 0 ? undefined : { inMessage: false, index };
			} else if (depth === messageDepth) {
				const index = keyIndex(bytes, open + 1, close, MESSAGE_KEYS);
				pending = index < 0 ? undefined : { inMessage: true, index };
			} else pending = undefined;
			at = next + 1;
			last = COLON;
		} else {
			if (pending) {
				const target = pending.inMessage ? (message as Record<string, unknown>) : top;
				const slot = pending.inMessage ? TOP_NAMES.length + pending.index : pending.index;
				target[nameOf(pending)] = stringValue(bytes, open, close, slot);
				pending = undefined;
			}
			at = close + 1;
			last = QUOTE;
		}
	}
}

/**
 * The value of the string `bytes[open, close]` (quotes included) of the key in `slot` (the entry's keys,
 * then the message's): a summary only says whether it is empty, kinds and roles are shared strings, and a
 * parent that is the last entry walked shares its id.
 */
function stringValue(bytes: Uint8Array, open: number, close: number, slot: number): unknown {
	if (slot === SUMMARY) return close > open + 1 ? "~" : ""; // not empty: its text is a body
	// Most values are one seen just before: compared as bytes, they need no decoding.
	if (slot === PARENT_ID && typeof lastId === "string" && isAsciiText(bytes, open + 1, close, lastId)) return lastId;
	const recent = recentBySlot[slot];
	if (recent) for (const text of recent) if (isAsciiText(bytes, open + 1, close, text)) return text;
	const value = stringAt(bytes, open, close);
	if (recent && typeof value === "string") {
		const text = shared(value);
		if (recent.length === RECENT_VALUES) recent.pop();
		recent.unshift(text);
		return text;
	}
	return slot === PARENT_ID && value === lastId ? lastId : value;
}

function nameOf(pending: PendingValue): string {
	return (pending.inMessage ? MESSAGE_NAMES : TOP_NAMES)[pending.index] as string;
}

/** Set the value of `pending` in `target` from its text in the gap `bytes[from, to)` (after its colon). */
function takeScalar(
	bytes: Uint8Array,
	from: number,
	to: number,
	pending: PendingValue,
	target: Record<string, unknown> | undefined,
): void {
	let start = from;
	while (start < to && (bytes[start] === COLON || isWhitespace(bytes[start]))) start++;
	if (target && start < to) target[nameOf(pending)] = scalarOf(bytes, start, to);
}

/**
 * The message part of a structure, one frozen object for each role, provider and model seen (a few in a
 * session): a million entries then keep one object each, not two. An assistant's provider and model are
 * kept, another role's are not.
 */
const messageStructures = new Map<unknown, Map<unknown, Map<unknown, object>>>();

function messageStructure(role: unknown, provider: unknown, model: unknown): object {
	// Only an assistant's provider and model are kept, so only they tell structures apart.
	const assistant = role === "assistant";
	const keptProvider = assistant ? provider : undefined;
	const keptModel = assistant ? model : undefined;
	const byProvider = messageStructures.get(role) ?? new Map<unknown, Map<unknown, object>>();
	const byModel = byProvider.get(keptProvider) ?? new Map<unknown, object>();
	let known = byModel.get(keptModel);
	if (!known) {
		known = Object.freeze(assistant ? { role, provider, model } : { role });
		if (messageStructures.size < 64 && byProvider.size < 64 && byModel.size < 256) {
			messageStructures.set(role, byProvider);
			byProvider.set(keptProvider, byModel);
			byModel.set(keptModel, known);
		}
	}
	return known;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Slot numbers of the entry's keys the structure reads (the message's follow them). */
const ID = TOP_NAMES.indexOf("id");
const TIMESTAMP = TOP_NAMES.indexOf("timestamp");
const FROM_ID = TOP_NAMES.indexOf("fromId");
const TARGET_ID = TOP_NAMES.indexOf("targetId");
const CUSTOM_TYPE = TOP_NAMES.indexOf("customType");
const DISPLAY = TOP_NAMES.indexOf("display");
const ROLE = TOP_NAMES.length + MESSAGE_NAMES.indexOf("role");
const PROVIDER = TOP_NAMES.length + MESSAGE_NAMES.indexOf("provider");
const MODEL = TOP_NAMES.length + MESSAGE_NAMES.indexOf("model");

/**
 * What the tree keeps of a deferred entry, from the structural values of its line by slot (`values`): its
 * kind, id, parent and time, and the few fields that the tree, the context rules and the outline read (a
 * message's role, and an assistant's provider and model). `undefined` for an entry that must be kept whole
 * (a system message, a message that is no object). Each kind's structure is one object literal with the
 * slot of its span (`SPAN_SLOT`) in it: a field added after would put the object's extra fields in a second
 * object (24 bytes an entry more, measured).
 */
function structureOf(values: readonly unknown[]): SessionEntry | undefined {
	const type = values[TYPE];
	const id = values[ID];
	const parentId = values[PARENT_ID];
	const timestamp = values[TIMESTAMP];
	let structure: Record<string | symbol, unknown>;
	switch (type) {
		case "message": {
			if (!isPlainObject(values[MESSAGE]) || values[ROLE] === "system") return undefined;
			const message = messageStructure(values[ROLE], values[PROVIDER], values[MODEL]);
			structure = { type, id, parentId, timestamp, message, [SPAN_SLOT]: -1 };
			break;
		}
		case "branch_summary":
			structure = { type, id, parentId, timestamp, fromId: values[FROM_ID], summary: values[SUMMARY], [SPAN_SLOT]: -1 };
			break;
		case "context_edit":
			// Only whether there is a replacement, and whether it removes, is structure.
			structure = {
				type,
				id,
				parentId,
				timestamp,
				targetId: values[TARGET_ID],
				replacement: values[REPLACEMENT],
				[SPAN_SLOT]: -1,
			};
			break;
		case "custom_message":
			structure = {
				type,
				id,
				parentId,
				timestamp,
				customType: values[CUSTOM_TYPE],
				display: values[DISPLAY],
				[SPAN_SLOT]: -1,
			};
			break;
		case "custom":
			structure = { type, id, parentId, timestamp, customType: values[CUSTOM_TYPE], [SPAN_SLOT]: -1 };
			break;
		default:
			structure = { type, id, parentId, timestamp, [SPAN_SLOT]: -1 };
			break;
	}
	return structure as unknown as SessionEntry;
}

/** The walk in WebAssembly, made on first use (`undefined` where it cannot run; `null` before). */
let wasmWalk: WasmLineWalk | undefined | null = null;

/** What the WebAssembly walk is given: the structural keys, and the bytes allowed between strings. */
export const LINE_WALK_TABLES: WalkTables = {
	topKeys: TOP_KEYS.map((key, index) => ({
		key,
		object: index === MESSAGE ? "entered" : index === REPLACEMENT ? "taken" : "none",
	})),
	messageKeys: MESSAGE_KEYS,
	between: BETWEEN_STRINGS,
};

function wasmLineWalk(): WasmLineWalk | undefined {
	if (wasmWalk === null) wasmWalk = createWasmLineWalk(LINE_WALK_TABLES);
	return wasmWalk;
}

/** The names of the walk's slots: the entry's keys, then the message's. */
const SLOT_NAMES = [...TOP_NAMES, ...MESSAGE_NAMES];

/** The value of the message slot of a line whose message is an object (what the walk tells of it). */
const ENTERED_MESSAGE: Readonly<Record<string, never>> = Object.freeze({});

/** The structural values of the line walked last, by slot; `undefined` where its key is absent. */
const slotValues: unknown[] = SLOT_NAMES.map(() => undefined);

/**
 * The structural values of a line from the spans the WebAssembly walk left, into `slotValues` (no object
 * per line: a lazy open walks millions). An object value is `{}`: the message entered, or a replacement.
 */
function valuesOfSpans(bytes: Uint8Array, { kinds, starts, ends }: WalkedSpans): unknown[] {
	const entered = kinds[MESSAGE] === VALUE_OBJECT;
	for (let slot = 0; slot < SLOT_NAMES.length; slot++) {
		const kind = kinds[slot];
		const start = starts[slot] as number;
		const end = ends[slot] as number;
		// The message's keys count only inside a message object.
		if (!kind || (slot >= TOP_NAMES.length && !entered)) slotValues[slot] = undefined;
		// The message is only entered (its keys are slots of their own): one object stands for every one.
		else if (kind === VALUE_OBJECT) slotValues[slot] = slot === MESSAGE ? ENTERED_MESSAGE : {};
		else if (kind === VALUE_STRING) slotValues[slot] = stringValue(bytes, start - 1, end, slot);
		else if (kind === VALUE_ESCAPED) slotValues[slot] = stringValue(bytes, start, end - 1, slot);
		else slotValues[slot] = scalarOf(bytes, start, end);
	}
	return slotValues;
}

/** The structural values of a line the JavaScript walk took, by slot (as `valuesOfSpans`). */
function valuesOfWalked({ top, message }: Walked): unknown[] {
	for (let slot = 0; slot < SLOT_NAMES.length; slot++) {
		const name = SLOT_NAMES[slot] as string;
		slotValues[slot] = slot < TOP_NAMES.length ? top[name] : message?.[name];
	}
	return slotValues;
}

/** Which walk proves a line whole: the WebAssembly one where it runs (the default), or the JavaScript one. */
export type LineWalker = "wasm" | "javascript";

/** The walk lines are proven whole with on this runtime (`"javascript"` where WebAssembly cannot run). */
export function lineWalkInUse(): LineWalker {
	return wasmLineWalk() ? "wasm" : "javascript";
}

/** The structural values of a line by slot, or `undefined` unless it is one whole JSON object. */
function walkLine(bytes: Uint8Array, walker: LineWalker, maxDepth: number): unknown[] | undefined {
	const spans = walker === "wasm" ? wasmLineWalk()?.walk(bytes, maxDepth) : undefined;
	if (spans === false) return undefined;
	if (spans) return valuesOfSpans(bytes, spans);
	const walked = walk(bytes, maxDepth);
	return walked && valuesOfWalked(walked);
}

/**
 * The structure of a line worth deferring, or `undefined` when it must be read the ordinary way: it is
 * short, not one whole JSON object, not an entry, of a kind the tree keeps whole, or nested deeper than
 * `maxDepth` (the ordinary read skips it as `too-deep`).
 */
export function lineStructure(
	bytes: Uint8Array,
	walker: LineWalker = "wasm",
	maxDepth: number = MAX_NESTING_DEPTH,
): SessionEntry | undefined {
	if (bytes.length < DEFER_LINE_BYTES) return undefined;
	const values = walkLine(bytes, walker, maxDepth);
	const type = values?.[TYPE];
	if (!values || typeof type !== "string" || KEPT_WHOLE.has(type)) return undefined;
	const structure = structureOf(values);
	if (structure) lastId = structure.id;
	return structure;
}
