/**
 * Side by side with a peer: the same entries appended and verified by Tally
 * and by `hypercore` (devDependency, bench only) in the same run. Tally
 * records a day of frame+turn entries on SQLite and verifies its bundle;
 * hypercore appends those exact entry bytes (batches of 100) to its own
 * storage and verifies them by replicating into a second core (every block
 * checked against the signed Merkle tree). Entries: `TALLY_BENCH_PEER_ENTRIES`
 * (default 5,000 turns, i.e. about 10,000 entries).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBundle, verifyBundle } from '../codec/index.js';
import { createEngine } from '../engine.js';
import { SqliteStore } from '../store/index.js';
import type { Figure } from './core.js';

/** The part of hypercore's API this bench uses (it ships no types). */
interface Core {
  readonly key: Uint8Array;
  readonly length: number;
  ready(): Promise<void>;
  append(blocks: Uint8Array[]): Promise<unknown>;
  replicate(initiator: boolean): NodeJS.ReadWriteStream;
  download(range: { start: number; end: number }): { done(): Promise<void> };
  close(): Promise<void>;
}
type CoreCtor = new (storage: string, key?: Uint8Array) => Core;

/**
 * Runs both; figures are Tally's rates with hypercore's as the baseline.
 *
 * @example
 * const { figures } = await benchPeer();
 */
export async function benchPeer(turns = Number(process.env['TALLY_BENCH_PEER_ENTRIES'] ?? 5_000)): Promise<{ figures: Figure[] }> {
  const name = 'hypercore';
  const Hypercore = ((await import(name)) as { default: CoreCtor }).default;
  const dir = mkdtempSync(join(tmpdir(), 'tally-bench-peer-'));
  try {
    const store = new SqliteStore(join(dir, 'tally.db'));
    const engine = createEngine({ store });
    const open = await engine.open({ name: 'bench-peer', turns });
    if (!open.ok) throw new Error(open.message);
    const sid = open.sessionId;
    const enc = new TextEncoder();
    const t0 = performance.now();
    for (let ord = -1; ord < turns - 1; ord++) {
      const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1_000 + ord });
      if (!f.ok) throw new Error(f.message);
      const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`{"action":"hold","i":${ord}}`) } });
      if (!t.ok) throw new Error(t.message);
    }
    const fin = await engine.finalize(sid);
    if (!fin.ok) throw new Error(fin.message);
    const recordMs = performance.now() - t0;
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(sid)) lines.push(l);
    await store.close();
    const v0 = performance.now();
    const v = await verifyBundle([encodeBundle(lines)]);
    const verifyMs = performance.now() - v0;
    if (!v.ok) throw new Error('tally bundle failed verification');

    const core = new Hypercore(join(dir, 'hc-a'));
    await core.ready();
    const a0 = performance.now();
    for (let i = 0; i < lines.length; i += 100) await core.append(lines.slice(i, i + 100));
    const hcAppendMs = performance.now() - a0;
    const clone = new Hypercore(join(dir, 'hc-b'), core.key);
    await clone.ready();
    const r0 = performance.now();
    const s1 = core.replicate(true);
    const s2 = clone.replicate(false);
    s1.pipe(s2).pipe(s1);
    await clone.download({ start: 0, end: lines.length }).done();
    const hcVerifyMs = performance.now() - r0;
    await clone.close();
    await core.close();
    const n = lines.length;
    const per = (ms: number): number => Math.round((n / ms) * 1000);
    return {
      figures: [
        {
          name: `Tally: record ${n.toLocaleString('en-US')} entries on SQLite (one engine call each, validated, hash-chained, durable)`,
          perSecond: per(recordMs),
          baselineName: 'hypercore append of the same entry bytes (batches of 100, signed tree)',
          baselinePerSecond: per(hcAppendMs),
          ratio: hcAppendMs / recordMs,
        },
        {
          name: `Tally: verify the ${n.toLocaleString('en-US')}-entry bundle (verifyBundle, this thread)`,
          perSecond: per(verifyMs),
          baselineName: 'hypercore replicate into a second core (every block verified against the signed tree)',
          baselinePerSecond: per(hcVerifyMs),
          ratio: hcVerifyMs / verifyMs,
          note: 'hypercore replication includes its wire protocol between two cores in this process',
        },
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
