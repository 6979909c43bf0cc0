/**
 * A session's payments derived from its transcript as stored, through the
 * referee's one fold mechanism (`TranscriptFolds`: cached per session and
 * continued only while the last entry folded is still the one in the store).
 * Restarts, other engines and replays all derive the same state from the same bytes.
 */
import { fromBase64, TallyError, type Entry } from '../protocol/index.js';
import { TranscriptFolds, type EntrySource } from '../referee/transcript-folds.js';
import { applySettlements, emptyPaymentsFold, reserve, type PaymentsFold } from './fold.js';
import { paymentHash } from './bytes.js';
import { parsePaymentTurn } from './payload.js';

function inconsistent(sessionId: string, index: number, what: string): TallyError {
  return new TallyError('TALLY_PAYMENTS_TRANSCRIPT', 'The transcript is inconsistent with the payment referee.', { details: `session ${sessionId} entry ${index}: ${what}` });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function foldEntry(fold: PaymentsFold, e: Entry, index: number, sessionId: string): void {
  if (e.kind === 'frame') {
    const outcomes = applySettlements(fold, e.time, e.data);
    fold.lastFrame = { ordinal: e.ordinal, time: e.time, data: e.data, outcomes };
  } else if (e.kind === 'turn' && isObject(e.ruling) && isObject(e.ruling['x402'])) {
    const p = e.ruling['x402']['payment'];
    if (isObject(p) && p['admitted'] === true) {
      const parsed = e.body.kind === 'authored' ? parsePaymentTurn(fromBase64(e.body.bytes)!) : undefined;
      if (!parsed?.ok || p['ticket'] !== fold.tickets.length + 1) throw inconsistent(sessionId, index, 'an admitted payment turn carries no valid payment, or its ticket is out of order');
      const t = parsed.turn;
      reserve(fold, {
        id: fold.tickets.length + 1,
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
}

/** The per-session payment folds of one entry source. */
export class PaymentsHistory {
  private readonly folds: TranscriptFolds<PaymentsFold>;

  constructor(source: EntrySource, maxSessions = 1024) {
    this.folds = new TranscriptFolds(source, { inconsistent, start: () => emptyPaymentsFold(), step: foldEntry }, maxSessions);
  }

  /** The payments after the first `size` entries of `sessionId`. */
  async fold(sessionId: string, size: number): Promise<PaymentsFold> {
    return (await this.folds.fold(sessionId, size))!.state;
  }
}
