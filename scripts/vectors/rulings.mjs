// rulings.json (PROTOCOL.md §9, §10): one scenario per ruling code. A
// scenario is a spec (agents, mandate), steps (a frame's time and data, the
// turn's body, the judge answers given at that turn) and the transcript the
// referee engine wrote; `expect` names the turn, where in its ruling the code
// sits, and what replay of the transcript answers. Called by gen-vectors.mjs.
import { privateKeyToAccount } from 'viem/accounts';
import { createEngine } from '../../dist/index.js';
import { signIntent, INTENT_CODES } from '../../dist/intent/index.js';
import { createRefereeEngine, createLocalJudge, signMandateWithKey, signRedemption, signRelease, signTermination, REFEREE_CODES } from '../../dist/referee/index.js';
import { MemoryStore } from '../../dist/store/index.js';
import { replay } from '../../dist/receipt/index.js';
import { canonicalBytes, entryHash, rfc6962Hasher, rootFromLeafHashes, toHex } from '../../dist/protocol/index.js';
import { sha256 } from '../../dist/codec/index.js';
import { createRefereeRuler } from '../../dist/referee/index.js';
import { INTENT_KEYS } from './intents.mjs';

/** Public test keys (Anvil accounts 3–8): principal, operator, executor, judge, another key, a second judge. */
export const REFEREE_KEYS = {
  principal: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  operator: '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  executor: '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  judge: '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e',
  other: '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356',
  judge2: '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97',
};
const A = (k) => privateKeyToAccount(k).address;
const T0 = 1893456000000; // 2030-01-01T00:00:00Z
const MIN = 60000;
const iso = (ms) => new Date(ms).toISOString();
const INSTANCE = 'desk-corpus/1';
const DEAD = '0x000000000000000000000000000000000000dead';
const enc = new TextEncoder();
const dec = new TextDecoder();
const b64 = (b) => Buffer.from(b).toString('base64');

function mandate(over = {}) {
  const m = {
    version: 2, instance: INSTANCE, principal: A(REFEREE_KEYS.principal), operator: A(REFEREE_KEYS.operator), executor: A(REFEREE_KEYS.executor),
    actions: ['open', 'modify', 'close', 'transfer'], markets: ['BTC-PERP', 'ETH-PERP'], targets: [DEAD],
    caps: { size: '5', leverage: '10', slippage: '0.05' }, quota: { cap: '10', weights: { close: '0.5' } }, tx_cap: 6,
    starts_at: T0, expires_at: T0 + 86400000, ...over,
  };
  for (const k of Object.keys(m)) if (m[k] === undefined) delete m[k];
  return m;
}
const judged = (over = {}) => mandate({ rules: ['Only long positions.'], judges: [A(REFEREE_KEYS.judge)], ...over });
const unsignedSpec = (name, m) => ({ name, agents: { alpha: A(INTENT_KEYS.alpha), beta: A(INTENT_KEYS.beta) }, intent: { maxTtlHorizonMs: 3600000 }, mandate: m });
/** Every day's mandate is signed by its principal (EIP-712; PROTOCOL.md §10, "The principal's signature"). */
const spec = (name, m) => signMandateWithKey(unsignedSpec(name, m), REFEREE_KEYS.principal);
const unsigned = (over = {}) => ({ action: 'open', agent_id: 'alpha', nonce: '1', ttl: iso(T0 + 30 * MIN), size: '2', market: 'BTC-PERP', side: 'long', leverage: '3', max_slippage: '0.01', ...over });
const carry = (intent, context) => JSON.stringify(context === undefined ? { intent } : { intent, context });

/** A judge that answers with the local judge's signing path and records what it gave. */
function recording(judge, log) {
  return { model: judge.model, ...(judge.signer ? { signer: judge.signer } : {}), async ask(q) {
    const a = await judge.ask(q);
    log.push(a.ok ? { model: judge.model, ok: true, response: b64(a.response), signature: a.signature } : { model: judge.model, ok: false, failure: a.failure, message: a.message });
    return a;
  } };
}
const local = (key = REFEREE_KEYS.judge, over = {}) => createLocalJudge({ key, ...over });
const failing = { model: 'tally-local-rules-v1', ask: async () => ({ ok: false, failure: 'timeout', message: 'no answer within 20000 ms' }) };

