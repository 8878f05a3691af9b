/**
 * How responsive the page is: the longest gap between two animation frames since the last reset. A gap
 * far above 16 ms is a frame the user saw freeze. The end-to-end test reads `window.__worstFrameMs`.
 */

declare global {
	interface Window {
		/** Longest gap between animation frames since the last reset, in milliseconds. */
		__worstFrameMs: number;
		/** Start measuring afresh. */
		__resetFrameMonitor(): void;
	}
}

/** Start measuring; `show` is called about once a second with the worst gap so far. */
export function startFrameMonitor(show: (worstMs: number) => void): void {
	let last = performance.now();
	let shown = last;
	window.__worstFrameMs = 0;
	window.__resetFrameMonitor = () => {
		window.__worstFrameMs = 0;
		last = performance.now();
	};
	const tick = (now: number) => {
		window.__worstFrameMs = Math.max(window.__worstFrameMs, now - last);
		last = now;
		if (now - shown > 1000) {
			shown = now;
			show(window.__worstFrameMs);
		}
		requestAnimationFrame(tick);
	};
	requestAnimationFrame(tick);
}
