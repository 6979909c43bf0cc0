/**
 * Replay: a fresh engine over the bundle, with the referee ruler and a judge
 * that must never be asked; each turn gets its recorded ruling as
 * `recordedRuling`. Every policy ruling and ticket transition is re-derived and
 * every verdict re-verified from its evidence; an edit anywhere is found.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { frameRoot, fromBase64, toHex, parseEntry, toBase64, type CanonicalObject, type Entry, type TurnEntry } from '../../src/protocol/index.js';
import { createRefereeRuler, signRedemption, signRelease, signTermination, signText, type Judge, type JudgeAnswer } from '../../src/referee/index.js';
import { sha256 } from '../../src/codec/index.js';
import { replayEntries } from '../helpers/replay-entries.js';
import { carry, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { Desk, INSTANCE, KEY_EXECUTOR, KEY_OPERATOR, KEY_OTHER, KEY_PRINCIPAL, judgedMandate, localJudge, refereeSpec, ruling } from './fixtures.js';

type Rec = Record<string, unknown>;

/** Replays `entries` into a fresh store with the referee and a judge that must never be asked; the first index whose produced bytes differ, and the produced entry there. */
async function replay(entries: readonly Entry[]): Promise<{ ok: true } | { ok: false; index: number; produced: Entry }> {
  const asked: unknown[] = [];
  const never: Judge = { model: 'never', ask: async (q) => (asked.push(q), { ok: false, failure: 'error', message: 'asked during replay' }) };
  const r = await replayEntries(entries, (store) => createRefereeRuler({ store, judge: never }));
  expect(asked).toHaveLength(0);
  if (r.ok) return r;
  if (r.produced === undefined) throw new Error(`replay wrote no entry ${r.index}`);
  return { ok: false, index: r.index, produced: r.produced };
}

let entries: Entry[] = [];
const at: Record<string, number> = {};

beforeAll(async () => {
  const local = localJudge();
  // One judge, several behaviours keyed by the context, all through the real local judge's signing path.
  const judge: Judge = {
    model: local.model,
    async ask(q): Promise<JudgeAnswer> {
      if (q.request.context === 'OFFLINE') return { ok: false, failure: 'timeout', message: 'no answer within 20000 ms' };
      return local.ask(q);
    },
  };
  const garbling = localJudge({ script: (q) => (q.request.context === 'GARBLE' ? 'ALLOW!' : undefined) });
  const both: Judge = { model: local.model, ask: (q) => (q.request.context === 'GARBLE' ? garbling.ask(q) : judge.ask(q)) };
  const desk = await Desk.open(refereeSpec('replay-day', judgedMandate({ judge_rate: { max: 6, window_ms: 3_600_000 } })), { judge: both });
  let n = 1;
  const propose = async (over: Rec = {}, context?: string) => {
    const intent = await signed(openIntent({ nonce: `r${n++}`, ttl: iso(frameTime(desk.ordinal) + 1_800_000), ...over }));
    return { intent, bytes: carry(intent, context) };
  };
  const mark = (name: string, t: { index: number }) => (at[name] = t.index);
  const sref = (t: { id: number; proof_hash: string }) => ({ instance: INSTANCE, session: desk.sid, ticket: t.id, proofHash: t.proof_hash });

  const a = await propose({ size: '2' }, 'trend is up');
  const ta = await desk.answer(a.bytes);
  mark('allow', ta);
  const denied = await propose({ side: 'short' }, 'fine');
  mark('deny', await desk.answer(denied.bytes));
  mark('garbled', await desk.answer((await propose({}, 'GARBLE')).bytes));
  mark('burned', await desk.answer(carry(denied.intent, 'second try, new context')));
  const b = await propose({}, 'calm');
  const tb = await desk.answer(b.bytes, { data: { referee: { redemptions: [await signRedemption(KEY_EXECUTOR, sref(ruling(ta).ticket!), a.intent)] } } });
  mark('redeem+allow', tb);
  mark('stand-down', await desk.answer('stand-down', { data: { referee: { releases: [await signRelease(KEY_OPERATOR, 'operator', sref(ruling(tb).ticket!))] } } }));
  mark('cap', await desk.answer((await propose({ size: '9' })).bytes));
  mark('offline', await desk.answer((await propose({}, 'OFFLINE')).bytes));
  mark('matrix-untrusted-free', await desk.answer((await propose({}, 'ok')).bytes));
  mark('limited', await desk.answer((await propose({}, 'ok')).bytes));
  mark('terminated', await desk.answer((await propose()).bytes, { data: { referee: { terminate: await signTermination(KEY_PRINCIPAL, { instance: INSTANCE, session: desk.sid }) } } }));
  const fin = await desk.engine.finalize(desk.sid);
  if (!fin.ok) throw new Error(fin.message);
  entries = [];
  for await (const line of desk.engine.exportEntries(desk.sid)) {
    const r = parseEntry(JSON.parse(new TextDecoder().decode(line)));
    if (!r.ok) throw new Error(r.reason);
    entries.push(r.entry);
  }
});

