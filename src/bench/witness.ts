/**
 * Witness benchmarks (issue #12): a witness's add-checkpoint rate (in process
 * and over loopback HTTP, SQLite state with synchronous=FULL) and the latency
 * a seal gains from asking 3 local witnesses — each beside the rate of one
 * Ed25519 signature measured in the same run. Prints nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consistencyProof, leafHash, rootHash } from '../merkle/index.js';
import { createNotary, formatCheckpoint, formatConsistencyProof, generateEngineKey, signNote } from '../receipt/index.js';
import { createEngine } from '../session/index.js';
import { cosignerKeyFrom, createWitness, createWitnessedNotary, createWitnessHttpServer, SqliteWitnessStore, submitCheckpoint } from '../witness/index.js';
import type { Figure } from './core.js';

const rate = (n: number, ms: number): number => Math.round((n / Math.max(ms, 1e-6)) * 1000);

/** Runs the witness benchmarks: `adds` growing checkpoints, `seals` sealed days of `wakes` wakes. */
export async function benchWitness(opts: { adds?: number; seals?: number; wakes?: number } = {}): Promise<Figure[]> {
  const adds = opts.adds ?? 400;
  const seals = opts.seals ?? 20;
  const wakes = opts.wakes ?? 20;
  const dir = mkdtempSync(join(tmpdir(), 'tally-bench-witness-'));
  const engineKey = generateEngineKey('bench.example/engine');
  try {
    // Baseline: one Ed25519 signature of a checkpoint-sized message.
    const msg = new TextEncoder().encode(`bench.example/engine/${'ab'.repeat(32)}\n123456\n${'A'.repeat(43)}=\n`);
    const signs = 2000;
    let t0 = performance.now();
    for (let i = 0; i < signs; i++) engineKey.sign(msg);
    const signRate = rate(signs, performance.now() - t0);

    // Bodies of a log growing one leaf at a time (consistency proof from the previous size).
    const origin = `bench.example/engine/${'cd'.repeat(32)}`;
    const leaves: Uint8Array[] = [];
    const bodies: string[] = [];
    for (let n = 1; n <= 2 * adds; n++) {
      leaves.push(leafHash(new TextEncoder().encode(`leaf ${n}`)));
      const signedCheckpoint = signNote(formatCheckpoint({ origin, size: n, root: rootHash(leaves) }), [engineKey]);
      bodies.push(formatConsistencyProof({ oldSize: n - 1, proof: n - 1 === 0 ? [] : consistencyProof(leaves, n - 1, n), signedCheckpoint }));
    }
    const wkey = cosignerKeyFrom(generateEngineKey('bench.example/w'));
    const store = SqliteWitnessStore.open(join(dir, 'w.db'));
    const witness = createWitness({ key: wkey, store });
    await witness.trustLogKey(engineKey.verifierKey);
    t0 = performance.now();
    for (let i = 0; i < adds; i++) {
      const r = await witness.addCheckpoint(bodies[i]!);
      if (!r.ok) throw new Error(`add-checkpoint ${i}: ${r.code}`);
    }
    const inProcess = rate(adds, performance.now() - t0);
    const server = createWitnessHttpServer(witness);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t0 = performance.now();
    for (let i = adds; i < 2 * adds; i++) {
      const r = await submitCheckpoint(url, bodies[i]!);
      if (r.kind !== 'cosigned') throw new Error(`HTTP add-checkpoint ${i}: ${r.kind}`);
    }
    const overHttp = rate(adds, performance.now() - t0);
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await store.close();

    // Seal latency: plain notary vs one asking 3 local witnesses (HTTP, SQLite state).
    const servers = [];
    const witnesses = [];
    for (let i = 0; i < 3; i++) {
      const k = cosignerKeyFrom(generateEngineKey(`bench.example/w${i}`));
      const st = SqliteWitnessStore.open(join(dir, `s${i}.db`));
      const w = createWitness({ key: k, store: st });
      await w.trustLogKey(engineKey.verifierKey);
      const s = createWitnessHttpServer(w);
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
      servers.push({ s, st });
      witnesses.push({ url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, verifier: k.verifier });
    }
    const plain = createNotary({ key: engineKey });
    const witnessed = createWitnessedNotary({ notary: createNotary({ key: engineKey }), witnesses });
    const timeSeals = async (notary: typeof plain, tag: string): Promise<number> => {
      let total = 0;
      for (let i = 0; i < seals; i++) {
        const engine = createEngine();
        const open = await engine.open({ name: `bench-${tag}-${i}`, day: '2026-12-01' });
        if (!open.ok) throw new Error(open.message);
        for (let ord = -1; ord < wakes; ord++) {
          const f = await engine.frame({ sessionId: open.sessionId, ordinal: ord, time: 1000 + (ord + 1) * 60_000, data: { n: ord } });
          if (!f.ok) throw new Error(f.message);
          const t = await engine.turn({ sessionId: open.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
          if (!t.ok) throw new Error(t.message);
        }
        const s0 = performance.now();
        const r = await notary.sealWithReceipt(engine, open.sessionId);
        total += performance.now() - s0;
        if (!r.ok) throw new Error(r.message);
      }
      return total / seals;
    };
    const plainMs = await timeSeals(plain, 'plain');
    const witnessedMs = await timeSeals(witnessed, 'witnessed');
    for (const { s, st } of servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
      await st.close();
    }
    return [
      { name: 'witness add-checkpoint (in process, SQLite FULL)', perSecond: inProcess, baselineName: 'Ed25519 signatures', baselinePerSecond: signRate, ratio: inProcess / signRate },
      { name: 'witness add-checkpoint (loopback HTTP)', perSecond: overHttp, baselineName: 'Ed25519 signatures', baselinePerSecond: signRate, ratio: overHttp / signRate },
      {
        name: 'seals with 3 local witnesses',
        perSecond: Math.round(1000 / witnessedMs),
        baselineName: 'Ed25519 signatures',
        baselinePerSecond: signRate,
        ratio: 1000 / witnessedMs / signRate,
        note: `seal ${witnessedMs.toFixed(2)} ms with witnesses vs ${plainMs.toFixed(2)} ms without (+${(witnessedMs - plainMs).toFixed(2)} ms = ${((witnessedMs - plainMs) * signRate / 1000).toFixed(0)} signatures' time); ${2 * wakes + 2} entries per day`,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
