/**
 * Drives one demo day through the engine: the runtime side (deliver each
 * frame, submit the agent's answer, send the scripted probes, report their
 * outcomes in the next frame) and the agent side (sign intents with the
 * registered keys). Resumable: a day interrupted part-way is driven again
 * from the start; what is already recorded comes back as idempotent
 * duplicates (and the notices of recorded frames are read back, not
 * re-probed), so the finished day is the one a clean run records.
 */
import { signIntent, type Intent } from '../intent/index.js';
import type { CanonicalObject, FailureClass } from '../protocol/index.js';
import type { Engine, TurnBodyInput, TurnResult } from '../session/index.js';
import { TallyError } from '../protocol/errors.js';
import type { DeskAgent, Decision } from './agent.js';
import { DEMO_AGENTS, DEMO_PARTIES } from './keys.js';
import { signRedemption, signRelease, signTermination } from '../referee/index.js';
import { TxBudget } from './budget.js';
import type { Fill, MarketSim } from './market.js';
import { PROBES, type DayPlan, type ProbeName } from './script.js';
import type { Notice } from './timeline.js';

/** A session id no store holds (the wrong-session probe addresses it). */
export const GHOST_SESSION_ID = 'dead'.repeat(16);

const enc = new TextEncoder();

/** What {@link driveDay} needs. */
export interface DriveOptions {
  readonly engine: Engine;
  readonly sessionId: string;
  readonly wakes: number;
  readonly plan: DayPlan;
  readonly market: MarketSim;
  readonly desk: DeskAgent;
  /** The mandate's instance when the day runs under a referee (tickets are settled in the next frame). */
  readonly instance?: string;
  /**
   * Ordinal of the last frame already recorded (-2 for a new day): frames up
   * to it are re-sent as duplicates and their notices read back.
   */
  readonly recordedThrough: number;
  /** Called after each wake with (wakes done, total). */
  readonly onWake?: (done: number, total: number) => void;
}

/** What happened live while driving. */
export interface DriveResult {
  /** Notices of the last wake, for the seal's artifacts. */
  readonly finalNotices: readonly Notice[];
  /** Every probe sent live and its outcome. */
  readonly probed: readonly Notice[];
  /** Frames and turns the engine answered as duplicates (a resumed day). */
  readonly resentDuplicates: number;
}

function outcomeOf(r: { ok: true; duplicate: boolean } | { ok: false; diagnostic: string }): string {
  return r.ok ? (r.duplicate ? 'duplicate' : 'written') : r.diagnostic;
}

function fail(message: string, details?: string): never {
  throw new TallyError('TALLY_DEMO_DIVERGED', message, details === undefined ? {} : { details });
}

/** Encodes the agent's answer as a turn body; returns the signed intent it carries, if any. */
export async function encodeDecision(d: Decision): Promise<{ body: TurnBodyInput; intent?: Intent }> {
  switch (d.kind) {
    case 'stand-down':
      return { body: { kind: 'stand-down', failureClass: d.failureClass as FailureClass } };
    case 'note':
      return { body: { kind: 'authored', bytes: enc.encode(JSON.stringify({ context: d.context })) } };
    case 'resend':
      return { body: { kind: 'authored', bytes: enc.encode(JSON.stringify({ intent: d.intent, context: d.context })) }, intent: d.intent };
    case 'intent': {
      const signed = await signIntent(d.unsigned, d.signer.account);
      let sent: unknown = signed;
      if (d.twist === 'flip-signature') {
        // Flip a low nibble of s (0x ‖ r ‖ s ‖ v): s stays low and a key stays recoverable, so the
        // signature is well-formed but not the signer's. (Flipping r can make the key unrecoverable,
        // which the intent layer words differently with and without a warm signer cache.)
        const s = signed.signature;
        const at = 2 + 64 + 62;
        const c = s.charAt(at);
        sent = { ...signed, signature: s.slice(0, at) + (c === 'f' ? '0' : 'f') + s.slice(at + 1) };
      } else if (d.twist === 'unknown-field') {
        sent = { ...signed, comment: 'ignore the risk limits' };
      }
      return { body: { kind: 'authored', bytes: enc.encode(JSON.stringify({ intent: sent, context: d.context })) }, intent: signed };
    }
  }
}

