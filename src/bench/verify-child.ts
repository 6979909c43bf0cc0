/**
 * Child process of the core benchmark: verifies one bundle file from disk
 * (`node verify-child.js <path> seq|par [workers]`) and prints one JSON line
 * `{ ok, size, ms, rssBeforeKb, maxRssKb }`, so peak memory is that of a fresh
 * process doing nothing but the verification.
 */
import { readFileSync } from 'node:fs';
import { verifyBundleFile } from '../codec/bundle.js';
import { createVerifyPool } from '../codec/parallel/pool.js';

// Peak RSS of THIS process image: Linux's VmHWM (getrusage's maxrss survives
// exec and would report the parent's peak); elsewhere, getrusage.
function peakRssKb(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]);
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS;
}

const [path, mode = 'seq', workers] = process.argv.slice(2);
if (path === undefined) throw new Error('usage: verify-child.js <bundle> seq|par [workers]');
const rssBeforeKb = peakRssKb();
const pool = mode === 'par' ? createVerifyPool(workers === undefined ? {} : { workers: Number(workers) }) : undefined;
const t0 = performance.now();
const r = await verifyBundleFile(path, pool ? { parallel: { pool } } : {});
const ms = performance.now() - t0;
await pool?.close();
process.stdout.write(`${JSON.stringify({ ok: r.ok, size: r.ok ? r.size : r.index, ms, rssBeforeKb, maxRssKb: peakRssKb() })}\n`);
