/**
 * The suite's charts, as SVG files drawn from its rows: open time and peak memory against session size
 * (ours lazy and full, pi 1.6.0, the floor), and listing time against the number of sessions. Both axes
 * are logarithmic, since sizes span 100 MB to 1 GB and more. A small line chart of our own: a charting
 * library would be a large dependency for three plain pictures.
 * @module
 */
import type { BenchRow, Measure } from "./rows.ts";

export interface Point {
	x: number;
	y: number;
}

export interface Series {
	name: string;
	points: Point[];
}

export interface Chart {
	file: string;
	title: string;
	xLabel: string;
	yLabel: string;
	series: Series[];
}

const COLORS = ["#1f77b4", "#2ca02c", "#d62728", "#7f7f7f", "#9467bd", "#ff7f0e"];
const WIDTH = 640;
const HEIGHT = 400;
const MARGIN = { left: 70, right: 170, top: 40, bottom: 50 };

/** The charts the rows give (those with points only). */
export function chartsOf(rows: readonly BenchRow[]): Chart[] {
	const open = rows.filter((row) => row.plot?.chart === "open" && row.size?.bytes && !row.problem);
	const listing = rows.filter((row) => row.plot?.chart === "listing" && row.size?.sessions && !row.problem);
	const charts: Chart[] = [
		{
			file: "open-time.svg",
			title: "Opening a session: time",
			xLabel: "session size (MB)",
			yLabel: "time (ms)",
			series: openSeries(open, (m) => m.median),
		},
		{
			file: "open-memory.svg",
			title: "Opening a session: peak memory",
			xLabel: "session size (MB)",
			yLabel: "peak RSS (MB)",
			series: openSeries(open, (m) => m.rssMb),
		},
		{
			file: "listing-time.svg",
			title: "Listing every session (listAll)",
			xLabel: "sessions",
			yLabel: "time (ms)",
			series: listingSeries(listing),
		},
	];
	return charts.filter((chart) => chart.series.some((series) => series.points.length > 0));
}

/**
 * Open rows by implementation: one point per size (in whole MB; the inputs of one size, linear, bushy and
 * compaction-heavy, averaged).
 */
function openSeries(rows: readonly BenchRow[], y: (measure: Measure) => number | undefined): Series[] {
	const sums = new Map<string, Map<number, { total: number; count: number }>>();
	const add = (name: string, x: number, measure: Measure | undefined) => {
		const value = measure && y(measure);
		if (value === undefined || !(value > 0)) return;
		const points = sums.get(name) ?? new Map<number, { total: number; count: number }>();
		sums.set(name, points);
		const sum = points.get(x) ?? { total: 0, count: 0 };
		points.set(x, { total: sum.total + value, count: sum.count + 1 });
	};
	for (const row of rows) {
		const x = Math.round((row.size?.bytes as number) / 1e6);
		add(`ours, ${row.plot?.label}`, x, row.ours);
		add("pi 1.6.0", x, row.pi16);
		add("pi 0.73.1", x, row.pi073);
		add("floor (JSON.parse)", x, row.floor);
	}
	const series = new Map(
		[...sums].map(([name, points]) => [name, new Map([...points].map(([x, sum]) => [x, sum.total / sum.count]))]),
	);
	return toSeries(series);
}

function listingSeries(rows: readonly BenchRow[]): Series[] {
	const series = new Map<string, Map<number, number>>();
	for (const row of rows) {
		const x = row.size?.sessions as number;
		for (const [name, measure] of [
			[`ours, ${row.plot?.label}`, row.ours],
			[`pi 1.6.0, ${row.plot?.label}`, row.pi16],
		] as const) {
			if (!measure || !(measure.median > 0)) continue;
			const points = series.get(name) ?? new Map<number, number>();
			series.set(name, points);
			points.set(x, measure.median);
		}
	}
	return toSeries(series);
}

function toSeries(series: ReadonlyMap<string, ReadonlyMap<number, number>>): Series[] {
	return [...series].map(([name, points]) => ({
		name,
		points: [...points].map(([x, y]) => ({ x, y })).sort((a, b) => a.x - b.x),
	}));
}

