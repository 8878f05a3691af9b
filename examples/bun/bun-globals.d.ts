// The few Bun globals examples/bun uses, for this repository's type-check under Node's types (with Bun's
// own types, `bun add -d @types/bun`, this file is not needed).
declare const Bun: {
	readonly argv: string[];
	readonly env: Record<string, string | undefined>;
	nanoseconds(): number;
};
