/**
 * A storage that fails on purpose: each operation is shown to a `FaultPlan`, which may answer with a fault
 * to inject instead of (or around) the real operation. The faults are the ways a real disk and file system
 * fail: an error before anything happens (EIO, EMFILE, ENOSPC), an append cut short by a full disk, a write
 * whose flush fails after its bytes reached the file, and an operation done whose success is not reported
 * (a rename made, then the directory's flush failing).
 */
import { type Storage, StorageError, type StorageErrorCode, type StorageOps } from "../../src/storage.ts";

export type Operation = keyof StorageOps;

export type Fault =
	/** Nothing is done; the operation fails with this code (`io` by default; `errno` names the cause). */
	| { kind: "fail"; code?: StorageErrorCode; errno?: string }
	/** An append writes only its first `keep` bytes (at least one, less than all), then fails: a full disk. */
	| { kind: "short"; keep: number }
	/** A durable append or create is written but its flush fails: the bytes are in the file, the call fails. */
	| { kind: "flush" }
	/** The operation is done, then fails as if it were not (the caller cannot tell which). */
	| { kind: "after" };

/** One operation as the plan sees it: its name, arguments and its number among all operations so far. */
export interface Call {
	op: Operation;
	args: unknown[];
	/** The operation's path (the source of a rename or link). */
	path: string;
	/** 0-based count of operations before this one. */
	index: number;
}

/** Decides, for each operation, whether and how it fails. */
export type FaultPlan = (call: Call) => Fault | undefined;

/** What happened: every call, and the faults injected. */
export interface FaultLog {
	calls: Call[];
	injected: { call: Call; fault: Fault }[];
}

/** An injected failure, as a storage adapter would report it. */
export function injectedError(call: Call, fault: Fault): StorageError {
	const code = fault.kind === "fail" ? (fault.code ?? "io") : "io";
	const errno = fault.kind === "fail" ? (fault.errno ?? "EIO") : fault.kind === "short" ? "ENOSPC" : "EIO";
	return new StorageError(
		code,
		call.path,
		`${code}: ${call.path}: injected ${fault.kind} fault (${errno}) in ${call.op}`,
	);
}

/**
 * `inner` with the faults `plan` asks for. The plan may be changed later (`setPlan`), so a test can write
 * through a healthy storage, then turn faults on.
 */
export function faultyStorage(
	inner: Storage,
	plan: FaultPlan = () => undefined,
): {
	storage: Storage;
	log: FaultLog;
	setPlan(next: FaultPlan): void;
} {
	let current = plan;
	const log: FaultLog = { calls: [], injected: [] };
	const call = <K extends Operation>(op: K, args: Parameters<Storage[K]>): Promise<Awaited<ReturnType<Storage[K]>>> => {
		const entry: Call = { op, args, path: String(args[0]), index: log.calls.length };
		log.calls.push(entry);
		const fault = current(entry);
		const real = () => (inner[op] as (...a: unknown[]) => Promise<Awaited<ReturnType<Storage[K]>>>)(...args);
		if (!fault) return real();
		log.injected.push({ call: entry, fault });
		return inject(entry, fault, real, inner) as Promise<Awaited<ReturnType<Storage[K]>>>;
	};
	const storage: Storage = {
		readRange: (...args) => call("readRange", args),
		append: (...args) => call("append", args),
		createExclusive: (...args) => call("createExclusive", args),
		replace: (...args) => call("replace", args),
		rename: (...args) => call("rename", args),
		link: (...args) => call("link", args),
		stat: (...args) => call("stat", args),
		list: (...args) => call("list", args),
		mkdir: (...args) => call("mkdir", args),
		remove: (...args) => call("remove", args),
	};
	return {
		storage,
		log,
		setPlan(next) {
			current = next;
		},
	};
}

async function inject(call: Call, fault: Fault, real: () => Promise<unknown>, inner: Storage): Promise<unknown> {
	const error = injectedError(call, fault);
	switch (fault.kind) {
		case "fail":
			throw error;
		case "after":
			await real();
			throw error;
		case "short": {
			if (call.op !== "append") throw error; // only appends can be cut short: creates are whole or nothing
			const [path, data, , atSize] = call.args as Parameters<Storage["append"]>;
			const keep = Math.max(1, Math.min(fault.keep, data.length - 1));
			if (data.length > 1) await inner.append(path, data.subarray(0, keep), false, atSize);
			throw error;
		}
		case "flush": {
			if (call.op === "append") {
				const [path, data, , atSize] = call.args as Parameters<Storage["append"]>;
				await inner.append(path, data, false, atSize);
			} else if (call.op === "createExclusive") {
				const [path, chunks] = call.args as Parameters<Storage["createExclusive"]>;
				await inner.createExclusive(path, chunks, false);
			}
			// A replace whose temporary file cannot be flushed is never renamed: nothing changes.
			throw error;
		}
	}
}

/** A plan that fails the `n`th call (0-based) matching `match`, with `fault`; nothing else. */
export function failNth(match: (call: Call) => boolean, n: number, fault: Fault): FaultPlan {
	let seen = 0;
	return (call) => {
		if (!match(call)) return undefined;
		return seen++ === n ? fault : undefined;
	};
}

/** Calls on a session's own file (`.jsonl`), not its lock, temporaries or backups. */
export const onSessionFile =
	(op: Operation) =>
	(call: Call): boolean =>
		call.op === op && call.path.endsWith(".jsonl");
