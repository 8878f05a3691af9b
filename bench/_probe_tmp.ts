import { createMemoryStorage } from "../adapters/zenfs.ts";
import { createNodeStorage } from "../adapters/node.ts";
import { Session, type Storage } from "../src/index.ts";
import { messageSequence } from "./worker-support.ts";
import { mkdtempSync, rmSync } from "node:fs";
const msgs = messageSequence(10000);
for (const kind of ["memory", "node"]) {
	const base: Storage = kind === "memory" ? await createMemoryStorage() : createNodeStorage();
	let appends = 0;
	const storage = { ...base, append: (...a: Parameters<Storage["append"]>) => { appends++; return base.append(...a); } } as Storage;
	const dir = kind === "memory" ? "/s" : mkdtempSync("/tmp/probe-");
	const s = await Session.create(storage, { cwd: "/p", sessionDir: dir, durability: "none" });
	await s.appendMessage({ role: "assistant", content: [], timestamp: 1 } as never);
	const t = performance.now();
	const ps: Promise<string>[] = [];
	for (const m of msgs) { ps.push(s.appendMessage(m)); await new Promise((r) => setImmediate(r)); }
	await Promise.all(ps);
	console.log(kind, "one append per macrotask, 10k:", (performance.now() - t).toFixed(0), "ms,", appends, "append writes");
	await s.close();
	if (kind === "node") rmSync(dir, { recursive: true });
}
