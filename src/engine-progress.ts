/**
 * Progress callbacks of long engine work (opening, listing), which may live on another thread.
 * @module
 */

/** Progress of long work: `(done, total)` in bytes (opening) or files (listing). */
export type ProgressCallback = (done: number, total: number) => void;

/**
 * A progress callback from another thread answers each call with a promise, delivered on its own
 * channel. The work's result must not overtake those answers, and a callback that fails must fail the
 * work (as a callback that throws in-process does) rather than go unhandled: `settled` waits for the last
 * answer and rethrows the first failure. A cancellation that arrived meanwhile (the caller may abort from
 * the very callback, and the abort crosses on its own channel) cancels the work, though it is done.
 */
export function trackProgress(onProgress: ProgressCallback | undefined): {
	callback: ProgressCallback | undefined;
	settled(signal?: AbortSignal): Promise<void>;
} {
	let last: Promise<void> | undefined;
	let failure: { error: unknown } | undefined;
	return {
		callback:
			onProgress &&
			((done, total) => {
				const answer: unknown = onProgress(done, total);
				if (answer instanceof Promise) {
					last = answer.then(
						() => undefined,
						(error: unknown) => {
							failure ??= { error };
						},
					);
				}
			}),
		async settled(signal?: AbortSignal): Promise<void> {
			await last;
			if (failure) throw failure.error;
			signal?.throwIfAborted();
		},
	};
}
