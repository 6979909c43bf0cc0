import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, expectTypeOf, it, test } from 'vitest';
import * as referee from '../../src/referee/index.js';
import { REFEREE_CODES, REFEREE_CODE_STAGE, REFEREE_RULING_CATALOGUE, REFEREE_STAGES, createLocalJudge, signRedemption, signRelease, signTermination, type Judge, type RefereeCode, type RefereeStage } from '../../src/referee/index.js';
import { createEngine } from '../../src/engine.js';
import { MemoryStore } from '../../src/store/index.js';
import { carry, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { Desk, INSTANCE, KEY_EXECUTOR, KEY_JUDGE, KEY_OPERATOR, KEY_OTHER, KEY_PRINCIPAL, judgedMandate, mandate, refereeSpec, ruling } from './fixtures.js';

describe('referee ruling vocabulary', () => {
  test('tuples and unions are the same sets (type level)', () => {
    expectTypeOf<(typeof REFEREE_STAGES)[number]>().toEqualTypeOf<RefereeStage>();
    expectTypeOf<(typeof REFEREE_RULING_CATALOGUE)[number]['code']>().toEqualTypeOf<RefereeCode>();
  });

  test('the catalogue has every code exactly once, in stage order, with its stage and guidance', () => {
    expect(REFEREE_RULING_CATALOGUE.map((e) => e.code)).toEqual([...REFEREE_CODES]);
    expect(new Set(REFEREE_CODES).size).toBe(REFEREE_CODES.length);
    const order = REFEREE_RULING_CATALOGUE.map((e) => REFEREE_STAGES.indexOf(e.stage));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    for (const e of REFEREE_RULING_CATALOGUE) {
      expect(REFEREE_CODE_STAGE[e.code]).toBe(e.stage);
      expect(e.when.length).toBeGreaterThan(10);
      expect(e.fix.length).toBeGreaterThan(5);
    }
    expect(Object.isFrozen(REFEREE_RULING_CATALOGUE) && Object.isFrozen(REFEREE_RULING_CATALOGUE[0])).toBe(true);
    expect(JSON.parse(JSON.stringify(REFEREE_RULING_CATALOGUE))).toEqual(REFEREE_RULING_CATALOGUE);
  });

  test('the public surface of agent-tally/referee is deliberate', () => {
    expect(Object.keys(referee).sort()).toMatchInlineSnapshot(`
      [
        "ACT_EIP712_TYPES",
        "DEFAULT_JUDGE_RATE",
        "DEFAULT_TICKET_TTL_MS",
        "JUDGE_ASSESSMENT_PROMPT",
        "JUDGE_FAILURES",
        "JUDGE_SYSTEM_PROMPT",
        "LOCAL_JUDGE_MODEL",
        "MANDATE_EIP191_PREFIX",
        "MANDATE_EIP712_DOMAIN",
        "MANDATE_EIP712_TYPES",
        "MANDATE_LIMITS",
        "MANDATE_SIGNATURE_SCHEMES",
        "MANDATE_VERSION",
        "MAX_CONTEXT_CODE_POINTS",
        "MAX_JUDGE_RESPONSE_BYTES",
        "MAX_REASON_CODE_POINTS",
        "MAX_TRANSITIONS_PER_FRAME",
        "REFEREE_CODES",
        "REFEREE_CODE_STAGE",
        "REFEREE_PROTOCOL",
        "REFEREE_RULING_CATALOGUE",
        "REFEREE_STAGES",
        "REFEREE_TAGS",
        "REPLAY_RULERS",
        "RefereeHistory",
        "actDigest",
        "actTypedData",
        "actionLine",
        "askPanel",
        "assessVerdict",
        "checkMandateSignature",
        "checkRefereeSpec",
        "contextText",
        "createLocalJudge",
        "createOpenAiJudge",
        "createRefereeEngine",
        "createRefereeRuler",
        "decAdd",
        "decCmp",
        "decMul",
        "decSub",
        "evaluateLocalRule",
        "isCanonicalDecimal",
        "judgeRequestBytes",
        "judgeUserMessage",
        "localJudgeContent",
        "mandateDigest",
        "mandateOf",
        "mandateSignedText",
        "mandateTypedData",
        "parseJudgeResponse",
        "parseMandate",
        "quorumOf",
        "recoverDigest",
        "recoverText",
        "refereeState",
        "replayRuler",
        "reverifyPanel",
        "sha256Hex",
        "signMandate",
        "signMandateWithKey",
        "signRedemption",
        "signRelease",
        "signTermination",
        "signText",
        "specSealsMandate",
        "ticketAnchor",
        "ticketProofHash",
        "transitionMessage",
        "verdictMessage",
        "verifyText",
      ]
    `);
  });
});

/** Every code of the catalogue is produced by a real session and written into its transcript. */
describe('every referee code appears in a transcript', () => {
  it('policy, verdict and ticket codes', async () => {
    const store = new MemoryStore();
    let n = 1;
    const propose = async (desk: Desk, over: Record<string, unknown> = {}, context?: string, ttlMs = 1_800_000) => {
      const u: Record<string, unknown> = { ...openIntent({ nonce: `c${n++}`, ttl: iso(frameTime(desk.ordinal) + ttlMs) }), ...over };
      for (const k of Object.keys(u)) if (u[k] === undefined) delete u[k];
      const intent = await signed(u as Parameters<typeof signed>[0]);
      return { intent, bytes: carry(intent, context) };
    };
    const ref = (desk: Desk, t: { id: number; proof_hash: string }) => ({ instance: INSTANCE, session: desk.sid, ticket: t.id, proofHash: t.proof_hash });

    // Policy and ticket codes.
    const b = await Desk.open(
      refereeSpec('codes-policy', mandate({ actions: ['open', 'close', 'transfer'], markets: ['BTC-PERP'], caps: { size: '3', leverage: '10', slippage: '0.05' }, quota: { cap: '4' }, tx_cap: 3, expires_at: frameTime(9) })),
      { store },
    );
    await b.answer((await propose(b, { action: 'modify' })).bytes);
    await b.answer((await propose(b, { market: 'SOL-PERP' })).bytes);
    await b.answer((await propose(b, { action: 'transfer', target_address: '0x000000000000000000000000000000000000beef', market: undefined, side: undefined, leverage: undefined, max_slippage: undefined })).bytes);
    await b.answer((await propose(b, { size: '3.5' })).bytes);
    const p1 = await propose(b, { size: '3' }, undefined, 60_000);
    const t1 = ruling(await b.answer(p1.bytes)).ticket!;
    await b.answer((await propose(b, { size: '2' })).bytes);
    const p2 = await propose(b, { size: '1' });
    const t2 = ruling(
      await b.answer(p2.bytes, { data: { referee: { redemptions: [await signRedemption(KEY_EXECUTOR, ref(b, t1), p1.intent)], releases: [{ ticket: 99, by: 'anyone' }] } } }),
    ).ticket!;
    const p3 = await propose(b, { size: '0.5' });
    const t3 = ruling(
      await b.answer(p3.bytes, {
        data: {
          referee: {
            redemptions: [await signRedemption(KEY_OPERATOR, ref(b, t2), p2.intent), await signRedemption(KEY_EXECUTOR, ref(b, t2), p1.intent)],
            releases: [{ ticket: t1.id, by: 'anyone' }, { ticket: t2.id, by: 'boss' }, { ticket: t2.id, by: 'anyone' }],
          },
        },
      }),
    ).ticket!;
    const redeem2 = await signRedemption(KEY_EXECUTOR, ref(b, t2), p2.intent);
    await b.answer((await propose(b, { size: '0.5' })).bytes, { data: { referee: { redemptions: [redeem2, redeem2] } } });
    await b.answer((await propose(b, { size: '0.1' })).bytes);
    await b.answer((await propose(b, { size: '0.1' })).bytes, { time: frameTime(9) });
    const stop = await signTermination(KEY_PRINCIPAL, { instance: INSTANCE, session: b.sid });
    await b.answer((await propose(b, { size: '0.1' })).bytes, { data: { referee: { terminate: stop } } });
    await b.answer('wind down', { data: { referee: { redemptions: [await signRedemption(KEY_EXECUTOR, ref(b, t3), p3.intent)], releases: [await signRelease(KEY_OPERATOR, 'operator', ref(b, t3))], terminate: stop } } });

    // Verdict codes.
    const local = createLocalJudge({ key: KEY_JUDGE });
    const garble = createLocalJudge({ key: KEY_JUDGE, script: () => 'ALLOW' });
    const mismatch = createLocalJudge({ key: KEY_JUDGE, script: () => JSON.stringify({ reason: 'ok', verdict: 'ALLOW', action: 'TALLY_ACTION_V1|elsewhere' }) });
    const stranger = createLocalJudge({ key: KEY_OTHER });
    const judge: Judge = {
      model: local.model,
      ask: async (q) => {
        switch (q.request.context) {
          case 'GARBLE':
            return garble.ask(q);
          case 'MISMATCH':
            return mismatch.ask(q);
          case 'STRANGER':
            return stranger.ask(q);
          case 'OFFLINE':
            return { ok: false, failure: 'timeout', message: 'no answer within 20000 ms' };
          default:
            return local.ask(q);
        }
      },
    };
    const a = await Desk.open(refereeSpec('codes-verdict', judgedMandate({ judge_rate: { max: 6, window_ms: 3_600_000 } })), { store, judge });
    for (const [over, context] of [[{}, 'ok'], [{ side: 'short' }, 'ok'], [{}, 'GARBLE'], [{}, 'MISMATCH'], [{}, 'OFFLINE'], [{}, 'STRANGER'], [{}, 'ok']] as const) {
      await a.answer((await propose(a, over, context)).bytes);
    }
    // Replay-only evidence check: the recorded ruling handed to the ruler holds no verdict.
    const f = await a.engine.frame({ sessionId: a.sid, ordinal: a.ordinal, time: frameTime(a.ordinal) + 3_600_000 });
    if (!f.ok) throw new Error(f.message);
    const ev = await a.engine.turn({ sessionId: a.sid, ordinal: a.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: (await propose(a, {}, 'ok', 3_700_000)).bytes } }, { recordedRuling: {} });
    expect(ev.ok && ruling(ev)).toMatchObject({ verdict: { code: 'judge_evidence_invalid' } });

    // A sealed invalid mandate.
    const plain = createEngine({ store });
    const o = await plain.open(refereeSpec('codes-invalid', mandate({ tx_cap: 0 })));
    if (!o.ok) throw new Error(o.message);
    const c = await Desk.attach(store, o.sessionId, -1);
    await c.answer((await propose(c)).bytes);

    // A mandate not yet in force.
    const early = await Desk.open(refereeSpec('codes-early', mandate({ starts_at: frameTime(5), expires_at: frameTime(9) })), { store });
    await early.answer((await propose(early)).bytes);

    // A panel that does not reach its quorum.
    const panel = await Desk.open(refereeSpec('codes-panel', mandate({ rules: ['Only long positions.'], panel: { judges: [{ signer: privateKeyToAccount(KEY_JUDGE).address, model: local.model }], quorum: 1 } })), { store, panel: [local] });
    await panel.answer((await propose(panel, { side: 'short' })).bytes);

    let text = '';
    for (const sid of [b.sid, a.sid, c.sid, early.sid, panel.sid]) for await (const line of b.engine.exportEntries(sid)) text += new TextDecoder().decode(line) + '\n';
    const seen = new Set([...text.matchAll(/"code":"([a-z_]+)"/g)].map((m) => m[1]));
    const missing = REFEREE_CODES.filter((code) => !seen.has(code));
    expect(missing).toEqual([]);
  });
});
