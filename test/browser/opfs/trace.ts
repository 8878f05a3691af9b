/**
 * Counts the OPFS calls a piece of code makes, by wrapping the methods of OPFS's prototypes while it runs:
 * what an append costs, as operations and bytes, without timing anything.
 * @module
 */

/**
 * Calls by method (`FileSystemSyncAccessHandle.write`, …; a sync access handle asked for in a mode is
 * counted under `…createSyncAccessHandle(mode)` too), and the bytes read and written.
 */
export interface OpCount {
	calls: Record<string, number>;
	bytesRead: number;
	bytesWritten: number;
}

type Method = (this: unknown, ...args: unknown[]) => unknown;

/** The prototypes and methods counted. Reads of `File`s count the bytes of what they resolve with. */
const TRACED: Record<string, string[]> = {
	FileSystemSyncAccessHandle: ["read", "write", "getSize", "flush", "truncate", "close"],
	FileSystemFileHandle: ["getFile", "createSyncAccessHandle", "createWritable", "move"],
	FileSystemDirectoryHandle: ["getFileHandle", "getDirectoryHandle", "removeEntry", "entries"],
	Blob: ["slice", "arrayBuffer"],
};

/** Run `body`, counting its OPFS calls. */
export async function traceOpfs(body: () => Promise<void>): Promise<OpCount> {
	const count: OpCount = { calls: {}, bytesRead: 0, bytesWritten: 0 };
	const restore: (() => void)[] = [];
	for (const [type, methods] of Object.entries(TRACED)) {
		const proto = (globalThis as unknown as Record<string, { prototype: Record<string, Method> }>)[type]?.prototype;
		if (!proto) throw new Error(`${type} is not in this context`);
		for (const method of methods) {
			const original = proto[method] as Method;
			const key = `${type}.${method}`;
			proto[method] = function (this: unknown, ...args: unknown[]) {
				count.calls[key] = (count.calls[key] ?? 0) + 1;
				if (key === "FileSystemFileHandle.createSyncAccessHandle" && (args[0] as { mode?: string })?.mode) {
					const moded = `${key}(${(args[0] as { mode: string }).mode})`;
					count.calls[moded] = (count.calls[moded] ?? 0) + 1;
				}
				const result = original.apply(this, args);
				if (key === "FileSystemSyncAccessHandle.write") count.bytesWritten += (args[0] as Uint8Array).byteLength;
				if (key === "FileSystemSyncAccessHandle.read") count.bytesRead += result as number;
				if (key === "Blob.arrayBuffer") {
					void (result as Promise<ArrayBuffer>).then((buffer) => {
						count.bytesRead += buffer.byteLength;
					});
				}
				return result;
			};
			restore.push(() => {
				proto[method] = original;
			});
		}
	}
	try {
		await body();
	} finally {
		for (const undo of restore) undo();
	}
	return count;
}
