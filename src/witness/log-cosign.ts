/**
 * Witnesses cosign the engine log (docs/PROTOCOL.md §15.6): one origin, one
 * key named as that origin — what the public witness network accepts —
 * instead of one origin per session. A {@link LogCosigner} round publishes
 * the log's checkpoint at its cadence (`EngineLog.publish`), then submits it
 * with C2SP tlog-witness `add-checkpoint` and an RFC 6962 consistency proof
 * from the size each witness last cosigned (learned from its 409 answer and
 * kept in the store), to each witness whose per-witness rate budget allows a
 * request; a round runs at most once per `intervalMs`. Cosignatures are
 * verified before they are kept (durably, in the store's cosignature table,
 * when it has one) and attached to the log checkpoint served and exported.
 *
 * A witness that holds a larger log than the store, or a root this log
 * never had (a store restored from a backup, a rewritten log), is a
 * conflict: the round reports it and this cosigner submits nothing more.
 */
import { TallyError } from '../protocol/index.js';
import type { EngineLog, LogCheckpoint } from '../log/engine-log.js';
import { formatConsistencyProof } from '../receipt/proof/consistency.js';
import type { CosignatureStore } from '../store/types.js';
import { addSignatureLines, verifyCosignatures } from './cosignature/cosign.js';
import { submitCheckpoint, type SubmitResult } from './client.js';
import type { EngineWitness, WitnessOutcome } from './engine.js';

/** A per-witness request budget: at most `requests` add-checkpoint requests in any `windowMs`. */
export interface RateBudget {
  readonly requests: number;
  readonly windowMs: number;
}

/** Options of {@link LogCosigner}. */
export interface LogCosignerOptions {
  readonly log: EngineLog;
  readonly witnesses: readonly EngineWitness[];
  /** Where cosignature lines and witness sizes are kept across restarts (the engine store). */
  readonly store?: CosignatureStore;
  /** At most one round per this many milliseconds (default 5000). */
  readonly intervalMs?: number;
  /** Per-witness budget (default 12 requests per minute: one per 5 s on average). */
  readonly budget?: RateBudget;
  /** Per-request time limit (default 3000 ms). */
  readonly timeoutMs?: number;
  /** Epoch milliseconds (default `Date.now`). */
  readonly now?: () => number;
}

/** What a round did. */
export interface LogCosignRound {
  /** The log checkpoint, with every valid cosignature collected for it. */
  readonly checkpoint: LogCheckpoint;
  /** One per witness: cosigned, conflict, refused, unreachable, bad-cosignature, or `deferred` (its budget is spent, or it already cosigned this size). */
  readonly outcomes: readonly (WitnessOutcome | { readonly witness: string; readonly status: 'deferred'; readonly message: string })[];
  readonly cosignedBy: readonly string[];
}

/** The engine log's witness submissions (see the module comment). */
export class LogCosigner {
  readonly #log: EngineLog;
  readonly #witnesses: readonly EngineWitness[];
  readonly #store: CosignatureStore | undefined;
  readonly #interval: number;
  readonly #budget: RateBudget;
  readonly #timeout: number;
  readonly #now: () => number;
  /** Per witness name: the size it last cosigned (or told us it holds). */
  readonly #known = new Map<string, number>();
  /** Per witness name: the times of its requests in the current window. */
  readonly #sent = new Map<string, number[]>();
  /** Per log size: the verified cosignature lines, one per witness. */
  readonly #lines = new Map<number, Map<string, string>>();
  #lastRound: number | undefined;
  #last: LogCosignRound | undefined;
  #running: Promise<LogCosignRound | undefined> | undefined;
  #conflict: string | undefined;

