/**
 * Engine-log appends under 64 concurrent sealing sessions on PostgreSQL
 * (issue #26): 64 days at once, each opened (an open leaf), given two wakes
 * and sealed (a checkpoint leaf), on a store that writes the leaves, against
 * the same workload on a store of the same server that does not (the log
 * "off": every leaf serialises on the one `engine_log_head` row, which is
 * the cost measured). Rounds alternate on / off. Each store in its own fresh
 * schema, dropped afterwards. Needs `TALLY_PG_URL`; prints nothing.
 */
import pg from 'pg';
import { createEngine } from '../engine.js';
import { createNotary, generateEngineKey } from '../receipt/index.js';
import { PostgresStore } from '../store/postgres/store.js';
import type { TranscriptStore } from '../store/index.js';
import type { Figure } from './core.js';

async function sealingDay(engine: ReturnType<typeof createEngine>, notary: ReturnType<typeof createNotary>, name: string): Promise<void> {
  const o = await engine.open({ name, day: '2026-12-02' });
  if (!o.ok) throw new Error(o.message);
  for (let ord = -1; ord < 1; ord++) {
    const f = await engine.frame({ sessionId: o.sessionId, ordinal: ord, time: 1000 + (ord + 1) * 60_000 });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: o.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
    if (!t.ok) throw new Error(t.message);
  }
  const s = await notary.sealWithReceipt(engine, o.sessionId);
  if (!s.ok) throw new Error(s.message);
}

/** Runs `sessions` sealing days at once; milliseconds. */
async function round(engine: ReturnType<typeof createEngine>, notary: ReturnType<typeof createNotary>, tag: string, sessions: number): Promise<number> {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: sessions }, (_, i) => sealingDay(engine, notary, `${tag}-${i}`)));
  return performance.now() - t0;
}

/** The figure, or throws `skipped: …` without `TALLY_PG_URL`. */
export async function benchLogPostgres(opts: { readonly url?: string; readonly sessions?: number; readonly rounds?: number; readonly poolSize?: number; readonly off: (s: TranscriptStore) => TranscriptStore }): Promise<Figure> {
  const url = opts.url ?? process.env['TALLY_PG_URL'];
  if (!url) throw new Error('skipped: TALLY_PG_URL is not set');
  const sessions = opts.sessions ?? 64;
  const rounds = opts.rounds ?? 3;
  const poolSize = opts.poolSize ?? 16;
  const stamp = `${process.pid}_${Date.now().toString(36)}`;
  const schemas = { on: `tally_bench_log_on_${stamp}`, off: `tally_bench_log_off_${stamp}` };
  const on = await PostgresStore.open({ url, schema: schemas.on, poolSize });
  const offInner = await PostgresStore.open({ url, schema: schemas.off, poolSize });
  const notary = createNotary({ key: generateEngineKey('bench.example/desk') });
  const engines = { on: createEngine({ store: on }), off: createEngine({ store: opts.off(offInner) }) };
  const total = { on: 0, off: 0 };
  try {
    await round(engines.on, notary, 'warm-on', 8);
    await round(engines.off, notary, 'warm-off', 8);
    for (let r = 0; r < rounds; r++) {
      for (const tag of r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) total[tag] += await round(engines[tag], notary, `r${r}-${tag}`, sessions);
    }
    const leaves = await on.engineLogSize();
    const want = 2 * (8 + rounds * sessions);
    if (leaves !== want) throw new Error(`the engine log holds ${leaves} leaves, want ${want}`);
    if ((await offInner.engineLogSize()) !== 0) throw new Error('the log-off store took leaves');
    const appendsOn = (2 * sessions * rounds) / (total.on / 1000);
    const sealsOn = (sessions * rounds) / (total.on / 1000);
    const sealsOff = (sessions * rounds) / (total.off / 1000);
    return {
      name: `engine-log appends under ${sessions} concurrent sealing sessions (PostgreSQL, pool ${poolSize})`,
      perSecond: Math.round(appendsOn),
      baselineName: 'days sealed per second with the log off',
      baselinePerSecond: Math.round(sealsOff),
      ratio: Math.round((sealsOn / sealsOff) * 1000) / 1000,
      note: `${Math.round(sealsOn)} vs ${Math.round(sealsOff)} days/s (open, 2 wakes, seal; 2 leaves a day), ${rounds} rounds each; ratio = days/s on / off`,
    };
  } finally {
    await on.close();
    await offInner.close();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    for (const s of Object.values(schemas)) await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(s)} CASCADE`).catch(() => {});
    await admin.end();
  }
}
