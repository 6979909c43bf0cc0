import { describe, expect, it } from 'vitest';
import { INTENT_CODES, type UnsignedIntentInput } from '../../src/intent/index.js';
import { createEngine } from '../../src/engine.js';
import { MemoryStore } from '../../src/store/index.js';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { ALPHA_NONCES, Day, KEY_BETA, KEY_STRANGER, carry, enc, frameTime, iso, openIntent, signed, spec } from './fixtures.js';

function ruling(t: { ruling?: unknown }): Record<string, unknown> {
  return (t.ruling as { intent: Record<string, unknown> }).intent;
}

describe('intents inside the session', () => {
  it('admits a valid signed intent and records its hash; the nonce is reserved with the turn', async () => {
    const day = await Day.open();
    const intent = await signed(openIntent({ ttl: iso(frameTime(-1) + 60_000) }));
    const t = await day.answer(carry(intent, 'agent saw BTC at 97k'));
    expect(ruling(t)).toMatchObject({ admitted: true, agent_id: 'alpha', nonce: '1', action: 'open' });
    expect(ruling(t)['intent_hash']).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await day.engine.store.nonceOwner(ALPHA_NONCES, '1')).toMatchObject({ sessionId: day.sid, index: t.index });
  });

  it('a plain authored turn carries no ruling', async () => {
    const day = await Day.open();
    const t = await day.answer(enc.encode('hold'));
    expect(t.ruling).toBeUndefined();
  });

  it('uses the frame time as now: ttl == frame time is valid, one ms earlier is expired', async () => {
    const day = await Day.open();
    const at = frameTime(-1);
    expect(ruling(await day.answer(carry(await signed(openIntent({ nonce: 10, ttl: iso(at) }))), at))).toMatchObject({ admitted: true });
    const at2 = frameTime(0);
    expect(ruling(await day.answer(carry(await signed(openIntent({ nonce: 11, ttl: iso(at2 - 1) }))), at2))).toMatchObject({ admitted: false, stage: 'ttl', code: 'expired' });
  });

  it('records every ruling code of the catalogue in one transcript, and it verifies', async () => {
    const engine = createEngine();
    const day = await Day.open(engine);
    let nonce = 100;
    const next = () => nonce++;
    const ttl = (ord: number) => iso(frameTime(ord) + 60_000);
    const cases: Array<[string, (ord: number) => Promise<unknown>]> = [
      ['invalid_schema', async () => ({ action: 'open', agent_id: 'alpha' })],
      ['unknown_signer', async (o) => signed(openIntent({ agent_id: 'gamma', nonce: next(), ttl: ttl(o) }))],
      ['bad_signature', async (o) => ({ ...(await signed(openIntent({ nonce: next(), ttl: ttl(o) }), KEY_STRANGER)) })],
      ['replayed_nonce', async (o) => signed(openIntent({ nonce: 1, ttl: ttl(o) }))],
      ['expired', async (o) => signed(openIntent({ nonce: next(), ttl: iso(frameTime(o) - 1) }))],
      ['ttl_too_far', async (o) => signed(openIntent({ nonce: next(), ttl: iso(frameTime(o) + 3_600_001) }))],
      ['nonpositive_size', async (o) => signed(openIntent({ nonce: next(), ttl: ttl(o), size: '0' }))],
      ['nonpositive_leverage', async (o) => signed(openIntent({ nonce: next(), ttl: ttl(o), leverage: '-1' }))],
      ['slippage_out_of_range', async (o) => signed(openIntent({ nonce: next(), ttl: ttl(o), max_slippage: '1.0000000000000001' }))],
      ['nonpositive_tp', async (o) => signed(openIntent({ nonce: next(), ttl: ttl(o), tp: '0' }))],
      ['nonpositive_sl', async (o) => signed(openIntent({ nonce: next(), ttl: ttl(o), sl: '-5' }))],
      ['magnitude_exceeded', async (o) => signed(openIntent({ nonce: next(), ttl: ttl(o), size: '1' + '0'.repeat(19) }))],
      ['scale_exceeded', async (o) => signed(openIntent({ nonce: next(), ttl: ttl(o), size: '0.' + '0'.repeat(18) + '1' }))],
      ['target_only_on_transfer', async (o) => signed(openIntent({ nonce: next(), ttl: ttl(o), target_address: '0x000000000000000000000000000000000000dEaD' }))],
      ['target_required_on_transfer', async (o) => signed({ action: 'transfer', agent_id: 'alpha', nonce: next(), ttl: ttl(o), size: '5' } as UnsignedIntentInput)],
    ];
    // The nonce-1 intent first, so `replayed_nonce` has something to replay.
    const first = await day.answer(carry(await signed(openIntent({ nonce: 1, ttl: ttl(-1) }))));
    expect(ruling(first)).toMatchObject({ admitted: true });
    const seen = new Map<string, Record<string, unknown>>();
    for (const [code, make] of cases) {
      const t = await day.answer(carry(await make(day.ordinal)));
      const r = ruling(t);
      expect(r, code).toMatchObject({ admitted: false, code });
      seen.set(code, r);
    }
    expect([...seen.keys()].sort()).toEqual([...INTENT_CODES].sort());
    expect(seen.get('replayed_nonce')).toMatchObject({ first: { intent_hash: ruling(first)['intent_hash'], session: day.sid, index: first.index } });
    const fin = await engine.finalize(day.sid);
    expect(fin.ok).toBe(true);
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(day.sid)) lines.push(l);
    const v = await verifyBundle([encodeBundle(lines)]);
    expect(v.ok).toBe(true);
    // The rulings are in the transcript itself.
    const text = new TextDecoder().decode(encodeBundle(lines));
    for (const code of INTENT_CODES) expect(text).toContain(`"code":"${code}"`);
  });

  it('nonces are unique per agent across sessions: a day cannot replay another day\'s intent', async () => {
    const store = new MemoryStore();
    const engine = createEngine({ store });
    const a = await Day.open(engine, spec('day-a'));
    const b = await Day.open(engine, spec('day-b'));
    const intent = await signed(openIntent({ nonce: 42, ttl: iso(frameTime(0) + 3_000_000) }));
    const first = await a.answer(carry(intent));
    expect(ruling(first)).toMatchObject({ admitted: true });
    const again = await b.answer(carry(intent));
    expect(ruling(again)).toMatchObject({ admitted: false, code: 'replayed_nonce', first: { session: a.sid, index: first.index } });
  });

  it('an identical retry of an admitted turn returns the same hash and ruling, not a replay', async () => {
    const day = await Day.open();
    const intent = await signed(openIntent({ nonce: 7, ttl: iso(frameTime(-1) + 60_000) }));
    const t = await day.answer(carry(intent));
    const retry = await day.resend(carry(intent));
    expect(retry).toMatchObject({ ok: true, duplicate: true, entryHash: t.entryHash, ruling: t.ruling });
  });

  it('concurrent submissions of one nonce across 16 sessions admit exactly one', async () => {
    const engine = createEngine();
    const days = await Promise.all(Array.from({ length: 16 }, (_, i) => Day.open(engine, spec(`storm-${i}`))));
    const intent = await signed(openIntent({ nonce: 'storm-1', agent_id: 'beta', ttl: iso(frameTime(-1) + 60_000) }), KEY_BETA);
    const results = await Promise.all(days.map((d) => d.answer(carry(intent))));
    const admitted = results.filter((t) => ruling(t)['admitted'] === true);
    expect(admitted).toHaveLength(1);
    for (const t of results) if (t !== admitted[0]) expect(ruling(t)).toMatchObject({ code: 'replayed_nonce' });
  });

  it('rejects a spec with a malformed signer registry at open', async () => {
    const engine = createEngine();
    expect(await engine.open({ name: 'x', agents: { a: '0x123' } })).toMatchObject({ ok: false, diagnostic: 'malformed-entry' });
    expect(await engine.open({ name: 'x', agents: { a: '0x' + '0'.repeat(40) } })).toMatchObject({ ok: false, message: expect.stringContaining('zero address') });
    expect(await engine.open({ name: 'x', intent: { clockSkewMs: 5 } })).toMatchObject({ ok: false, message: expect.stringContaining('needs spec.agents') });
    expect(await engine.open({ name: 'x', agents: { a: '0x' + '1'.repeat(40) }, intent: { bogus: 1 } })).toMatchObject({ ok: false });
  });
});

