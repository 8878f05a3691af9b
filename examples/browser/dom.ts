/** Making elements without a UI library: a tag, its attributes, its children. */

type Child = Node | string | null | undefined | false;

/**
 * An element with attributes (`class`, `data-*`, `disabled`, …; `false`/`undefined` leaves one out) and
 * children (strings become text, never HTML: session text is shown as it is).
 */
export function h<K extends keyof HTMLElementTagNameMap>(
	tag: K,
	attributes: Record<string, string | number | boolean | undefined> = {},
	...children: Child[]
): HTMLElementTagNameMap[K] {
	const element = document.createElement(tag);
	for (const [name, value] of Object.entries(attributes)) {
		if (value === undefined || value === false) continue;
		element.setAttribute(name, value === true ? "" : String(value));
	}
	for (const child of children) if (child !== null && child !== undefined && child !== false) element.append(child);
	return element;
}

/** The element with this id, which index.html has. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
	const element = document.getElementById(id);
	if (!element) throw new Error(`index.html has no #${id}`);
	return element as T;
}

/** The last part of a path (a file's name). */
export function baseName(path: string): string {
	return path.slice(path.lastIndexOf("/") + 1);
}

/** At most `max` characters of `text`, on one line. */
export function oneLine(text: string, max = 120): string {
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Let the browser draw a frame and handle input before going on (between two long steps). */
export function nextTask(): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, 0));
}
