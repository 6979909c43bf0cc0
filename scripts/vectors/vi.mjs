// Verifiable Intent v0.1 group of docs/vectors/ap2.json (PROTOCOL.md §16.10): an L1
// credential (the issuer's SD-JWT binding the user's key) and an L2 autonomous
// credential (the user's KB-SD-JWT+KB delegating to the agent's key through the
// mandates' cnf), valid and each kind of invalid, with the code Tally's verifier
// must answer (tests/mandates/vi.test.ts). Built only with registry libraries
// (@sd-jwt/core, @noble/curves), never with Tally's verifier. Deterministic: keys
// from fixed labels (test keys, never use them), RFC 6979 signatures, counted salts.
// The mandate field values (payee, instrument type, amounts) follow the examples of
// agent-intent/verifiable-intent spec/credential-format.md §11.2 (Verifiable Intent
// Working Group; Apache-2.0 per that repository).
import { createHash } from 'node:crypto';
import { SDJwtInstance } from '@sd-jwt/core';
import { digest } from '@sd-jwt/crypto-nodejs';
import { p256 } from '@noble/curves/p256.js';

const sha = (s) => createHash('sha256').update(s).digest();
const b64sha = (s) => createHash('sha256').update(s, 'ascii').digest('base64url');
const b64 = (b) => Buffer.from(b).toString('base64url');

function labelKey(label) {
  const d = sha(`tally vi vectors ${label}`);
  if (BigInt('0x' + d.toString('hex')) >= p256.CURVE.n) throw new Error(`label ${label} gives no scalar`);
  const pub = p256.getPublicKey(d, false);
  const x = b64(pub.slice(1, 33)), y = b64(pub.slice(33, 65));
  return { publicKey: { kty: 'EC', crv: 'P-256', x, y }, privateKey: { kty: 'EC', crv: 'P-256', x, y, d: b64(d) }, d };
}
const signerOf = (k) => async (data) => b64(p256.sign(sha(Buffer.from(data, 'ascii')), k.d, { lowS: false }).toCompactRawBytes());

