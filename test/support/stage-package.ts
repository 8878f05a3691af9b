/**
 * The package as a user's project has it: `node_modules/pi-session-tree` holding a copy of package.json
 * and the build (`dist/`, so run `npm run build` first), and its dependencies beside it (links to this
 * repository's). A bundler or dev server then meets the package exactly as it meets an installed one
 * (Vite pre-bundles it, for one); a linked checkout would be taken for source instead.
 * @module
 */
import { cp, mkdir, readFile, rm, stat, symlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repository = fileURLToPath(new URL("../..", import.meta.url));

/** Put the built package into `<project>/node_modules`, replacing an earlier copy. */
export async function stagePackage(project: string): Promise<void> {
	const manifest = JSON.parse(await readFile(join(repository, "package.json"), "utf8"));
	const modules = join(project, "node_modules");
	const target = join(modules, manifest.name);
	if (!(await stat(join(repository, "dist/worker-entry.browser.js")).catch(() => null))) {
		throw new Error(`${repository}dist/ has no browser worker: run \`npm run build\` first`);
	}
	await rm(target, { recursive: true, force: true });
	await mkdir(target, { recursive: true });
	await cp(join(repository, "package.json"), join(target, "package.json"));
	await cp(join(repository, "dist"), join(target, "dist"), { recursive: true });
	for (const dependency of Object.keys(manifest.dependencies ?? {})) {
		const link = join(modules, dependency);
		await mkdir(dirname(link), { recursive: true });
		await rm(link, { recursive: true, force: true });
		await symlink(join(repository, "node_modules", dependency), link);
	}
}
