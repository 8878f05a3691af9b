/**
 * pi-session-tree: the session tree of the pi coding agent, runtime-neutral.
 *
 * The functions pi exports under the same names (`buildSessionContext`, `migrateSessionEntries`,
 * `parseSessionEntries`, …) take and return the same data, so code written against pi keeps working.
 * @example
 * import { SessionTree } from "pi-session-tree";
 * const tree = SessionTree.create({ cwd: "/project" });
 * tree.appendMessage({ role: "user", content: "hello", timestamp: Date.now() });
 * console.log(tree.buildSessionContext().messages);
 * @module
 */

export * from "./catalog.ts";
export * from "./context.ts";
export * from "./engine.ts";
export * from "./entries.ts";
export * from "./error-data.ts";
export * from "./ids.ts";
export * from "./jsonl.ts";
export * from "./load.ts";
export * from "./lock.ts";
export * from "./migrate.ts";
export * from "./paths.ts";
export * from "./session.ts";
export * from "./storage.ts";
export * from "./tree.ts";
