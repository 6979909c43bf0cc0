/** Replays a payment day into a fresh engine and store: every ruling re-derived, compared byte for byte. */
import type { Entry } from '../../src/protocol/index.js';
import { replayEntries, type EntriesReplay } from '../helpers/replay-entries.js';
import { createPaymentsRuler, type PaymentsRuler, type PaymentsRulerOptions } from '../../src/payments/index.js';
import { createRefereeRuler } from '../../src/referee/index.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore, type TranscriptStore } from '../../src/store/index.js';

/** The payment referee over the mandate referee, on `store`, and its ruler; `judges`: the payment judges' clients. */
export function paymentsDesk(store: TranscriptStore = new MemoryStore(), judges: Pick<PaymentsRulerOptions, 'judge' | 'panel' | 'judgeTimeoutMs'> = {}): { engine: Engine; ruler: PaymentsRuler } {
  const ruler = createPaymentsRuler({ store, inner: createRefereeRuler({ store }), ...judges });
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

/** Replays `entries` with the payment referee over the mandate referee; the first index whose re-derived bytes differ, or ok. */
export function replayPayments(entries: readonly Entry[]): Promise<EntriesReplay> {
  return replayEntries(entries, (store) => paymentsDesk(store).ruler);
}
