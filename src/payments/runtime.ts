/**
 * The runtime side of an x402 payment through Tally: a `fetch` to hand to @x402/fetch's
 * `wrapFetchWithPayment`, so the agent pays with the ecosystem's own client while Tally stands
 * between the signature and the wire:
 *
 * 1. a 402 answer's `PAYMENT-REQUIRED` is delivered as a frame (`data.x402.offers`) — the
 *    decision-time snapshot — together with the settlement facts still to report;
 * 2. the signed PaymentPayload the client then sends is proposed as the turn answering it;
 * 3. only an admitted payment is sent, with exactly the recorded bytes (base64 of their
 *    canonical JSON); a refused one throws {@link PaymentRefusedError} and nothing is sent;
 * 4. the `PAYMENT-RESPONSE` (SettleResponse) is kept for the next frame; no answer within the
 *    timeout is kept as UNKNOWN, never as "did not happen";
 * 5. paying the same requirement again while its last payment is not SETTLED is a retry of it
 *    (`retry_of`), so the referee admits it only after that one FAILED — never over an UNKNOWN.
 */
import { canonicalJson, fromBase64, toBase64, utf8, type CanonicalObject, type CanonicalValue } from '../protocol/index.js';
import type { Engine } from '../session/engine.js';
import type { ReceiptEvidence } from './evidence.js';
import type { PaymentRuling } from './ruler.js';

/** A payment Tally refused: nothing was sent. */
export class PaymentRefusedError extends Error {
  override readonly name = 'PaymentRefusedError';
  readonly code: string;
  constructor(readonly ruling: PaymentRuling | undefined) {
    super(ruling && !ruling.admitted ? `payment refused: ${ruling.code}: ${ruling.message}` : 'payment refused: the turn got no payment ruling');
    this.code = ruling && !ruling.admitted ? ruling.code : 'no_ruling';
  }
}

export interface X402RuntimeOptions {
  readonly engine: Engine;
  readonly sessionId: string;
  readonly agentId: string;
  /** The network fetch (default globalThis.fetch). */
  readonly fetch?: typeof globalThis.fetch;
  /** Frame clock, epoch ms (default Date.now); frames never go back in time. */
  readonly now?: () => number;
  /** How long a paid request may take before its settlement is recorded UNKNOWN (default 30 000 ms). */
  readonly settleTimeoutMs?: number;
  /** The next frame's ordinal (default -1, the first frame of a day). */
  readonly ordinal?: number;
}

/** One payment the runtime sent, as recorded. */
export interface SentPayment {
  readonly ticket: number;
  readonly ordinal: number;
  readonly ruling: PaymentRuling;
}

const decode = (b64: string): unknown => JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64(b64)!));

export class X402Runtime {
  private ordinal: number;
  private last = 0;
  private open: { ordinal: number; entryHash: string; frameRoot: string; offer: string } | undefined;
  private facts: CanonicalObject[] = [];
  readonly sent: SentPayment[] = [];
  /** Canonical `accepted` → the last ticket paid against it; ticket → its state as last known (the rulings' outcomes win). */
  private readonly lastOf = new Map<string, number>();
  private readonly states = new Map<number, string>();
  readonly refused: PaymentRuling[] = [];
  private readonly net: typeof globalThis.fetch;

  constructor(private readonly o: X402RuntimeOptions) {
    this.ordinal = o.ordinal ?? -1;
    this.net = o.fetch ?? globalThis.fetch;
  }

  private time(): number {
    this.last = Math.max(this.last, (this.o.now ?? Date.now)());
    return this.last;
  }

