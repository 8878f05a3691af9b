/**
 * The app: which session is open, where its leaf is, and what each action does to it. Every call goes
 * to the engine in its worker; the page keeps only what it draws (the outline, one context page at a
 * time). Actions run one after another, never interleaved, so each sees the state the last one left.
 */
import { entryPreview, type OutlineNode, type SessionInfo, type SessionSummary } from "pi-session-tree";
import { SessionLockedError } from "pi-session-tree/worker";
import { ActionsPanel, type SessionActions } from "./actions-panel.ts";
import type { RemoteEngine } from "./connect.ts";
import { ContextView } from "./context-view.ts";
import { baseName, h, nextTask, oneLine } from "./dom.ts";
import { importFiles } from "./importer.ts";
import { saveFile } from "./save-file.ts";
import { renderSessionList } from "./session-list.ts";
import { renderLockNotice, renderSessionHeader, renderTreeSummary } from "./session-panel.ts";
import { run, say } from "./status.ts";
import { layoutTree, type TreeLayout } from "./tree-rows.ts";
import { TreeView } from "./tree-view.ts";

export interface AppElements {
	sessionList: HTMLElement;
	importResults: HTMLElement;
	sessionHeader: HTMLElement;
	treeSummary: HTMLElement;
	tree: HTMLElement;
	context: HTMLElement;
	actions: HTMLFormElement;
}

export class App implements SessionActions {
	readonly #engine: RemoteEngine;
	readonly #elements: AppElements;
	readonly #tree: TreeView;
	readonly #context: ContextView;
	readonly #actions: ActionsPanel;
	#sessions: SessionInfo[] = [];
	#open: SessionSummary | undefined;
	#layout: TreeLayout | undefined;
	#leafId: string | null = null;
	#selectedId: string | null = null;
	#leftLeafId: string | null = null;
	#queue: Promise<unknown> = Promise.resolve();

