/**
 * The client's guard against a worker that dies: Comlink never settles a call whose worker is gone.
 * @module
 */

/** The worker is gone: it failed to load, crashed, ran out of memory or was terminated. */
export class EngineWorkerError extends Error {
	override name = "EngineWorkerError";
}

/**
 * Calls waiting on the worker. Every call is guarded: when the worker dies, the calls still waiting, and
 * every later call, reject with the reason.
 */
export class Lifeline {
	readonly #waiting = new Set<(error: EngineWorkerError) => void>();
	#death: EngineWorkerError | undefined;

	/** `promise`, unless the worker dies first. */
	guard<T>(promise: Promise<T>): Promise<T> {
		if (this.#death) return Promise.reject(this.#death);
		return new Promise<T>((resolve, reject) => {
			this.#waiting.add(reject);
			promise.then(resolve, reject).finally(() => this.#waiting.delete(reject));
		});
	}

	get death(): EngineWorkerError | undefined {
		return this.#death;
	}

	/** Record the death (the first one counts) and reject every waiting call. */
	die(death: EngineWorkerError): void {
		if (this.#death) return;
		this.#death = death;
		for (const reject of this.#waiting) reject(death);
		this.#waiting.clear();
	}
}
