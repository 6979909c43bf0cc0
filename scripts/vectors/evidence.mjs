// docs/vectors/evidence.json (PROTOCOL.md §16.9, §17.8): evidence packs as `tally evidence` writes
// them — tally/ap2-evidence/1 packs of the AP2 demo's day (five purchases under one open payment
// mandate, the fourth refused over budget, receipts arriving with the next frame) and
// tally/x402-evidence/1 packs of an x402 day (a settled payment, an offer_drift refusal) — each
// sealed with the RFC 8032 TEST 1 engine key, and from the valid packs every refusal of
// `tally verify-evidence` made by mutation, with what the checker answers. Recorded by the built
// engine (dist/), deterministic: fixed keys, RFC 6979 signatures, counted salts, fixed times.
// Each case's expect is what the checker answers, and generation stops when that is not the code
// the author intends (AP2_INTENDED, X402_INTENDED). tests/conformance/evidence.test.ts runs the library's checkers and the CLI on every case.
import { canonicalJson } from '../../dist/protocol/index.js';
import { assembleAp2Evidence, createAp2Ruler, verifyAp2Evidence } from '../../dist/mandates/index.js';
import { assemblePaymentEvidence, createPaymentsRuler, verifyPaymentEvidence, AUTHORIZATION_USED_TOPIC, TRANSFER_TOPIC } from '../../dist/payments/index.js';
import { createRefereeRuler } from '../../dist/referee/index.js';
import { createPrivateKey } from 'node:crypto';
import { createNotary, engineKeyFromPrivateKey } from '../../dist/receipt/index.js';
import { Engine } from '../../dist/session/index.js';
import { MemoryStore } from '../../dist/store/index.js';
import { AP2_DEMO_PURCHASES, AP2_DEMO_START_MS, ap2DemoSpec } from '../../dist/demo/ap2.js';
import { ap2DemoPurchase, ap2DemoReceipts } from '../../dist/demo/ap2-credentials.js';
import { DEMO_ENGINE_NAME, demoEngineKey } from '../../dist/demo/keys.js';
import { x402Fixtures } from './x402.mjs';

const HOUR = 3_600_000;
const enc = new TextEncoder();
const parse = (line) => JSON.parse(new TextDecoder().decode(line));

/** Records a day with `ruler` and seals it; `steps(engine, sessionId)` drives it. Returns the entries, the sealed checkpoint and a prover under it. */
async function sealedDay(makeRuler, spec, steps, key) {
  const store = new MemoryStore();
  const engine = new Engine({ store, ruler: makeRuler(store) });
  const o = await engine.open(spec);
  if (!o.ok) throw new Error(`evidence day refused: ${o.message}`);
  const sessionId = o.sessionId;
  const out = await steps(engine, sessionId);
  const notary = createNotary({ key });
  const sealed = await notary.sealWithReceipt(engine, sessionId);
  if (!sealed.ok) throw new Error(`evidence day seal: ${sealed.message}`);
  const entries = [];
  for await (const l of engine.exportEntries(sessionId)) entries.push(parse(l));
  const signedCheckpoint = sealed.signedCheckpoint;
  const prove = async (i) => {
    const r = await notary.turnReceipt(engine, sessionId, i, { signedCheckpoint });
    return r.ok ? { ok: true, text: r.text, signedCheckpoint } : { ok: false, message: `${r.code}: ${r.message}` };
  };
  const earlier = await notary.issueCheckpoint(engine, sessionId, 2);
  if (!earlier.ok) throw new Error('evidence day: no checkpoint of size 2');
  return { sessionId, entries, signedCheckpoint, prove, out, earlierCheckpoint: earlier.signedCheckpoint };
}

