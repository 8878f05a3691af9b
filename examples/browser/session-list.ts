/** The stored sessions, newest first (as `engine.listAll` gives them): click one to open it. */
import type { SessionInfo } from "pi-session-tree";
import { baseName, h, oneLine } from "./dom.ts";

export interface SessionListActions {
	open(path: string): void;
	export(path: string): void;
}

/** Draw `sessions` into `element`, marking the one open now. */
export function renderSessionList(
	element: HTMLElement,
	sessions: readonly SessionInfo[],
	openPath: string | undefined,
	actions: SessionListActions,
): void {
	if (sessions.length === 0) {
		element.replaceChildren(h("li", { class: "muted" }, "No sessions stored yet: import some .jsonl files."));
		return;
	}
	element.replaceChildren(...sessions.map((session) => sessionItem(session, session.path === openPath, actions)));
}

function sessionItem(session: SessionInfo, open: boolean, actions: SessionListActions): HTMLElement {
	const exportButton = h("button", { type: "button", class: "small", title: "Download this file" }, "Export");
	exportButton.addEventListener("click", (event) => {
		event.stopPropagation();
		actions.export(session.path);
	});
	const title = session.name ?? oneLine(session.firstMessage, 90);
	const item = h(
		"li",
		{
			class: open ? "open" : undefined,
			"data-path": session.path,
			"data-modified": session.modified.getTime(),
			"data-messages": session.messageCount,
			title: session.path,
		},
		h(
			"div",
			{ class: "info" },
			h("div", { class: "title" }, title),
			h(
				"div",
				{ class: "meta" },
				`${baseName(session.path)} · ${session.cwd || "no cwd"} · ${session.messageCount} messages · ${session.modified.toLocaleString()}`,
			),
		),
		exportButton,
	);
	item.addEventListener("click", () => actions.open(session.path));
	return item;
}
