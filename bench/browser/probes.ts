/**
 * What the benchmark watches from outside the page (Node reads it; the page runs none of it):
 * - the engine worker's JS heap, through the Chrome DevTools Protocol on the worker's own target
 *   (`Runtime.getHeapUsage`, sampled while a case runs: V8's heap and the ArrayBuffers' backing stores),
 *   and a full garbage collection there before each case (`HeapProfiler.collectGarbage`);
 * - the renderer processes' peak resident memory (`VmHWM` in /proc, reset before each case through
 *   `/proc/<pid>/clear_refs`): the page and its dedicated worker live in one renderer process; and the
 *   browser process's the same way (it keeps `Blob`s, and serves OPFS).
 * @module
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import type { CDPSession } from "playwright";

/** A DevTools session on a dedicated worker, reached through its page's session (`Target.sendMessageToTarget`). */
export class WorkerTarget {
	readonly #page: CDPSession;
	readonly #sessionId: string;
	#nextId = 1;
	readonly #pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
	readonly #listener: (event: { sessionId: string; message: string }) => void;

	private constructor(page: CDPSession, sessionId: string) {
		this.#page = page;
		this.#sessionId = sessionId;
		this.#listener = ({ sessionId, message }) => {
			if (sessionId !== this.#sessionId) return;
			const reply = JSON.parse(message) as { id?: number; result?: unknown; error?: { message: string } };
			const waiting = reply.id === undefined ? undefined : this.#pending.get(reply.id);
			if (!waiting || reply.id === undefined) return;
			this.#pending.delete(reply.id);
			if (reply.error) waiting.reject(new Error(`CDP: ${reply.error.message}`));
			else waiting.resolve(reply.result);
		};
		page.on("Target.receivedMessageFromTarget", this.#listener);
	}

	/** Attach to the one live dedicated worker titled `title` (the Worker's `name`), through `session`. */
	static async attach(session: CDPSession, title: string): Promise<WorkerTarget> {
		for (let attempt = 0; ; attempt++) {
			const { targetInfos } = await session.send("Target.getTargets");
			const found = targetInfos.filter((info) => info.type === "worker" && info.title === title);
			if (found.length === 1 && found[0]) {
				const { sessionId } = await session.send("Target.attachToTarget", {
					targetId: found[0].targetId,
					flatten: false,
				});
				return new WorkerTarget(session, sessionId);
			}
			if (found.length > 1) throw new Error(`${found.length} workers are titled ${title}`);
			if (attempt > 50) throw new Error(`no worker titled ${title}`);
			await new Promise((resolve) => setTimeout(resolve, 20));
		}
	}

	send<T>(method: string, params: object = {}): Promise<T> {
		const id = this.#nextId++;
		const answer = new Promise<T>((resolve, reject) => {
			this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
		});
		void this.#page
			.send("Target.sendMessageToTarget", {
				sessionId: this.#sessionId,
				message: JSON.stringify({ id, method, params }),
			})
			.catch((error: Error) => this.#pending.get(id)?.reject(error));
		return answer;
	}

	/** V8's heap in use plus the ArrayBuffers' backing stores, bytes. */
	async heapBytes(): Promise<number> {
		const usage = await this.send<{ usedSize: number; backingStorageSize?: number }>("Runtime.getHeapUsage");
		return usage.usedSize + (usage.backingStorageSize ?? 0);
	}

	collectGarbage(): Promise<unknown> {
		return this.send("HeapProfiler.collectGarbage");
	}

	/** Sample `heapBytes` every `everyMs` until `stop()`, which gives the largest sample. */
	sampleHeap(everyMs = 20): { stop(): Promise<number> } {
		let peak = 0;
		let running = true;
		const loop = (async () => {
			while (running) {
				peak = Math.max(peak, await this.heapBytes().catch(() => 0));
				await new Promise((resolve) => setTimeout(resolve, everyMs));
			}
		})();
		return {
			async stop() {
				running = false;
				await loop;
				return peak;
			},
		};
	}

	async detach(): Promise<void> {
		this.#page.off("Target.receivedMessageFromTarget", this.#listener);
		for (const { reject } of this.#pending.values()) reject(new Error("detached"));
		this.#pending.clear();
		await this.#page.send("Target.detachFromTarget", { sessionId: this.#sessionId }).catch(() => undefined);
	}
}

/** Renderer processes that descend from this process (of the Chromium Playwright launched from here). */
export function rendererPids(): number[] {
	return chromiumPids("renderer");
}

/**
 * Browser processes (Chromium's main process, no `--type=`) that descend from this process: where a `Blob`'s
 * bytes are kept (in memory, or in files of the profile past a limit), and what serves OPFS.
 */
export function browserPids(): number[] {
	return chromiumPids("browser");
}

function chromiumPids(kind: "renderer" | "browser"): number[] {
	const parents = new Map<number, number>();
	const renderers: number[] = [];
	for (const name of readdirSync("/proc")) {
		if (!/^\d+$/.test(name)) continue;
		try {
			const stat = readFileSync(`/proc/${name}/stat`, "utf8");
			// The command name is in parentheses and may hold spaces: the parent pid follows the last ")".
			const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
			parents.set(Number(name), parent);
			const command = readFileSync(`/proc/${name}/cmdline`, "utf8");
			const type = /--type=([a-z-]+)/.exec(command)?.[1];
			const program = (command.split("\0")[0] ?? "").split("/").pop() ?? "";
			const browser = type === undefined && /^(chromium|chrome|headless_shell)$/.test(program);
			if (kind === "renderer" ? type === "renderer" : browser) renderers.push(Number(name));
		} catch {
			// The process ended meanwhile.
		}
	}
	const ours = (pid: number): boolean => {
		for (let at = parents.get(pid); at !== undefined && at > 1; at = parents.get(at))
			if (at === process.pid) return true;
		return false;
	};
	return renderers.filter(ours);
}

function statusKb(pid: number, field: "VmHWM" | "VmRSS"): number {
	const status = readFileSync(`/proc/${pid}/status`, "utf8");
	const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
	return match ? Number(match[1]) : 0;
}

/** Whether peak resident memory can be reset here (Linux, `clear_refs` writable). */
export function canTrackRss(): boolean {
	try {
		writeFileSync("/proc/self/clear_refs", "5");
		return true;
	} catch {
		return false;
	}
}

/**
 * Reset the peak resident memory of renderer processes `pids` to their current size; `stop()` gives the
 * largest peak since, bytes. Pass the processes a page brought: its own, and maybe a spare one Chromium
 * keeps ready (idle, and smaller). Any other processes' too (`browserPids`).
 */
export function trackRendererRss(pids: readonly number[]): { stop(): number } {
	for (const pid of pids) {
		try {
			writeFileSync(`/proc/${pid}/clear_refs`, "5");
		} catch {
			// Gone meanwhile.
		}
	}
	return {
		stop() {
			let peak = 0;
			for (const pid of pids) {
				try {
					peak = Math.max(peak, statusKb(pid, "VmHWM"));
				} catch {
					// Gone meanwhile.
				}
			}
			return peak * 1024;
		},
	};
}