/** The pinned part of a checker's answer; generation stops when a case gets another code than its author intends. */
function expectOf(r, c, kind) {
  const code = r.ok ? (kind === 'ap2' && !r.complete ? r.steps.find((s) => s.outcome !== 'pass').code ?? 'receipt-missing' : 'ok') : r.code;
  if (code !== c.intended) throw new Error(`evidence ${kind} case ${c.name}: intended ${c.intended}, the checker answers ${code}${r.ok ? '' : `: ${r.message}`}`);
  if (!r.ok) return { ok: false, code: r.code };
  if (kind === 'ap2') return { ok: true, admitted: r.admitted, ...(r.amount === undefined ? {} : { amount: r.amount, currency: r.currency }), complete: r.complete, steps: r.steps.map((s) => ({ step: s.step, name: s.name, outcome: s.outcome, ...(s.code === undefined ? {} : { code: s.code }) })) };
  return { ok: true, state: r.state ?? null, reasons: r.reasons, rederived: r.rederived, admitted: r.payment.admitted };
}

/** A turn receipt with its entry's JSON edited (its `extra` line is base64 of the entry's JSON line). */
function editEntry(receipt, edit) {
  const lines = receipt.split('\n');
  const at = lines.findIndex((l) => l.startsWith('extra '));
  const text = Buffer.from(lines[at].slice(6), 'base64').toString('utf8');
  const edited = edit(text);
  if (edited === text) throw new Error('evidence mutation: the edit changed nothing');
  lines[at] = `extra ${Buffer.from(edited, 'utf8').toString('base64')}`;
  return lines.join('\n');
}
/** A turn receipt with the first hash line of its inclusion proof changed in one character. */
function breakProof(receipt) {
  const lines = receipt.split('\n');
  const at = lines.findIndex((l, i) => i > 1 && /^[A-Za-z0-9+/]{43}=$/.test(l));
  if (at < 0) throw new Error('evidence mutation: no proof hash line');
  lines[at] = (lines[at][0] === 'A' ? 'B' : 'A') + lines[at].slice(1);
  return lines.join('\n');
}
const entryOf = (pack, role) => pack.entries.find((e) => e.role === role);
const withEntry = (pack, role, receipt) => ({ ...pack, entries: pack.entries.map((e) => (e.role === role ? { ...e, receipt } : e)) });

// What the author intends each AP2 case to answer: ok, the refusal code, or the code of the first step that does not pass (receipt-missing for a missing receipt).
const AP2_INTENDED = {
  'admitted-complete': 'ok', 'admitted-first': 'ok', 'refused-over-budget': 'receipt-missing', 'no-receipts-yet': 'receipt-missing',
  'receipt-frame-removed': 'receipt-missing', 'receipts-of-another-purchase': 'receipt-reference', 'purchase-swapped': 'evidence-malformed', 'transaction-id-swapped': 'evidence-malformed',
  'ruling-tampered': 'evidence-inclusion', 'mandate-tampered': 'evidence-inclusion', 'inclusion-proof-broken': 'evidence-inclusion', 'wrong-key': 'evidence-inclusion', 'checkpoint-of-size-2': 'evidence-inclusion',
  'roles-relabelled': 'evidence-malformed', 'genesis-twice': 'evidence-malformed', 'session-renamed': 'evidence-malformed', 'format-unknown': 'evidence-malformed', 'unknown-role': 'evidence-malformed',
};
const X402_INTENDED = {
  settled: 'ok', 'offer-drift': 'ok', 'settlements-removed': 'ok', 'wrong-key': 'receipt_invalid', 'payment-entry-tampered': 'receipt_invalid', 'inclusion-proof-broken': 'receipt_invalid',
  'checkpoint-of-size-2': 'receipt_invalid', 'roles-relabelled': 'evidence_malformed', 'payment-hash-swapped': 'evidence_malformed', 'settlement-turn-without-its-frame': 'evidence_malformed', 'format-unknown': 'evidence_malformed',
};

