/**
 * The page: starts the engine worker on OPFS (or `?storage=memory`), lists the stored sessions, and
 * wires the file picker and drag-and-drop to imports.
 */
import { App } from "./app.ts";
import { connect, storageFromUrl } from "./connect.ts";
import { byId } from "./dom.ts";
import { startFrameMonitor } from "./frame-monitor.ts";
import { describeError, run, say, started } from "./status.ts";

startFrameMonitor((worst) => {
	byId("frames").textContent = `worst frame ${Math.round(worst)} ms`;
});

const storage = storageFromUrl();
const where: Record<string, string> = {
	opfs: "stored in this browser (OPFS)",
	memory: "stored in memory: gone after a reload",
};
byId("storage").textContent = where[storage] ?? `storage "${storage}"`;

/** Drop targets take files from anywhere on the page; the drop zone only shows where to aim. */
function acceptDrops(onFiles: (files: File[]) => void): void {
	const zone = byId("drop-zone");
	document.addEventListener("dragover", (event) => {
		event.preventDefault();
		zone.classList.add("over");
	});
	document.addEventListener("dragleave", (event) => {
		if (event.relatedTarget === null) zone.classList.remove("over");
	});
	document.addEventListener("drop", (event) => {
		event.preventDefault();
		zone.classList.remove("over");
		const files = Array.from(event.dataTransfer?.files ?? []);
		if (files.length) onFiles(files);
	});
}

async function boot(): Promise<void> {
	say(`Starting the engine worker (${storage})…`);
	const engine = await connect(storage);
	const app = new App(engine, {
		sessionList: byId("session-list"),
		importResults: byId("import-results"),
		sessionHeader: byId("session-header"),
		treeSummary: byId("tree-summary"),
		tree: byId("tree"),
		context: byId("context"),
		actions: byId<HTMLFormElement>("actions"),
	});
	const importing = (files: File[]) => void run(`Importing ${files.length} file(s)`, () => app.importFiles(files));
	const input = byId<HTMLInputElement>("file-input");
	input.addEventListener("change", () => {
		importing(Array.from(input.files ?? []));
		input.value = ""; // choosing the same file again is a new import (and is refused: it exists)
	});
	acceptDrops(importing);
	byId("refresh").addEventListener("click", () => void run("Listing sessions", () => app.refreshList()));
	await run("Listing sessions", () => app.refreshList());
}

boot()
	.catch((error) => say(`The engine did not start: ${describeError(error)}`, true))
	.finally(started);
