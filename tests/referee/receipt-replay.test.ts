/**
 * The referee under `replay` of agent-tally/receipt (a fresh engine over the
 * bundle with `ruler: (store) => createRefereeRuler({ store })`, no judge):
 * an honest day replays; a forged ruling with every hash and the seal
 * recomputed passes verifyBundle but diverges, naming the turn.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { fromBase64, toBase64, type CanonicalObject, type Entry, type TurnEntry } from '../../src/protocol/index.js';
import { replay, type ReplayResult } from '../../src/receipt/index.js';
import { createRefereeRuler, signRedemption, signRelease, signTermination } from '../../src/referee/index.js';
import { carry, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { entriesOf, reseal } from '../receipt/fixtures.js';
import { Desk, INSTANCE, KEY_EXECUTOR, KEY_PRINCIPAL, judgedMandate, localJudge, refereeSpec, ruling } from './fixtures.js';

const referee = { ruler: (store: Parameters<typeof createRefereeRuler>[0]['store']) => createRefereeRuler({ store }) };
let lines: Uint8Array[] = [];
let entries: Entry[] = [];
const at: Record<string, number> = {};

beforeAll(async () => {
  const desk = await Desk.open(refereeSpec('receipt-replay', judgedMandate()), { judge: localJudge() });
  let n = 1;
  const propose = async (over: Record<string, unknown> = {}, context = 'ok') => {
    const intent = await signed(openIntent({ nonce: `rr${n++}`, ttl: iso(frameTime(desk.ordinal) + 1_800_000), ...over }));
    return { intent, bytes: carry(intent, context) };
  };
  const ref = (t: { id: number; proof_hash: string }) => ({ instance: INSTANCE, session: desk.sid, ticket: t.id, proofHash: t.proof_hash });
  const a = await propose({ size: '2' });
  const ta = await desk.answer(a.bytes);
  at['allow'] = ta.index;
  const denied = await propose({ side: 'short' });
  at['deny'] = (await desk.answer(denied.bytes)).index;
  at['stored'] = (await desk.answer(carry(denied.intent, 'please'))).index;
  const b = await propose();
  const tb = await desk.answer(b.bytes, { data: { referee: { redemptions: [await signRedemption(KEY_EXECUTOR, ref(ruling(ta).ticket!), a.intent)] } } });
  at['redeem'] = tb.index;
  await desk.answer('stand-down', { data: { referee: { releases: [await signRelease(KEY_PRINCIPAL, 'principal', ref(ruling(tb).ticket!))] } } });
  at['after-release'] = (await desk.answer((await propose({ size: '5' })).bytes)).index;
  at['terminated'] = (await desk.answer((await propose()).bytes, { data: { referee: { terminate: await signTermination(KEY_PRINCIPAL, { instance: INSTANCE, session: desk.sid }) } } })).index;
  const fin = await desk.engine.finalize(desk.sid);
  if (!fin.ok) throw new Error(fin.message);
  lines = [];
  for await (const l of desk.engine.exportEntries(desk.sid)) lines.push(l);
  entries = entriesOf(lines);
});

function divergences(r: ReplayResult) {
  if (r.ok || r.stage !== 'replay') throw new Error(`expected a replay divergence, got ${JSON.stringify(r).slice(0, 300)}`);
  return r.divergences;
}

function forge(name: string, edit: (r: Record<string, unknown>) => Record<string, unknown>): Uint8Array {
  const i = at[name]!;
  const forged = entries.map((e, j) => (j === i ? ({ ...e, ruling: edit(JSON.parse(JSON.stringify((e as TurnEntry).ruling)) as Record<string, unknown>) as CanonicalObject } as Entry) : e));
  return reseal(forged).bundle;
}

describe('referee rulings under receipt replay', () => {
  it('an honest referee day replays with the referee ruler and no judge; the intent ruler alone cannot re-derive it', async () => {
    const r = await replay([encodeBundle(lines)], referee);
    expect(r).toMatchObject({ ok: true, externalFacts: [] });
    const plain = divergences(await replay([encodeBundle(lines)]));
    expect(plain[0]).toMatchObject({ index: at['allow'], kind: 'ruling-diverged' });
  });

  it('a forged verdict (DENY bytes made ALLOW, signature kept) passes verifyBundle and diverges at its turn', async () => {
    const bundle = forge('deny', (r) => {
      const v = r['verdict'] as Record<string, unknown>;
      const text = new TextDecoder().decode(fromBase64(v['response'] as string)!).replace('"verdict\\":\\"DENY', '"verdict\\":\\"ALLOW');
      return { ...r, verdict: { ...v, response: toBase64(new TextEncoder().encode(text)), admitted: true, decision: 'ALLOW' } };
    });
    expect((await verifyBundle([bundle])).ok).toBe(true);
    const d = divergences(await replay([bundle], referee));
    expect(d[0]).toMatchObject({ index: at['deny'], kind: 'ruling-diverged', actual: { verdict: { code: 'judge_untrusted_signer' } } });
  });

  it.each<[string, string, (r: Record<string, unknown>) => Record<string, unknown>]>([
    ['a quota figure', 'after-release', (r) => ({ ...r, quota: { ...(r['quota'] as object), used: '0' } })],
    ['a ticket', 'allow', (r) => ({ ...r, ticket: { ...(r['ticket'] as object), expires_at: 1 } })],
    ['a stored verdict', 'stored', (r) => ({ ...r, verdict: { ...(r['verdict'] as object), admitted: true } })],
    ['a transition', 'redeem', (r) => ({ ...r, transitions: [] })],
    ['a termination', 'terminated', (r) => ({ ...r, policy: { admitted: true, stage: 'policy', weight: '1' } })],
  ])('a forged %s diverges at its turn (and only there)', async (_what, name, edit) => {
    const bundle = forge(name, edit);
    expect((await verifyBundle([bundle])).ok).toBe(true);
    const d = divergences(await replay([bundle], referee));
    expect(d[0]).toMatchObject({ index: at[name], kind: 'ruling-diverged' });
    expect(d).toHaveLength(1);
  });
});