  constructor(options: LogCosignerOptions) {
    this.#log = options.log;
    this.#witnesses = options.witnesses;
    this.#store = options.store;
    this.#interval = options.intervalMs ?? 5000;
    this.#budget = options.budget ?? { requests: 12, windowMs: 60_000 };
    this.#timeout = options.timeoutMs ?? 3000;
    this.#now = options.now ?? Date.now;
    for (const [n, v] of [
      ['intervalMs', this.#interval],
      ['budget.requests', this.#budget.requests],
      ['budget.windowMs', this.#budget.windowMs],
    ] as const) {
      if (!Number.isSafeInteger(v) || v < (n === 'intervalMs' ? 0 : 1)) throw new RangeError(`${n} must be a ${n === 'intervalMs' ? 'non-negative' : 'positive'} integer, got ${String(v)}`);
    }
  }

  /** Why this cosigner stopped submitting (a witness holds a history the store lost), or `undefined`. */
  get conflict(): string | undefined {
    return this.#conflict;
  }

  /** The last round's result (the checkpoint with its cosignatures), or `undefined` before the first. */
  get last(): LogCosignRound | undefined {
    return this.#last;
  }

  /**
   * One round, at most once per `intervalMs` (sooner calls answer the last
   * round); concurrent calls share one. Throws `TALLY_LOG_WITNESS_CONFLICT`
   * once a witness showed the store lost what it cosigned.
   */
  round(): Promise<LogCosignRound | undefined> {
    if (this.#conflict !== undefined) return Promise.reject(new TallyError('TALLY_LOG_WITNESS_CONFLICT', 'A witness holds an engine log the store does not have; nothing more is submitted.', { details: this.#conflict }));
    if (this.#lastRound !== undefined && this.#now() - this.#lastRound < this.#interval) return Promise.resolve(this.#last);
    this.#running ??= this.#round().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** `cp`'s signed note with every verified cosignature kept for its size (durable ones included). */
  async cosigned(cp: LogCheckpoint): Promise<string> {
    const lines = await this.#linesFor(cp);
    return lines.size === 0 ? cp.signedCheckpoint : addSignatureLines(cp.signedCheckpoint, [...lines.values()]);
  }

  async #linesFor(cp: LogCheckpoint): Promise<Map<string, string>> {
    let got = this.#lines.get(cp.size);
    if (got === undefined) {
      got = new Map();
      for (const c of (await this.#store?.cosignatures(cp.origin, cp.size)) ?? []) if (c.root === cp.root && this.#witnesses.some((w) => w.verifier.name === c.witness)) got.set(c.witness, c.line);
      this.#lines.set(cp.size, got);
    }
    return got;
  }

  async #round(): Promise<LogCosignRound | undefined> {
    this.#lastRound = this.#now();
    const cp = await this.#log.publish();
    if (cp === undefined) return undefined;
    const lines = await this.#linesFor(cp);
    const outcomes = await Promise.all(this.#witnesses.map((w) => this.#ask(cp, w, lines)));
    const round: LogCosignRound = { checkpoint: { ...cp, signedCheckpoint: await this.cosigned(cp) }, outcomes, cosignedBy: [...lines.keys()] };
    this.#last = round;
    return round;
  }

  /** Takes one request from `name`'s budget, or answers false when it is spent. */
  #spend(name: string): boolean {
    const t = this.#now();
    const times = (this.#sent.get(name) ?? []).filter((x) => x > t - this.#budget.windowMs);
    if (times.length >= this.#budget.requests) {
      this.#sent.set(name, times);
      return false;
    }
    times.push(t);
    this.#sent.set(name, times);
    return true;
  }

  async #ask(cp: LogCheckpoint, w: EngineWitness, lines: Map<string, string>): Promise<LogCosignRound['outcomes'][number]> {
    const name = w.verifier.name;
    if (lines.has(name)) return { witness: name, status: 'deferred', message: `already cosigned size ${cp.size}` };
    let old = this.#known.get(name) ?? (await this.#store?.witnessSize(name, cp.origin)) ?? 0;
    let r: SubmitResult | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      if (old > cp.size) return this.#conflicted(name, `the witness holds size ${old} of ${cp.origin}; the log has ${cp.size}`);
      if (!this.#spend(name)) return { witness: name, status: 'deferred', message: `its budget of ${this.#budget.requests} requests per ${this.#budget.windowMs} ms is spent` };
      const proof = old === 0 || old === cp.size ? [] : await this.#log.consistencyProof(old, cp.size);
      r = await submitCheckpoint(w.url, formatConsistencyProof({ oldSize: old, proof, signedCheckpoint: cp.signedCheckpoint }), { timeoutMs: this.#timeout });
      // 422 (C2SP tlog-witness): to old = size, another root at the size the witness cosigned; otherwise its root at `old` is not on this log.
      if (r.kind === 'refused' && r.status === 422) {
        return this.#conflicted(name, old === cp.size && old > 0 ? `the witness answered 422 to size ${old} of ${cp.origin}: it cosigned another root there (${r.message})` : `the witness refused the proof from its size ${old} to ${cp.size}: its root there is not this log's (${r.message})`);
      }
      // Witnesses before C2SP/C2SP#280 answered another root at the size they hold with a 409, sized or not.
      if (r.kind === 'conflict-unsized') {
        if (old === cp.size && old > 0) return this.#conflicted(name, `the witness answered 409 (no size) to size ${old} of ${cp.origin}: it cosigned another root there`);
        return { witness: name, status: 'conflict', message: `the witness answered 409 without its size (from old size ${old})${r.message === '' ? '' : `: ${r.message}`}` };
      }
      if (r.kind !== 'conflict') break;
      if (r.size === old) return this.#conflicted(name, `the witness cosigned size ${old} of ${cp.origin} with another root`);
      old = r.size;
      this.#known.set(name, old);
      await this.#store?.recordWitnessSize(name, cp.origin, old);
    }
    if (r === undefined || r.kind === 'conflict' || r.kind === 'conflict-unsized') return { witness: name, status: 'conflict', message: `the witness moved while asked (size ${r?.kind === 'conflict' ? r.size : '?'})` };
    if (r.kind === 'unreachable') return { witness: name, status: 'unreachable', message: r.message };
    if (r.kind === 'refused') return { witness: name, status: 'refused', message: `HTTP ${r.status}: ${r.message}` };
    const mine = r.lines.filter((l) => l.startsWith(`\u2014 ${name} `));
    const check = verifyCosignatures(addSignatureLines(cp.signedCheckpoint, mine), [], [w.verifier]);
    if (!check.ok || check.cosignatures.length === 0) return { witness: name, status: 'bad-cosignature', message: check.ok ? 'no cosignature by its key' : check.message };
    const line = mine[0]!;
    lines.set(name, line);
    this.#known.set(name, cp.size);
    await this.#store?.recordWitnessSize(name, cp.origin, cp.size);
    await this.#store?.recordCosignature({ origin: cp.origin, size: cp.size, root: cp.root, witness: name, line });
    return { witness: name, status: 'cosigned' };
  }

  #conflicted(witness: string, message: string): WitnessOutcome {
    this.#conflict = `${witness}: ${message}`;
    return { witness, status: 'conflict', message };
  }
}
