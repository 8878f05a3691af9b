/**
 * The browser worker as source text, for bundlers that do not bundle `new Worker(new URL(…))` (esbuild):
 * when the worker file is not where the client looks for it, the client starts this text as a `blob:`
 * module worker instead. The build (tsup.config.ts) replaces this module with the bundled browser
 * worker; running from the sources there is none.
 * @module
 */
export const workerSource: string | undefined = undefined;