  /** The fetch to wrap with `wrapFetchWithPayment`. */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const req = new Request(input, init);
    const signed = req.headers.get('payment-signature');
    if (signed === null) {
      const res = await this.net(req);
      const required = res.status === 402 ? res.headers.get('payment-required') : null;
      if (required !== null) await this.offer(decode(required) as CanonicalObject);
      return res;
    }
    return this.pay(req, decode(signed) as CanonicalObject);
  };

  /** Answers a frame the agent left unanswered (it did not pay) with a stand-down. */
  private async standDown(): Promise<void> {
    const at = this.open;
    if (!at) return;
    this.open = undefined;
    const t = await this.o.engine.turn({ sessionId: this.o.sessionId, ordinal: at.ordinal, parentHash: at.entryHash, frameRoot: at.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
    if (!t.ok) throw new Error(`turn ${at.ordinal} not recorded: ${t.message}`);
    this.learn(t.ruling);
  }

  private async offer(required: CanonicalObject): Promise<void> {
    await this.standDown();
    const ordinal = this.ordinal++;
    const offer = `o-${ordinal}`;
    const x402: Record<string, CanonicalValue> = { offers: [{ id: offer, required }] };
    if (this.facts.length) x402['settlements'] = this.facts;
    const f = await this.o.engine.frame({ sessionId: this.o.sessionId, ordinal, time: this.time(), data: { x402 } });
    if (!f.ok) throw new Error(`frame ${ordinal} not recorded: ${f.message}`);
    this.facts = [];
    this.open = { ordinal, entryHash: f.entryHash, frameRoot: f.frameRoot, offer };
  }

  private async pay(req: Request, payload: CanonicalObject): Promise<Response> {
    const at = this.open;
    if (!at) throw new PaymentRefusedError(undefined);
    this.open = undefined;
    const accepted = canonicalJson((payload['accepted'] ?? '') as CanonicalValue);
    const prior = this.lastOf.get(accepted);
    const retryOf = prior !== undefined && this.states.get(prior) !== 'SETTLED' ? prior : undefined;
    const bytes = utf8(canonicalJson({ x402: { agent_id: this.o.agentId, offer: at.offer, payload, ...(retryOf === undefined ? {} : { retry_of: retryOf }) } }));
    const t = await this.o.engine.turn({ sessionId: this.o.sessionId, ordinal: at.ordinal, parentHash: at.entryHash, frameRoot: at.frameRoot, body: { kind: 'authored', bytes } });
    if (!t.ok) throw new Error(`turn ${at.ordinal} not recorded: ${t.message}`);
    this.learn(t.ruling);
    const x = (t.ruling as { x402?: { payment?: PaymentRuling } } | undefined)?.x402?.payment;
    if (!x || !x.admitted) {
      if (x) this.refused.push(x);
      throw new PaymentRefusedError(x);
    }
    this.sent.push({ ticket: x.ticket, ordinal: at.ordinal, ruling: x });
    this.lastOf.set(accepted, x.ticket);
    this.states.set(x.ticket, 'RESERVED');
    const out = new Request(req, { signal: AbortSignal.timeout(this.o.settleTimeoutMs ?? 30_000) });
    out.headers.set('payment-signature', toBase64(utf8(canonicalJson(payload))));
    let res: Response;
    try {
      res = await this.net(out);
    } catch (e) {
      this.facts.push({ ticket: x.ticket, unknown: e instanceof Error && e.name === 'TimeoutError' ? 'timeout' : 'no answer' });
      this.states.set(x.ticket, 'UNKNOWN');
      throw e;
    }
    const settled = res.headers.get('payment-response');
    const response = settled === null ? undefined : (decode(settled) as CanonicalObject);
    this.facts.push(response === undefined ? { ticket: x.ticket, unknown: `no settlement answer (HTTP ${res.status})` } : { ticket: x.ticket, response });
    this.states.set(x.ticket, response === undefined ? 'UNKNOWN' : response['success'] === true ? 'SETTLED' : 'FAILED');
    return res;
  }

  /** Takes the settlement outcomes a turn's ruling recorded as the tickets' states. */
  private learn(ruling: unknown): void {
    const outcomes = (ruling as { x402?: { settlements?: readonly { ticket?: number; ok: boolean; state?: string }[] } } | undefined)?.x402?.settlements ?? [];
    for (const o of outcomes) if (o.ok && o.ticket !== undefined && o.state !== undefined) this.states.set(o.ticket, o.state);
  }

  /** Reports chain evidence for a ticket in the next frame (reconciles an UNKNOWN). */
  reconcile(ticket: number, receipt: ReceiptEvidence): void {
    this.facts.push({ ticket, receipt: receipt as unknown as CanonicalObject });
  }

  /** Reports that a ticket's authorization lapsed unused on chain (after its validBefore). */
  lapse(ticket: number): void {
    this.facts.push({ ticket, lapsed: { authorization_state: false } });
  }

  /** Delivers a frame with the facts still to report and answers it with a stand-down. */
  async flush(): Promise<{ ordinal: number; ruling: unknown }> {
    await this.standDown();
    const ordinal = this.ordinal++;
    const f = await this.o.engine.frame({ sessionId: this.o.sessionId, ordinal, time: this.time(), ...(this.facts.length ? { data: { x402: { settlements: this.facts } } } : {}) });
    if (!f.ok) throw new Error(`frame ${ordinal} not recorded: ${f.message}`);
    this.facts = [];
    const t = await this.o.engine.turn({ sessionId: this.o.sessionId, ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
    if (!t.ok) throw new Error(`turn ${ordinal} not recorded: ${t.message}`);
    this.learn(t.ruling);
    return { ordinal, ruling: t.ruling };
  }
}
