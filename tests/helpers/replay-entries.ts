/**
 * Replays a day's parsed entries into a fresh engine and store, entry by
 * entry, with the ruler the day was recorded with: each turn gets its
 * recorded ruling as `recordedRuling`, and each entry the engine writes is
 * compared with the recorded one byte for byte (canonical JSON). No chain
 * check comes first, so an edited ruling is found by the re-derivation
 * itself, not by a broken hash link (the library's `replay` checks the chain
 * before it replays).
 */
import { canonicalJson, fromBase64, type CanonicalObject, type Entry } from '../../src/protocol/index.js';
import { Engine, type TurnRuler } from '../../src/session/index.js';
import { MemoryStore, type TranscriptStore } from '../../src/store/index.js';

/** The first index whose re-derived bytes differ, with both entries; or ok. */
export type EntriesReplay = { ok: true } | { ok: false; index: number; produced: Entry | undefined; recorded: Entry };

export async function replayEntries(entries: readonly Entry[], ruler: (store: TranscriptStore) => TurnRuler): Promise<EntriesReplay> {
  const store = new MemoryStore();
  const engine = new Engine({ store, ruler: ruler(store) });
  const g = entries[0]!;
  if (g.kind !== 'genesis') throw new Error('no genesis');
  const o = await engine.open(g.spec);
  if (!o.ok) throw new Error(o.message);
  const sid = o.sessionId;
  for (let i = 1; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.kind === 'frame') await engine.frame({ sessionId: sid, ordinal: e.ordinal, time: e.time, ...(e.data === undefined ? {} : { data: e.data }) });
    else if (e.kind === 'turn') {
      const f = (await engine.describe(sid)) as { pending: { entryHash: string; frameRoot: string } };
      const body = e.body.kind === 'authored' ? { kind: 'authored' as const, bytes: fromBase64(e.body.bytes)! } : e.body;
      await engine.turn({ sessionId: sid, ordinal: e.ordinal, parentHash: f.pending.entryHash, frameRoot: f.pending.frameRoot, body }, e.ruling === undefined ? {} : { recordedRuling: e.ruling });
    } else if (e.kind === 'finalize') await engine.finalize(sid, e.artifacts);
    const [row] = await store.readRange(sid, i, i + 1);
    const produced = row ? (JSON.parse(new TextDecoder().decode(row.bytes)) as Entry) : undefined;
    if (!produced || canonicalJson(produced as unknown as CanonicalObject) !== canonicalJson(e as unknown as CanonicalObject)) return { ok: false, index: i, produced, recorded: e };
  }
  return { ok: true };
}