/**
 * Drives one scenario: `plan(ctx)` returns steps one at a time (it sees the
 * session id and earlier rulings, to sign transitions). Returns the vector.
 */
async function run(name, code, s, judges, plan, opts = {}) {
  const store = new MemoryStore();
  const log = [];
  const judge = judges.judge ? recording(judges.judge, log) : undefined;
  const panel = judges.panel?.map((j) => recording(j, log));
  const { engine } = createRefereeEngine({ store, ...(judge ? { judge } : {}), ...(panel ? { panel } : {}) });
  // openWithout: an engine without the referee seals the mandate unchecked; the referee engine continues the day.
  const o = await (opts.openWithout ? createEngine({ store }) : engine).open(s);
  if (!o.ok) throw new Error(`${name}: ${o.message}`);
  const sid = o.sessionId;
  const steps = [];
  const rulings = [];
  const ctx = { sid, rulings };
  for (let ord = -1; ; ord++) {
    const step = await plan(ctx, ord + 1);
    if (!step) break;
    const f = await engine.frame({ sessionId: sid, ordinal: ord, time: step.time, ...(step.data === undefined ? {} : { data: step.data }) });
    if (!f.ok) throw new Error(`${name}: frame ${ord}: ${f.message}`);
    log.length = 0;
    const body = step.authored === undefined ? { kind: 'stand-down', failureClass: 'timeout' } : { kind: 'authored', bytes: enc.encode(step.authored) };
    const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
    if (!t.ok) throw new Error(`${name}: turn ${ord}: ${t.message}`);
    rulings.push(t.ruling);
    steps.push({ time: step.time, ...(step.data === undefined ? {} : { data: step.data }), ...(step.authored === undefined ? { standDown: true } : { authored: step.authored }), ...(log.length ? { answers: [...log] } : {}) });
  }
  const fin = await engine.finalize(sid);
  if (!fin.ok) throw new Error(fin.message);
  const lines = [];
  for await (const l of engine.exportEntries(sid)) lines.push(dec.decode(l));
  const index = 2 * steps.length; // the last turn
  const last = JSON.parse(lines[index]).ruling ?? {};
  const found = locate(last, code);
  if (!found) throw new Error(`${name}: the last turn's ruling does not carry ${code}: ${JSON.stringify(last).slice(0, 400)}`);
  return { name, code, stage: found.stage, spec: s, ...(opts.openWithout ? { openedWithout: 'referee' } : {}), steps, lines, expect: { index, at: found.at, stage: found.stage, code } };
}

/** Where `code` sits in a ruling: intent, policy, verdict, or transitions/<k>. */
export function locate(r, code) {
  for (const at of ['intent', 'policy', 'verdict']) if (r[at]?.code === code) return { at, stage: r[at].stage };
  const k = (r.transitions ?? []).findIndex((t) => t.code === code);
  return k < 0 ? undefined : { at: `transitions/${k}`, stage: 'ticket' };
}

