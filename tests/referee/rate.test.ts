/**
 * The judge rate limit per wallet (agent) across all its sessions, and the
 * optional daily cap across agents (seed 002), kept as slot reservations in the
 * store beside nonces; replay takes the owner of a full window's last slot from
 * the recorded ruling and lists it as an external fact.
 */
import { describe, expect, it } from 'vitest';
import { replay } from '../../src/receipt/index.js';
import { createRefereeRuler, type Judge, type JudgeQuery } from '../../src/referee/index.js';
import { MemoryStore, type TranscriptStore } from '../../src/store/index.js';
import { KEY_ALPHA, KEY_BETA, alpha, beta, carry, enc, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { entriesOf, reseal } from '../receipt/fixtures.js';
import { Desk, judgedMandate, localJudge, refereeSpec, ruling, signSpecSync, unsignedSpec } from './fixtures.js';

let n = 1;
async function propose(desk: Desk, agent: 'alpha' | 'beta' = 'alpha', over: Record<string, unknown> = {}) {
  const u = openIntent({ agent_id: agent, nonce: `rate${n++}`, ttl: iso(frameTime(desk.ordinal) + 1_800_000), ...over });
  return carry(await signed(u, agent === 'beta' ? KEY_BETA : undefined), 'ok');
}

function counted(judge: Judge): Judge & { calls: JudgeQuery[] } {
  const calls: JudgeQuery[] = [];
  return { model: judge.model, calls, ask: (q) => (calls.push(q), judge.ask(q)) };
}

async function bundleOf(desk: Desk): Promise<Uint8Array> {
  const fin = await desk.engine.finalize(desk.sid);
  if (!fin.ok) throw new Error(fin.message);
  const parts: Uint8Array[] = [];
  for await (const l of desk.engine.exportEntries(desk.sid)) parts.push(l, enc.encode('\n'));
  return Buffer.concat(parts);
}

const referee = { ruler: (store: TranscriptStore) => createRefereeRuler({ store }) };

describe('judge rate limit across sessions', () => {
  it('is per wallet, not per name: another wallet called alpha elsewhere has its own window, one wallet under two names has one', async () => {
    const store = new MemoryStore();
    const judge = counted(localJudge());
    const m = judgedMandate({ judge_rate: { max: 1, window_ms: 3_600_000 } });
    // Desk A: alpha is Anvil #0. Desk B: "alpha" is Anvil #1 (beta's wallet), and "b2" is Anvil #0 again.
    const a = await Desk.open(refereeSpec('wallet-a', m), { store, judge });
    // The principal signs the spec with its agents (the signature covers spec.agents).
    const b = await Desk.open(signSpecSync({ ...unsignedSpec('wallet-b', m), agents: { alpha: beta.address, b2: alpha.address } }), { store, judge });
    expect(ruling(await a.answer(await propose(a))).verdict).toMatchObject({ source: 'judged' });
    // Same name, other wallet: not limited by A's call.
    const other = carry(await signed(openIntent({ agent_id: 'alpha', nonce: `w${n++}`, ttl: iso(frameTime(b.ordinal) + 1_800_000) }), KEY_BETA), 'ok');
    expect(ruling(await b.answer(other)).verdict).toMatchObject({ source: 'judged' });
    // Same wallet as A's alpha under another name: its window is already full.
    const renamed = carry(await signed(openIntent({ agent_id: 'b2', nonce: `w${n++}`, ttl: iso(frameTime(b.ordinal) + 1_800_000) }), KEY_ALPHA), 'ok');
    expect(ruling(await b.answer(renamed)).verdict).toMatchObject({ source: 'limited', limit: { scope: 'wallet', held: { session: a.sid } } });
    expect(judge.calls).toHaveLength(2);
  });

  it('is per wallet across every session of the store: two sessions share one window (not N × max)', async () => {
    const store = new MemoryStore();
    const judge = counted(localJudge());
    const spec = (name: string) => refereeSpec(name, judgedMandate({ judge_rate: { max: 2, window_ms: 3_600_000 } }));
    const a = await Desk.open(spec('rate-a'), { store, judge });
    const b = await Desk.open(spec('rate-b'), { store, judge });
    expect(ruling(await a.answer(await propose(a))).verdict).toMatchObject({ source: 'judged', admitted: true });
    const tb = await b.answer(await propose(b));
    expect(ruling(tb).verdict).toMatchObject({ source: 'judged', admitted: true });
    const limited = ruling(await a.answer(await propose(a)));
    expect(limited.verdict).toEqual({
      stage: 'verdict',
      source: 'limited',
      admitted: false,
      code: 'judge_rate_limited',
      message: `wallet ${alpha.address.toLowerCase()} (agent alpha) already had 2 judge calls in the 3600000 ms window from ${Math.floor(frameTime(-1) / 3_600_000) * 3_600_000}, across every session and name (limit 2)`,
      limit: { scope: 'wallet', window_start: Math.floor(frameTime(-1) / 3_600_000) * 3_600_000, window_ms: 3_600_000, max: 2, held: { intent_hash: ruling(tb).intent!.intent_hash, session: b.sid, index: tb.index } },
    });
    // Another agent has its own window; the limited agent's sessions all see theirs full.
    expect(ruling(await b.answer(await propose(b, 'beta'))).verdict).toMatchObject({ source: 'judged' });
    expect(ruling(await b.answer(await propose(b))).verdict).toMatchObject({ source: 'limited' });
    expect(judge.calls).toHaveLength(3);
  });

  it('the optional daily cap counts every agent in every session', async () => {
    const store = new MemoryStore();
    const spec = (name: string) => refereeSpec(name, judgedMandate({ judge_rate: { max: 30, window_ms: 3_600_000, daily_max: 2 } }));
    const a = await Desk.open(spec('day-a'), { store, judge: localJudge() });
    const b = await Desk.open(spec('day-b'), { store, judge: localJudge() });
    await a.answer(await propose(a, 'alpha'));
    await b.answer(await propose(b, 'beta'));
    const r = ruling(await a.answer(await propose(a, 'beta')));
    expect(r.verdict).toMatchObject({ source: 'limited', code: 'judge_rate_limited', limit: { scope: 'all', window_ms: 86_400_000, max: 2, held: { session: b.sid } } });
    expect(r.verdict!.message).toMatch(/^the store already had 2 judge calls on the UTC day from \d+, across every agent \(daily_max 2\)$/);
  });

  it('two engines racing for the last slot: exactly one is judged, the other is limited', async () => {
    const store = new MemoryStore();
    const judge = counted(localJudge());
    const spec = (name: string) => refereeSpec(name, judgedMandate({ judge_rate: { max: 1, window_ms: 3_600_000 } }));
    const desks = [await Desk.open(spec('race-a'), { store, judge }), await Desk.open(spec('race-b'), { store, judge })];
    const bodies = await Promise.all(desks.map((d) => propose(d)));
    const frames = await Promise.all(desks.map((d) => d.engine.frame({ sessionId: d.sid, ordinal: -1, time: frameTime(-1) })));
    const turns = await Promise.all(
      desks.map((d, i) => {
        const f = frames[i]!;
        if (!f.ok) throw new Error(f.message);
        return d.engine.turn({ sessionId: d.sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: bodies[i]! } });
      }),
    );
    const sources = turns.map((t) => (t.ok ? ruling(t).verdict?.source : t.diagnostic)).sort();
    expect(sources).toEqual(['judged', 'limited']);
  });

  it('replay re-derives a limited turn from the recorded owner of the last slot, listed as an external fact; an edited window diverges', async () => {
    const store = new MemoryStore();
    const spec = (name: string) => refereeSpec(name, judgedMandate({ judge_rate: { max: 2, window_ms: 3_600_000 } }));
    const a = await Desk.open(spec('replay-rate-a'), { store, judge: localJudge() });
    const b = await Desk.open(spec('replay-rate-b'), { store, judge: localJudge() });
    await a.answer(await propose(a));
    const tb = await b.answer(await propose(b));
    const limited = await a.answer(await propose(a));
    expect(ruling(limited).verdict).toMatchObject({ source: 'limited' });
    const bundle = await bundleOf(a);
    const r = await replay([bundle], referee);
    expect(r).toMatchObject({ ok: true });
    if (!r.ok) return;
    expect(r.externalFacts).toEqual([
      { index: limited.index, kind: 'judge-slot', agentId: `judge-wallet 3600000 ${alpha.address.toLowerCase()}`, nonce: `${Math.floor(frameTime(-1) / 3_600_000)}/1`, owner: { intentHash: ruling(tb).intent!.intent_hash, sessionId: b.sid, index: tb.index } },
    ]);
    // The same limit claimed for a window the session could not have filled: replay judges, the evidence is missing.
    const text = new TextDecoder().decode(bundle).replace('"max":2,"scope":"wallet"', '"max":3,"scope":"wallet"');
    const forged = reseal(entriesOf(text.split('\n').filter((l) => l.length > 0).map((l) => enc.encode(l)))).bundle;
    const d = await replay([forged], referee);
    expect(d).toMatchObject({ ok: false, stage: 'replay', divergences: [{ index: limited.index, kind: 'ruling-diverged' }] });
  });
});
