/**
 * What can be done to the open session: add a user message, label the selected entry, record a summary
 * of the branch just left, fork the current branch into a new session, download the file. The panel only
 * collects input; the app does the work (in the worker) and says what is possible now (`update`).
 */
import { h } from "./dom.ts";
import { run } from "./status.ts";

export interface SessionActions {
	addMessage(text: string): Promise<void>;
	/** An empty label clears the selected entry's label. */
	setLabel(label: string): Promise<void>;
	addBranchSummary(summary: string): Promise<void>;
	fork(): Promise<void>;
	exportOpen(): Promise<void>;
}

export interface ActionState {
	open: boolean;
	readOnly: boolean;
	selectedId: string | null;
	/** The leaf the last click moved away from: a branch summary describes that branch. */
	leftLeafId: string | null;
	leafId: string | null;
}

export class ActionsPanel {
	readonly #message = h("textarea", { id: "message-text", placeholder: "A user message…" });
	readonly #addMessage = h("button", { type: "button", id: "add-message" }, "Add user message");
	readonly #label = h("input", { id: "label-text", placeholder: "label (empty clears)" });
	readonly #setLabel = h("button", { type: "button", id: "set-label" }, "Label selected entry");
	readonly #left = h("span", { id: "left-branch", class: "muted" });
	readonly #summary = h("textarea", { id: "summary-text", placeholder: "What the branch you left did…" });
	readonly #addSummary = h("button", { type: "button", id: "add-summary" }, "Add branch summary");
	readonly #fork = h("button", { type: "button", id: "fork" }, "Fork branch into a new session");
	readonly #export = h("button", { type: "button", id: "export" }, "Export .jsonl");

	constructor(form: HTMLFormElement, actions: SessionActions) {
		form.addEventListener("submit", (event) => event.preventDefault());
		form.append(
			h("fieldset", {}, h("legend", {}, "Append to the leaf"), this.#message, this.#addMessage),
			h("fieldset", {}, h("legend", {}, "Label"), this.#label, this.#setLabel),
			h("fieldset", {}, h("legend", {}, "Branch with a summary"), this.#left, this.#summary, this.#addSummary),
			h("fieldset", {}, h("legend", {}, "Session"), this.#fork, this.#export),
		);
		this.#on(this.#addMessage, "Adding the message", async () => {
			await actions.addMessage(this.#message.value);
			this.#message.value = "";
		});
		this.#on(this.#setLabel, "Setting the label", async () => {
			await actions.setLabel(this.#label.value.trim());
			this.#label.value = "";
		});
		this.#on(this.#addSummary, "Adding the branch summary", async () => {
			await actions.addBranchSummary(this.#summary.value);
			this.#summary.value = "";
		});
		this.#on(this.#fork, "Forking", () => actions.fork());
		this.#on(this.#export, "Exporting", () => actions.exportOpen());
		this.update({ open: false, readOnly: false, selectedId: null, leftLeafId: null, leafId: null });
	}

	update(state: ActionState): void {
		const writable = state.open && !state.readOnly;
		this.#addMessage.disabled = !writable;
		this.#setLabel.disabled = !writable || state.selectedId === null;
		const canSummarize = writable && state.leftLeafId !== null && state.leftLeafId !== state.leafId;
		this.#addSummary.disabled = !canSummarize;
		this.#left.textContent = canSummarize
			? `You left ${state.leftLeafId} for ${state.leafId ?? "the start"}: summarize the branch left behind.`
			: "Click an entry to move the leaf there; then you can summarize the branch you left.";
		this.#fork.disabled = !writable || state.leafId === null;
		this.#export.disabled = !state.open;
	}

	#on(button: HTMLButtonElement, label: string, action: () => Promise<void>): void {
		button.addEventListener("click", () => void run(label, action));
	}
}
