/**
 * Errors as plain data, so that they can cross to another thread whole: class name, message, stack and
 * the error's own fields (a `SessionFormatError`'s file and line, a `SessionLockedError`'s owner, …).
 * The worker client turns them back into instances of the same classes (`pi-session-tree/worker`).
 * @module
 */

/** An error as structured-cloneable data. */
export interface ErrorData {
	name: string;
	message: string;
	stack?: string;
	/** The error's own enumerable fields that can be cloned. */
	fields: Record<string, unknown>;
	cause?: ErrorData;
	/** A `DOMException` (for example an aborted signal's `AbortError`), to be rebuilt as one. */
	domException?: boolean;
}

/** Fields every error has; carried in their own members of `ErrorData`. */
const STANDARD_FIELDS = new Set(["name", "message", "stack", "cause"]);

/**
 * The data of a thrown value (an `Error` or anything else). Never throws: fields that cannot be read or
 * cloned are left out, and a `cause` chain stops where it loops.
 * @example
 * errorToData(new RangeError("too far")); // { name: "RangeError", message: "too far", stack: "…", fields: {} }
 */
export function errorToData(error: unknown, seen: Set<unknown> = new Set()): ErrorData {
	if (!(error instanceof Error)) return { name: "Error", message: text(() => error), fields: {} };
	seen.add(error);
	const fields: Record<string, unknown> = {};
	for (const key of Object.keys(error)) {
		if (STANDARD_FIELDS.has(key)) continue;
		try {
			fields[key] = structuredClone((error as unknown as Record<string, unknown>)[key]);
		} catch {
			// Unreadable or not cloneable (a function, a handle): left out rather than failing the whole error.
		}
	}
	const cause = attempt(() => error.cause);
	return {
		name: text(() => error.name),
		message: text(() => error.message),
		stack: attempt(() => error.stack),
		fields,
		cause: cause === undefined || seen.has(cause) ? undefined : errorToData(cause, seen),
		...(typeof DOMException !== "undefined" && error instanceof DOMException ? { domException: true } : {}),
	};
}

/** `read()`, or undefined when reading throws (a getter that fails). */
function attempt<T>(read: () => T): T | undefined {
	try {
		return read();
	} catch {
		return undefined;
	}
}

/** `String(read())`, or a description of the value when that throws (a null-prototype object). */
function text(read: () => unknown): string {
	const value = attempt(read);
	return attempt(() => String(value)) ?? Object.prototype.toString.call(value);
}
