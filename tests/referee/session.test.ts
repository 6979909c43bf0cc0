import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { signRedemption, signRelease, signTermination, type TicketRef } from '../../src/referee/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { ALPHA_NONCES, Day, carry, frameTime, iso, openIntent, signed, spec as intentSpec } from '../rules/fixtures.js';
import type { CanonicalObject } from '../../src/protocol/index.js';
import { DEAD, Desk, INSTANCE, KEY_EXECUTOR, KEY_OPERATOR, KEY_OTHER, KEY_PRINCIPAL, mandate, refereeSpec, ruling, signSpecSync } from './fixtures.js';

let nonce = 1;
/** A signed intent valid for 30 minutes from the frame `desk` will deliver next. */
async function propose(desk: Desk, over: Record<string, unknown> = {}, context?: string) {
  const u: Record<string, unknown> = openIntent({ nonce: `n${nonce++}`, ttl: iso(frameTime(desk.ordinal) + 1_800_000), ...over }) as Record<string, unknown>;
  for (const k of Object.keys(u)) if (u[k] === undefined) delete u[k];
  const intent = await signed(u as Parameters<typeof signed>[0]);
  return { intent, bytes: carry(intent, context) };
}

function ref(desk: Desk, ticket: { id: number; proof_hash: string }): TicketRef {
  return { instance: INSTANCE, session: desk.sid, ticket: ticket.id, proofHash: ticket.proof_hash };
}

