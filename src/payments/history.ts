/**
 * A session's payments derived from its transcript as stored (the referee's `RefereeHistory`
 * pattern): the fold of every entry up to a point, cached per session and continued only while
 * the last entry folded is still the one in the store. Restarts, other engines and replays all
 * derive the same state from the same bytes.
 */
import { fromBase64, parseEntry, TallyError, type Entry } from '../protocol/index.js';
import type { EntrySource } from '../referee/history.js';
import { KeyedMutex } from '../session/mutex.js';
import type { StoredEntry } from '../store/types.js';
import { applySettlements, emptyPaymentsFold, reserve, type PaymentsFold } from './fold.js';
import { paymentHash } from './bytes.js';
import { parsePaymentTurn } from './payload.js';

interface Cached {
  fold: PaymentsFold;
  size: number;
  lastHash: string;
}

const BATCH = 256;
const decoder = new TextDecoder('utf-8', { fatal: true });

function inconsistent(sessionId: string, index: number, what: string): TallyError {
  return new TallyError('TALLY_PAYMENTS_TRANSCRIPT', 'The transcript is inconsistent with the payment referee.', { details: `session ${sessionId} entry ${index}: ${what}` });
}

function decode(sessionId: string, row: StoredEntry): Entry {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(row.bytes));
  } catch {
    throw inconsistent(sessionId, row.index, 'not JSON');
  }
  const r = parseEntry(value);
  if (!r.ok) throw inconsistent(sessionId, row.index, r.reason);
  return r.entry;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function foldRow(c: Cached, sessionId: string, row: StoredEntry): void {
  const e = decode(sessionId, row);
  if (e.kind === 'frame') {
    const outcomes = applySettlements(c.fold, e.time, e.data);
    c.fold.lastFrame = { ordinal: e.ordinal, time: e.time, data: e.data, outcomes };
  } else if (e.kind === 'turn' && isObject(e.ruling) && isObject(e.ruling['x402'])) {
    const p = e.ruling['x402']['payment'];
    if (isObject(p) && p['admitted'] === true) {
      const parsed = e.body.kind === 'authored' ? parsePaymentTurn(fromBase64(e.body.bytes)!) : undefined;
      if (!parsed?.ok || p['ticket'] !== c.fold.tickets.length + 1) throw inconsistent(sessionId, row.index, 'an admitted payment turn carries no valid payment, or its ticket is out of order');
      const t = parsed.turn;
      reserve(c.fold, {
        id: c.fold.tickets.length + 1,
        ordinal: e.ordinal,
        agentId: t.agentId,
        payer: t.authorization.from.toLowerCase(),
        network: t.accepted.network,
        asset: t.accepted.asset.toLowerCase(),
        paymentHash: paymentHash(t.payload),
        acceptedJson: t.acceptedJson,
        authorization: t.authorization,
        retryOf: t.retryOf,
        state: 'RESERVED',
      });
    }
  }
  c.size = row.index + 1;
  c.lastHash = row.hash;
}

/** The per-session payment folds of one entry source. */
export class PaymentsHistory {
  private readonly cache = new Map<string, Cached>();
  private readonly lock = new KeyedMutex();

  constructor(
    private readonly source: EntrySource,
    private readonly maxSessions = 1024,
  ) {}

  /** The payments after the first `size` entries of `sessionId`. */
  fold(sessionId: string, size: number): Promise<PaymentsFold> {
    return this.lock.run(sessionId, async () => {
      let c = this.cache.get(sessionId);
      if (c && c.size > size) c = undefined;
      if (c) {
        const [last] = await this.source.readRange(sessionId, c.size - 1, c.size);
        if (!last || last.hash !== c.lastHash) c = undefined;
      }
      if (!c) {
        const [g] = await this.source.readRange(sessionId, 0, 1);
        if (!g) throw inconsistent(sessionId, 0, 'no genesis');
        c = { fold: emptyPaymentsFold(), size: 1, lastHash: g.hash };
      }
      while (c.size < size) {
        const rows = await this.source.readRange(sessionId, c.size, Math.min(size, c.size + BATCH));
        if (rows.length === 0) throw inconsistent(sessionId, c.size, `the store holds fewer than ${size} entries`);
        for (const row of rows) {
          if (row.index !== c.size) throw inconsistent(sessionId, row.index, `expected entry ${c.size}`);
          foldRow(c, sessionId, row);
        }
      }
      this.cache.delete(sessionId);
      this.cache.set(sessionId, c);
      if (this.cache.size > this.maxSessions) this.cache.delete(this.cache.keys().next().value!);
      return c.fold;
    });
  }
}
