/**
 * A session of about 50 MB in Chromium, through the stock worker on OPFS (a profile on disk, as in a
 * user's ordinary tab): fetched by the page as a `Blob`, streamed into OPFS by `importSessionFile` (8 MiB
 * at a time), the bytes it holds then equal to the file's; opened read-only lazily (the engine's default)
 * and with `load: "full"`, the last page of the context (`getContext({ last: 50 })`), of the current leaf
 * and of the leaf of a branch left behind, is the same both ways, and the same as the engine gives in Node
 * for the same bytes opened whole.
 */
import { createHash } from "node:crypto";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/zenfs.ts";
import {
	type AgentMessage,
	Engine,
	encodeEntry,
	type SessionEntry,
	SessionTree,
	sessionFileName,
} from "../../src/index.ts";
import { launchPersistentChromium } from "../support/chromium.ts";
import { assistantMessage, userMessage } from "../support/messages.ts";
import { seededUint32 } from "../support/random.ts";
import { stagePackage } from "../support/stage-package.ts";
import { serveStatic } from "../support/vite-servers.ts";

const app = fileURLToPath(new URL("./app", import.meta.url));
const TARGET_BYTES = 50e6;
const LAST = 50;

let project: string;
let origin: string;
let close: () => Promise<void>;
let context: BrowserContext | undefined;
let session: Generated;

interface Generated {
	name: string;
	bytes: number;
	sha256: string;
	entryCount: number;
	leafId: string;
	/** The leaf of a branch left behind (a `branchWithSummary` away from it, near the end). */
	oldLeaf: string;
	/** The engine in Node (the same bytes opened whole): the last page of the current leaf's context and of `oldLeaf`'s. */
	expected: { current: PageOf; old: PageOf };
}

/** A context page (`ContextPage`), as it arrives from the page. */
interface PageOf {
	messages: unknown[];
	entryIds: string[];
	total: number;
	offset: number;
	thinkingLevel: string;
	model: unknown;
}

/**
 * A seeded v3 session of about `TARGET_BYTES`: user, assistant (text and tool calls) and tool-result
 * messages of 200 B–40 KB (non-ASCII, escapes, now and then a base64 image), compactions, labels, a model
 * and a thinking-level change, custom messages, a context edit, and near the end a branch left behind
 * with a summary.
 */
function generate(): { text: string; tree: SessionTree; oldLeaf: string } {
	const random = seededUint32(50);
	const tree = SessionTree.create({ cwd: "/home/me/project" });
	const words = [
		"alpha",
		"β-reduction",
		"naïve",
		'quote "this"',
		"back\\slash",
		"tab\there",
		"line\nbreak",
		"😀",
		"ok",
	];
	const text = (min: number, max: number) => {
		const length = min + (random() % (max - min));
		const parts: string[] = [];
		for (let size = 0; size < length; ) {
			const word = words[random() % words.length] as string;
			parts.push(word);
			size += word.length + 1;
		}
		return parts.join(" ");
	};
	const base64 = (bytes: number) => {
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		let out = "";
		for (let i = 0; i < bytes; i++) out += alphabet[random() % 64];
		return out;
	};
	let written = 0;
	let timestamp = Date.UTC(2025, 0, 1);
	let lastUser = "";
	let oldLeaf = "";
	let nextCompaction = TARGET_BYTES / 5;
	const append = (id: string) => {
		written += encodeEntry(tree.getEntry(id) as SessionEntry).length;
		return id;
	};
	append(tree.appendModelChange("anthropic", "claude-sonnet-4-5"));
	append(tree.appendThinkingLevelChange("high"));
	for (let turn = 0; written < TARGET_BYTES; turn++) {
		timestamp += 1000 + (random() % 30_000);
		lastUser = append(tree.appendMessage(userMessage(text(200, 4000), timestamp)));
		const callId = `toolu_${turn.toString(16).padStart(8, "0")}`;
		const call = assistantMessage(text(100, 2000), { timestamp: timestamp + 1 }) as AgentMessage & {
			content: unknown[];
			stopReason: string;
		};
		call.content.push({ type: "toolCall", id: callId, name: "read", arguments: { path: `/src/file-${turn}.ts` } });
		call.stopReason = "toolUse";
		append(tree.appendMessage(call));
		const content: unknown[] = [{ type: "text", text: text(500, 40_000) }];
		if (turn % 40 === 7)
			content.push({ type: "image", data: base64(20_000 + (random() % 60_000)), mimeType: "image/png" });
		append(
			tree.appendMessage({
				role: "toolResult",
				toolCallId: callId,
				toolName: "read",
				content,
				isError: false,
				timestamp: timestamp + 2,
			} as AgentMessage),
		);
		append(tree.appendMessage(assistantMessage(text(100, 3000), { timestamp: timestamp + 3 })));
		if (turn % 97 === 5) append(tree.appendCustomMessageEntry("note", text(50, 500), true, { turn }));
		if (turn % 211 === 3) append(tree.appendLabelChange(lastUser, `checkpoint ${turn}`));
		if (written >= nextCompaction && nextCompaction < TARGET_BYTES) {
			const kept = tree.structureOfPath().at(-20)?.id ?? null;
			append(tree.appendCompaction(text(2000, 8000), kept, 150_000 + turn));
			nextCompaction += TARGET_BYTES / 5;
		}
		if (written >= TARGET_BYTES * 0.97 && !oldLeaf) {
			// Replace a recent message's content on this branch, then leave the branch with a summary.
			append(tree.appendContextEdit(lastUser, { content: "(edited away)" }));
			oldLeaf = tree.getLeafId() as string;
			const from = tree.structureOfPath().at(-60)?.id as string;
			append(tree.branchWithSummary(from, text(500, 3000)));
		}
	}
	const lines = [tree.getHeader(), ...tree.getEntries()].map(encodeEntry).join("");
	return { text: lines, tree, oldLeaf };
}