describe('authored intent bytes are read by the one strict parser (issue #11)', () => {
  it('a duplicate key, a lone surrogate or a BOM in intent bytes is ruled invalid_schema and burns nothing; the same intent written once is admitted', async () => {
    const day = await Day.open();
    const intent = await signed(openIntent({ nonce: 77, ttl: iso(frameTime(-1) + 3_600_000) }));
    const good = JSON.stringify({ intent });
    const forms: Array<[string, string]> = [
      ['duplicate-key', good.replace('{"intent":', `{"intent":{"agent_id":"beta"},"intent":`)],
      ['duplicate-key', good.replace('"nonce":', '"nonce":"999","nonce":')],
      ['lone-surrogate', good.replace('{"intent":', '{"note":"\\ud800","intent":')],
      ['bom', `\uFEFF${good}`],
    ];
    for (const [code, text] of forms) {
      const t = await day.answer(enc.encode(text));
      expect(ruling(t), text).toMatchObject({ admitted: false, stage: 'schema', code: 'invalid_schema' });
      expect(String(ruling(t)['message'])).toContain(code);
    }
    expect(await day.engine.store.nonceOwner(ALPHA_NONCES, '77')).toBeUndefined();
    expect(ruling(await day.answer(enc.encode(good)))).toMatchObject({ admitted: true, nonce: '77' });
  });
});
