/**
 * The day's charts, drawn by uPlot (a small, maintained canvas charting
 * library): rulings over the day by code, quota used and locked against the
 * cap, exposure per market from reported fills, and the gap from each frame
 * to the next (the transcript has no turn clock: a turn is answered at the
 * latest by the next frame, so that gap is the latency the day can show).
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.js';
import type { Row } from './rows.js';

const PALETTE = ['#1b6ac9', '#c0392b', '#2e8b57', '#b8860b', '#8e44ad', '#d35400', '#16a085', '#7f8c8d', '#2c3e50', '#e84393'];

function chart(host: HTMLElement, title: string, data: uPlot.AlignedData, series: uPlot.Series[], width: number, bars = false): void {
  const box = h('figure', { class: 'chart' });
  host.append(box);
  const opts: uPlot.Options = {
    title,
    width,
    height: 180,
    scales: { x: { time: true } },
    series: [{}, ...series.map((s, i) => ({ stroke: PALETTE[i % PALETTE.length]!, width: 2, ...(bars ? { paths: uPlot.paths.bars!({ size: [0.8, 12] }), fill: `${PALETTE[i % PALETTE.length]!}88` } : {}), ...s }))],
    axes: [{}, { size: 50 }],
    legend: { live: false },
  };
  new uPlot(opts, data, box);
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

  // Rulings per frame time, by code (the eight commonest codes, the rest as "other").
  const counts = new Map<string, number>();
  for (const r of rows) if (r.kind === 'turn' && r.code) counts.set(r.code, (counts.get(r.code) ?? 0) + 1);
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([c]) => c);
  const codes = counts.size > top.length ? [...top, 'other'] : top;
  const perCode = codes.map(() => new Array<number>(times.length).fill(0));
  for (const r of rows) {
    if (r.kind !== 'turn' || r.time === undefined || !r.code) continue;
    const k = top.includes(r.code) ? codes.indexOf(r.code) : codes.length - 1;
    const s = slot.get(r.time);
    if (s !== undefined && perCode[k]) perCode[k]![s]!++;
  }
  for (const series of perCode) for (let s = 1; s < series.length; s++) series[s]! += series[s - 1]!;
  chart(host, 'Rulings over the day by code (cumulative)', [xs, ...perCode], codes.map((c) => ({ label: c })), width);

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
    chart(host, 'Quota used and locked vs cap', [xs, used, locked, cap], [{ label: 'used', spanGaps: true }, { label: 'locked', spanGaps: true }, { label: 'cap', dash: [6, 4], spanGaps: true }], width);
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
    chart(host, 'Exposure per market (filled size)', [xs, ...series], markets.map((m) => ({ label: m })), width);
  }

  // Frame → next frame: the latest a turn can have been answered.
  if (times.length > 1) {
    const gap = times.map((t, i) => (i + 1 < times.length ? (times[i + 1]! - t) / 60000 : null));
    chart(host, 'Frame → next frame, minutes (bounds turn latency)', [xs, gap], [{ label: 'minutes' }], width, true);
  }
}
