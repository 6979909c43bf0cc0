/**
 * Child process of the core benchmark: verifies one bundle file from disk
 * (`node verify-child.js <path> seq|par [workers]`) and prints one JSON line
 * `{ ok, size, ms, rssBeforeKb, maxRssKb, childrenMaxRssKb }`, so peak memory is
 * that of a fresh process doing nothing but the verification (and of the
 * pool's child processes).
 */
import { verifyBundleFile } from '../codec/bundle.js';
import { createVerifyPool } from '../codec/parallel/pool.js';
import { peakRssKb } from './rss.js';

const [path, mode = 'seq', workers] = process.argv.slice(2);
if (path === undefined) throw new Error('usage: verify-child.js <bundle> seq|par [workers]');
const rssBeforeKb = peakRssKb();
const pool = mode === 'par' ? createVerifyPool(workers === undefined ? {} : { workers: Number(workers) }) : undefined;
const t0 = performance.now();
const r = await verifyBundleFile(path, pool ? { parallel: { pool } } : {});
const ms = performance.now() - t0;
// The pool's child processes (the default pool's workers) hold memory of their own: their peaks, read before they end.
const childrenMaxRssKb = (pool?.pids() ?? []).map((pid) => peakRssKb(pid));
await pool?.close();
process.stdout.write(`${JSON.stringify({ ok: r.ok, size: r.ok ? r.size : r.index, ms, rssBeforeKb, maxRssKb: peakRssKb(), childrenMaxRssKb })}\n`);