export async function rulingVectors() {
  const out = [];
  const one = (time, authored, data) => ({ time, ...(authored === undefined ? {} : { authored }), ...(data === undefined ? {} : { data }) });
  const single = (name, code, m, authored, time = T0, judges = {}) => run(name, code, spec(`corpus-${code}`, m), judges, async (_c, i) => (i === 0 ? one(time, authored) : undefined));
  const alpha = (over) => signIntent(unsigned(over), INTENT_KEYS.alpha);

  // ---- §9 intent stage, inside a mandate session
  const intentCases = [
    ['invalid_schema', '{"intent":{"action":"open"}}'],
    ['invalid_schema', '{"intent":{"action":"open","action":"close"}}', 'a duplicate key in the authored JSON (strict parser)'],
    ['unknown_signer', carry(await signIntent(unsigned({ agent_id: 'gamma' }), INTENT_KEYS.alpha))],
    ['bad_signature', carry(await signIntent(unsigned(), INTENT_KEYS.stranger))],
    ['expired', carry(await alpha({ ttl: iso(T0 - 1) }))],
    ['ttl_too_far', carry(await alpha({ ttl: iso(T0 + 3600001) }))],
    ['nonpositive_size', carry(await alpha({ size: '0' }))],
    ['nonpositive_leverage', carry(await alpha({ leverage: '0' }))],
    ['slippage_out_of_range', carry(await alpha({ max_slippage: '2' }))],
    ['nonpositive_tp', carry(await alpha({ tp: '0' }))],
    ['nonpositive_sl', carry(await alpha({ sl: '0' }))],
    ['magnitude_exceeded', carry(await alpha({ size: '1'.repeat(19) }))],
    ['scale_exceeded', carry(await alpha({ size: '0.' + '1'.repeat(19) }))],
    ['target_only_on_transfer', carry(await alpha({ target_address: DEAD }))],
    ['target_required_on_transfer', carry(await signIntent({ action: 'transfer', agent_id: 'alpha', nonce: '1', ttl: iso(T0 + 30 * MIN), size: '1' }, INTENT_KEYS.alpha))],
  ];
  for (const [code, authored, why] of intentCases) out.push(await single(`${code}${why ? `: ${why}` : ''}`, code, mandate(), authored));
  const i1 = await alpha();
  out.push(await run('replayed_nonce: the same signed intent in a later turn (its nonce was consumed by the first)', 'replayed_nonce', spec('corpus-replayed', mandate()), {}, async (_c, i) => (i < 2 ? one(T0 + i * MIN, carry(i1)) : undefined)));

  // ---- §10 policy stage
  out.push(await run('mandate_invalid: a session opened by an engine without the referee, its mandate lacking caps', 'mandate_invalid', spec('corpus-mandate-invalid', mandate({ caps: undefined })), {}, async (_c, i) => (i === 0 ? one(T0, carry(i1)) : undefined), { openWithout: true }));
  out.push(await run('mandate_invalid: a session opened by an engine without the referee, its mandate unsigned', 'mandate_invalid', unsignedSpec('corpus-mandate-unsigned', mandate()), {}, async (_c, i) => (i === 0 ? one(T0, carry(i1)) : undefined), { openWithout: true }));
  out.push(await run('mandate_invalid: a session opened by an engine without the referee, its mandate signed by another key than its principal', 'mandate_invalid', signMandateWithKey(unsignedSpec('corpus-mandate-forged', mandate()), REFEREE_KEYS.other), {}, async (_c, i) => (i === 0 ? one(T0, carry(i1)) : undefined), { openWithout: true }));
  const term = (c) => signTermination(REFEREE_KEYS.principal, { instance: INSTANCE, session: c.sid });
  out.push(await run('mandate_terminated: terminated by the principal in an earlier frame', 'mandate_terminated', spec('corpus-terminated', mandate()), {}, async (c, i) => (i === 0 ? one(T0, '{"plan":"wait"}', { referee: { terminate: await term(c) } }) : i === 1 ? one(T0 + MIN, carry(i1)) : undefined)));
  out.push(await single('mandate_not_started: frame time before starts_at', 'mandate_not_started', mandate({ starts_at: T0 + 10 * MIN }), carry(i1)));
  out.push(await single('mandate_expired: frame time at expires_at', 'mandate_expired', mandate({ expires_at: T0 + MIN }), carry(i1), T0 + MIN));
  out.push(await single('action_not_allowed: a close under actions [open]', 'action_not_allowed', mandate({ actions: ['open'], targets: undefined, quota: { cap: '10' } }), carry(await signIntent({ action: 'close', agent_id: 'alpha', nonce: '1', ttl: iso(T0 + 30 * MIN), size: '1', market: 'BTC-PERP', max_slippage: '0.01' }, INTENT_KEYS.alpha))));
  out.push(await single('market_not_allowed: SOL-PERP', 'market_not_allowed', mandate(), carry(await alpha({ market: 'SOL-PERP' }))));
  out.push(await single('target_not_allowed: a transfer to an address not in targets', 'target_not_allowed', mandate(), carry(await signIntent({ action: 'transfer', agent_id: 'alpha', nonce: '1', ttl: iso(T0 + 30 * MIN), size: '1', target_address: '0x000000000000000000000000000000000000beef' }, INTENT_KEYS.alpha))));
  out.push(await single('cap_exceeded: size 6 over caps.size 5', 'cap_exceeded', mandate(), carry(await alpha({ size: '6' }))));
  out.push(await single('quota_exhausted: weight 4 over quota.cap 3', 'quota_exhausted', mandate({ quota: { cap: '3' } }), carry(await alpha({ size: '4' }))));
  const i2 = await alpha({ nonce: '2' });
  out.push(await run('tx_cap_reached: a second ticket under tx_cap 1', 'tx_cap_reached', spec('corpus-txcap', mandate({ tx_cap: 1 })), {}, async (_c, i) => (i < 2 ? one(T0 + i * MIN, carry(i ? i2 : i1)) : undefined)));

  // ---- §10 verdict stage (the local judge, Anvil #6, rule "Only long positions.")
  const J = { judge: local() };
  out.push(await single('judge_denied: a short against "Only long positions."', 'judge_denied', judged(), carry(await alpha({ side: 'short' })), T0, J));
  out.push(await single('judge_unavailable: the judge timed out', 'judge_unavailable', judged(), carry(i1), T0, { judge: failing }));
  out.push(await single('judge_untrusted_signer: signed by a key not in judges', 'judge_untrusted_signer', judged(), carry(i1), T0, { judge: local(REFEREE_KEYS.other) }));
  out.push(await single('judge_unparsable: the content is not the verdict JSON', 'judge_unparsable', judged(), carry(i1), T0, { judge: local(undefined, { script: () => 'ALLOW!' }) }));
  out.push(await single('judge_unparsable: duplicate verdict key (DENY then ALLOW)', 'judge_unparsable', judged(), carry(i1), T0, { judge: local(undefined, { script: (_q, c) => c.replace('"verdict":"ALLOW"', '"verdict":"DENY","verdict":"ALLOW"') }) }));
  out.push(await single('judge_action_mismatch: the verdict echoes another action', 'judge_action_mismatch', judged(), carry(i1), T0, { judge: local(undefined, { script: (_q, c) => c.replace('|open|', '|close|') }) }));
  out.push(await run('judge_rate_limited: a second judge call in a window of max 1', 'judge_rate_limited', spec('corpus-rate', judged({ judge_rate: { max: 1, window_ms: 60000 } })), J, async (_c, i) => (i < 2 ? one(T0 + i * 1000, carry(i ? i2 : i1)) : undefined)));
  // Key-scoped reservations (§9, §10): one wallet under two names has ONE rate window (scope wallet), and
  // its two names keep two nonce spaces (the same nonce "1" is admitted under each name).
  const twoNames = signMandateWithKey({ ...unsignedSpec('corpus-rate-wallet', judged({ judge_rate: { max: 1, window_ms: 60000 } })), agents: { alpha: A(INTENT_KEYS.alpha), alpha2: A(INTENT_KEYS.alpha) } }, REFEREE_KEYS.principal);
  const renamed = await signIntent(unsigned({ agent_id: 'alpha2' }), INTENT_KEYS.alpha);
  out.push(await run('judge_rate_limited: one wallet under two names shares one window (key judge-wallet <window_ms> <signer>); nonce "1" is admitted under each name (key <signer> <agent_id>)', 'judge_rate_limited', twoNames, J, async (_c, i) => (i < 2 ? one(T0 + i * 1000, carry(i ? renamed : i1)) : undefined)));
  const members = [{ signer: A(REFEREE_KEYS.judge).toLowerCase(), model: 'judge-a' }, { signer: A(REFEREE_KEYS.judge2).toLowerCase(), model: 'judge-b' }];
  const panelJudges = { panel: [local(REFEREE_KEYS.judge, { model: 'judge-a' }), local(REFEREE_KEYS.judge2, { model: 'judge-b', script: (_q, c) => c.replace('"verdict":"ALLOW"', '"verdict":"DENY"') })] };
  out.push(await single('judge_quorum_not_met: 1 of 2 judges allowed (quorum 2)', 'judge_quorum_not_met', mandate({ rules: ['Only long positions.'], panel: { judges: members, quorum: 2 } }), carry(i1), T0, panelJudges));

  // ---- §10 ticket stage: a ticket is issued at frame -1, transitions follow
  const ref = (c, proof) => ({ instance: INSTANCE, session: c.sid, ticket: 1, proofHash: proof ?? c.rulings[0].ticket.proof_hash });
  const redeem = (c, key = REFEREE_KEYS.executor, intent = i1) => signRedemption(key, ref(c), intent);
  const ticketDay = (name, code, frames) => run(name, code, spec(`corpus-${code}`, mandate()), {}, async (c, i) => (i === 0 ? one(T0, carry(i1)) : i <= frames.length ? frames[i - 1](c) : undefined));
  out.push(await ticketDay('transition_malformed: a redemption without a signature', 'transition_malformed', [async () => one(T0 + MIN, '{"plan":"x"}', { referee: { redemptions: [{ ticket: 1, intent: i1 }] } })]));
  out.push(await ticketDay('ticket_unknown: a release of ticket 9', 'ticket_unknown', [async () => one(T0 + MIN, '{"plan":"x"}', { referee: { releases: [{ ticket: 9, by: 'anyone' }] } })]));
  out.push(await ticketDay('bad_transition_signature: a redemption signed by another key', 'bad_transition_signature', [async (c) => one(T0 + MIN, '{"plan":"x"}', { referee: { redemptions: [await redeem(c, REFEREE_KEYS.other)] } })]));
  out.push(await ticketDay('bad_transition_signature: a release by "principal" signed by the operator', 'bad_transition_signature', [async (c) => one(T0 + MIN, '{"plan":"x"}', { referee: { releases: [{ ...(await signRelease(REFEREE_KEYS.operator, 'operator', ref(c))), by: 'principal' }] } })]));
  out.push(await ticketDay('ticket_not_active: released by the operator, then redeemed', 'ticket_not_active', [async (c) => one(T0 + MIN, '{"plan":"x"}', { referee: { releases: [await signRelease(REFEREE_KEYS.operator, 'operator', ref(c))] } }), async (c) => one(T0 + 2 * MIN, undefined, { referee: { redemptions: [await redeem(c)] } })]));
  out.push(await ticketDay('ticket_not_active: redeemed twice', 'ticket_not_active', [async (c) => one(T0 + MIN, '{"plan":"x"}', { referee: { redemptions: [await redeem(c)] } }), async (c) => one(T0 + 2 * MIN, undefined, { referee: { redemptions: [await redeem(c)] } })]));
  out.push(await ticketDay('redeem_after_termination: the principal terminated in an earlier frame', 'redeem_after_termination', [async (c) => one(T0 + MIN, '{"plan":"x"}', { referee: { terminate: await term(c) } }), async (c) => one(T0 + 2 * MIN, '{"plan":"x"}', { referee: { redemptions: [await redeem(c)] } })]));
  out.push(await ticketDay('ticket_expired: redeemed 1 ms after the intent ttl (at the ttl it is still live, as the intent is)', 'ticket_expired', [async (c) => one(T0 + 30 * MIN + 1, '{"plan":"x"}', { referee: { redemptions: [await redeem(c)] } })]));
  out.push(await ticketDay('intent_mismatch: the redemption names another intent', 'intent_mismatch', [async (c) => one(T0 + MIN, '{"plan":"x"}', { referee: { redemptions: [await redeem(c, REFEREE_KEYS.executor, i2)] } })]));
  out.push(await ticketDay('release_not_allowed: released by anyone while active', 'release_not_allowed', [async () => one(T0 + MIN, '{"plan":"x"}', { referee: { releases: [{ ticket: 1, by: 'anyone' }] } })]));
  out.push(await ticketDay('already_terminated: terminated twice', 'already_terminated', [async (c) => one(T0 + MIN, '{"plan":"x"}', { referee: { terminate: await term(c) } }), async (c) => one(T0 + 2 * MIN, '{"plan":"x"}', { referee: { terminate: await term(c) } })]));

  // ---- replay: what re-deriving each transcript answers
  for (const v of out) v.expect.replay = await replayOutcome(v.lines);
  // ---- judge_evidence_invalid: replay-only (a recorded verdict whose request hash was edited; lines re-linked)
  const base = out.find((v) => v.code === 'judge_denied');
  out.push(await evidenceCase(base));
  for (const c of [...INTENT_CODES, ...REFEREE_CODES]) if (!out.some((v) => v.code === c)) throw new Error(`no ruling vector for ${c}`);
  return {
    description: 'One scenario per ruling code (PROTOCOL.md §9, §10, §14). spec: the genesis spec (agents, intent options, mandate); openedWithout "referee": the session was opened by an engine without the referee (so its invalid mandate was sealed) and continued by one with it. steps: frame ordinal -1, 0, 1, … in order, each with its time and data, answered by an authored turn (UTF-8 text) or a stand-down (failure class timeout), with the judge answers given at that turn ({model, ok, response (base64 chat completion), signature} or {model, ok: false, failure, message}); then the seal (no artifacts). lines: the transcript the referee engine wrote. expect: the turn index, where the code sits in its ruling (intent, policy, verdict or transitions/<k>), its stage and code, and replay: what replaying `lines` with the referee ruler answers (ok with the number of turns and rulings, or the first divergence). live false: the lines are an edited transcript (no engine writes them).',
    keys: Object.entries(REFEREE_KEYS).map(([name, privateKey]) => ({ name, privateKey, address: A(privateKey) })),
    cases: out,
  };
}

