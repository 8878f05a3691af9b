/**
 * The script of the page that `export --format html` writes (export-html.ts). It runs in the page,
 * alone: it reads the session from `#session-data` and draws with `createElement` and `textContent`.
 * Nothing in it may refer to anything outside `pageScript`. It is never imported by the tool:
 * scripts/build-page-script.ts compiles it into export-page-script.generated.ts, which the tool uses.
 * @module
 */

/** The page's script: `#session-data` drawn into `#navigator` and `#branch`. */
export function pageScript(): void {
	type Block =
		| { kind: "text" | "thinking" | "note"; text: string }
		| { kind: "code"; caption: string; text: string; lang?: string };
	type View = {
		id: string;
		parentId: string | null;
		kind: string;
		timestamp: string;
		style: string;
		title: string;
		preview: string;
		label?: string;
		blocks: Block[];
	};
	type Data = {
		title: string;
		facts: [string, string][];
		entries: View[];
		leafId: string | null;
		selectedId: string | null;
	};
	const PAGE = 500;
	const source = document.getElementById("session-data");
	const data = JSON.parse(source?.textContent ?? "{}") as Data;
	const nav = document.getElementById("navigator") as HTMLElement;
	const main = document.getElementById("branch") as HTMLElement;

	const element = <K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string) => {
		const node = document.createElement(tag);
		if (className) node.className = className;
		if (text !== undefined) node.textContent = text;
		return node;
	};

	document.title = data.title;
	nav.append(element("h1", undefined, data.title));
	const facts = element("div", "facts");
	for (const [name, value] of data.facts) facts.append(element("div", undefined, `${name}: ${value}`));
	nav.append(facts);

	const byId = new Map<string, View>();
	for (const view of data.entries) byId.set(view.id, view);
	const children = new Map<string | null, View[]>();
	for (const view of data.entries) {
		const parent = view.parentId !== null && byId.has(view.parentId) ? view.parentId : null;
		const list = children.get(parent);
		if (list) list.push(view);
		else children.set(parent, [view]);
	}
	const time = (view: View) => Date.parse(view.timestamp) || 0;
	for (const list of children.values()) if (list.length > 1) list.sort((a, b) => time(a) - time(b));

	// The navigator, depth first with a stack of its own: a chain of single children stays at one depth,
	// the children of a branch point go one deeper.
	const rows = new Map<string, HTMLElement>();
	const fragment = document.createDocumentFragment();
	const roots = children.get(null) ?? [];
	const stack: { view: View; depth: number; fork: boolean }[] = [];
	for (let index = roots.length - 1; index >= 0; index--)
		stack.push({ view: roots[index] as View, depth: roots.length > 1 ? 1 : 0, fork: roots.length > 1 });
	for (let item = stack.pop(); item; item = stack.pop()) {
		const { view, depth } = item;
		if (rows.has(view.id)) continue;
		const row = element("button", item.fork ? "row fork" : "row");
		row.type = "button";
		row.dataset.id = view.id;
		row.style.setProperty("--depth", String(Math.min(depth, 40)));
		row.append(element("span", "kind", view.kind), element("span", "preview", view.preview));
		if (view.label !== undefined) row.append(element("span", "badge", view.label));
		if (view.id === data.leafId) row.append(element("span", "badge leaf", "leaf"));
		row.title = `${view.id} · ${view.timestamp}`;
		rows.set(view.id, row);
		fragment.append(row);
		const next = children.get(view.id) ?? [];
		const branches = next.length > 1;
		for (let index = next.length - 1; index >= 0; index--)
			stack.push({ view: next[index] as View, depth: branches ? depth + 1 : depth, fork: branches });
	}
	nav.append(fragment);

	const blockElement = (block: Block): HTMLElement => {
		if (block.kind === "code") {
			const figure = element("figure");
			const pre = element("pre");
			pre.append(element("code", undefined, block.text));
			figure.append(element("figcaption", undefined, block.caption), pre);
			return figure;
		}
		return element("div", block.kind, block.text);
	};

	const entryElement = (view: View): HTMLElement => {
		const article = element("article", `entry ${view.style}`);
		article.dataset.id = view.id;
		const header = element("header");
		header.append(element("span", "title", view.title), element("span", "meta", `${view.id} · ${view.timestamp}`));
		if (view.label !== undefined) header.append(element("span", "badge", view.label));
		if (view.id === data.leafId) header.append(element("span", "badge leaf", "current leaf"));
		article.append(header);
		for (const block of view.blocks) article.append(blockElement(block));
		return article;
	};

	let marked: string[] = [];
	let selected: string | null = null;
	const show = (id: string, shown = PAGE) => {
		const path: View[] = [];
		const seen = new Set<string>();
		for (let at = byId.get(id); at && !seen.has(at.id); at = at.parentId === null ? undefined : byId.get(at.parentId)) {
			seen.add(at.id);
			path.push(at);
		}
		path.reverse();
		for (const markedId of marked) rows.get(markedId)?.classList.remove("on-path", "selected");
		marked = path.map((view) => view.id);
		for (const markedId of marked) rows.get(markedId)?.classList.add("on-path");
		rows.get(id)?.classList.add("selected");
		selected = id;
		main.replaceChildren();
		main.append(element("p", "branch-head", `Branch root → ${id}: ${path.length} entries`));
		const from = Math.max(0, path.length - shown);
		if (from > 0) {
			const earlier = element("button", "earlier", `Show ${Math.min(PAGE, from)} earlier entries (${from} not shown)`);
			earlier.type = "button";
			earlier.addEventListener("click", () => show(id, shown + PAGE));
			main.append(earlier);
		}
		const list = document.createDocumentFragment();
		for (let index = from; index < path.length; index++) list.append(entryElement(path[index] as View));
		main.append(list);
	};

	nav.addEventListener("click", (event) => {
		const row = (event.target as Element | null)?.closest<HTMLElement>(".row");
		const id = row?.dataset.id;
		if (id === undefined || id === selected) return;
		show(id);
		main.scrollTop = main.scrollHeight;
	});
	const first = data.selectedId ?? data.entries[data.entries.length - 1]?.id;
	if (first !== undefined && byId.has(first)) {
		show(first);
		rows.get(first)?.scrollIntoView({ block: "center" });
	} else main.append(element("p", "note", "This session has no entries."));
}