// ---------------------------------------------------------------- AP2
async function ap2Packs(key) {
  const spec = await ap2DemoSpec();
  const mandate = spec.ap2.mandate;
  const day = await sealedDay((store) => createAp2Ruler({ store }), spec, async (engine, sessionId) => {
    const purchases = [];
    let answered = [];
    for (const [i, p] of AP2_DEMO_PURCHASES.entries()) {
      const time = AP2_DEMO_START_MS + i * HOUR;
      const built = await ap2DemoPurchase(mandate, { sku: p.sku, amount: p.amount, nonce: `demo-purchase-${i}`, iat: time / 1000 });
      const cart = { sku: p.sku, amount: p.amount, currency: 'USD' };
      const f = await engine.frame({ sessionId, ordinal: i - 1, time, data: answered.length === 0 ? { cart } : { cart, ap2: { receipts: answered } } });
      if (!f.ok) throw new Error(f.message);
      const t = await engine.turn({ sessionId, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: built.body } });
      if (!t.ok) throw new Error(t.message);
      const admitted = t.ruling?.ap2?.admitted === true;
      answered = admitted ? ap2DemoReceipts(built, { n: i, iat: time / 1000 + 60 }) : [];
      purchases.push({ transactionId: built.transactionId, admitted });
    }
    return purchases;
  }, key);
  const purchases = day.out;
  if (purchases.map((p) => p.admitted).join() !== 'true,true,true,false,true') throw new Error('the AP2 evidence day is not the demo\'s');
  const packOf = async (i) => {
    const r = await assembleAp2Evidence(day.entries, day.sessionId, purchases[i].transactionId, day.prove);
    if (!r.ok) throw new Error(`AP2 pack ${i}: ${r.code}`);
    return JSON.parse(canonicalJson(r.pack));
  };
  const [p0, p1, p2, p3, p4] = [await packOf(0), await packOf(1), await packOf(2), await packOf(3), await packOf(4)];
  const cases = [];
  const add = (name, note, pack, verifier = 'engine') => cases.push({ name, note, pack, verifier, intended: AP2_INTENDED[name] });
  add('admitted-complete', 'purchase 1 (4250 USD cents), admitted; its checkout and payment receipts arrived with the next frame: all five steps pass', p1);
  add('admitted-first', 'purchase 0, admitted, receipts in the next frame', p0);
  add('refused-over-budget', 'purchase 3, refused (payment.budget): the pack shows the refusal as recorded; no receipts answer a refused purchase (steps 3 and 5 missing)', p3);
  add('no-receipts-yet', 'purchase 4, the last of the day: no frame after it carries its receipts (steps 3 and 5 missing)', p4);
  // ---- mutations of admitted-complete
  add('receipt-frame-removed', 'the receipt frame dropped: steps 3 and 5 missing', { ...p1, entries: p1.entries.filter((e) => e.role !== 'receipt-frame') });
  add('receipts-of-another-purchase', 'the receipt frame swapped for the one carrying purchase 0\'s receipts (purchase 1\'s own frame, validly included): steps 3 and 5 fail receipt-reference', withEntry(p1, 'receipt-frame', entryOf(p1, 'purchase-frame').receipt));
  add('purchase-swapped', 'the purchase frame and turn of purchase 2 (same checkpoint) in purchase 1\'s pack: the turn is ruled for another transaction', { ...p1, entries: p1.entries.map((e) => (e.role === 'purchase' || e.role === 'purchase-frame' ? entryOf(p2, e.role) : e)) });
  add('transaction-id-swapped', 'transaction_id of purchase 2 on purchase 1\'s entries', { ...p1, transaction_id: purchases[2].transactionId });
  add('ruling-tampered', 'the purchase turn\'s recorded ruling edited (admitted → refused) inside its receipt: the entry no longer hashes to the included leaf', withEntry(p1, 'purchase', editEntry(entryOf(p1, 'purchase').receipt, (t) => t.replace('"admitted":true', '"admitted":false'))));
  add('mandate-tampered', 'the genesis (the open mandate) edited inside its receipt: one character of the mandate text', withEntry(p1, 'genesis', editEntry(entryOf(p1, 'genesis').receipt, (t) => t.replace('~', '~A'))));
  add('inclusion-proof-broken', 'one hash of the purchase\'s inclusion proof changed', withEntry(p1, 'purchase', breakProof(entryOf(p1, 'purchase').receipt)));
  add('wrong-key', 'verified under another engine key (the grader key of tests/receipt/golden)', p1, 'other');
  add('checkpoint-of-size-2', 'the pack\'s checkpoint replaced by the engine\'s signed checkpoint at size 2: the receipts are under another tree', { ...p1, checkpoint: day.earlierCheckpoint });
  add('roles-relabelled', 'purchase-frame and receipt-frame swapped: the purchase no longer follows its frame', { ...p1, entries: p1.entries.map((e) => ({ ...e, role: e.role === 'purchase-frame' ? 'receipt-frame' : e.role === 'receipt-frame' ? 'purchase-frame' : e.role })) });
  add('genesis-twice', 'the genesis entry listed twice', { ...p1, entries: [p1.entries[0], ...p1.entries] });
  add('session-renamed', 'session set to another id than the checkpoint\'s', { ...p1, session: '0'.repeat(64) });
  add('format-unknown', 'format tally/ap2-evidence/2', { ...p1, format: 'tally/ap2-evidence/2' });
  add('unknown-role', 'an entry whose role is none of the four', { ...p1, entries: [...p1.entries, { role: 'checkout-mandate', receipt: entryOf(p1, 'purchase').receipt }] });
  return cases;
}

