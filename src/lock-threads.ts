/**
 * Threads of this process known to have died (Node's `threadId`s, never reused in a process), so that
 * the lock files their engines held can be taken over instead of locking those sessions until the
 * process ends. The worker client reports its worker's death here; a worker it starts later is told.
 * @module
 */

const deadThreads = new Set<number>();

/** Record that the thread `id` of this process has died: its locks are stale. */
export function markThreadDead(id: number): void {
	deadThreads.add(id);
}

/** Whether the thread `id` of this process is known to have died. */
export function isDeadThread(id: number): boolean {
	return deadThreads.has(id);
}

/** Every thread recorded as dead, to pass on to a new worker. */
export function knownDeadThreads(): number[] {
	return [...deadThreads];
}
