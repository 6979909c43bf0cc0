/**
 * Derives a session's referee state from its transcript, as stored: the fold
 * of every entry up to a point, through the one fold mechanism
 * (`TranscriptFolds`: continued while the last entry folded is still in
 * place, else re-folded from the genesis).
 */
import { intentHash } from '../intent/canonical.js';
import { fromBase64, TallyError, type Entry, type TurnEntry } from '../protocol/index.js';
import { intentOfAuthored } from '../rules/intent.js';
import { mandateOf, type Mandate, type ParseMandateOptions } from './mandate.js';
import { lockTicket, makeTicket, parseAnchoredIntent, emptyFold, type RefereeFold } from './state.js';
import { applyFrameTransitions } from './transitions.js';
import { TranscriptFolds, type EntrySource } from './transcript-folds.js';

export type { EntrySource } from './transcript-folds.js';

/** A fold and where it stands. */
export interface FoldView {
  readonly mandate: Mandate;
  readonly fold: RefereeFold;
  /** Entries folded. */
  readonly size: number;
  /** Time of the last frame folded. */
  readonly time: number | undefined;
}

interface State {
  mandate: Mandate;
  fold: RefereeFold;
  time: number | undefined;
}

function inconsistent(sessionId: string, index: number, what: string): TallyError {
  return new TallyError('TALLY_REFEREE_TRANSCRIPT', 'The transcript is inconsistent with the referee.', { details: `session ${sessionId} entry ${index}: ${what}` });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Folds one turn: an admission locks a ticket; a judgment enters the verdict index. */
function foldTurn(c: State, sessionId: string, index: number, e: TurnEntry): void {
  const r = e.ruling;
  if (!isObject(r) || !isObject(r['intent'])) return;
  const ir = r['intent'];
  const time = c.time ?? 0;
  if (isObject(r['ticket'])) {
    const bytes = e.body.kind === 'authored' ? fromBase64(e.body.bytes) : undefined;
    const carried = bytes ? intentOfAuthored(bytes) : undefined;
    const intent = carried ? parseAnchoredIntent(carried.intent) : undefined;
    if (!intent) throw inconsistent(sessionId, index, 'a ticket was issued for a turn that carries no valid intent');
    lockTicket(c.fold, makeTicket(c.mandate, sessionId, c.fold, intent, intentHash(intent), e.ordinal, time));
  }
  const v = r['verdict'];
  const hash = ir['intent_hash'];
  if (isObject(v) && v['source'] === 'judged' && typeof hash === 'string') {
    if (v['code'] !== 'judge_unavailable' && !c.fold.verdicts.has(hash)) {
      c.fold.verdicts.set(hash, {
        ordinal: e.ordinal,
        admitted: v['admitted'] === true,
        ...(typeof v['code'] === 'string' ? { code: v['code'] } : {}),
        message: typeof v['message'] === 'string' ? v['message'] : '',
      });
    }
  }
}

function foldEntry(c: State, e: Entry, index: number, sessionId: string): void {
  if (e.kind === 'frame') {
    const outcomes = applyFrameTransitions(c.fold, c.mandate, sessionId, e.ordinal, e.time, e.data);
    if (outcomes) for (const outcome of outcomes) c.fold.log.push({ ordinal: e.ordinal, time: e.time, outcome });
    c.fold.lastFrame = { ordinal: e.ordinal, time: e.time, outcomes };
    c.time = e.time;
  } else if (e.kind === 'turn') {
    foldTurn(c, sessionId, index, e);
  }
}

/**
 * The per-session folds of one entry source.
 *
 * @example
 * const history = new RefereeHistory(store);
 * const view = await history.fold(sessionId, head.size);
 * view?.fold.locked;
 */
export class RefereeHistory {
  private readonly folds: TranscriptFolds<State>;

  /**
   * @param source where the entries are read
   * @param maxSessions folds kept (least recently used are dropped and re-folded on demand)
   * @param mandates `{legacy: true}` also folds version-1 (unsigned) mandates (replay only)
   */
  constructor(source: EntrySource, maxSessions = 1024, mandates: ParseMandateOptions = {}) {
    this.folds = new TranscriptFolds<State>(
      source,
      {
        inconsistent,
        start: (g) => {
          const sealed = mandateOf(g.spec, mandates);
          return sealed.kind === 'mandate' ? { mandate: sealed.mandate, fold: emptyFold(), time: undefined } : undefined;
        },
        step: foldEntry,
      },
      maxSessions,
    );
  }

  /**
   * The referee state after the first `size` entries of `sessionId`;
   * `undefined` when the session has no (valid) mandate. Throws
   * `TALLY_REFEREE_TRANSCRIPT` when the store holds fewer entries.
   */
  async fold(sessionId: string, size: number): Promise<FoldView | undefined> {
    const r = await this.folds.fold(sessionId, size);
    return r === undefined ? undefined : { mandate: r.state.mandate, fold: r.state.fold, size: r.size, time: r.state.time };
  }

  /** Forgets the cached fold of one session (or all). */
  evict(sessionId?: string): void {
    this.folds.evict(sessionId);
  }
}
