// x402.json (PROTOCOL.md §17): x402 v2 `exact` payloads (EIP-3009) signed by the public
// Hardhat/Anvil keys — the EIP-712 typed data and digest in full, the signature, the canonical
// PaymentPayload and its payment hash — and one scenario per payment refusal code: the signed
// spec, the wakes (frame time, frame data with the offers, the turn's bytes as text) and the
// `x402.payment` ruling the referee gives the last turn. Judged scenarios (§17.10: the policy
// names a panel of judges) are replays: their last step carries `recorded`, the ruling the day
// recorded with every judge's signed answer (judges with the keys below, answering through the
// library's local judge), and the referee re-verifies it without asking; the `judge_*-mutated-*`
// scenarios are its mutation negatives. Called by gen-vectors.mjs.
import { hashTypedData } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { canonicalJson } from '../../dist/protocol/index.js';
import { PAYMENT_REFUSAL_CODES, TRANSFER_WITH_AUTHORIZATION_TYPES, createPaymentsRuler, paymentHash } from '../../dist/payments/index.js';
import { createLocalJudge, createRefereeRuler, signMandateWithKey } from '../../dist/referee/index.js';
import { Engine } from '../../dist/session/index.js';
import { MemoryStore } from '../../dist/store/index.js';

const KEYS = {
  agent: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d', // Hardhat #1
  stranger: '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a', // Hardhat #4
  principal: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6', // Hardhat #3
  operator: '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba', // Hardhat #5
  executor: '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e', // Hardhat #6
  judge0: '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356', // Hardhat #7
  judge1: '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97', // Hardhat #8
  judge2: '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6', // Hardhat #9
};
const A = (k) => privateKeyToAccount(k).address;
const T0 = 1893456000000;
const NETWORK = 'eip155:31337';
const ASSET = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const PAYEE = A(KEYS.principal);
const STRANGER = A(KEYS.stranger);
const at = (k) => T0 + (k + 1) * 60000;
const secs = (ms) => BigInt(Math.floor(ms / 1000));
const nonceOf = (n) => `0x${n.toString(16).padStart(64, '0')}`;

const requirement = (over = {}) => ({ scheme: 'exact', network: NETWORK, asset: ASSET, amount: '10000', payTo: PAYEE, maxTimeoutSeconds: 120, extra: { name: 'Tally USD', version: '2' }, ...over });
const resource = { url: 'http://127.0.0.1:8402/market-data', description: 'One snapshot of the desk market', mimeType: 'application/json' };
const required = (accepts) => ({ x402Version: 2, error: 'Payment required', resource, accepts });
const policy = (over = {}, payees = [PAYEE]) => ({ version: 1, assets: [{ network: NETWORK, asset: ASSET, decimals: 6, per_payment_cap: '20000', budget: '50000', ...over }], payees });

function spec(name, p = policy()) {
  return signMandateWithKey({
    name,
    agents: { payer: A(KEYS.agent) },
    mandate: {
      version: 2, instance: 'x402-corpus/1', principal: A(KEYS.principal), operator: A(KEYS.operator), executor: A(KEYS.executor),
      actions: ['open', 'close'], markets: ['BTC-PERP'], caps: { size: '5', leverage: '10', slippage: '0.05' }, quota: { cap: '10' }, tx_cap: 6,
      starts_at: T0 - 60000, expires_at: T0 + 86400000,
    },
    payments: p,
  }, KEYS.principal, 'eip712');
}

function typedDataOf(accepted, authorization, domain) {
  return {
    domain: domain ?? { name: accepted.extra.name, version: accepted.extra.version, chainId: Number(accepted.network.split(':')[1]), verifyingContract: accepted.asset },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  };
}