/** Replays lines with the referee ruler: ok with counts, or the first divergence's index, kind and re-derived code. */
export async function replayOutcome(lines) {
  const bytes = enc.encode(lines.join('\n') + '\n');
  const r = await replay([bytes], { ruler: (store) => createRefereeRuler({ store }) });
  if (r.ok) return { ok: true, turns: r.turns, rulings: r.rulings };
  if (r.stage !== 'replay') return { ok: false, stage: r.stage, index: r.index, code: r.code };
  const d = r.divergences[0];
  // The code of a diverged ruling: the first refusal in it (verdict, then policy, then intent).
  const code = d.kind === 'ruling-diverged' && d.actual ? (d.actual.verdict?.code ?? d.actual.policy?.code ?? d.actual.intent?.code) : undefined;
  return { ok: false, stage: 'replay', index: d.index, kind: d.kind, ...(code === undefined ? {} : { code }) };
}

/** judge_evidence_invalid: `base`'s transcript with the recorded request hash edited and every later link, the seal's root recomputed. */
async function evidenceCase(base) {
  const lines = base.lines.map((l) => JSON.parse(l));
  const turn = lines[base.expect.index];
  turn.ruling.verdict.request_sha256 = '0'.repeat(64);
  const out = [];
  const hashes = [];
  for (let i = 0; i < lines.length; i++) {
    const v = lines[i];
    if (i > 0) {
      v.session = toHex(hashes[0]);
      v.parent = toHex(hashes[i - 1]);
    }
    if (v.kind === 'finalize') v.root = toHex(rootFromLeafHashes(rfc6962Hasher(sha256), hashes));
    const b = canonicalBytes(v);
    out.push(dec.decode(b));
    hashes.push(entryHash(sha256, b));
  }
  const v = { name: 'judge_evidence_invalid: a recorded verdict whose request_sha256 was edited (hashes re-linked); replay re-derives judge_evidence_invalid', code: 'judge_evidence_invalid', stage: 'verdict', spec: base.spec, steps: base.steps, live: false, lines: out, expect: { index: base.expect.index, at: 'verdict', stage: 'verdict', code: 'judge_evidence_invalid' } };
  v.expect.replay = await replayOutcome(out);
  if (v.expect.replay.code !== 'judge_evidence_invalid' || v.expect.replay.index !== base.expect.index) throw new Error(`evidence case: ${JSON.stringify(v.expect.replay)}`);
  return v;
}
