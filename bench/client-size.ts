/**
 * The size of the worker client as a page ships it: `pi-session-tree/worker` bundled for the browser
 * with esbuild (ESM, minified, Comlink included), raw and gzipped, and the modules it is made of.
 * Run: `npx tsx bench/client-size.ts`. `test/worker-client-size.test.ts` holds it to its budget.
 * @module
 */
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

export interface BundleSize {
	/** Minified bytes. */
	min: number;
	/** Gzipped bytes of the minified bundle. */
	gzip: number;
	/** The bundle's text. */
	code: string;
	/** Every module in the bundle (paths relative to the repository), with its bytes in the output. */
	inputs: Record<string, number>;
}

/** Bundle `entry` (a path relative to the repository) as a browser page would. */
export async function bundleSize(entry = "adapters/worker.ts"): Promise<BundleSize> {
	const root = fileURLToPath(new URL("..", import.meta.url));
	const result = await build({
		entryPoints: [entry],
		absWorkingDir: root,
		bundle: true,
		minify: true,
		format: "esm",
		platform: "browser",
		// Node's modules are imported only on Node (by a dynamic import the browser never reaches).
		external: ["node:*"],
		write: false,
		metafile: true,
		logLevel: "error",
	});
	const [output] = result.outputFiles;
	if (!output) throw new Error("esbuild wrote no bundle");
	const [meta] = Object.values(result.metafile.outputs);
	const inputs = Object.fromEntries(
		Object.entries(meta?.inputs ?? {}).map(([path, { bytesInOutput }]) => [path, bytesInOutput]),
	);
	return { min: output.contents.length, gzip: gzipSync(output.contents).length, code: output.text, inputs };
}

if (import.meta.url === `file://${process.argv[1]}`) {
	const { min, gzip, inputs } = await bundleSize();
	console.log(
		`pi-session-tree/worker for the browser (esbuild, esm, minified): ${(min / 1000).toFixed(1)} kB min, ${(gzip / 1000).toFixed(1)} kB gzip`,
	);
	for (const [path, bytes] of Object.entries(inputs).sort((a, b) => b[1] - a[1]))
		console.log(`  ${String(bytes).padStart(6)}  ${path}`);
}
