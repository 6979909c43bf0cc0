/** Replays a payment day into a fresh engine and store: every ruling re-derived, compared byte for byte. */
import { canonicalJson, fromBase64, type CanonicalObject, type Entry } from '../../src/protocol/index.js';
import { createPaymentsRuler, type PaymentsRuler } from '../../src/payments/index.js';
import { createRefereeRuler } from '../../src/referee/index.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore, type TranscriptStore } from '../../src/store/index.js';

/** The payment referee over the mandate referee, on `store`, and its ruler. */
export function paymentsDesk(store: TranscriptStore = new MemoryStore()): { engine: Engine; ruler: PaymentsRuler } {
  const ruler = createPaymentsRuler({ store, inner: createRefereeRuler({ store }) });
  return { engine: new Engine({ store, ruler }), ruler };
}

/** The payment referee over the mandate referee, on `store`. */
export function paymentsEngine(store: TranscriptStore = new MemoryStore()): Engine {
  return paymentsDesk(store).engine;
}

/** Every entry of a session, parsed. */
export async function entriesOf(engine: Engine, sid: string): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const l of engine.exportEntries(sid)) out.push(JSON.parse(new TextDecoder().decode(l)) as Entry);
  return out;
}

/** Replays `entries`; the first index whose re-derived bytes differ, or ok. */
export async function replayPayments(entries: readonly Entry[]): Promise<{ ok: true } | { ok: false; index: number; produced: unknown; recorded: unknown }> {
  const store = new MemoryStore();
  const engine = paymentsEngine(store);
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