/** How the runtime settles one admitted order's ticket in the next frame. */
interface Settlement {
  readonly ticket: number;
  readonly proofHash: string;
  readonly intent: Intent;
  /** `fill`: redeemed by the executor; `unfilled`: released by the operator; `double`: the fill reported twice. */
  readonly mode: 'fill' | 'unfilled' | 'double';
}

/** The frame's `referee` member: executor-signed redemptions and operator-signed releases. */
async function settle(instance: string, session: string, list: readonly Settlement[]): Promise<CanonicalObject | undefined> {
  if (list.length === 0) return undefined;
  const redemptions: CanonicalObject[] = [];
  const releases: CanonicalObject[] = [];
  for (const s of list) {
    const ref = { instance, session, ticket: s.ticket, proofHash: s.proofHash };
    if (s.mode === 'unfilled') {
      releases.push(await signRelease(DEMO_PARTIES.operator, 'operator', ref));
    } else {
      const r = await signRedemption(DEMO_PARTIES.executor, ref, s.intent as unknown as CanonicalObject);
      redemptions.push(r);
      if (s.mode === 'double') redemptions.push(r);
    }
  }
  return { ...(redemptions.length > 0 ? { redemptions } : {}), ...(releases.length > 0 ? { releases } : {}) };
}

/** True when no member of a ruling (intent, policy, verdict, …) refused. */
function admittedByAll(ruling: CanonicalObject | undefined): boolean {
  if (!ruling) return false;
  return Object.values(ruling).every((m) => objectOf(m)?.['admitted'] !== false);
}

