/** Hand bytes to the user as a downloaded file. */
export function saveFile(name: string, bytes: Uint8Array): void {
	const url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: "application/x-ndjson" }));
	const link = document.createElement("a");
	link.href = url;
	link.download = name;
	link.click();
	// The download has started by then; the URL only keeps the bytes alive.
	setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