describe('referee: mandates and tickets inside the session', () => {
  it('admits within the mandate: a ticket locks its weight (size × action weight) and one transaction', async () => {
    const desk = await Desk.open(refereeSpec('admit'));
    const open = await propose(desk, { size: '2' });
    const t = await desk.answer(open.bytes);
    const r = ruling(t);
    expect(r.intent).toMatchObject({ admitted: true, action: 'open' });
    expect(r.policy).toEqual({ admitted: true, stage: 'policy', weight: '2' });
    expect(r.verdict).toBeUndefined();
    // The ticket lives as long as its intent: valid at its ttl (seed 000), expired 1 ms later.
    expect(r.ticket).toMatchObject({ id: 1, state: 'ACTIVE', weight: '2', expires_at: frameTime(-1) + 1_800_000 + 1 });
    expect(r.ticket?.proof_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(r.quota).toEqual({ cap: '10', used: '0', locked: '2', free: '8', tx_cap: 6, used_txs: 0, locked_txs: 1 });
    expect(await desk.engine.store.nonceOwner(ALPHA_NONCES, open.intent.nonce)).toMatchObject({ sessionId: desk.sid, index: t.index });

    const close = await propose(desk, { action: 'close', size: '3', side: undefined, leverage: undefined });
    const c = ruling(await desk.answer(close.bytes));
    expect(c.policy).toEqual({ admitted: true, stage: 'policy', weight: '1.5' });
    expect(c.quota).toMatchObject({ used: '0', locked: '3.5', free: '6.5', locked_txs: 2 });
    const s = await desk.state();
    expect(s.tickets.map((x) => [x.id, x.state, x.weight])).toEqual([
      [1, 'ACTIVE', '2'],
      [2, 'ACTIVE', '1.5'],
    ]);
  });

  it.each([
    ['action_not_allowed', { actions: ['close'], targets: undefined }, {}, /action open is not allowed/],
    ['market_not_allowed', {}, { market: 'SOL-PERP' }, /market SOL-PERP/],
    ['target_not_allowed', {}, { action: 'transfer', target_address: '0x000000000000000000000000000000000000beef', market: undefined, side: undefined, leverage: undefined, max_slippage: undefined }, /target/],
    ['cap_exceeded', {}, { size: '5.000000001' }, /^size 5.000000001 exceeds the cap 5$/],
    ['cap_exceeded', {}, { leverage: '10.5' }, /^leverage/],
    ['cap_exceeded', {}, { max_slippage: '0.06' }, /^max_slippage/],
    ['quota_exhausted', { quota: { cap: '1.5' } }, { size: '2' }, /used 0 \+ locked 0 \+ 2 = 2 > cap 1.5/],
  ])('denies at stage policy with %s, and the authenticated intent burns its nonce', async (code, m, over, message) => {
    const desk = await Desk.open(refereeSpec(`policy-${code}-${String(message)}`, mandate(m)));
    const p = await propose(desk, over);
    const t = await desk.answer(p.bytes);
    const r = ruling(t);
    expect(r.intent).toMatchObject({ admitted: true });
    expect(r.policy).toMatchObject({ admitted: false, stage: 'policy', code });
    expect((r.policy as { message: string }).message).toMatch(message);
    expect(r.ticket).toBeUndefined();
    expect(r.quota).toMatchObject({ locked: '0', locked_txs: 0 });
    expect(await desk.engine.store.nonceOwner(ALPHA_NONCES, p.intent.nonce)).toEqual({ intentHash: r.intent!.intent_hash, sessionId: desk.sid, index: t.index });
  });

  it('checks in a fixed order (the first failure is reported) and counts transactions against tx_cap', async () => {
    const desk = await Desk.open(refereeSpec('order', mandate({ tx_cap: 1 })));
    // market and size both wrong: market is checked first.
    expect(ruling(await desk.answer((await propose(desk, { market: 'SOL-PERP', size: '9' })).bytes)).policy).toMatchObject({ code: 'market_not_allowed' });
    expect(ruling(await desk.answer((await propose(desk)).bytes)).ticket).toMatchObject({ id: 1 });
    expect(ruling(await desk.answer((await propose(desk)).bytes)).policy).toMatchObject({ code: 'tx_cap_reached' });
  });

  it('nothing is admitted at or after the mandate expiry (frame time)', async () => {
    const end = frameTime(0);
    const desk = await Desk.open(refereeSpec('expiry', mandate({ expires_at: end })));
    expect(ruling(await desk.answer((await propose(desk)).bytes)).ticket).toMatchObject({ expires_at: end });
    expect(ruling(await desk.answer((await propose(desk)).bytes)).policy).toMatchObject({ code: 'mandate_expired' });
  });

  it('a denied intent keeps its record and burns its nonce: re-sent byte for byte after quota frees, it is a replayed_nonce naming the first use', async () => {
    const desk = await Desk.open(refereeSpec('again', mandate({ quota: { cap: '2' } })));
    const first = ruling(await desk.answer((await propose(desk, { size: '2' })).bytes));
    const x = await propose(desk, { size: '1' });
    const denied = await desk.answer(x.bytes);
    const d = ruling(denied);
    expect(d.policy).toMatchObject({ code: 'quota_exhausted' });
    const release = await signRelease(KEY_OPERATOR, 'operator', ref(desk, first.ticket!));
    const again = ruling(await desk.answer(x.bytes, { data: { referee: { releases: [release] } } }));
    expect(again.transitions).toEqual([{ op: 'release', ticket: 1, ok: true, by: 'operator' }]);
    expect(again.intent).toMatchObject({ admitted: false, stage: 'nonce', code: 'replayed_nonce', first: { intent_hash: d.intent!.intent_hash, session: desk.sid, index: denied.index } });
    expect(again.ticket).toBeUndefined();
    expect(again.quota).toMatchObject({ used: '0', locked: '0', free: '2', locked_txs: 0 });
  });

  it('a refusal before authentication burns nothing: a forged signature over the victim\'s nonce leaves it free', async () => {
    const desk = await Desk.open(refereeSpec('forged', mandate({ quota: { cap: '2' } })));
    const u = openIntent({ nonce: 'victim-1', ttl: iso(frameTime(desk.ordinal) + 1_800_000), size: '9' });
    const forged = await signed(u, KEY_OTHER);
    const r = ruling(await desk.answer(carry(forged)));
    expect(r.intent).toMatchObject({ admitted: false, stage: 'signature' });
    expect(await desk.engine.store.nonceOwner(ALPHA_NONCES, 'victim-1')).toBeUndefined();
    const genuine = await signed(openIntent({ nonce: 'victim-1', ttl: iso(frameTime(desk.ordinal) + 1_800_000), size: '1' }));
    expect(ruling(await desk.answer(carry(genuine))).ticket).toMatchObject({ id: 1 });
  });

  it('a redemption signed by the executor with the exact intent moves locked to used', async () => {
    const desk = await Desk.open(refereeSpec('redeem'));
    const p = await propose(desk, { size: '2' });
    const t = ruling(await desk.answer(p.bytes)).ticket!;
    const redemption = await signRedemption(KEY_EXECUTOR, ref(desk, t), p.intent);
    const r = ruling(await desk.answer('filled', { data: { referee: { redemptions: [redemption] } } }));
    expect(r).toEqual({ transitions: [{ op: 'redeem', ticket: 1, ok: true }], quota: { cap: '10', used: '2', locked: '0', free: '8', tx_cap: 6, used_txs: 1, locked_txs: 0 } });
    const s = await desk.state();
    expect(s.tickets[0]).toMatchObject({ state: 'REDEEMED', settled: { op: 'redeem', ordinal: 0, time: frameTime(0) } });
    expect(s.transitions).toEqual([{ ordinal: 0, time: frameTime(0), op: 'redeem', ticket: 1, ok: true }]);
    // A plain turn whose frame carried nothing for the referee has no ruling.
    expect((await desk.answer('idle')).ruling).toBeUndefined();
  });

  it('records every failed transition with its code and changes nothing', async () => {
    const desk = await Desk.open(refereeSpec('bad-transitions'));
    const a = await propose(desk);
    const ta = ruling(await desk.answer(a.bytes)).ticket!;
    const b = await propose(desk);
    const tb = ruling(await desk.answer(b.bytes)).ticket!;
    const data = {
      referee: {
        redemptions: [
          await signRedemption(KEY_OPERATOR, ref(desk, ta), a.intent),
          { ...(await signRedemption(KEY_EXECUTOR, ref(desk, ta), a.intent)), ticket: 99 },
          await signRedemption(KEY_EXECUTOR, ref(desk, ta), b.intent),
          { ...(await signRedemption(KEY_EXECUTOR, ref(desk, ta), a.intent)), extra: 1 },
        ],
        releases: [{ ticket: tb.id, by: 'anyone' }, { ...(await signRelease(KEY_OPERATOR, 'operator', ref(desk, tb))), by: 'principal' }, { ticket: tb.id, by: 'boss' }],
        terminate: await signTermination(KEY_OPERATOR, { instance: INSTANCE, session: desk.sid }),
      },
    };
    const r = ruling(await desk.answer('noise', { data }));
    expect(r.transitions?.map((o) => ('code' in o ? `${o.op}:${o.code}` : `${o.op}:ok`))).toEqual([
      'redeem:bad_transition_signature',
      'redeem:ticket_unknown',
      'redeem:intent_mismatch',
      'redeem:transition_malformed',
      'release:release_not_allowed',
      'release:bad_transition_signature',
      'release:transition_malformed',
      'terminate:bad_transition_signature',
    ]);
    expect(r.quota).toMatchObject({ used: '0', locked: '2', locked_txs: 2 });
    // Redeem once, then again in the same frame: the second is not active.
    const redeem = await signRedemption(KEY_EXECUTOR, ref(desk, ta), a.intent);
    const twice = ruling(await desk.answer('fill', { data: { referee: { redemptions: [redeem, redeem] } } }));
    expect(twice.transitions).toMatchObject([{ ok: true }, { ok: false, code: 'ticket_not_active' }]);
    expect(ruling(await desk.answer('junk', { data: { referee: 'junk' } })).transitions).toMatchObject([{ op: 'frame', ok: false, code: 'transition_malformed' }]);
    expect(ruling(await desk.answer('junk', { data: { referee: { redemptions: [], releases: [], later: [] } } })).transitions).toMatchObject([{ op: 'frame', code: 'transition_malformed' }]);
    // Frame data without a referee member is not the referee's business.
    expect((await desk.answer('x', { data: { prices: { 'BTC-PERP': '97000' } } })).ruling).toBeUndefined();
  });

  it('one ttl edge for intent and ticket: an intent admitted AT its ttl gets a ticket redeemable at that instant (not expired at birth)', async () => {
    const desk = await Desk.open(refereeSpec('ticket-edge'));
    // Frame -1 at time T; the intent's ttl is exactly T: seed 000 still admits it (now === ttl is valid).
    const p = await propose(desk, { ttl: iso(frameTime(-1)) });
    const t = ruling(await desk.answer(p.bytes)).ticket!;
    expect(t.expires_at).toBe(frameTime(-1) + 1);
    // A frame at the same instant redeems it.
    const r = ruling(await desk.answer('fill', { time: frameTime(-1), data: { referee: { redemptions: [await signRedemption(KEY_EXECUTOR, ref(desk, t), p.intent)] } } }));
    expect(r.transitions).toEqual([{ op: 'redeem', ticket: 1, ok: true }]);
    expect(r.quota).toMatchObject({ used: '1', locked: '0', used_txs: 1 });
  });

  it('the skew that keeps an intent admissible keeps its ticket live too', async () => {
    const spec = refereeSpec('ticket-skew');
    const desk = await Desk.open(signSpecSync({ ...spec, intent: { maxTtlHorizonMs: 3_600_000, clockSkewMs: 5_000 }, mandate: { ...(spec['mandate'] as CanonicalObject), signature: undefined } as unknown as CanonicalObject }));
    // Admitted 4 s after its ttl (skew 5 s): the ticket ends where the intent would: ttl + skew + 1.
    const p = await propose(desk, { ttl: iso(frameTime(-1) - 4_000) });
    const t = ruling(await desk.answer(p.bytes)).ticket!;
    expect(t.expires_at).toBe(frameTime(-1) - 4_000 + 5_000 + 1);
  });

  it('an expired ticket cannot be redeemed, and then anyone may release it', async () => {
    const desk = await Desk.open(refereeSpec('ticket-expiry'));
    const p = await propose(desk, { ttl: iso(frameTime(-1) + 60_000) });
    const t = ruling(await desk.answer(p.bytes)).ticket!;
    expect(t.expires_at).toBe(frameTime(0) + 1);
    const r = ruling(
      await desk.answer('late', { time: frameTime(0) + 1, data: { referee: { redemptions: [await signRedemption(KEY_EXECUTOR, ref(desk, t), p.intent)], releases: [{ ticket: t.id, by: 'anyone' }] } } }),
    );
    expect(r.transitions).toEqual([
      { op: 'redeem', ticket: 1, ok: false, code: 'ticket_expired', message: expect.stringContaining('expired') },
      { op: 'release', ticket: 1, ok: true, by: 'anyone' },
    ]);
    expect(r.quota).toMatchObject({ used: '0', locked: '0', free: '10', locked_txs: 0, used_txs: 0 });
  });

  it('the principal terminates: redemptions in the same frame still count, then nothing is admitted and anyone may release', async () => {
    const desk = await Desk.open(refereeSpec('terminate'));
    const a = await propose(desk);
    const ta = ruling(await desk.answer(a.bytes)).ticket!;
    const b = await propose(desk);
    const tb = ruling(await desk.answer(b.bytes)).ticket!;
    const stop = await signTermination(KEY_PRINCIPAL, { instance: INSTANCE, session: desk.sid });
    const r = ruling(await desk.answer((await propose(desk)).bytes, { data: { referee: { redemptions: [await signRedemption(KEY_EXECUTOR, ref(desk, ta), a.intent)], terminate: stop } } }));
    expect(r.transitions).toEqual([
      { op: 'redeem', ticket: 1, ok: true },
      { op: 'terminate', ok: true },
    ]);
    expect(r.policy).toMatchObject({ admitted: false, code: 'mandate_terminated' });
    const after = ruling(
      await desk.answer('wind down', {
        data: { referee: { redemptions: [await signRedemption(KEY_EXECUTOR, ref(desk, tb), b.intent)], releases: [{ ticket: tb.id, by: 'anyone' }], terminate: stop } },
      }),
    );
    expect(after.transitions?.map((o) => ('code' in o ? o.code : 'ok'))).toEqual(['redeem_after_termination', 'ok', 'already_terminated']);
    expect(after.quota).toMatchObject({ used: '1', locked: '0', used_txs: 1, locked_txs: 0 });
    expect((await desk.state()).terminated).toEqual({ ordinal: 1, time: frameTime(1) });
  });

  it('transitions in a frame answered by a stand-down apply and are recorded in the stand-down turn', async () => {
    const desk = await Desk.open(refereeSpec('stand-down', mandate({ quota: { cap: '1' } })));
    const t = ruling(await desk.answer((await propose(desk)).bytes)).ticket!;
    const sd = await desk.answer('stand-down', { data: { referee: { releases: [await signRelease(KEY_PRINCIPAL, 'principal', ref(desk, t))] } } });
    // The engine asks the ruler about stand-downs too, so the frame's transitions are recorded in that turn.
    expect(sd.ruling).toMatchObject({ transitions: [{ op: 'release', ticket: 1, ok: true }] });
    expect((await desk.state()).tickets[0]).toMatchObject({ state: 'RELEASED' });
    // The freed quota is visible to the next admission.
    expect(ruling(await desk.answer((await propose(desk)).bytes)).ticket).toMatchObject({ id: 2 });
    // What the ruler answers when asked about that stand-down:
    const standDown = await desk.ruler.ruleStandDown({ sessionId: desk.sid, spec: (await desk.engine.spec(desk.sid))!, ordinal: 0, frameTime: frameTime(0), nonceOwner: async () => undefined });
    expect(standDown?.ruling).toEqual({ transitions: [{ op: 'release', ticket: 1, ok: true, by: 'principal' }], quota: { cap: '1', used: '0', locked: '0', free: '1', tx_cap: 6, used_txs: 0, locked_txs: 0 } });
  });

  it('an engine restart derives the same state from the store and carries on', async () => {
    const store = new MemoryStore();
    const desk = await Desk.open(refereeSpec('restart'), { store });
    const p = await propose(desk, { size: '3' });
    const t = ruling(await desk.answer(p.bytes)).ticket!;
    await desk.answer('filled', { data: { referee: { redemptions: [await signRedemption(KEY_EXECUTOR, ref(desk, t), p.intent)] } } });
    const again = await Desk.attach(store, desk.sid, desk.ordinal);
    const r = ruling(await again.answer((await propose(again, { size: '2' })).bytes));
    expect(r.ticket).toMatchObject({ id: 2 });
    expect(r.quota).toMatchObject({ used: '3', locked: '2', free: '5', used_txs: 1, locked_txs: 1 });
    expect(await again.state()).toEqual(await desk.state());
  });

  it('transfers are admitted only to listed targets and weigh size × 1', async () => {
    const desk = await Desk.open(refereeSpec('transfer'));
    const p = await propose(desk, { action: 'transfer', target_address: DEAD, size: '4', market: undefined, side: undefined, leverage: undefined, max_slippage: undefined });
    expect(ruling(await desk.answer(p.bytes))).toMatchObject({ policy: { weight: '4' }, ticket: { id: 1 } });
  });

  it('without a mandate the referee rules exactly like the intent ruler', async () => {
    const store = new MemoryStore();
    const desk = await Desk.open(intentSpec('no-mandate'), { store });
    const day = await Day.open(createEngine(), intentSpec('no-mandate'));
    const intent = await signed(openIntent({ nonce: 'plain-1', ttl: iso(frameTime(-1) + 60_000) }));
    const a = await desk.answer(carry(intent));
    const b = await day.answer(carry(intent));
    expect(a.ruling).toEqual(b.ruling);
    expect(a.entryHash).toBe(b.entryHash);
  });

  it('a sealed but invalid mandate (opened without the referee) admits nothing', async () => {
    const store = new MemoryStore();
    const plain = createEngine({ store });
    const o = await plain.open(refereeSpec('invalid', mandate({ tx_cap: 0 })));
    expect(o.ok).toBe(true);
    const desk = await Desk.attach(store, (o as { sessionId: string }).sessionId, -1);
    const r = ruling(await desk.answer((await propose(desk)).bytes));
    expect(r.policy).toMatchObject({ admitted: false, code: 'mandate_invalid', message: expect.stringContaining('tx_cap') });
  });

  it('refuses bad mandates at open with a clear message', async () => {
    const { engine } = (await Desk.open(refereeSpec('ok'))) as Desk;
    expect(await engine.open(refereeSpec('bad', mandate({ executor: '0x' + '0'.repeat(40) })))).toMatchObject({ ok: false, diagnostic: 'malformed-entry', message: 'spec.mandate.executor must not be the zero address' });
    expect(await engine.open({ name: 'no-agents', mandate: mandate() })).toMatchObject({ ok: false, message: expect.stringContaining('needs spec.agents') });
    expect(await engine.open(refereeSpec('key', mandate({ operator: KEY_OTHER })))).toMatchObject({ ok: false, message: expect.stringContaining('operator') });
    // Seed 003: a mandate lives 60 s to 30 days; an agent id no Intent can carry is refused (it could never be admitted).
    expect(await engine.open(refereeSpec('short', mandate({ expires_at: frameTime(-1) + 59_999 })))).toMatchObject({ ok: false, diagnostic: 'malformed-entry', message: expect.stringContaining('lifetime expires_at − starts_at = 59999 ms') });
    expect(await engine.open({ ...refereeSpec('spaced'), agents: { 'desk one': KEY_OTHER.slice(0, 42) } })).toMatchObject({ ok: false, diagnostic: 'malformed-entry', message: expect.stringContaining('spec.agents: agent id "desk one"') });
  });

  it('nothing is admitted before the mandate starts (frame time < starts_at), and the nonce is burned', async () => {
    const desk = await Desk.open(refereeSpec('early', mandate({ starts_at: frameTime(0), expires_at: frameTime(0) + 86_400_000 })));
    const p = await propose(desk);
    const t = await desk.answer(p.bytes);
    expect(ruling(t).policy).toMatchObject({ admitted: false, code: 'mandate_not_started', message: `the mandate is in force from ${frameTime(0)} (frame time ${frameTime(-1)})` });
    expect(ruling(await desk.answer((await propose(desk)).bytes)).ticket).toMatchObject({ id: 1 });
  });
});