/** Powers of ten, and 2 and 5 times them, from below `low` to above `high`: the ticks of a log axis. */
function logTicks(low: number, high: number): number[] {
	const ticks: number[] = [];
	for (let exponent = Math.floor(Math.log10(low)); exponent <= Math.ceil(Math.log10(high)); exponent++) {
		for (const step of [1, 2, 5]) {
			const tick = step * 10 ** exponent;
			if (tick >= low / 1.0001 && tick <= high * 1.0001) ticks.push(tick);
		}
	}
	return ticks;
}

function escapeXml(text: string): string {
	return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function tickLabel(value: number): string {
	return value >= 1000 ? `${value / 1000}k` : String(Number(value.toPrecision(3)));
}

/** The chart as an SVG document. */
export function renderChart(chart: Chart): string {
	const points = chart.series.flatMap((series) => series.points);
	const xs = points.map((point) => point.x);
	const ys = points.map((point) => point.y);
	// Half a decade of room on each side, so a single size still makes a readable chart.
	const [xLow, xHigh] = [Math.min(...xs) / 1.6, Math.max(...xs) * 1.6];
	const [yLow, yHigh] = [Math.min(...ys) / 1.6, Math.max(...ys) * 1.6];
	const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
	const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
	const sx = (x: number) =>
		MARGIN.left + ((Math.log10(x) - Math.log10(xLow)) / (Math.log10(xHigh) - Math.log10(xLow))) * plotWidth;
	const sy = (y: number) =>
		MARGIN.top +
		plotHeight -
		((Math.log10(y) - Math.log10(yLow)) / (Math.log10(yHigh) - Math.log10(yLow))) * plotHeight;
	const parts: string[] = [
		`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
		`<title>${escapeXml(chart.title)}</title>`,
		`<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
		`<text x="${MARGIN.left}" y="22" font-size="15" font-weight="bold">${escapeXml(chart.title)}</text>`,
	];
	for (const tick of logTicks(xLow, xHigh)) {
		const x = sx(tick).toFixed(1);
		parts.push(
			`<line x1="${x}" y1="${MARGIN.top}" x2="${x}" y2="${MARGIN.top + plotHeight}" stroke="#eee"/>`,
			`<text x="${x}" y="${MARGIN.top + plotHeight + 16}" text-anchor="middle">${tickLabel(tick)}</text>`,
		);
	}
	for (const tick of logTicks(yLow, yHigh)) {
		const y = sy(tick).toFixed(1);
		parts.push(
			`<line x1="${MARGIN.left}" y1="${y}" x2="${MARGIN.left + plotWidth}" y2="${y}" stroke="#eee"/>`,
			`<text x="${MARGIN.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${tickLabel(tick)}</text>`,
		);
	}
	parts.push(
		`<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#999"/>`,
		`<text x="${MARGIN.left + plotWidth / 2}" y="${HEIGHT - 12}" text-anchor="middle">${escapeXml(chart.xLabel)} (log)</text>`,
		`<text transform="translate(16 ${MARGIN.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(chart.yLabel)} (log)</text>`,
	);
	chart.series.forEach((series, index) => {
		const color = COLORS[index % COLORS.length] as string;
		const path = series.points.map((point) => `${sx(point.x).toFixed(1)},${sy(point.y).toFixed(1)}`).join(" ");
		if (series.points.length > 1)
			parts.push(`<polyline points="${path}" fill="none" stroke="${color}" stroke-width="2"/>`);
		for (const point of series.points) {
			parts.push(`<circle cx="${sx(point.x).toFixed(1)}" cy="${sy(point.y).toFixed(1)}" r="3.5" fill="${color}"/>`);
		}
		const legendY = MARGIN.top + 10 + index * 20;
		parts.push(
			`<line x1="${WIDTH - MARGIN.right + 14}" y1="${legendY}" x2="${WIDTH - MARGIN.right + 34}" y2="${legendY}" stroke="${color}" stroke-width="2"/>`,
			`<text x="${WIDTH - MARGIN.right + 40}" y="${legendY}" dominant-baseline="middle">${escapeXml(series.name)}</text>`,
		);
	});
	parts.push("</svg>");
	return `${parts.join("\n")}\n`;
}
