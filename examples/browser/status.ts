/**
 * The status line, and the page's busy count (`body[data-busy]`): every action runs through `run`, which
 * shows what is going on, reports a failure in words instead of dropping it, and lets a person (or the
 * end-to-end test) see when the page is idle again.
 */
import { byId } from "./dom.ts";

// index.html starts busy: the engine is not there yet.
let busy = 1;

function setBusy(delta: number): void {
	busy += delta;
	document.body.dataset.busy = String(busy);
}

/** Say something in the status line (an error in red). */
export function say(text: string, error = false): void {
	const status = byId("status");
	status.textContent = text;
	status.classList.toggle("error", error);
}

/** What an error says, with its class name (errors from the worker keep theirs). */
export function describeError(error: unknown): string {
	return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Run `action` as one busy step: `label` shows meanwhile, a failure is shown, never thrown. */
export async function run<T>(label: string, action: () => Promise<T>): Promise<T | undefined> {
	setBusy(1);
	say(`${label}…`);
	try {
		const result = await action();
		say("");
		return result;
	} catch (error) {
		console.error(error);
		say(`${label} failed: ${describeError(error)}`, true);
		return undefined;
	} finally {
		setBusy(-1);
	}
}

/** The page finished starting (index.html starts busy until the engine is there). */
export function started(): void {
	setBusy(-1);
}