/** The last page of `leafId`'s context as the engine gives it in Node, from the same bytes opened whole. */
async function lastPages(bytes: Uint8Array, leafIds: readonly string[]): Promise<PageOf[]> {
	const engine = new Engine({ storage: await createMemoryStorage(), agentDir: "/pi/agent" });
	await engine.importSessionFile("/s/session.jsonl", bytes);
	const { handle } = await engine.open("/s/session.jsonl", { readOnly: true, load: "full" });
	return Promise.all(leafIds.map((leafId) => engine.getContext(handle, { leafId, last: LAST })));
}

beforeAll(async () => {
	project = await mkdtemp(join(tmpdir(), "pi-lazy-open-"));
	await cp(app, project, { recursive: true });
	await stagePackage(project);
	const { text, tree, oldLeaf } = generate();
	const bytes = Buffer.from(text);
	await writeFile(join(project, "session.jsonl"), bytes);
	const [current, old] = await lastPages(bytes, [tree.getLeafId() as string, oldLeaf]);
	session = {
		name: sessionFileName(tree.getHeader().timestamp, tree.getSessionId()),
		bytes: bytes.length,
		sha256: createHash("sha256").update(bytes).digest("hex"),
		entryCount: tree.size,
		leafId: tree.getLeafId() as string,
		oldLeaf,
		expected: { current: current as PageOf, old: old as PageOf },
	};
	// Served as it is: every file is in place before the server starts.
	const server = await serveStatic(project, project);
	origin = server.url;
	close = () => server.close();
}, 120_000);

afterAll(async () => {
	await context?.close();
	await close?.();
	await rm(project, { recursive: true, force: true });
});

/** The engine as the page uses it (the test's code runs in the page; these are its types). */
interface EngineLike {
	sessionDirFor(cwd: string): Promise<string>;
	importSessionFile(path: string, bytes: Blob): Promise<void>;
	exportSessionFile(path: string): Promise<Uint8Array<ArrayBuffer>>;
	open(
		path: string,
		options: { readOnly: boolean; load?: "lazy" | "full" },
	): Promise<{ handle: string; entryCount: number; leafId: string | null }>;
	getContext(handle: string, request: { leafId?: string; last: number }): Promise<PageOf>;
}

/** A fresh Chromium on a fresh profile on disk, the page loaded with the client of the staged package. */
async function openPage(): Promise<Page> {
	context = await launchPersistentChromium(await mkdtemp(join(project, "profile-")));
	const page = context.pages()[0] ?? (await context.newPage());
	await page.goto(`${origin}tabs.html`);
	await page.waitForFunction(() => document.body.dataset.ready === "yes");
	return page;
}

it("a 50 MB session streamed into OPFS and opened lazily answers its last pages as a full open does", async () => {
	expect(session.bytes).toBeGreaterThan(TARGET_BYTES);
	const page = await openPage();
	const got = await page.evaluate(
		async ({ name, leafIds, last }) => {
			type Start = (config: { storage: string }) => Promise<{ engine: EngineLike; terminate(): Promise<void> }>;
			const start = (window as unknown as { startEngineWorker: Start }).startEngineWorker;
			const blob = await (await fetch("./session.jsonl")).blob();
			const importer = await start({ storage: "opfs" });
			const path = `${await importer.engine.sessionDirFor("/home/me/project")}/${name}`;
			await importer.engine.importSessionFile(path, blob);
			const exported = await importer.engine.exportSessionFile(path);
			const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", exported));
			await importer.terminate();
			// Each way of opening in a worker of its own, started after the import.
			const pages = async (load: "lazy" | "full") => {
				const { engine, terminate } = await start({ storage: "opfs" });
				const opened = await engine.open(path, load === "full" ? { readOnly: true, load } : { readOnly: true });
				const answers = [];
				for (const leafId of leafIds) answers.push(await engine.getContext(opened.handle, { leafId, last }));
				await terminate();
				return { entryCount: opened.entryCount, leafId: opened.leafId, pages: answers };
			};
			return {
				bytes: exported.length,
				sha256: Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join(""),
				lazy: await pages("lazy"),
				full: await pages("full"),
			};
		},
		{ name: session.name, leafIds: [session.leafId, session.oldLeaf], last: LAST },
	);
	// The import is byte for byte.
	expect({ bytes: got.bytes, sha256: got.sha256 }).toEqual({ bytes: session.bytes, sha256: session.sha256 });
	for (const opened of [got.lazy, got.full]) {
		expect({ entryCount: opened.entryCount, leafId: opened.leafId }).toEqual({
			entryCount: session.entryCount,
			leafId: session.leafId,
		});
	}
	expect(got.lazy.pages).toEqual(got.full.pages);
	expect(got.full.pages).toEqual([session.expected.current, session.expected.old]);
	const [current, old] = got.lazy.pages as [PageOf, PageOf];
	expect(current.messages).toHaveLength(LAST);
	expect(current.offset).toBe(current.total - LAST);
	// The branch left behind ends with the context edit's target replaced.
	expect(old.entryIds).not.toEqual(current.entryIds);
	expect(JSON.stringify(old.messages)).toContain("(edited away)");
});