// ---------------------------------------------------------------- x402
async function x402Packs(key) {
  const x = x402Fixtures();
  const a = await x.sign({ seq: 1 });
  const drift = await x.sign({ seq: 3, accepted: x.requirement({ maxTimeoutSeconds: 121 }) });
  const auth = a.payload.payload.authorization;
  const word = (addr) => `0x${'0'.repeat(24)}${addr.slice(2).toLowerCase()}`;
  const receipt = (over = {}) => ({
    transaction: `0x${'ab'.repeat(32)}`, status: 'success',
    logs: [
      { address: x.ASSET.toLowerCase(), topics: [AUTHORIZATION_USED_TOPIC, word(auth.from), (over.nonce ?? auth.nonce).toLowerCase()], data: '0x' },
      { address: x.ASSET.toLowerCase(), topics: [TRANSFER_TOPIC, word(auth.from), word(auth.to)], data: `0x${BigInt(over.value ?? auth.value).toString(16).padStart(64, '0')}` },
    ],
  });
  const drive = (steps) => async (engine, sessionId) => {
    for (let k = 0; k < steps.length; k++) {
      const s = steps[k];
      const f = await engine.frame({ sessionId, ordinal: k - 1, time: s.time, data: s.data });
      if (!f.ok) throw new Error(f.message);
      const body = s.turn === undefined ? { kind: 'stand-down', failureClass: 'timeout' } : { kind: 'authored', bytes: enc.encode(s.turn) };
      const t = await engine.turn({ sessionId, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
      if (!t.ok) throw new Error(t.message);
    }
  };
  const ruler = (store) => createPaymentsRuler({ store, inner: createRefereeRuler({ store }) });
  // Wake 1 pays a; wake 2 pays the drifted offer with an UNKNOWN settlement fact for ticket 1; wake 3 settles ticket 1 by receipt.
  const steps = [
    x.wake(1, a.payload),
    { ...x.wake(2, drift.payload, { accepts: [x.requirement()], settlements: [{ ticket: 1, unknown: 'timeout' }] }) },
    { time: x.at(2), data: { x402: { settlements: [{ ticket: 1, receipt: receipt() }] } } },
  ];
  const day = await sealedDay(ruler, x.spec('x402-evidence-day'), drive(steps), key);
  const packOf = async (select) => {
    const r = await assemblePaymentEvidence(day.entries, day.sessionId, select, day.prove);
    if (!r.ok) throw new Error(`x402 pack: ${r.code}`);
    return JSON.parse(canonicalJson(r.pack));
  };
  const driftHash = day.entries.map((e) => e.ruling?.x402?.payment).find((p) => p?.code === 'offer_drift')?.payment_hash;
  if (!driftHash) throw new Error('x402 evidence day: no offer_drift');
  const settled = await packOf({ ticket: 1 });
  const drifted = await packOf({ paymentHash: driftHash });
  const cases = [];
  const add = (name, note, pack, verifier = 'engine') => cases.push({ name, note, pack, verifier, intended: X402_INTENDED[name] });
  add('settled', 'ticket 1: admitted, an UNKNOWN settlement fact, then SETTLED by a receipt showing its AuthorizationUsed and Transfer', settled);
  add('offer-drift', 'the payment signed against an offer other than the one shown, refused offer_drift: reasons offer_drift', drifted);
  add('settlements-removed', 'every settlement frame and turn dropped: the payment is RESERVED at the end of what the pack proves (reasons settlement_unknown)', { ...settled, entries: settled.entries.filter((e) => !e.role.startsWith('settlement-')) });
  add('wrong-key', 'verified under another engine key', settled, 'other');
  add('payment-entry-tampered', 'the payment turn\'s entry edited inside its receipt (the ticket number)', withEntry(settled, 'payment', editEntry(entryOf(settled, 'payment').receipt, (t) => t.replace('"ticket":1', '"ticket":2'))));
  add('inclusion-proof-broken', 'one hash of the payment\'s inclusion proof changed', withEntry(settled, 'payment', breakProof(entryOf(settled, 'payment').receipt)));
  add('checkpoint-of-size-2', 'the pack\'s checkpoint replaced by the engine\'s signed checkpoint at size 2', { ...settled, checkpoint: day.earlierCheckpoint });
  add('roles-relabelled', 'the offer frame labelled payment', { ...settled, entries: settled.entries.map((e) => (e.role === 'offer' ? { ...e, role: 'payment' } : e)) });
  add('payment-hash-swapped', 'payment_hash of the drifted payment on ticket 1\'s entries', { ...settled, payment_hash: driftHash });
  add('settlement-turn-without-its-frame', 'a settlement turn kept, the frame it answers dropped', { ...settled, entries: settled.entries.filter((e, i, all) => !(e.role === 'settlement-frame' && i === all.findIndex((x) => x.role === 'settlement-frame'))) });
  add('format-unknown', 'format tally/x402-evidence/2', { ...settled, format: 'tally/x402-evidence/2' });
  return cases;
}

export async function evidenceVectors() {
  const key = demoEngineKey();
  // Another key under the same engine name: RFC 8032 §7.1 TEST 2's seed.
  const other = engineKeyFromPrivateKey(DEMO_ENGINE_NAME, createPrivateKey({ key: Buffer.from('302e020100300506032b657004220420' + '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb', 'hex'), format: 'der', type: 'pkcs8' }));
  const keys = { engine: key.verifierKey, other: other.verifierKey };
  const ap2 = await ap2Packs(key);
  const x402 = await x402Packs(key);
  for (const c of ap2) c.expect = expectOf(await verifyAp2Evidence(c.pack, { verifiers: [keys[c.verifier]] }), c, 'ap2');
  for (const c of x402) c.expect = expectOf(await verifyPaymentEvidence(c.pack, { verifiers: [keys[c.verifier]] }), c, 'x402');
  return {
    description: 'Evidence packs (PROTOCOL.md §16.9, §17.8) as tally evidence writes them, and refusals made by mutation. keys: engine is the key the days were sealed with (RFC 8032 TEST 1 seed, the demo engine key), other another engine key. Each case: pack (JSON, verbatim), verifier (the key name of keys to verify under), expect: what verifyAp2Evidence / verifyPaymentEvidence and `tally verify-evidence --json` answer — {ok:false, code} or, for a pack that verifies, the facts pinned (ap2: admitted, amount, currency, complete and each step\'s outcome and code; x402: state, reasons, rederived). tally verify-evidence exits 0 only for an ap2 pack with complete true or an x402 pack that verifies; it recognises an ap2 pack by its format and checks any other as x402 (so format-unknown is evidence_malformed there).',
    keys,
    ap2: ap2.map(({ intended, ...c }) => c),
    x402: x402.map(({ intended, ...c }) => c),
  };
}
