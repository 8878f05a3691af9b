// The few Deno globals examples/deno uses, for this repository's type-check under Node's types (Deno
// itself has them built in).
declare const Deno: {
	readonly args: string[];
	readonly env: { get(name: string): string | undefined };
	stat(path: string): Promise<{ isDirectory: boolean }>;
	exit(code?: number): never;
};
