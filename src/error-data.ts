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
}

/** Fields every error has; carried in their own members of `ErrorData`. */
const STANDARD_FIELDS = new Set(["name", "message", "stack", "cause"]);

/**
 * The data of a thrown value (an `Error` or anything else).
 * @example
 * errorToData(new RangeError("too far")); // { name: "RangeError", message: "too far", stack: "…", fields: {} }
 */
export function errorToData(error: unknown): ErrorData {
	if (!(error instanceof Error)) return { name: "Error", message: String(error), fields: {} };
	const fields: Record<string, unknown> = {};
	for (const [key, value] of Object.entries(error)) {
		if (STANDARD_FIELDS.has(key)) continue;
		try {
			fields[key] = structuredClone(value);
		} catch {
			// Not cloneable (a function, a handle): left out rather than failing the whole error.
		}
	}
	return {
		name: error.name,
		message: error.message,
		stack: error.stack,
		fields,
		cause: error.cause === undefined ? undefined : errorToData(error.cause),
	};
}
