/**
 * The context the model would get for a leaf, in pages from the worker: the last page first (what the
 * model saw most recently), older pages on request, so a context of thousands of messages is never
 * fetched or drawn whole.
 */
import { type AgentMessage, messageText } from "pi-session-tree";
import type { RemoteEngine } from "./connect.ts";
import { h } from "./dom.ts";
import { run } from "./status.ts";

const PAGE = 50;
/** Characters of a message drawn; the rest is counted, not shown. */
const MAX_TEXT = 3000;

interface Shown {
	message: AgentMessage;
	entryId: string;
}

export class ContextView {
	readonly #element: HTMLElement;
	readonly #engine: RemoteEngine;
	#handle: string | undefined;
	#leafId: string | null = null;
	#shown: Shown[] = [];
	#offset = 0;
	#total = 0;
	#settings = "";
	/** Bumped by each `show`: an answer to an older request is dropped. */
	#generation = 0;

	constructor(element: HTMLElement, engine: RemoteEngine) {
		this.#element = element;
		this.#engine = engine;
	}

	/** The last page of `leafId`'s context. */
	async show(handle: string, leafId: string | null): Promise<void> {
		const generation = ++this.#generation;
		const { total } = await this.#engine.getContext(handle, { leafId, offset: Number.MAX_SAFE_INTEGER, limit: 0 });
		const page = await this.#engine.getContext(handle, { leafId, offset: Math.max(0, total - PAGE), limit: PAGE });
		if (generation !== this.#generation) return;
		this.#handle = handle;
		this.#leafId = leafId;
		this.#total = page.total;
		this.#offset = page.offset;
		this.#shown = page.messages.map((message, i) => ({ message, entryId: page.entryIds[i] as string }));
		const model = page.model ? `${page.model.provider}/${page.model.modelId}` : "no model";
		this.#settings = `thinking ${page.thinkingLevel} · ${model}`;
		this.#render(false);
	}

	/** The page before the first one shown. */
	async older(): Promise<void> {
		const handle = this.#handle;
		if (handle === undefined || this.#offset === 0) return;
		const generation = this.#generation;
		const offset = Math.max(0, this.#offset - PAGE);
		const page = await this.#engine.getContext(handle, { leafId: this.#leafId, offset, limit: this.#offset - offset });
		if (generation !== this.#generation) return;
		const older = page.messages.map((message, i) => ({ message, entryId: page.entryIds[i] as string }));
		this.#shown = [...older, ...this.#shown];
		this.#offset = offset;
		this.#render(true);
	}

	clear(): void {
		this.#generation++;
		this.#handle = undefined;
		this.#element.replaceChildren();
	}

	/** Draw what is shown; `keepPlace` keeps the messages in view where they were (older ones go above). */
	#render(keepPlace: boolean): void {
		const from = this.#total === 0 ? 0 : this.#offset + 1;
		const range = h(
			"p",
			{ class: "range", "data-offset": this.#offset, "data-total": this.#total },
			`messages ${from}–${this.#offset + this.#shown.length} of ${this.#total} · ${this.#settings}`,
		);
		const older = h("button", { type: "button", id: "older", disabled: this.#offset === 0 }, `Show ${PAGE} older`);
		older.addEventListener("click", () => void run("Loading older messages", () => this.older()));
		const messages = this.#shown.map(({ message, entryId }) => messageView(message, entryId));
		const element = this.#element;
		const fromBottom = element.scrollHeight - element.scrollTop;
		element.replaceChildren(range, this.#offset > 0 ? older : "", ...messages);
		// A fresh context opens at its end, where the newest message is.
		element.scrollTop = keepPlace ? element.scrollHeight - fromBottom : element.scrollHeight;
	}
}

function messageView(message: AgentMessage, entryId: string): HTMLElement {
	const text = messageText(message);
	const cut =
		text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}\n… (${text.length - MAX_TEXT} more characters)` : text;
	return h(
		"article",
		{ class: `msg ${message.role}`, "data-role": message.role, "data-entry-id": entryId },
		h("div", { class: "who" }, `${message.role} · entry ${entryId}`),
		h("pre", { class: "text" }, cut),
	);
}
