/**
 * The day's charts, drawn by uPlot (a small, maintained canvas charting
 * library), in UTC with ISO-style labels whatever the browser's locale and
 * time zone, each y axis as wide as its labels: rulings over the day by
 * outcome (cumulative steps), quota used and locked against the
 * cap, exposure per market from reported fills, and the gap from each frame
 * to the next (the transcript has no turn clock: a turn is answered at the
 * latest by the next frame, so that gap is the latency the day can show).
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.js';
import type { Row } from './rows.js';

/**
 * Line colours per colour scheme, each at least 3:1 (WCAG 2.1 non-text
 * contrast) against the chart's panel in that scheme (style.css --panel:
 * #fff light, #1f2226 dark) and its page (--bg): 4.9:1 and up.
 */
export const PALETTES = {
  light: ['#1b6ac9', '#c0392b', '#1e7b47', '#8a6100', '#8e44ad', '#b84700', '#0e7c68', '#5f6b6d', '#2c3e50', '#c2185b'],
  dark: ['#6ea8fe', '#ff8a80', '#5fd68a', '#f2c14e', '#c89bf0', '#ffab66', '#4fd1b8', '#b0bcbf', '#e0e6ec', '#ff7eb9'],
} as const;

/** The palette of the scheme the page is shown in now. */
function palette(): readonly string[] {
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches ? PALETTES.dark : PALETTES.light;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** An x label in UTC, ISO style, whatever the browser's locale and time zone: the date when the axis spans days, else the time (the dates are in the caption). */
export function isoLabel(seconds: number, spanSeconds: number): string {
  const d = new Date(seconds * 1000);
  if (Number.isNaN(d.getTime())) return '';
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  return spanSeconds > 3 * 86400 ? date : `${time}Z`;
}

/** A y label without the locale's grouping (which varies and widens): 950, 12.5k, 1M. */
export function countLabel(v: number): string {
  const a = Math.abs(v);
  const trim = (x: number): string => String(Number(x.toFixed(2)));
  return a >= 1e6 ? `${trim(v / 1e6)}M` : a >= 1e4 ? `${trim(v / 1e3)}k` : trim(v);
}

/** An axis as wide as its longest label (so no label is clipped), measured in the chart's own font. */
function fitted(u: uPlot, values: string[] | null, axisIdx: number, cycle: number): number {
  const axis = u.axes[axisIdx]!;
  const sized = axis as uPlot.Axis & { _size?: number };
  if (cycle > 1 && sized._size !== undefined) return sized._size;
  const longest = (values ?? []).reduce((acc, v) => (v.length > acc.length ? v : acc), '');
  const font = Array.isArray(axis.font) ? String(axis.font[0]) : '12px system-ui';
  u.ctx.font = font;
  return Math.ceil(16 + u.ctx.measureText(longest).width / devicePixelRatio);
}

interface ChartOptions {
  readonly bars?: boolean;
  readonly steps?: boolean;
  /** A caption under the title (what is left out, what a line means). */
  readonly note?: string;
}

function chart(host: HTMLElement, title: string, data: uPlot.AlignedData, series: uPlot.Series[], width: number, o: ChartOptions = {}): void {
  const box = h('figure', { class: 'chart', 'data-title': title });
  host.append(box);
  const xs = data[0] as number[];
  const first = xs[0] ?? 0;
  const last = xs[xs.length - 1] ?? first;
  // One frame (or all at one time): an hour around it, not uPlot's two-year default.
  const range: uPlot.Range.MinMax = last - first < 60 ? [first - 1800, last + 1800] : [first, last];
  const span = range[1]! - range[0]!;
  const PALETTE = palette();
  const opts: uPlot.Options = {
    title,
    width,
    height: 190,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: { x: { time: true, range: () => range } },
    series: [
      { value: (_u, v) => (v == null ? '' : isoLabel(v, 0)) },
      ...series.map((s, i) => ({
        stroke: PALETTE[i % PALETTE.length]!,
        width: 2,
        ...(o.bars ? { paths: uPlot.paths.bars!({ size: [0.8, 12] }), fill: `${PALETTE[i % PALETTE.length]!}88` } : o.steps ? { paths: uPlot.paths.stepped!({ align: 1 }) } : {}),
        ...s,
      })),
    ],
    axes: [
      { values: (_u, splits) => splits.map((x) => isoLabel(x, span)), stroke: 'currentColor', grid: { stroke: '#8884' }, ticks: { stroke: '#8884' } },
      { values: (_u, splits) => splits.map(countLabel), size: fitted, stroke: 'currentColor', grid: { stroke: '#8884' }, ticks: { stroke: '#8884' } },
    ],
    legend: { live: false },
    hooks: {
      // What was drawn on the canvas, for machines and tests: the x labels, and the y axis's width beside its widest label.
      draw: [
        (u) => {
          const ax = u.axes as (uPlot.Axis & { _values?: (string | number)[]; _size?: number })[];
          box.setAttribute('data-x-labels', (ax[0]?._values ?? []).join('|'));
          const ys = (ax[1]?._values ?? []).map(String);
          box.setAttribute('data-y-labels', ys.join('|'));
          u.ctx.font = Array.isArray(ax[1]!.font) ? String(ax[1]!.font[0]) : '12px system-ui';
          box.setAttribute('data-y-label-px', String(Math.max(0, ...ys.map((y) => u.ctx.measureText(y).width / devicePixelRatio))));
          box.setAttribute('data-y-axis-px', String(ax[1]?._size ?? 0));
          box.setAttribute('data-x-range', `${u.scales['x']!.min ?? ''},${u.scales['x']!.max ?? ''}`);
          box.setAttribute('data-strokes', u.series.slice(1).map((s) => String(typeof s.stroke === 'function' ? s.stroke(u, 1) : s.stroke)).join('|'));
        },
      ],
    },
  };
  new uPlot(opts, data, box);
  const from = new Date(range[0]! * 1000).toISOString().slice(0, 16).replace('T', ' ');
  const to = new Date(range[1]! * 1000).toISOString().slice(0, 16).replace('T', ' ');
  box.append(h('figcaption', { class: 'muted' }, `UTC, ${from}Z – ${to}Z${o.note === undefined ? '' : ` · ${o.note}`}`));
}

/** The group a ruling code falls in on the rulings chart: outcome, and for a refusal its stage. */
function groupOf(r: Row): string | undefined {
  if (r.kind !== 'turn' || !r.code) return undefined;
  if (r.outcome === 'refused') return `refused (${r.section === 'verdict' ? 'judge' : (r.section ?? 'ruling')})`;
  return r.outcome === 'stand-down' ? 'stand-down' : r.outcome === 'admitted' ? 'admitted' : (r.outcome ?? 'other');
}

/** Draws every chart of `rows` into `host` (cleared first). */
export function drawCharts(host: HTMLElement, rows: readonly Row[], note?: string): void {
  host.replaceChildren();
  if (note !== undefined) host.append(h('p', { class: 'chart-note', id: 'chart-note' }, note));
  const cols = host.clientWidth >= 700 ? 2 : 1;
  const width = Math.max(260, Math.floor((host.clientWidth - 8 * (cols - 1)) / cols) - 16);
  const frames = rows.filter((r) => r.kind === 'frame' && r.time !== undefined);
  if (frames.length === 0) {
    host.append(h('p', {}, 'No frames: nothing to chart.'));
    return;
  }
  const times = [...new Set(frames.map((r) => r.time!))].sort((a, b) => a - b);
  const slot = new Map(times.map((t, i) => [t, i]));
  const xs = times.map((t) => t / 1000);

  // Rulings per frame time, by outcome (a refusal by its stage): a few legible steps instead of a line per code.
  const groups = new Map<string, number>();
  const codesOf = new Map<string, Set<string>>();
  for (const r of rows) {
    const g = groupOf(r);
    if (g === undefined) continue;
    groups.set(g, (groups.get(g) ?? 0) + 1);
    if (!codesOf.has(g)) codesOf.set(g, new Set());
    codesOf.get(g)!.add(r.code!);
  }
  const names = [...groups.keys()].sort((a, b) => groups.get(b)! - groups.get(a)!);
  const perGroup = names.map(() => new Array<number>(times.length).fill(0));
  for (const r of rows) {
    const g = groupOf(r);
    if (g === undefined || r.time === undefined) continue;
    const s = slot.get(r.time);
    if (s !== undefined) perGroup[names.indexOf(g)]![s]!++;
  }
  for (const series of perGroup) for (let s = 1; s < series.length; s++) series[s]! += series[s - 1]!;
  if (names.length > 0) {
    const refusedCodes = names.filter((n) => n.startsWith('refused')).map((n) => `${n}: ${[...codesOf.get(n)!].sort().join(', ')}`);
    chart(host, 'Rulings over the day (cumulative count, by outcome)', [xs, ...perGroup], names.map((n) => ({ label: `${n} ${groups.get(n)}` })), width, { steps: true, ...(refusedCodes.length > 0 ? { note: `codes — ${refusedCodes.join(' · ')}` } : {}) });
  }

  // Quota: used and locked against the cap, after each ruling.
  const q = rows.filter((r) => r.quota && r.time !== undefined);
  if (q.length > 0) {
    const used = new Array<number | null>(times.length).fill(null);
    const locked = new Array<number | null>(times.length).fill(null);
    const cap = new Array<number | null>(times.length).fill(null);
    for (const r of q) {
      const s = slot.get(r.time!)!;
      used[s] = r.quota!.used;
      locked[s] = r.quota!.locked;
      cap[s] = r.quota!.cap;
    }
    // A cap far above use would flatten use to the axis: then the cap is said, not drawn.
    const top = Math.max(0, ...q.map((r) => r.quota!.used + r.quota!.locked).filter(Number.isFinite));
    const capMax = Math.max(0, ...q.map((r) => r.quota!.cap).filter(Number.isFinite));
    const dwarfs = capMax > 5 * Math.max(top, 1e-9);
    if (dwarfs) chart(host, 'Quota used and locked', [xs, used, locked], [{ label: 'used', spanGaps: true }, { label: 'locked', spanGaps: true }], width, { steps: true, note: `cap ${capMax} (not drawn: ${top === 0 ? 'nothing used' : `about ${Math.round(capMax / top)} times the most used and locked`}, so use stays readable)` });
    else chart(host, 'Quota used and locked vs cap', [xs, used, locked, cap], [{ label: 'used', spanGaps: true }, { label: 'locked', spanGaps: true }, { label: 'cap', dash: [6, 4], spanGaps: true }], width, { steps: true });
  }

  // Exposure per market: signed filled size (opens add, closes subtract; long +, short −).
  const markets = [...new Set(frames.flatMap((r) => (r.fills ?? []).map((f) => f.market)))].filter((m) => m !== '?').slice(0, 10);
  if (markets.length > 0) {
    const level = new Map(markets.map((m) => [m, 0]));
    const series = markets.map(() => new Array<number>(times.length).fill(0));
    for (const r of frames) {
      for (const f of r.fills ?? []) {
        if (!level.has(f.market) || !Number.isFinite(f.size)) continue;
        const sign = (f.side === 'short' ? -1 : 1) * (f.action === 'close' ? -1 : 1);
        level.set(f.market, level.get(f.market)! + sign * f.size);
      }
      const s = slot.get(r.time!)!;
      markets.forEach((m, k) => (series[k]![s] = level.get(m)!));
    }
    chart(host, 'Exposure per market (filled size)', [xs, ...series], markets.map((m) => ({ label: m })), width, { steps: true });
  }

  // Frame → next frame: the latest a turn can have been answered.
  if (times.length > 1) {
    const gap = times.map((t, i) => (i + 1 < times.length ? (times[i + 1]! - t) / 60000 : null));
    chart(host, 'Frame → next frame, minutes (bounds turn latency)', [xs, gap], [{ label: 'minutes' }], width, { bars: true });
  }
}