async function sign(i = {}, now = at(-1)) {
  const accepted = i.accepted ?? requirement();
  const account = privateKeyToAccount(i.key ?? KEYS.agent);
  const authorization = {
    from: i.from ?? account.address,
    to: i.to ?? accepted.payTo,
    value: i.value ?? accepted.amount,
    validAfter: (i.validAfter ?? secs(now) - 600n).toString(),
    validBefore: (i.validBefore ?? secs(now) + 3600n).toString(),
    nonce: i.nonce ?? nonceOf(i.seq ?? 1),
  };
  const typed = typedDataOf(accepted, authorization, i.domain);
  const message = { ...authorization, value: BigInt(authorization.value), validAfter: BigInt(authorization.validAfter), validBefore: BigInt(authorization.validBefore) };
  const signature = await account.signTypedData({ ...typed, message });
  const payload = { x402Version: 2, resource, accepted, payload: { authorization, signature } };
  return { payload, typed, digest: hashTypedData({ ...typed, message }), signature };
}

const withId = (payload, id) => ({ ...payload, extensions: { 'payment-identifier': { info: { required: true, id } } } });
const turn = (payload, o = {}) => canonicalJson({ x402: { agent_id: o.agentId ?? 'payer', offer: o.offer ?? 'o-1', payload, ...(o.retryOf === undefined ? {} : { retry_of: o.retryOf }) } });

const JUDGE_KEYS = [KEYS.judge0, KEYS.judge1, KEYS.judge2];
const RULES = ['Pay size at most 15000 per request.'];
const panelPolicy = (k = 2) => ({ ...policy(), rules: RULES, panel: { judges: JUDGE_KEYS.map((key, i) => ({ signer: A(key).toLowerCase(), model: `judge-${i}` })), quorum: k } });
/** Panel member i answering `kind` through the library's local judge (its signing path). */
function member(i, kind) {
  const model = `judge-${i}`;
  const say = (verdict, action) => JSON.stringify({ reason: `judge ${i} says ${verdict}`, verdict, action });
  if (kind === 'rules') return createLocalJudge({ key: JUDGE_KEYS[i], model });
  if (kind === 'allow' || kind === 'deny') return createLocalJudge({ key: JUDGE_KEYS[i], model, script: (q) => say(kind === 'allow' ? 'ALLOW' : 'DENY', q.request.action) });
  if (kind === 'malformed') return createLocalJudge({ key: JUDGE_KEYS[i], model, script: () => 'Sure! ALLOW' });
  if (kind === 'other-action') return createLocalJudge({ key: JUDGE_KEYS[i], model, script: (q) => say('ALLOW', q.request.action.replace('|x402-pay|', '|open|')) });
  if (kind === 'stranger') return { model, ask: (q) => createLocalJudge({ key: KEYS.stranger, model, script: (r) => say('ALLOW', r.request.action) }).ask(q) };
  if (kind === 'late') return { model, signer: A(JUDGE_KEYS[i]).toLowerCase(), ask: () => new Promise(() => undefined) };
  throw new Error(kind);
}

async function drive(theSpec, steps, judges) {
  const store = new MemoryStore();
  const engine = new Engine({ store, ruler: createPaymentsRuler({ store, inner: createRefereeRuler({ store }), ...(judges ? { panel: judges, judgeTimeoutMs: 50 } : {}) }) });
  const o = await engine.open(theSpec);
  if (!o.ok) throw new Error(o.message);
  const rulings = [];
  for (let k = 0; k < steps.length; k++) {
    const s = steps[k];
    const f = await engine.frame({ sessionId: o.sessionId, ordinal: k - 1, time: s.time, data: s.data });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: o.sessionId, ordinal: k - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: new TextEncoder().encode(s.turn) } }, s.recorded === undefined ? {} : { recordedRuling: s.recorded });
    if (!t.ok) throw new Error(t.message);
    rulings.push({ index: t.index, ruling: t.ruling });
  }
  return rulings;
}

/** A wake offering `accepts` (offer id o-<k-1>) and paying `payload`. */
const wake = (k, payload, o = {}) => ({
  time: o.time ?? at(k - 1),
  data: { x402: { offers: [{ id: `o-${k - 1}`, required: required(o.accepts ?? [payload.accepted]) }], ...(o.settlements ? { settlements: o.settlements } : {}) } },
  turn: turn(payload, { offer: o.offer ?? `o-${k - 1}`, ...(o.agentId ? { agentId: o.agentId } : {}), ...(o.retryOf ? { retryOf: o.retryOf } : {}) }),
});

