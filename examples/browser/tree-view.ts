/**
 * The session tree as a virtual list: rows of fixed height, and only those in view (plus a margin) exist
 * in the DOM, so scrolling a 60,000-entry session costs the same as a 60-entry one. The outline carries
 * no text; the rows in view fetch their entries' previews from the worker, once each.
 */

import { entryKind, type OutlineNode } from "pi-session-tree";
import { h, oneLine } from "./dom.ts";
import { pathTo, type TreeLayout } from "./tree-rows.ts";

const ROW_HEIGHT = 22;
/** Rows drawn beyond each edge of the view, so a short scroll shows rows that are there already. */
const OVERSCAN = 20;
/** Deeper forks are drawn at this indent (the row still says where it is). */
const MAX_INDENT = 24;

export interface TreeMarks {
	leafId: string | null;
	/** The entry labels go to (the last one clicked or appended). */
	selectedId: string | null;
}

export interface TreeViewOptions {
	/** A row was clicked. */
	onPick(id: string): void;
	/** One-line previews of these entries, by id. */
	loadPreviews(ids: string[]): Promise<Map<string, string>>;
}

export class TreeView {
	readonly #container: HTMLElement;
	readonly #spacer = h("div", { class: "spacer" });
	readonly #options: TreeViewOptions;
	#layout: TreeLayout | undefined;
	#marks: TreeMarks = { leafId: null, selectedId: null };
	#onPath: Uint8Array = new Uint8Array(0);
	#previews = new Map<string, string>();
	#loading = new Set<string>();
	#frame = 0;

	constructor(container: HTMLElement, options: TreeViewOptions) {
		this.#container = container;
		this.#options = options;
		container.append(this.#spacer);
		container.addEventListener("scroll", () => this.#schedule());
		new ResizeObserver(() => this.#schedule()).observe(container);
		container.addEventListener("click", (event) => {
			const row = (event.target as Element).closest<HTMLElement>(".row");
			if (row?.dataset.id) options.onPick(row.dataset.id);
		});
	}

	/** Draw `layout`; `sameSession` keeps the previews already fetched (ids are unique within a session only). */
	show(layout: TreeLayout, marks: TreeMarks, sameSession: boolean): void {
		if (!sameSession) this.#previews.clear();
		this.#layout = layout;
		this.#spacer.style.height = `${layout.order.length * ROW_HEIGHT}px`;
		this.mark(marks);
	}

	/** Move the leaf and selection marks. */
	mark(marks: TreeMarks): void {
		this.#marks = marks;
		this.#onPath = this.#layout ? pathTo(this.#layout, marks.leafId) : new Uint8Array(0);
		this.#render();
	}

	/** Scroll so that `id`'s row is in the middle of the view. */
	reveal(id: string | null): void {
		const layout = this.#layout;
		const node = id === null ? undefined : layout?.indexOf.get(id);
		const index = node === undefined ? -1 : (layout?.rowOf[node] ?? -1);
		if (index < 0) return;
		const top = index * ROW_HEIGHT;
		const view = this.#container;
		if (top < view.scrollTop || top + ROW_HEIGHT > view.scrollTop + view.clientHeight) {
			view.scrollTop = Math.max(0, top - view.clientHeight / 2);
		}
		this.#render();
	}

	clear(): void {
		this.#layout = undefined;
		this.#spacer.style.height = "0";
		this.#spacer.replaceChildren();
	}

	#schedule(): void {
		if (this.#frame) return;
		this.#frame = requestAnimationFrame(() => {
			this.#frame = 0;
			this.#render();
		});
	}

	#render(): void {
		const layout = this.#layout;
		if (!layout) return;
		const view = this.#container;
		const first = Math.max(0, Math.floor(view.scrollTop / ROW_HEIGHT) - OVERSCAN);
		const last = Math.min(layout.order.length, Math.ceil((view.scrollTop + view.clientHeight) / ROW_HEIGHT) + OVERSCAN);
		const rows: HTMLElement[] = [];
		const missing: string[] = [];
		for (let index = first; index < last; index++) {
			const node = layout.order[index] as number;
			rows.push(this.#row(layout, index, node));
			const id = (layout.nodes[node] as OutlineNode).id;
			if (!this.#previews.has(id) && !this.#loading.has(id)) missing.push(id);
		}
		this.#spacer.replaceChildren(...rows);
		if (missing.length) void this.#fetch(missing, layout);
	}

	async #fetch(ids: string[], layout: TreeLayout): Promise<void> {
		for (const id of ids) this.#loading.add(id);
		try {
			const previews = await this.#options.loadPreviews(ids);
			if (layout !== this.#layout) return; // another session (or a newer outline) is shown now
			for (const [id, text] of previews) this.#previews.set(id, text);
			this.#schedule();
		} catch (error) {
			console.warn("tree previews", error);
		} finally {
			for (const id of ids) this.#loading.delete(id);
		}
	}

	/** The row at `index`, of outline node `at`. */
	#row(layout: TreeLayout, index: number, at: number): HTMLElement {
		const node = layout.nodes[at] as OutlineNode;
		const indent = layout.indent[index] as number;
		const leaf = node.id === this.#marks.leafId;
		const classes = ["row", `t-${node.type}`];
		if (leaf) classes.push("leaf");
		if (this.#onPath[at]) classes.push("on-path");
		if (node.id === this.#marks.selectedId) classes.push("selected");
		const row = h(
			"div",
			{
				class: classes.join(" "),
				"data-id": node.id,
				"data-parent": node.parentId ?? "",
				"data-type": node.type,
				"data-role": node.role,
				"data-indent": indent,
				"data-label": node.label,
				title: `${node.id} · ${node.timestamp}`,
			},
			layout.branchStart[index] ? h("span", { class: "branch-mark" }, "├ ") : null,
			h("span", { class: "kind" }, entryKind(node)),
			node.childCount > 1 ? h("span", { class: "branch-mark", title: "branch point" }, `⇉${node.childCount} `) : null,
			node.label ? h("span", { class: "label" }, node.label) : null,
			leaf ? h("span", { class: "leaf-mark" }, "◀ leaf ") : null,
			h("span", { class: "preview" }, oneLine(this.#previews.get(node.id) ?? "", 160)),
		);
		row.style.top = `${index * ROW_HEIGHT}px`;
		row.style.paddingLeft = `${4 + Math.min(indent, MAX_INDENT) * 14}px`;
		return row;
	}
}
