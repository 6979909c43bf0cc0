/**
 * What every engine-log test checks: the store's engine log, read back and
 * parsed, is exactly the store's history — one `open` leaf per session, and
 * one `checkpoint` leaf per signing-log row of a session origin (same origin,
 * size, root; `seal` exactly when that checkpoint covers the finalize) —
 * with positions 0 … n−1 and nothing else.
 */
import { expect } from 'vitest';
import { parseEngineLogLeaf, type CheckpointLeaf, type OpenLeaf } from '../../src/protocol/index.js';
import type { EngineLogStore, TranscriptStore } from '../../src/store/index.js';

/** The parsed leaves of a store's engine log, in order. */
export async function readLog(store: EngineLogStore): Promise<(OpenLeaf | CheckpointLeaf)[]> {
  const n = await store.engineLogSize();
  const raw = await store.engineLogLeaves(0, n + 5);
  expect(raw.length, 'leaves at positions 0 … size−1, none beyond').toBe(n);
  return raw.map((b, i) => {
    const r = parseEngineLogLeaf(b);
    if (!r.ok) throw new Error(`leaf ${i}: ${r.code} ${r.message}`);
    return r.leaf;
  });
}

/** Asserts the engine log equals the store's sessions and signing history exactly; returns the leaves. */
export async function expectLogIsHistory(store: TranscriptStore & EngineLogStore, engineName: string): Promise<(OpenLeaf | CheckpointLeaf)[]> {
  const leaves = await readLog(store);
  const sessions = await store.listSessions();
  const opens = leaves.filter((l): l is OpenLeaf => l.kind === 'open').map((l) => l.session);
  expect([...opens].sort(), 'one open leaf per session').toEqual([...sessions].sort());
  const signed: string[] = [];
  for (const sid of sessions) {
    const head = await store.loadHead(sid);
    for (const r of await store.signedCheckpoints(`${engineName}/${sid}`)) {
      signed.push(JSON.stringify([r.origin, r.size, r.root, head?.phase === 'sealed' && head.size === r.size]));
    }
  }
  const logged = leaves.filter((l): l is CheckpointLeaf => l.kind === 'checkpoint').map((l) => JSON.stringify([l.origin, l.size, l.root, l.seal]));
  expect([...logged].sort(), 'one checkpoint leaf per signed session checkpoint').toEqual([...signed].sort());
  // A checkpoint leaf follows its session's open leaf.
  const openAt = new Map(leaves.flatMap((l, i) => (l.kind === 'open' ? [[l.session, i] as const] : [])));
  leaves.forEach((l, i) => {
    if (l.kind === 'checkpoint') expect(openAt.get(l.origin.slice(engineName.length + 1))! < i).toBe(true);
  });
  return leaves;
}