export async function x402Vectors() {
  const payloadCase = async (name, note, i) => {
    const s = await sign(i);
    return { name, note, typedData: s.typed, digest: s.digest, signature: s.signature, payload: s.payload, paymentHash: paymentHash(s.payload), signer: privateKeyToAccount(i.key ?? KEYS.agent).address.toLowerCase() };
  };
  const payloads = [
    await payloadCase('agent-pays-10000', 'Hardhat #1 pays 0.01 TUSD (6 decimals) to the payee for one market snapshot', {}),
    await payloadCase('second-nonce', 'the same payment with nonce 2: another digest and signature', { seq: 2 }),
    await payloadCase('uint256-edges', 'value and validBefore at 2^256 − 1, validAfter 0, nonce all ones (the encoding of every uint256 and bytes32 word)', { accepted: requirement({ amount: (2n ** 256n - 1n).toString() }), validAfter: 0n, validBefore: 2n ** 256n - 1n, nonce: `0x${'f'.repeat(64)}` }),
    await payloadCase('stranger-signs', 'Hardhat #4 signs its own authorization (refused payer_not_signer in a session registering #1)', { key: KEYS.stranger }),
  ];

  const good = (await sign()).payload;
  const mut = async (i) => (await sign(i)).payload;
  const inner = good.payload;
  /** [name, note, spec, steps] — the last step's turn gets the code. */
  const scenarios = [
    ['admitted', 'admitted', 'the payment matches its offer and the policy: a RESERVED ticket', spec('x402-admitted'), [wake(0, good)]],
    ['payment_malformed', 'payment_malformed', 'the signature is 64 bytes', spec('x402-malformed'), [wake(0, { ...good, payload: { ...inner, signature: inner.signature.slice(0, 130) } })]],
    ['payment_malformed-not-canonical', 'payment_malformed', 'the same turn with a space after a colon is not canonical JSON', spec('x402-noncanonical'), [{ ...wake(0, good), turn: wake(0, good).turn.replace('"x402":', '"x402": ') }]],
    ['scheme_unsupported', 'scheme_unsupported', 'x402Version 1', spec('x402-v1'), [wake(0, { ...good, x402Version: 1 })]],
    ['unknown_agent', 'unknown_agent', 'agent_id ghost is not registered', spec('x402-ghost'), [wake(0, good, { agentId: 'ghost' })]],
    ['offer_drift', 'offer_drift', 'accepted says maxTimeoutSeconds 121; the frame offered 120', spec('x402-drift'), [wake(0, await mut({ accepted: requirement({ maxTimeoutSeconds: 121 }) }), { accepts: [requirement()] })]],
    ['signature_invalid', 'signature_invalid', 'signed under domain name "USD Coin" instead of the offered "Tally USD"', spec('x402-domain'), [wake(0, await mut({ domain: { name: 'USD Coin', version: '2', chainId: 31337, verifyingContract: ASSET } }))]],
    ['payer_not_signer', 'payer_not_signer', 'a valid authorization from Hardhat #4', spec('x402-stranger'), [wake(0, await mut({ key: KEYS.stranger }))]],
    ['network_not_allowed', 'network_not_allowed', 'the offer is on eip155:8453', spec('x402-network'), [wake(0, await mut({ accepted: requirement({ network: 'eip155:8453' }) }))]],
    ['asset_not_allowed', 'asset_not_allowed', 'another token on the allowed chain', spec('x402-asset'), [wake(0, await mut({ accepted: requirement({ asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' }) }))]],
    ['counterparty_mismatch', 'counterparty_mismatch', 'authorization.to is Hardhat #4, the offer pays the payee', spec('x402-counterparty'), [wake(0, await mut({ to: STRANGER }))]],
    ['payee_not_allowed', 'payee_not_allowed', 'the offer pays Hardhat #4, off the allowlist', spec('x402-payee'), [wake(0, await mut({ accepted: requirement({ payTo: STRANGER }) }))]],
    ['amount_mismatch', 'amount_mismatch', 'value 9999 for an offered 10000', spec('x402-amount'), [wake(0, await mut({ value: '9999' }))]],
    ['over_payment_cap', 'over_payment_cap', 'an offer of 20001 above the cap 20000', spec('x402-cap'), [wake(0, await mut({ accepted: requirement({ amount: '20001' }) }))]],
    ['over_budget', 'over_budget', 'budget 15000: the second payment of 10000 does not fit', spec('x402-budget', policy({ budget: '15000' })), [wake(0, good), wake(1, await mut({ seq: 2 }))]],
    ['not_yet_valid', 'not_yet_valid', 'validAfter equals the frame time in seconds', spec('x402-after'), [wake(0, await mut({ validAfter: secs(at(-1)) }))]],
    ['expired', 'expired', 'validBefore equals the frame time in seconds', spec('x402-before'), [wake(0, await mut({ validBefore: secs(at(-1)) }))]],
    ['retry_not_allowed', 'retry_not_allowed', 'retry_of 3 names no payment', spec('x402-retry'), [wake(0, good, { retryOf: 3 })]],
    ['settlement_unknown', 'settlement_unknown', 'the first attempt timed out (UNKNOWN): a retry could pay twice', spec('x402-unknown'), [wake(0, good), wake(1, await mut({ seq: 2 }), { retryOf: 1, settlements: [{ ticket: 1, unknown: 'timeout' }] })]],
    ['payment_id_conflict', 'payment_id_conflict', 'payment id pay_0123456789abcdef was admitted with another authorization', spec('x402-payment-id'), [wake(0, withId(good, 'pay_0123456789abcdef')), wake(1, withId(await mut({ seq: 2 }), 'pay_0123456789abcdef'))]],
    ['duplicate_execution-same-payment-id', 'duplicate_execution', 'the same payload and payment id again: the recorded answer is named in first', spec('x402-payment-id-again'), [wake(0, withId(good, 'pay_0123456789abcdef')), wake(1, withId(good, 'pay_0123456789abcdef'))]],
    ['duplicate_execution', 'duplicate_execution', 'the same authorization (nonce) again in a later frame', spec('x402-duplicate'), [wake(0, good), wake(1, good)]],
  ];
  // Judged: asked live once, then recorded (the vector is the replay of that record).
  const judged = async (name, kinds, mutate, pol = panelPolicy()) => {
    const theSpec = spec(`x402-${name}`, pol);
    const steps = [wake(0, good)];
    const [live] = await drive(theSpec, steps, kinds.map((k, i) => member(i, k)));
    const recorded = mutate ? mutate(JSON.parse(JSON.stringify(live.ruling))) : live.ruling;
    return [theSpec, [{ ...steps[0], recorded }]];
  };
  const verdictOf = (r) => r.x402.payment.verdict;
  const one = { ...policy(), rules: RULES, judges: [A(KEYS.judge0).toLowerCase()] };
  scenarios.push(
    ['judged-single-admitted', 'admitted', 'one judge (spec.payments.judges) reading the rule "size at most 15000" ALLOWs 10000', ...(await judged('judged-single', ['rules'], undefined, one))],
    ['judge_denied', 'judge_denied', 'the one judge DENYs', ...(await judged('judged-single-deny', ['deny'], undefined, one))],
    ['judge_unavailable', 'judge_unavailable', 'the one judge never answered (timeout after 50 ms): recorded as a failure, never an ALLOW', ...(await judged('judged-single-late', ['late'], undefined, one))],
    ['judge_unparsable', 'judge_unparsable', 'the one judge answers "Sure! ALLOW"', ...(await judged('judged-single-malformed', ['malformed'], undefined, one))],
    ['judge_action_mismatch', 'judge_action_mismatch', 'the one judge ALLOWs another action line (open instead of x402-pay)', ...(await judged('judged-single-action', ['other-action'], undefined, one))],
    ['judge_untrusted_signer', 'judge_untrusted_signer', 'an ALLOW signed by Hardhat #4, not the judge the policy names', ...(await judged('judged-single-stranger', ['stranger'], undefined, one))],
  );
  scenarios.push(
    ['judged-admitted', 'admitted', 'a panel of 3 (quorum 2) under the rule "size at most 15000": two local-rules judges ALLOW, one DENYs; the recorded answers re-verify', ...(await judged('judged-admitted', ['rules', 'deny', 'rules']))],
    ['judge_quorum_not_met', 'judge_quorum_not_met', 'one ALLOW, one DENY and a judge that never answered (timeout, counted as DENY): 1 of 3, quorum 2', ...(await judged('judged-quorum', ['allow', 'deny', 'late']))],
    ['judge_unparsable-quorum', 'judge_quorum_not_met', 'two judges answer "Sure! ALLOW" (judge_unparsable each): never an ALLOW', ...(await judged('judged-unparsable', ['allow', 'malformed', 'malformed']))],
    ['judge_action_mismatch-quorum', 'judge_quorum_not_met', 'two judges ALLOW another action line (judge_action_mismatch each)', ...(await judged('judged-action', ['other-action', 'allow', 'other-action']))],
    ['judge_untrusted_signer-quorum', 'judge_quorum_not_met', 'two ALLOWs signed by Hardhat #4, a key the panel does not name (judge_untrusted_signer each)', ...(await judged('judged-stranger', ['stranger', 'allow', 'stranger']))],
    ['judge_evidence_invalid-mutated-removed-answer', 'judge_evidence_invalid', 'mutation of judged-admitted: the record holds two answers for three judges', ...(await judged('judged-removed', ['rules', 'deny', 'rules'], (r) => { verdictOf(r).panel.pop(); return r; }))],
    ['judge_evidence_invalid-mutated-request', 'judge_evidence_invalid', 'mutation of judged-admitted: answer 0 claims another request hash', ...(await judged('judged-request', ['rules', 'deny', 'rules'], (r) => { const a = verdictOf(r).panel[0]; a.request_sha256 = a.request_sha256.replace(/^./, (c) => (c === '0' ? '1' : '0')); return r; }))],
    ['judge_quorum_not_met-mutated-signature', 'judge_quorum_not_met', 'mutation of judged-admitted: one bit of answer 0\'s signature flipped, so it recovers to another key (judge_untrusted_signer) and 1 of 3 remain', ...(await judged('judged-signature', ['rules', 'deny', 'rules'], (r) => { const a = verdictOf(r).panel[0]; a.signature = a.signature.slice(0, 10) + (a.signature[10] === '0' ? '1' : '0') + a.signature.slice(11); return r; }))],
    ['judge_quorum_not_met-mutated-response', 'judge_quorum_not_met', 'mutation of judged-admitted: answer 0\'s ALLOW response replaced by answer 1\'s DENY bytes (its signature no longer covers them), so 1 of 3 remain', ...(await judged('judged-response', ['rules', 'deny', 'rules'], (r) => { const p = verdictOf(r).panel; p[0].response = p[1].response; return r; }))],
  );
  const refusals = [];
  for (const [name, code, note, theSpec, steps] of scenarios) {
    const rulings = await drive(theSpec, steps);
    const last = rulings.at(-1);
    const payment = last.ruling?.x402?.payment;
    if (code === 'admitted' ? payment?.admitted !== true : payment?.code !== code) throw new Error(`x402 scenario ${name}: got ${JSON.stringify(payment)}`);
    refusals.push({ name, note, spec: theSpec, steps, expect: { index: last.index, code, payment } });
  }
  for (const c of PAYMENT_REFUSAL_CODES) if (!refusals.some((r) => r.expect.code === c)) throw new Error(`x402: no scenario for ${c}`);
  return {
    description: 'x402 v2 exact (EIP-3009) payloads signed by public Hardhat keys with their EIP-712 digests, and one scenario per payment ruling code (PROTOCOL.md §17); judged scenarios replay recorded judge answers (§17.10)',
    keys: Object.entries({ agent: KEYS.agent, stranger: KEYS.stranger, principal: KEYS.principal, judge0: KEYS.judge0, judge1: KEYS.judge1, judge2: KEYS.judge2 }).map(([name, privateKey]) => ({ name, privateKey, address: A(privateKey) })),
    payloads,
    scenarios: refusals,
  };
}

/** The helpers of this section, for the x402 evidence day of evidence.mjs (the same keys, spec, offers and payloads). */
export function x402Fixtures() {
  return { ASSET, at, requirement, spec, sign, wake };
}