function turnAt(name: string): TurnEntry {
  return entries[at[name]!] as TurnEntry;
}

/** A copy of the bundle with the ruling of turn `name` replaced. */
function edited(name: string, edit: (ruling: Rec) => Rec): Entry[] {
  const copy = entries.map((e) => JSON.parse(JSON.stringify(e)) as Entry);
  const i = at[name]!;
  const t = copy[i] as TurnEntry;
  copy[i] = { ...t, ruling: edit(JSON.parse(JSON.stringify(t.ruling)) as Rec) as CanonicalObject };
  return copy;
}

function verdictOf(e: Entry): Rec {
  return ((e as TurnEntry).ruling as Rec)['verdict'] as Rec;
}

describe('referee replay (offline, no judge)', () => {
  it('the day holds every kind of decision', () => {
    expect(verdictOf(turnAt('allow'))).toMatchObject({ admitted: true, source: 'judged' });
    expect(verdictOf(turnAt('deny'))).toMatchObject({ code: 'judge_denied' });
    expect(verdictOf(turnAt('garbled'))).toMatchObject({ code: 'judge_unparsable' });
    expect(turnAt('burned').ruling).toMatchObject({ intent: { admitted: false, code: 'replayed_nonce', first: { index: at['deny'] } } });
    expect(verdictOf(turnAt('burned'))).toBeUndefined();
    expect(turnAt('redeem+allow').ruling).toMatchObject({ transitions: [{ op: 'redeem', ok: true }], ticket: { id: 2 } });
    const sd = turnAt('stand-down');
    expect(sd.body.kind).toBe('stand-down');
    if (sd.ruling !== undefined) expect(sd.ruling).toMatchObject({ transitions: [{ op: 'release', ok: true }] }); // engines that rule on stand-downs
    expect(turnAt('cap').ruling).toMatchObject({ policy: { code: 'cap_exceeded' } });
    expect(verdictOf(turnAt('offline'))).toMatchObject({ code: 'judge_unavailable', failure: 'timeout' });
    expect(verdictOf(turnAt('limited'))).toMatchObject({ code: 'judge_rate_limited' });
    expect(turnAt('terminated').ruling).toMatchObject({ transitions: [{ op: 'terminate', ok: true }], policy: { code: 'mandate_terminated' } });
  });

  it('re-derives every entry byte for byte without asking a judge', async () => {
    expect(await replay(entries)).toEqual({ ok: true });
  });

  const b64 = (s: string) => toBase64(new TextEncoder().encode(s));
  const flip = (r: Rec) => {
    const v = r['verdict'] as Rec;
    const text = new TextDecoder().decode(fromBase64(v['response'] as string));
    return { ...r, verdict: { ...v, response: b64(text.replace('"verdict\\":\\"DENY', '"verdict\\":\\"ALLOW')) } };
  };

  it.each<[string, string, (r: Rec) => Rec, Rec]>([
    ['the response bytes (DENY → ALLOW, signature kept)', 'deny', flip, { verdict: { code: 'judge_untrusted_signer' } }],
    ['the admitted flag of a DENY', 'deny', (r) => ({ ...r, verdict: { ...(r['verdict'] as Rec), admitted: true } }), { verdict: { admitted: false, code: 'judge_denied' } }],
    ['the reason of a verdict', 'deny', (r) => ({ ...r, verdict: { ...(r['verdict'] as Rec), message: 'all fine' } }), { verdict: { code: 'judge_denied' } }],
    ['the request hash', 'allow', (r) => ({ ...r, verdict: { ...(r['verdict'] as Rec), request_sha256: '0'.repeat(64) } }), { verdict: { code: 'judge_evidence_invalid' } }],
    ['the verdict removed', 'allow', (r) => ({ ...r, verdict: undefined }), { verdict: { code: 'judge_evidence_invalid' } }],
    ['a burned nonce turned into an admission', 'burned', (r) => ({ ...r, intent: (turnAt('deny').ruling as Rec)['intent'], verdict: verdictOf(turnAt('deny')) }), { intent: { code: 'replayed_nonce' } }],
    ['a quota figure', 'allow', (r) => ({ ...r, quota: { ...(r['quota'] as Rec), locked: '0', free: '10' } }), { quota: { locked: '2' } }],
    ['a ticket weight', 'redeem+allow', (r) => ({ ...r, ticket: { ...(r['ticket'] as Rec), weight: '0.1' } }), { ticket: { weight: '1' } }],
    ['a transition outcome', 'redeem+allow', (r) => ({ ...r, transitions: [{ op: 'redeem', ticket: 1, ok: false, code: 'ticket_expired', message: 'x' }] }), { transitions: [{ ok: true }] }],
    ['a policy denial turned into a pass', 'cap', (r) => ({ ...r, policy: { admitted: true, stage: 'policy', weight: '9' } }), { policy: { code: 'cap_exceeded' } }],
    ['a judge failure turned into a rate limit', 'offline', (r) => ({ ...r, verdict: { stage: 'verdict', source: 'limited', admitted: false, code: 'judge_rate_limited', message: 'x' } }), { verdict: { code: 'judge_evidence_invalid' } }],
  ])('edited %s: replay fails at that turn', async (_what, name, edit, replayed) => {
    const r = await replay(edited(name, edit));
    expect(r).toMatchObject({ ok: false, index: at[name] });
    if (!r.ok) expect((r.produced as TurnEntry).ruling).toMatchObject(replayed);
  });

  it('a verdict re-signed by a key the mandate does not trust fails replay', async () => {
    const v = verdictOf(turnAt('deny'));
    const response = fromBase64(v['response'] as string)!;
    const { sha256Hex, verdictMessage } = await import('../../src/referee/index.js');
    const forged = await signText(KEY_OTHER, verdictMessage(v['model'] as string, v['request_sha256'] as string, sha256Hex(response)));
    const r = await replay(edited('deny', (x) => ({ ...x, verdict: { ...(x['verdict'] as Rec), signature: forged } })));
    expect(r).toMatchObject({ ok: false, index: at['deny'] });
    if (!r.ok) expect((r.produced as TurnEntry).ruling).toMatchObject({ verdict: { code: 'judge_untrusted_signer' } });
  });

  it('an edited frame (a redemption removed) changes the derived quota of the next ruling', async () => {
    const copy = entries.map((e) => JSON.parse(JSON.stringify(e)) as Entry);
    const i = at['redeem+allow']! - 1;
    const f = copy[i]!;
    if (f.kind !== 'frame') throw new Error('not a frame');
    const { data: _drop, ...rest } = f;
    // A consistent edit: the frame root is recomputed, so the frame itself replays…
    copy[i] = { ...rest, frameRoot: toHex(frameRoot(sha256, { ordinal: f.ordinal, time: f.time })) };
    const r = await replay(copy);
    // …but the turn answering it re-derives other transitions and quota.
    expect(r).toMatchObject({ ok: false, index: at['redeem+allow'] });
    if (!r.ok) expect((r.produced as TurnEntry).ruling).not.toHaveProperty('transitions');
  });
});
