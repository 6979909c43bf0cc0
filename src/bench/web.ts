/**
 * The grader's desk benchmark: entries per second the audit page verifies a
 * 100,000-entry day at, in Chromium (its web worker, SHA-256 in
 * WebAssembly from hash-wasm, streaming the picked File: the verdict, shown
 * first, and the page ready with every row, built after it), beside `verifyBundle` on this
 * thread over the same bytes in the same run; and replay in the page (its
 * worker re-derives every ruling of a demo day with `replay`, referee ruler,
 * secp256k1 and EIP-191 from @noble/viem) beside `replay` in Node over the
 * same bundle. Skipped when /usr/bin/chromium or the built page is absent.
 * `TALLY_BENCH_WEB_ENTRIES` sets the verify day's size,
 * `TALLY_BENCH_WEB_REPLAY_WAKES` the replayed demo day's wakes (default 1000).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBundle, verifyBundle } from '../codec/index.js';
import { runDemo } from '../demo/index.js';
import { replayFile } from '../receipt/index.js';
import { replayRuler } from '../referee/index.js';
import { createEngine } from '../session/index.js';
import { loadAuditPage } from '../web/index.js';
import type { Figure } from './core.js';

const CHROMIUM = '/usr/bin/chromium';

async function dayOf(entries: number): Promise<Uint8Array> {
  const engine = createEngine();
  const open = await engine.open({ name: 'web bench', entries });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  const enc = new TextEncoder();
  const turns = Math.max(1, Math.floor((entries - 2) / 2));
  for (let ord = -1; ord < turns - 1; ord++) {
    const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1_000 + ord });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`{"action":"hold","i":${ord},"note":"unsigned bench turn"}`) } });
    if (!t.ok) throw new Error(t.message);
  }
  const fin = await engine.finalize(sid);
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return encodeBundle(lines);
}

/** The web section of `npm run bench`. */
export async function benchWeb(): Promise<Figure[]> {
  if (!existsSync(CHROMIUM)) throw new Error(`skipped: ${CHROMIUM} is absent`);
  let page: { html: string };
  try {
    page = loadAuditPage();
  } catch {
    throw new Error('skipped: the page is not built (npm run build)');
  }
  const entries = Number(process.env['TALLY_BENCH_WEB_ENTRIES'] ?? 100_000);
  const bundle = await dayOf(entries);
  const dir = mkdtempSync(join(tmpdir(), 'tally-bench-web-'));
  try {
    const file = join(dir, 'bundle.jsonl');
    const html = join(dir, 'desk.html');
    writeFileSync(file, bundle);
    writeFileSync(html, page.html);
    const chunks: Uint8Array[] = [];
    for (let o = 0; o < bundle.length; o += 1 << 20) chunks.push(bundle.subarray(o, o + (1 << 20)));
    let size = 0;
    const node: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const r = await verifyBundle(chunks);
      node.push(performance.now() - t0);
      if (!r.ok) throw new Error(`bench bundle failed: ${r.code}`);
      size = r.size;
    }
    // The verdict (the worker's time, as the banner says it) and the page ready: verdict, every row, timeline and charts drawn.
    const runs = await timesInPage(dir, html, file, { profile: 'profile-', done: 'body[data-ready=true]', check: ['#banner', 'data-state', 'unpinned'], ms: [['#banner', 'data-ms'], ['body', 'data-page-ms']] });
    const web = runs.map((r) => r[0]!);
    const ready = runs.map((r) => r[1]!);
    const perSecond = Math.round((size / Math.min(...web)) * 1000);
    const readyPerSecond = Math.round((size / Math.min(...ready)) * 1000);
    const baseline = Math.round((size / Math.min(...node)) * 1000);
    const replayed = await benchReplay(dir, html);
    return [
      {
        name: `verify in the browser (Chromium worker, ${size} entries)`,
        perSecond,
        baselineName: 'verifyBundle (node, this thread)',
        baselinePerSecond: baseline,
        ratio: perSecond / baseline,
        note: `${Math.round(bundle.length / 1048576)} MB; the verdict, shown first (the rows are built after it, one rows worker per core)`,
      },
      {
        name: `the page ready in the browser (verdict, ${size} rows, timeline and charts)`,
        perSecond: readyPerSecond,
        baselineName: 'verifyBundle (node, this thread)',
        baselinePerSecond: baseline,
        ratio: readyPerSecond / baseline,
        note: 'from the load click to every row shown',
      },
      replayed,
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Replay of a demo day in the page's worker beside `replay` in Node, same bytes, same run. */
async function benchReplay(dir: string, html: string): Promise<Figure> {
  const wakes = Number(process.env['TALLY_BENCH_WEB_REPLAY_WAKES'] ?? 1000);
  const out = join(dir, 'demo');
  await runDemo({ out, wakes, db: 'memory:' });
  const file = join(out, 'bundle.jsonl');
  const node: number[] = [];
  let entries = 0;
  for (let i = 0; i < 2; i++) {
    const t0 = performance.now();
    const r = await replayFile(file, { ruler: replayRuler('referee', true).ruler });
    node.push(performance.now() - t0);
    if (!r.ok) throw new Error('the bench demo day did not replay');
    entries = r.size;
  }
  const web = (await timesInPage(dir, html, file, { profile: 'profile-replay-', done: 'body[data-replayed]', check: ['body', 'data-replayed', 'replayed'], ms: [['#replay', 'data-ms']] })).map((r) => r[0]!);
  return {
    name: `replay in the browser (Chromium worker, demo day of ${entries} entries)`,
    perSecond: Math.round((entries / Math.min(...web)) * 1000),
    baselineName: 'replay (node, this thread)',
    baselinePerSecond: Math.round((entries / Math.min(...node)) * 1000),
    ratio: Math.min(...node) / Math.min(...web),
    note: `${wakes} wakes; referee ruler, every signature re-checked`,
  };
}

/**
 * Loads `file` into the built page twice, in a fresh Chromium profile, and
 * returns the page's own timings (attribute `a` of `sel` for each `[sel, a]` of `ms`) once `done` appears;
 * throws unless attribute `check[1]` of `check[0]` reads `check[2]`.
 */
async function timesInPage(
  dir: string,
  html: string,
  file: string,
  o: { readonly profile: string; readonly done: string; readonly check: readonly [string, string, string]; readonly ms: readonly (readonly [string, string])[] },
): Promise<number[][]> {
  const { chromium } = await import('playwright-core');
  const ctx = await chromium.launchPersistentContext(mkdtempSync(join(dir, o.profile)), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const times: number[][] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const tab = await ctx.newPage();
      await tab.goto(`file://${html}`);
      await tab.setInputFiles('#in-bundle', file);
      await tab.click('#load-files');
      await tab.waitForSelector(o.done, { timeout: 600_000 });
      const [sel, attr, want] = o.check;
      if ((await tab.getAttribute(sel, attr)) !== want) throw new Error(`the page did not finish the bench day (${sel} ${attr} is not ${want})`);
      times.push(await Promise.all(o.ms.map(async ([sel, a]) => Number(await tab.getAttribute(sel, a)))));
      await tab.close();
    }
  } finally {
    await ctx.close();
  }
  return times;
}