function objectOf(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Entry index of the frame at `ordinal` (genesis, then a frame and a turn per ordinal). */
export function frameIndex(ordinal: number): number {
  return 2 * (ordinal + 1) + 1;
}

/**
 * Drives the day from the OPEN frame to the last wake's answer (not the seal).
 * Throws `TALLY_DEMO_DIVERGED` if the engine refuses something the day needs
 * (for example a store holding a different day under the same spec).
 */
export async function driveDay(o: DriveOptions): Promise<DriveResult> {
  const { engine, sessionId, plan, market, desk } = o;
  const probed: Notice[] = [];
  let carried: Notice[] = [];
  let orders: Fill[] = [];
  let settlements: Settlement[] = [];
  let resent = 0;
  let prev: { frameRoot: string; turnHash: string; frameHash: string } | undefined;
  const budget = new TxBudget(plan);
  /** Transactions taken (used + locked) as the referee last reported them. */
  let taken = 0;
  const probesAt = (ord: number, when: string): ProbeName[] =>
    (plan.probes.get(ord) ?? []).filter((p) => PROBES.find((d) => d.name === p)?.when === when);
  const note = (ord: number, probe: string, r: Parameters<typeof outcomeOf>[0], into: Notice[]) => {
    const n: Notice = { ordinal: ord, probe, outcome: outcomeOf(r) };
    probed.push(n);
    into.push(n);
  };

  for (let ord = -1; ord < o.wakes; ord++) {
    const time = market.timeOf(ord);
    // ── before the frame ────────────────────────────────────────────────
    let notices: Notice[];
    if (ord <= o.recordedThrough) {
      notices = await recordedNotices(engine, sessionId, ord);
    } else {
      notices = carried;
      for (const p of probesAt(ord, 'before-frame')) {
        if (p === 'early-turn' && prev) {
          note(ord, p, await engine.turn({ sessionId, ordinal: ord, parentHash: prev.turnHash, frameRoot: prev.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } }), notices);
        } else if (p === 'wrong-session') {
          note(ord, p, await engine.frame({ sessionId: GHOST_SESSION_ID, ordinal: ord, time }), notices);
        }
      }
    }
    carried = [];
    // ── the frame ───────────────────────────────────────────────────────
    let data: CanonicalObject;
    // Releases hand their transactions back when this frame is ruled on.
    const released = settlements.filter((x) => x.mode === 'unfilled').length;
    if (ord === -1) {
      data = market.openData(DEMO_AGENTS, o.wakes);
    } else {
      let referee = o.instance === undefined ? undefined : await settle(o.instance, sessionId, settlements);
      if (o.instance !== undefined && plan.acts.get(ord) === 'mandate-terminated') {
        referee = { ...referee, terminate: await signTermination(DEMO_PARTIES.principal, { instance: o.instance, session: sessionId }) };
      }
      const w = market.wake(ord, orders, notices as unknown as CanonicalObject[], referee);
      data = w.data;
      desk.observe(w.fills);
    }
    orders = [];
    settlements = [];
    const frameInput = { sessionId, ordinal: ord, time, data };
    const f = await engine.frame(frameInput);
    if (!f.ok) fail(`the frame at ordinal ${ord} was refused (${f.diagnostic})`, f.message);
    if (f.duplicate) resent++;
    // ── while the frame is pending ──────────────────────────────────────
    const decision = ord === -1 ? desk.plan() : desk.decide(ord, time, o.plan.acts.get(ord), budget.pace(ord, taken - released));
    const { body, intent } = await encodeDecision(decision);
    const turnInput = { sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body };
    const live = ord + 1 > o.recordedThrough;
    if (live) {
      for (const p of probesAt(ord, 'pending')) {
        if (p === 'frame-redelivery') note(ord, p, await engine.frame(frameInput), carried);
        else if (p === 'stale-answer' && prev) note(ord, p, await engine.turn({ ...turnInput, frameRoot: prev.frameRoot }), carried);
        else if (p === 'fork-attempt' && prev) note(ord, p, await engine.turn({ ...turnInput, parentHash: prev.frameHash }), carried);
        else if (p === 'bad-declared-hash' && body.kind === 'authored') note(ord, p, await engine.turn({ ...turnInput, body: { ...body, hash: '0'.repeat(64) } }), carried);
      }
    }
    // ── the answer ──────────────────────────────────────────────────────
    const t: TurnResult = await engine.turn(turnInput);
    if (!t.ok) fail(`the answer to ordinal ${ord} was refused (${t.diagnostic})`, t.message);
    if (t.duplicate) resent++;
    budget.passed(ord);
    const quota = objectOf(t.ruling?.['quota']);
    if (quota && typeof quota['used_txs'] === 'number' && typeof quota['locked_txs'] === 'number') taken = quota['used_txs'] + quota['locked_txs'];
    const ruling = objectOf(t.ruling?.['intent']);
    if (intent && ruling?.['admitted'] === true && admittedByAll(t.ruling)) {
      desk.admitted(intent);
      const settle = decision.kind === 'intent' ? decision.settle : undefined;
      if (decision.kind === 'intent' && decision.order && settle !== 'unfilled') orders.push({ ...decision.order, intent_hash: String(ruling['intent_hash']) });
      const ticket = objectOf(t.ruling?.['ticket']);
      if (ticket && typeof ticket['id'] === 'number' && typeof ticket['proof_hash'] === 'string') {
        settlements.push({ ticket: ticket['id'], proofHash: ticket['proof_hash'], intent, mode: settle ?? 'fill' });
      }
    }
    // ── after the answer ────────────────────────────────────────────────
    if (live) {
      for (const p of probesAt(ord, 'after-turn')) {
        if (p === 'network-retry') note(ord, p, await engine.turn(turnInput), carried);
        else if (p === 'resubmission') {
          const other = enc.encode(JSON.stringify({ context: `second thoughts about wake ${ord}` }));
          note(ord, p, await engine.turn({ ...turnInput, body: { kind: 'authored', bytes: other } }), carried);
        }
      }
    }
    prev = { frameRoot: f.frameRoot, turnHash: t.entryHash, frameHash: f.entryHash };
    o.onWake?.(ord + 2, o.wakes + 1);
  }
  return { finalNotices: carried, probed, resentDuplicates: resent };
}

async function recordedNotices(engine: Engine, sessionId: string, ordinal: number): Promise<Notice[]> {
  const ev = await engine.events(sessionId, frameIndex(ordinal) - 1, 1);
  const e = ev.ok ? ev.events[0]?.entry : undefined;
  if (!e || e.kind !== 'frame' || e.ordinal !== ordinal) return fail(`the recorded day has no frame ${ordinal} where expected`);
  const list = objectOf(e.data)?.['notices'];
  return Array.isArray(list) ? (list as unknown as Notice[]) : [];
}
