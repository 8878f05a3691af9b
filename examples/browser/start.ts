/**
 * Serve the example with a Vite dev server, with Vite's defaults (no configuration file): the built
 * package is first put into examples/browser/node_modules as an installed package is (so build it first:
 * `npm run example:browser` does both). `PORT` picks the port (default 5173).
 */
import { fileURLToPath } from "node:url";
import { createServer } from "vite";
import { stagePackage } from "../../test/support/stage-package.ts";

const root = fileURLToPath(new URL(".", import.meta.url));
await stagePackage(root);
const server = await createServer({ root, configFile: false, server: { port: Number(process.env.PORT) || 5173 } });
await server.listen();
server.printUrls();
console.log("  Sessions are kept in this browser's origin-private file system; add ?storage=memory to keep none.");
