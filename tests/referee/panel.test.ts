/**
 * Independent judges in quorum (issue #17, seed 003): every panel judge is
 * asked with its own request, every answer is recorded, k valid signed ALLOWs
 * of n admit; failures and time-outs count as DENY; replay re-verifies every
 * answer without asking and diverges at a forged or removed one.
 */
import fc from 'fast-check';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { canonicalJson, type CanonicalObject, type TurnEntry } from '../../src/protocol/index.js';
import { replay } from '../../src/receipt/index.js';
import { askPanel, checkRefereeSpec, createLocalJudge, createRefereeRuler, quorumOf, type Judge, type Panel, type PanelAnswer } from '../../src/referee/index.js';
import { MemoryStore, type TranscriptStore } from '../../src/store/index.js';
import { carry, enc, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { entriesOf, reseal } from '../receipt/fixtures.js';
import { Desk, KEY_OTHER, mandate, refereeSpec, ruling } from './fixtures.js';

const KEYS = [1, 2, 3, 4, 5].map((i) => `0x${String(i).padStart(2, '0').repeat(32)}` as `0x${string}`);
const ADDRS = KEYS.map((k) => privateKeyToAccount(k).address.toLowerCase());
const RULES = ['Only long positions.'];

type Kind = 'allow' | 'deny' | 'malformed' | 'duplicate-key' | 'unsigned' | 'wrong-signer' | 'late' | 'throws';
const KINDS: readonly Kind[] = ['allow', 'deny', 'malformed', 'duplicate-key', 'unsigned', 'wrong-signer', 'late', 'throws'];

/** A client for panel member `i` answering as `kind`, through the real local judge's signing path. */
function client(i: number, kind: Kind): Judge {
  const model = `judge-${i}`;
  const say = (verdict: string) => (q: { request: { action: string } }) => JSON.stringify({ reason: `judge ${i} says ${verdict}`, verdict, action: q.request.action });
  switch (kind) {
    case 'allow':
      return createLocalJudge({ key: KEYS[i]!, model, script: say('ALLOW') });
    case 'deny':
      return createLocalJudge({ key: KEYS[i]!, model, script: say('DENY') });
    case 'malformed':
      return createLocalJudge({ key: KEYS[i]!, model, script: () => 'Sure! ALLOW' });
    case 'duplicate-key':
      // Read leniently this is a DENY, strictly it is unparsable: never an ALLOW.
      return createLocalJudge({ key: KEYS[i]!, model, script: (q) => `{"reason":"dup","verdict":"ALLOW","verdict":"DENY","action":${JSON.stringify(q.request.action)}}` });
    case 'unsigned': {
      const inner = createLocalJudge({ key: KEYS[i]!, model, script: say('ALLOW') });
      return { model, signer: ADDRS[i]!, ask: async (q) => {
        const a = await inner.ask(q);
        return a.ok ? { ...a, signature: '0x' + '00'.repeat(65) } : a;
      } };
    }
    case 'wrong-signer': {
      const other = createLocalJudge({ key: KEY_OTHER, model, script: say('ALLOW') });
      return { model, ask: (q) => other.ask(q) };
    }
    case 'late':
      return { model, signer: ADDRS[i]!, ask: () => new Promise(() => undefined) };
    case 'throws':
      return { model, signer: ADDRS[i]!, ask: async () => Promise.reject(new Error('boom')) };
  }
}

const panelOf = (n: number, k: number): Panel => ({ members: ADDRS.slice(0, n).map((signer, i) => ({ signer, model: `judge-${i}` })), quorum: k });
const panelMandate = (n: number, k: number, over: Record<string, unknown> = {}) =>
  mandate({ rules: RULES, panel: { judges: ADDRS.slice(0, n).map((signer, i) => ({ signer, model: `judge-${i}`, ...(i === 0 ? { endpoint: 'http://127.0.0.1:9000/v1' } : {}) })), quorum: k }, ...over });

let nonce = 1;
async function propose(desk: Desk) {
  return carry(await signed(openIntent({ nonce: `p${nonce++}`, ttl: iso(frameTime(desk.ordinal) + 1_800_000) })), 'trend up');
}

describe('judge panel in quorum', () => {
  it('checks the panel at open: exclusive with judges, quorum within 1…n, distinct signers', () => {
    expect(checkRefereeSpec(refereeSpec('p', panelMandate(3, 2)))).toBeUndefined();
    expect(checkRefereeSpec(refereeSpec('p', panelMandate(3, 4)))).toContain('spec.mandate.panel.quorum must be an integer from 1 to 3');
    expect(checkRefereeSpec(refereeSpec('p', panelMandate(3, 2, { judges: [ADDRS[0]] })))).toContain('exclusive');
    expect(checkRefereeSpec(refereeSpec('p', mandate({ rules: RULES, panel: { judges: [{ signer: ADDRS[0], model: 'a' }, { signer: ADDRS[0], model: 'b' }], quorum: 1 } })))).toContain('duplicate');
    expect(checkRefereeSpec(refereeSpec('p', mandate({ rules: RULES, panel: { judges: [{ signer: ADDRS[0], model: 'a', endpoint: 'ftp://x' }], quorum: 1 } })))).toContain('endpoint');
  });

  it.each<[string, Kind[], number, boolean]>([
    ['3 of 3 ALLOW', ['allow', 'allow', 'allow'], 3, true],
    ['a split panel, 2 of 3 ALLOW', ['allow', 'deny', 'allow'], 2, true],
    ['a split panel, 1 of 3 ALLOW', ['deny', 'allow', 'malformed'], 1, false],
    ['a judge timing out (counts as DENY)', ['allow', 'late', 'deny'], 1, false],
  ])('%s: every answer recorded, admitted iff k = 2 valid signed ALLOWs', async (_name, kinds, allow, admitted) => {
    const d = await Desk.open(refereeSpec(`panel-${_name}`, panelMandate(3, 2)), { panel: kinds.map((k, i) => client(i, k)), judgeTimeoutMs: 50 });
    const r = ruling(await d.answer(await propose(d)));
    expect(r.verdict).toMatchObject({ stage: 'verdict', source: 'judged', admitted, quorum: { k: 2, n: 3, allow } });
    if (!admitted) expect(r.verdict).toMatchObject({ code: 'judge_quorum_not_met' });
    const answers = r.verdict!.panel!;
    expect(answers.map((a) => a.judge)).toEqual(ADDRS.slice(0, 3));
    expect(answers.map((a) => a.admitted)).toEqual(kinds.map((k) => k === 'allow'));
    if (kinds.includes('late')) expect(answers[kinds.indexOf('late')]).toMatchObject({ code: 'judge_unavailable', failure: 'timeout', message: 'no answer within 50 ms' });
    expect(r.ticket === undefined).toBe(!admitted);
  });

  it('replay re-verifies every answer without asking; a forged or removed answer diverges at that turn', async () => {
    const store = new MemoryStore();
    const d = await Desk.open(refereeSpec('panel-replay', panelMandate(3, 2)), { store, panel: [client(0, 'allow'), client(1, 'deny'), client(2, 'allow')] });
    const t = await d.answer(await propose(d));
    expect(ruling(t).verdict).toMatchObject({ admitted: true });
    const fin = await d.engine.finalize(d.sid);
    if (!fin.ok) throw new Error(fin.message);
    const lines: Uint8Array[] = [];
    for await (const l of d.engine.exportEntries(d.sid)) lines.push(l);
    const referee = { ruler: (s: TranscriptStore) => createRefereeRuler({ store: s }) };
    const bundle = Buffer.concat(lines.flatMap((l) => [l, enc.encode('\n')]));
    expect(await replay([bundle], referee)).toMatchObject({ ok: true, rulings: 1 });

    const entries = entriesOf(lines);
    const edit = (f: (answers: PanelAnswer[]) => PanelAnswer[]) => {
      const copy = entries.map((e, i) => {
        if (i !== t.index) return e;
        const te = e as TurnEntry;
        const r = JSON.parse(canonicalJson(te.ruling!)) as { verdict: { panel: PanelAnswer[] } };
        r.verdict.panel = f(r.verdict.panel);
        return { ...te, ruling: r as unknown as CanonicalObject };
      });
      return reseal(copy).bundle;
    };
    // The DENY turned into an ALLOW (signature kept): the signature no longer covers the response.
    const flipped = edit((as) => as.map((a, i) => (i === 1 ? { ...a, admitted: true, decision: 'ALLOW' as const, code: undefined } as unknown as PanelAnswer : a)));
    expect(await replay([flipped], referee)).toMatchObject({ ok: false, stage: 'replay', divergences: [{ index: t.index, kind: 'ruling-diverged' }] });
    const removed = edit((as) => as.slice(0, 2));
    const r = await replay([removed], referee);
    expect(r).toMatchObject({ ok: false, stage: 'replay', divergences: [{ index: t.index, kind: 'ruling-diverged', actual: { verdict: { code: 'judge_evidence_invalid' } } }] });
  });

  it('property (seed 0x17a5e1): the admission equals the k-of-n rule over valid signed ALLOWs, whatever the answers', async () => {
    const base = { rules: RULES, action: 'TALLY_ACTION_V1|desk|s|open|BTC-PERP|1|0xab', intent: { action: 'open', side: 'long' }, context: undefined };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: n }), fc.array(fc.constantFrom(...KINDS), { minLength: n, maxLength: n }))),
        async ([n, k, kinds]) => {
          const panel = panelOf(n, k);
          const answers = await askPanel(panel, base, kinds.map((kind, i) => client(i, kind)), 20, RULES.length);
          const q = quorumOf(panel, answers);
          const valid = kinds.filter((kind) => kind === 'allow').length;
          expect(answers.map((a) => a.admitted)).toEqual(kinds.map((kind) => kind === 'allow'));
          expect(q.figures).toEqual({ k, n, allow: valid });
          expect(q.admitted).toBe(valid >= k);
        },
      ),
      { seed: 0x17a5e1, numRuns: 60 },
    );
  });
});