export async function viVectors() {
  let saltCounter = 0;
  const saltGenerator = () => b64(sha(`vi salt ${saltCounter++}`).subarray(0, 16));
  const keys = { issuer: labelKey('issuer'), user: labelKey('user'), agent: labelKey('agent'), other: labelKey('other'), merchant: labelKey('merchant') };
  const NOW = 1_893_456_000; // 2030-01-01T00:00:00Z
  const L1_IAT = NOW - 86_400, L1_EXP = NOW + 365 * 86_400;
  const L2_IAT = NOW - 3_600, L2_EXP = NOW + 30 * 86_400;
  const sign = (k, typ, kid, payload, frame) => new SDJwtInstance({ signer: signerOf(k), signAlg: 'ES256', hasher: (d, a) => digest(d, a ?? 'sha-256'), hashAlg: 'sha-256', saltGenerator })
    .issue(payload, frame, { header: { typ, kid } });

  const l1Payload = (over = {}) => ({
    iss: 'https://issuer.example', sub: 'user-8a3f9c21', iat: L1_IAT, exp: L1_EXP, vct: 'https://credentials.mastercard.com/card',
    cnf: { jwk: keys.user.publicKey }, pan_last_four: '1234', scheme: 'mastercard', email: 'user@example.com', ...over,
  });
  const issueL1 = (over, k = keys.issuer, typ = 'sd+jwt') => sign(k, typ, 'issuer-key-1', l1Payload(over), { _sd: ['email'] });
  const l1 = await issueL1();

  const payee = { id: 'audioshop', name: 'AudioShop Inc.', website: 'https://audioshop.example.com' };
  const agentCnf = { jwk: keys.agent.publicKey, kid: 'agent-key-1' };
  const checkoutMandate = (over = {}) => ({ vct: 'mandate.checkout.open', cnf: agentCnf, constraints: [{ type: 'mandate.checkout.allowed_merchant', allowed_merchants: [payee] }], prompt_summary: 'Buy wireless headphones under $300 from approved merchants', ...over });
  const paymentMandate = (ref, constraints, over = {}) => ({
    vct: 'mandate.payment.open', cnf: agentCnf,
    payment_instrument: { type: 'mastercard.srcDigitalCard', id: 'f199c3dd-7106-478b-9b5f-7af9ca725170', description: 'Mastercard **** 1234' },
    constraints: constraints ?? [
      { type: 'payment.amount', currency: 'USD', min: 0, max: 30_000 },
      { type: 'payment.allowed_payee', allowed_payees: [payee] },
      { type: 'payment.budget', currency: 'USD', max: 500 },
      { type: 'payment.reference', conditional_transaction_id: ref },
    ],
    ...over,
  });
  /**
   * An L2 over `l1` with the checkout and payment mandates as delegate_payload disclosures.
   * The payment mandate's reference must be the checkout disclosure's digest, which exists
   * only once the L2 is issued: issue once to learn it (salts are a counter, so reset), then again.
   */
  async function issueL2({ over = {}, checkout = {}, payment, constraints, mandates, k = keys.user, typ = 'kb-sd-jwt+kb', ref, l1Text = l1 } = {}) {
    const base = { nonce: 'b7e2f4a9c1d3e8b2', iss: 'https://wallet.example', aud: 'https://network.example/vi/authorize', iat: L2_IAT, exp: L2_EXP, sd_hash: b64sha(l1Text) };
    const build = (r) => mandates ?? [checkoutMandate(checkout), paymentMandate(r, constraints, payment)];
    const start = saltCounter;
    const first = await sign(k, typ, 'user-key-1', { ...base, delegate_payload: build('pending'), ...over }, { delegate_payload: { _sd: build('x').map((_, i) => i) } });
    const checkoutDisclosure = first.split('~')[1];
    saltCounter = start;
    const r = ref ?? b64sha(checkoutDisclosure);
    return sign(k, typ, 'user-key-1', { ...base, delegate_payload: build(r), ...over }, { delegate_payload: { _sd: build(r).map((_, i) => i) } });
  }

  const vi = [];
  const add = (name, l1Text, l2Text, expect, extra = {}) => vi.push({ name, l1: l1Text, l2: l2Text, now: NOW, issuer: 'issuer', expect, ...extra });
  const valid = await issueL2();
  add('valid-autonomous', l1, valid, 'ok', {
    agent: 'agent',
    // The mapped constraints' verdicts on payments with the mandate's history: within; over the range; the budget spent by another session.
    payments: [
      { payee, amount: 27_999, currency: 'USD', history: { spent: 0, uses: 0 }, violations: [] },
      { payee, amount: 30_001, currency: 'USD', history: { spent: 0, uses: 0 }, violations: ['payment.amount_range'] },
      { payee, amount: 27_999, currency: 'USD', history: { spent: 25_000, uses: 1 }, violations: ['payment.budget'] },
      { payee: { id: 'soundstore', name: 'SoundStore' }, amount: 100, currency: 'USD', history: { spent: 0, uses: 0 }, violations: ['payment.allowed_payees'] },
    ],
  });
  add('l1-wrong-issuer-key', await issueL1({}, keys.other), valid, 'sdjwt-signature');
  add('l1-typ-dc-sd-jwt', await issueL1({}, keys.issuer, 'dc+sd-jwt'), valid, 'sdjwt-header');
  add('l1-vct-other-profile', await issueL1({ vct: 'https://credentials.example/card' }), valid, 'vi-l1');
  add('l1-carries-sd-hash', await issueL1({ sd_hash: 'x' }), valid, 'vi-l1');
  add('l1-cnf-private-key', await issueL1({ cnf: { jwk: keys.user.privateKey } }), valid, 'vi-l1');
  add('l1-expired', l1, valid, 'mandate-expired', { now: L1_EXP });
  add('l2-not-signed-by-l1-cnf', l1, await issueL2({ k: keys.other }), 'sdjwt-signature');
  add('l2-typ-immediate', l1, await issueL2({ typ: 'kb-sd-jwt' }), 'sdjwt-header');
  {
    const [jwt, ...ds] = valid.split('~');
    const d = JSON.parse(Buffer.from(ds[1], 'base64url').toString());
    const forged = b64(Buffer.from(JSON.stringify([saltGenerator(), d[1]])));
    add('l2-bad-disclosure-digest', l1, [jwt, ds[0], forged, ''].join('~'), 'sdjwt-disclosure-digest');
    const [h, p, s] = jwt.split('.');
    add('l2-bad-signature', l1, [`${h}.${p}.${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`, ...ds].join('~'), 'sdjwt-signature');
  }
  // The same L1 presented without its email disclosure: the L2's sd_hash is over the L1 as the user received it.
  add('l2-sd-hash-other-l1', `${l1.split('~')[0]}~`, valid, 'vi-sd-hash');
  add('l2-expired', l1, valid, 'mandate-expired', { now: L2_EXP });
  add('l2-not-yet-valid', l1, valid, 'mandate-not-yet-valid', { now: L2_IAT - 1 });
  add('l2-exp-beyond-l1', l1, await issueL2({ over: { exp: L1_EXP + 1 } }), 'vi-claims');
  add('l2-no-nonce', l1, await issueL2({ over: { nonce: undefined } }), 'vi-claims');
  add('mandate-vct-with-ap2-version', l1, await issueL2({ payment: { vct: 'mandate.payment.open.1' } }), 'mandate-vct');
  add('mandate-immediate-vct', l1, await issueL2({ payment: { vct: 'mandate.payment' } }), 'mandate-vct');
  add('mandate-cnf-without-kid', l1, await issueL2({ payment: { cnf: { jwk: keys.agent.publicKey } } }), 'mandate-cnf');
  add('mandates-name-two-agents', l1, await issueL2({ checkout: { cnf: { jwk: keys.other.publicKey, kid: 'agent-key-1' } } }), 'vi-mandates');
  add('agent-key-mismatch', l1, valid, 'mandate-cnf-mismatch', { agent: 'other' });
  add('orphan-payment-mandate', l1, await issueL2({ mandates: [paymentMandate('none')] }), 'vi-mandates');
  add('reference-not-the-checkout', l1, await issueL2({ ref: b64sha('another checkout') }), 'vi-mandates');
  const ref0 = { type: 'payment.reference', conditional_transaction_id: 'r' };
  add('unknown-constraint', l1, await issueL2({ constraints: [ref0, { type: 'payment.velocity', max_per_hour: 3 }] }), 'constraint-unknown');
  add('budget-three-decimals-usd', l1, await issueL2({ constraints: [ref0, { type: 'payment.budget', currency: 'USD', max: 10.005 }] }), 'budget-inexact');
  add('amount-range-unknown-member', l1, await issueL2({ constraints: [ref0, { type: 'payment.amount', currency: 'USD', max: 100, per: 'day' }] }), 'constraint-malformed');

  // ---- L3b (§5.2–§5.5, §5.7): the agent's final checkout mandate for the merchant, over valid-autonomous.
  // Generated after every vector above (one salt counter: those stay byte-identical). The aud is §11.2's L3b aud.
  const merchantParty = { iss: 'https://audioshop.example.com/checkout', key: 'merchant' };
  const jws = (k, payload) => {
    const input = `${b64(Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT' })))}.${b64(Buffer.from(JSON.stringify(payload)))}`;
    return `${input}.${b64(p256.sign(sha(Buffer.from(input, 'ascii')), k.d, { lowS: false }).toCompactRawBytes())}`;
  };
  const headphones = { id: 'WH-1000XM5', title: 'Sony WH-1000XM5 Wireless Headphones' };
  const cartJwt = (merchant = payee, k = keys.merchant) => jws(k, { id: 'checkout-1', merchant, line_items: [{ id: 'li_1', item: headphones, quantity: 1 }], currency: 'USD', totals: [{ type: 'total', amount: 27_999 }] });
  const [l2Jwt, ...l2Ds] = valid.split('~');
  const disclosureOf = (vct) => l2Ds.find((d) => d !== '' && JSON.parse(Buffer.from(d, 'base64url').toString())[1]?.vct === vct);
  const selective = (d) => b64sha(`${l2Jwt}~${d}~`);
  const L3_IAT = NOW;
  async function l3b({ jwt = cartJwt(), k = keys.agent, kid = 'agent-key-1', typ = 'kb-sd-jwt', over = {}, mandate = {} } = {}) {
    const final = { vct: 'mandate.checkout', checkout_jwt: jwt, checkout_hash: b64sha(jwt), line_items: [{ sku: headphones.id, name: headphones.title, quantity: 1, unit_price: 27_999, currency: 'USD' }], ...mandate };
    const payload = { nonce: 'd8e2f4a5b6c7d8e9', aud: merchantParty.iss, iat: L3_IAT, exp: L3_IAT + 300, sd_hash: selective(disclosureOf('mandate.checkout.open')), delegate_payload: [final], ...over };
    return sign(k, typ, kid, payload, { delegate_payload: { _sd: [0] } });
  }
  const l3bs = [];
  const addB = (name, text, expect, extra = {}) => l3bs.push({ name, credential: 'valid-autonomous', l3b: text, now: NOW, merchant: merchantParty, expect, ...extra });
  addB('valid-l3b', await l3b(), 'ok', { violations: [] });
  addB('l3b-merchant-not-allowed', await l3b({ jwt: cartJwt({ id: 'soundstore', name: 'SoundStore', website: 'https://soundstore.example.com' }) }), 'ok', { violations: ['checkout.allowed_merchants'] });
  addB('l3b-by-other-key', await l3b({ k: keys.other }), 'kb-signature');
  addB('l3b-kid-not-the-mandates', await l3b({ kid: 'agent-key-2' }), 'kb-header');
  addB('l3b-typ-of-l2', await l3b({ typ: 'kb-sd-jwt+kb' }), 'kb-header');
  addB('l3b-carries-cnf', await l3b({ over: { cnf: { jwk: keys.agent.publicKey } } }), 'kb-claims');
  addB('l3b-aud-the-network', await l3b({ over: { aud: 'https://network.example/vi/authorize' } }), 'kb-claims');
  addB('l3b-nonce-of-the-l2', await l3b({ over: { nonce: 'b7e2f4a9c1d3e8b2' } }), 'kb-claims');
  addB('l3b-lifetime-over-an-hour', await l3b({ over: { exp: L3_IAT + 3_601 } }), 'kb-claims');
  addB('l3b-sd-hash-over-the-payment-disclosure', await l3b({ over: { sd_hash: selective(disclosureOf('mandate.payment.open')) } }), 'kb-sd-hash');
  addB('l3b-final-vct-open', await l3b({ mandate: { vct: 'mandate.checkout.open' } }), 'closed-vct');
  addB('l3b-checkout-hash-not-of-the-jwt', await l3b({ mandate: { checkout_hash: b64sha('another checkout') } }), 'closed-transaction-id');
  addB('l3b-cart-signed-by-other', await l3b({ jwt: cartJwt(payee, keys.other) }), 'checkout-signature');
  addB('l3b-expired', await l3b(), 'kb-claims', { now: L3_IAT + 300 });

  return {
    keys: Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, { public: v.publicKey, private: v.privateKey }])),
    vectors: vi,
    l3b: l3bs,
  };
}
