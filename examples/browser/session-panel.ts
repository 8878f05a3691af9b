/** What is said about the open session: its header (file, cwd, what opening did), and the tree's counts. */
import type { SessionSummary } from "pi-session-tree";
import { baseName, h } from "./dom.ts";
import type { TreeLayout } from "./tree-rows.ts";

/** The open session's file and what opening it found and did. */
export function renderSessionHeader(element: HTMLElement, session: SessionSummary, note = ""): void {
	const { report, header } = session;
	const path = session.path ?? "(in memory)";
	const did = [
		report.migratedFrom &&
			`migrated from v${report.migratedFrom.version}${report.migratedFrom.backupPath ? ` (original kept as ${baseName(report.migratedFrom.backupPath)})` : ""}`,
		report.repairedLastLine && "a torn or unterminated last line was repaired",
		report.diagnostics.length > 0 &&
			`${report.diagnostics.length} line(s) skipped: ${report.diagnostics.map((d) => `line ${d.line} ${d.reason}`).join(", ")}`,
		report.created && "new: its file is written at its first user or assistant message",
	].filter((text): text is string => typeof text === "string");
	const lines = [
		h(
			"p",
			{ id: "open-session", "data-path": path, "data-handle": session.handle, "data-read-only": session.readOnly },
			h("strong", {}, session.name ?? baseName(path)),
			" ",
			session.readOnly ? h("span", { class: "badge", id: "read-only" }, "read-only") : null,
		),
		h("p", { class: "muted" }, path),
		h("p", { class: "muted" }, `cwd ${session.cwd || "(none)"} · session ${header.id}`),
		header.parentSession
			? h("p", { class: "muted", id: "parent-session" }, `forked from ${header.parentSession}`)
			: null,
		...did.map((text) => h("p", { class: "muted" }, text)),
		note ? h("p", { class: "notice", id: "session-note" }, note) : null,
	];
	element.replaceChildren(...lines.filter((line) => line !== null));
}

/** Another tab holds the session: say so, and offer to open it read-only (or to try again). */
export function renderLockNotice(
	element: HTMLElement,
	message: string,
	choices: { readOnly(): void; retry(): void },
): void {
	const readOnly = h("button", { type: "button", id: "open-read-only" }, "Open read-only");
	const retry = h("button", { type: "button", id: "retry-open" }, "Try again");
	readOnly.addEventListener("click", choices.readOnly);
	retry.addEventListener("click", choices.retry);
	element.replaceChildren(
		h(
			"div",
			{ class: "notice", id: "lock-notice" },
			h("p", {}, "This session is open for writing elsewhere (another tab, most likely)."),
			h("p", { class: "muted" }, message),
			readOnly,
			" ",
			retry,
		),
	);
}

/** The tree's counts and the current leaf, above the tree. */
export function renderTreeSummary(element: HTMLElement, layout: TreeLayout, leafId: string | null): void {
	const { branchPoints, compactions, branchSummaries } = layout;
	const entries = layout.order.length;
	element.dataset.entries = String(entries);
	element.dataset.branchPoints = String(branchPoints);
	element.dataset.compactions = String(compactions);
	element.dataset.branchSummaries = String(branchSummaries);
	element.dataset.leaf = leafId ?? "";
	element.textContent =
		`${entries} entries · ${branchPoints} branch points · ${compactions} compactions · ` +
		`${branchSummaries} branch summaries · leaf ${leafId ?? "none (before the first entry)"}`;
}