	constructor(engine: RemoteEngine, elements: AppElements) {
		this.#engine = engine;
		this.#elements = elements;
		this.#context = new ContextView(elements.context, engine);
		this.#actions = new ActionsPanel(elements.actions, this);
		this.#tree = new TreeView(elements.tree, {
			onPick: (id) => void run("Moving the leaf", () => this.pick(id)),
			loadPreviews: (ids) => this.#previews(ids),
		});
	}

	/** Run `step` after every step before it. */
	#serial<T>(step: () => Promise<T>): Promise<T> {
		const result = this.#queue.then(step);
		this.#queue = result.catch(() => undefined);
		return result;
	}

	// The list -----------------------------------------------------------------------------------

	refreshList(): Promise<void> {
		return this.#serial(() => this.#refreshList());
	}

	async #refreshList(): Promise<void> {
		this.#sessions = await this.#engine.listAll();
		this.#renderList();
	}

	#renderList(): void {
		renderSessionList(this.#elements.sessionList, this.#sessions, this.#open?.path, {
			open: (path) => void run(`Opening ${baseName(path)}`, () => this.open(path)),
			export: (path) => void run(`Exporting ${baseName(path)}`, () => this.#serial(() => this.#export(path))),
		});
	}

	importFiles(files: readonly File[]): Promise<void> {
		return this.#serial(async () => {
			const outcomes = await importFiles(this.#engine, files);
			const items = outcomes.map((outcome) =>
				h(
					"li",
					{ class: outcome.status, "data-name": outcome.name, "data-status": outcome.status },
					`${outcome.name}: ${outcome.message}`,
				),
			);
			this.#elements.importResults.replaceChildren(...items);
			await this.#refreshList();
		});
	}

	// Opening ------------------------------------------------------------------------------------

	open(path: string, readOnly = false): Promise<void> {
		return this.#serial(() => this.#openSession(path, readOnly));
	}

	async #openSession(path: string, readOnly: boolean): Promise<void> {
		await this.#closeOpen();
		const name = baseName(path);
		let session: SessionSummary;
		try {
			session = await this.#engine.open(path, { readOnly }, (bytes, total) =>
				say(`Opening ${name}: ${total ? Math.round((100 * bytes) / total) : 100}%`),
			);
		} catch (error) {
			if (!(error instanceof SessionLockedError)) throw error;
			renderLockNotice(this.#elements.sessionHeader, error.message, {
				readOnly: () => void run(`Opening ${name} read-only`, () => this.open(path, true)),
				retry: () => void run(`Opening ${name}`, () => this.open(path)),
			});
			return;
		}
		this.#open = session;
		await this.#showOpen(false);
		this.#renderList();
	}

	async #closeOpen(): Promise<void> {
		const open = this.#open;
		this.#open = undefined;
		this.#layout = undefined;
		this.#leafId = this.#selectedId = this.#leftLeafId = null;
		this.#tree.clear();
		this.#context.clear();
		this.#elements.treeSummary.replaceChildren();
		this.#elements.sessionHeader.replaceChildren();
		this.#updateActions();
		// Writes what is pending and lets go of the session's lock, so another tab may take it.
		if (open) await this.#engine.close(open.handle);
	}

	/** Fetch the open session's summary and outline and draw everything anew, the leaf in view. */
	async #showOpen(sameSession: boolean, note = ""): Promise<void> {
		const handle = (this.#open as SessionSummary).handle;
		const session = await this.#engine.summary(handle);
		const outline = await fetchOutline(this.#engine, handle);
		this.#open = session;
		this.#leafId = session.leafId;
		this.#selectedId ??= session.leafId;
		this.#layout = await layoutTree(outline, nextTask);
		await nextTask();
		renderSessionHeader(this.#elements.sessionHeader, session, note);
		this.#tree.show(this.#layout, this.#marks(), sameSession);
		this.#tree.reveal(this.#leafId);
		this.#showLeaf();
		await this.#context.show(handle, this.#leafId);
	}

	#marks() {
		return { leafId: this.#leafId, selectedId: this.#selectedId };
	}

	#showLeaf(): void {
		if (this.#layout) renderTreeSummary(this.#elements.treeSummary, this.#layout, this.#leafId);
		this.#updateActions();
	}

	#updateActions(): void {
		this.#actions.update({
			open: this.#open !== undefined,
			readOnly: this.#open?.readOnly ?? false,
			selectedId: this.#selectedId,
			leftLeafId: this.#leftLeafId,
			leafId: this.#leafId,
		});
	}

	async #previews(ids: string[]): Promise<Map<string, string>> {
		const handle = this.#open?.handle;
		if (!handle) return new Map();
		const entries = await Promise.all(ids.map((id) => this.#engine.getEntry(handle, id)));
		return new Map(ids.map((id, i) => [id, oneLine(entries[i] ? entryPreview(entries[i]) : "", 200)]));
	}

	// Moving the leaf ----------------------------------------------------------------------------

	/** Make `id` the leaf (pi's /tree navigation) and show the context the model would get from there. */
	pick(id: string): Promise<void> {
		return this.#serial(async () => {
			const open = this.#open;
			if (!open || id === this.#leafId) return;
			await this.#engine.branch(open.handle, id);
			this.#leftLeafId = this.#leafId;
			this.#leafId = this.#selectedId = id;
			this.#tree.mark(this.#marks());
			this.#showLeaf();
			await this.#context.show(open.handle, id);
		});
	}

	// Actions ------------------------------------------------------------------------------------

	addMessage(text: string): Promise<void> {
		return this.#serial(async () => {
			const open = this.#writable();
			if (!text.trim()) throw new Error("write the message first");
			const id = await this.#engine.appendMessage(open.handle, { role: "user", content: text, timestamp: Date.now() });
			await this.#afterAppend(id);
			await this.#refreshList(); // its message count and date changed
		});
	}

	setLabel(label: string): Promise<void> {
		return this.#serial(async () => {
			const open = this.#writable();
			const target = this.#selectedId;
			if (target === null) throw new Error("select an entry first");
			await this.#engine.appendLabelChange(open.handle, target, label === "" ? undefined : label);
			await this.#afterAppend(target); // the label entry is the new leaf; its target stays selected
		});
	}

	addBranchSummary(summary: string): Promise<void> {
		return this.#serial(async () => {
			const open = this.#writable();
			const [left, target] = [this.#leftLeafId, this.#leafId];
			if (left === null || target === null) throw new Error("click the entry to branch to first");
			if (!summary.trim()) throw new Error("write the summary first");
			// Back on the branch being left, then off to the target with its summary: the summary's `fromId`
			// is the leaf left behind, as when pi navigates its tree. Issued together, they travel as one batch.
			const back = this.#engine.branch(open.handle, left);
			const id = await this.#engine.branchWithSummary(open.handle, target, summary);
			await back;
			await this.#afterAppend(id);
		});
	}

	fork(): Promise<void> {
		return this.#serial(async () => {
			const open = this.#writable();
			if (this.#leafId === null) throw new Error("there is no branch to fork");
			const from = open.path;
			const path = await this.#engine.createBranchedSession(open.handle, this.#leafId);
			await this.#refreshList();
			const written = this.#sessions.some((session) => session.path === path);
			const note = `Forked from ${from ?? "(in memory)"} into ${path ?? "(in memory)"}${written ? "" : ": its file is written once the branch has a user or assistant message"}.`;
			this.#leftLeafId = null;
			await this.#showOpen(false, note);
			this.#renderList();
		});
	}

	exportOpen(): Promise<void> {
		return this.#serial(async () => {
			const open = this.#open;
			if (!open?.path) throw new Error("no session file is open");
			await this.#engine.flush(open.handle);
			await this.#export(open.path);
		});
	}

	async #export(path: string): Promise<void> {
		saveFile(baseName(path), await this.#engine.exportSessionFile(path));
	}

	#writable(): SessionSummary {
		const open = this.#open;
		if (!open) throw new Error("open a session first");
		if (open.readOnly) throw new Error("this session is open read-only");
		return open;
	}

	/** After an append: the new entry is selected, the outline fetched again (it grew), the leaf shown. */
	async #afterAppend(selectedId: string): Promise<void> {
		this.#selectedId = selectedId;
		this.#leftLeafId = null;
		await this.#showOpen(true);
	}
}

/** Outline nodes per answer: receiving one page is a short task for the page. */
const OUTLINE_PAGE = 4000;

/** The whole outline, in pages with a frame between them: a long session's never holds the page up. */
async function fetchOutline(engine: RemoteEngine, handle: string): Promise<OutlineNode[]> {
	const nodes: OutlineNode[] = [];
	for (;;) {
		const page = await engine.getOutline(handle, { offset: nodes.length, limit: OUTLINE_PAGE });
		for (const node of page) nodes.push(node);
		if (page.length < OUTLINE_PAGE) return nodes;
		await nextTask();
	}
}
