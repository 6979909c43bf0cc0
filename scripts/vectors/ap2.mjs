// AP2 v0.2 section of the conformance corpus (docs/vectors/ap2.json, PROTOCOL.md §16):
// open payment mandates (RFC 9901 SD-JWT, ES256) and closed payment mandates
// (KB-JWT), valid and each kind of invalid, with the code Tally's verifier must
// answer (tests/mandates/vectors.test.ts). Built only with registry libraries
// (@sd-jwt/core for issuance and presentation, @noble/curves for P-256) —
// never with Tally's own verifier — so the two are independent.
// Deterministic, like the rest of the corpus: keys are P-256 scalars derived
// from fixed labels (test keys, never use them), signatures are RFC 6979
// deterministic ECDSA, salts a counter's SHA-256; @sd-jwt/core sorts `_sd`.
import { createHash } from 'node:crypto';
import { SDJwtInstance } from '@sd-jwt/core';
import { digest } from '@sd-jwt/crypto-nodejs';
import { p256 } from '@noble/curves/p256.js';
import { viVectors } from './vi.mjs';

const sha = (s) => createHash('sha256').update(s).digest();
const b64sha = (s) => createHash('sha256').update(s, 'ascii').digest('base64url');
const b64 = (b) => Buffer.from(b).toString('base64url');

/** A P-256 key from a label: d = SHA-256(label) (below the order for these labels; checked). */
function labelKey(label) {
  const d = sha(`tally ap2 vectors ${label}`);
  if (BigInt('0x' + d.toString('hex')) >= p256.CURVE.n) throw new Error(`label ${label} gives no scalar`);
  const pub = p256.getPublicKey(d, false);
  const x = b64(pub.slice(1, 33)), y = b64(pub.slice(33, 65));
  return { publicKey: { kty: 'EC', crv: 'P-256', x, y }, privateKey: { kty: 'EC', crv: 'P-256', x, y, d: b64(d) }, d };
}
/** ES256 over ASCII text: RFC 6979 deterministic, r‖s base64url. */
const signerOf = (k) => async (data) => b64(p256.sign(sha(Buffer.from(data, 'ascii')), k.d, { lowS: false }).toCompactRawBytes());
function jws(k, header, payload) {
  const input = `${b64(Buffer.from(JSON.stringify(header)))}.${b64(Buffer.from(JSON.stringify(payload)))}`;
  return `${input}.${b64(p256.sign(sha(Buffer.from(input, 'ascii')), k.d, { lowS: false }).toCompactRawBytes())}`;
}

export async function ap2Vectors() {
let saltCounter = 0;
const generateSalt = () => b64(sha(`salt ${saltCounter++}`).subarray(0, 16));
const keys = { user: labelKey('user'), agent: labelKey('agent'), other: labelKey('other'), merchant: labelKey('merchant'), provider: labelKey('provider') };

const NOW = 1_893_456_000; // 2030-01-01T00:00:00Z
const IAT = NOW - 3_600;
const EXP = NOW + 30 * 86_400;
// Merchant fields follow AP2's docs/ap2/agent_authorization.md example (Apache-2.0, google-agentic-commerce/AP2).
const merchant = { id: 'merchant_1', name: 'Generic Merchant', website: 'https://demo-merchant.example' };
const openCheckoutHash = b64sha('open-checkout-mandate-placeholder');

function payload(over = {}, constraintsOver) {
  return {
    vct: 'mandate.payment.open.1', iat: IAT, exp: EXP,
    cnf: { jwk: keys.agent.publicKey },
    constraints: constraintsOver ?? [
      { type: 'payment.reference', conditional_transaction_id: openCheckoutHash },
      { type: 'payment.allowed_payees', allowed: [merchant] },
      { type: 'payment.amount_range', currency: 'USD', max: 20_000 },
      { type: 'payment.budget', currency: 'USD', max: 500.5 },
      { type: 'payment.agent_recurrence', frequency: 'ON_DEMAND', max_occurrences: 5 },
      { type: 'payment.execution_date', not_before: '2030-01-01', not_after: '2030-12-31' },
    ],
    ...over,
  };
}

async function instance(signKey = keys.user, hashAlg = 'sha-256') {
  return new SDJwtInstance({
    signer: signerOf(signKey), signAlg: 'ES256',
    kbSigner: signerOf(keys.agent), kbSignAlg: 'ES256',
    hasher: (d, alg) => digest(d, alg ?? hashAlg), hashAlg, saltGenerator: generateSalt,
  });
}
const frame = (p) => ({ constraints: { _sd: p.constraints.map((_, i) => i) } });
async function issue(p, signKey, hashAlg) {
  return (await instance(signKey, hashAlg)).issue(p, frame(p), { header: { typ: 'dc+sd-jwt' } });
}

const open = [];
const add = (name, presentation, expect, extra = {}) => open.push({ name, presentation, now: NOW, issuer: 'user', expect, ...extra });

const valid = await issue(payload());
add('valid-payment', valid, 'ok', { agent: 'agent' });
add('valid-jpy-budget', await issue(payload({}, [
  { type: 'payment.reference', conditional_transaction_id: openCheckoutHash },
  { type: 'payment.budget', currency: 'JPY', max: 30000 },
])), 'ok');
{
  // One disclosure swapped for one with the same claim and a fresh salt: its digest is in no _sd.
  const [jwt, ...ds] = valid.split('~');
  const d = JSON.parse(Buffer.from(ds[1], 'base64url').toString());
  const forged = Buffer.from(JSON.stringify([generateSalt(16), d[1]])).toString('base64url');
  add('bad-disclosure-digest', [jwt, ds[0], forged, ...ds.slice(2)].join('~'), 'sdjwt-disclosure-digest');
  add('disclosure-twice', [jwt, ds[0], ...ds.slice(0, -1)].join('~') + '~', 'sdjwt-duplicate-digest');
  add('padded-base64url', [jwt + '=', ...ds].join('~'), 'sdjwt-encoding');
  const [h, p, s] = jwt.split('.');
  const flipped = s.slice(0, 10) + (s[10] === 'A' ? 'B' : 'A') + s.slice(11);
  add('bad-signature', [`${h}.${p}.${flipped}`, ...ds].join('~'), 'sdjwt-signature');
}
add('wrong-issuer', await issue(payload(), keys.other), 'sdjwt-signature');
add('sd-alg-sha384', await issue(payload(), keys.user, 'sha-384'), 'sdjwt-sd-alg');
add('wrong-vct-version', await issue(payload({ vct: 'mandate.payment.open.2' })), 'mandate-vct');
add('vct-without-version', await issue(payload({ vct: 'mandate.payment.open' })), 'mandate-vct');
add('expired', valid, 'mandate-expired', { now: EXP });
add('not-yet-valid', valid, 'mandate-not-yet-valid', { now: IAT - 1 });
add('no-exp', await issue(payload({ exp: undefined })), 'mandate-time-missing');
add('cnf-mismatch', valid, 'mandate-cnf-mismatch', { agent: 'other' });
add('cnf-private-key', await issue(payload({ cnf: { jwk: keys.agent.privateKey } })), 'mandate-cnf');
const base = payload().constraints.slice(0, 1);
add('unknown-constraint', await issue(payload({}, [...base, { type: 'payment.velocity', max_per_hour: 3 }])), 'constraint-unknown');
add('checkout-constraint-in-payment', await issue(payload({}, [...base, { type: 'checkout.allowed_merchants', allowed: [merchant] }])), 'constraint-unknown');
add('unsupported-constraint', await issue(payload({}, [...base, { type: 'payment.allowed_pisps', allowed: [] }])), 'constraint-unsupported');
add('unknown-member', await issue(payload({}, [...base, { type: 'payment.amount_range', currency: 'USD', max: 100, per: 'day' }])), 'constraint-malformed');
add('no-payment-reference', await issue(payload({}, [{ type: 'payment.amount_range', currency: 'USD', max: 100 }])), 'constraint-missing');
add('budget-three-decimals-usd', await issue(payload({}, [...base, { type: 'payment.budget', currency: 'USD', max: 10.005 }])), 'budget-inexact');
add('budget-fraction-jpy', await issue(payload({}, [...base, { type: 'payment.budget', currency: 'JPY', max: 100.5 }])), 'budget-inexact');
add('budget-unknown-currency', await issue(payload({}, [...base, { type: 'payment.budget', currency: 'XXY', max: 10 }])), 'currency-unknown');

// ---- closed payment mandates over valid-payment
const checkoutJwt = jws(keys.merchant, { alg: 'ES256', typ: 'JWT' }, { merchant, line_items: [{ id: 'sku-1', quantity: 1 }] });
const checkoutHash = b64sha(checkoutJwt);
const AUD = 'https://credentials-provider.example';
const closedPayload = (over = {}) => ({
  iat: NOW, aud: AUD, nonce: 'n-1', vct: 'mandate.payment.1', transaction_id: checkoutHash, payee: merchant,
  payment_amount: { amount: 15_000, currency: 'USD' }, payment_instrument: { id: 'card-1', type: 'card' }, ...over,
});
async function present(kbPayload, kbKey = keys.agent) {
  const inst = await instance();
  inst.config({ kbSigner: signerOf(kbKey) });
  const all = { constraints: Object.fromEntries(payload().constraints.map((_, i) => [i, true])) };
  return inst.present(valid, all, { kb: { payload: kbPayload } });
}
const closed = [];
const addC = (name, presentation, expect, extra = {}) => closed.push({ name, open: 'valid-payment', presentation, now: NOW, aud: AUD, nonce: 'n-1', checkoutHashes: [checkoutHash], openCheckoutHash, expect, ...extra });
addC('valid-payment-15000', await present(closedPayload()), 'ok', { violations: [] });
addC('over-amount-range', await present(closedPayload({ payment_amount: { amount: 25_000, currency: 'USD' } })), 'ok', { violations: ['payment.amount_range'] });
addC('budget-exhausted-by-another-session', await present(closedPayload()), 'ok', { history: { spent: 40_000, uses: 2 }, violations: ['payment.budget'] });
addC('max-occurrences-reached', await present(closedPayload()), 'ok', { history: { spent: 0, uses: 5 }, violations: ['payment.agent_recurrence'] });
addC('payee-not-allowed', await present(closedPayload({ payee: { id: 'merchant_2', name: 'Other' } })), 'ok', { violations: ['payment.allowed_payees'] });
addC('kb-by-other-key', await present(closedPayload(), keys.other), 'kb-signature');
addC('wrong-aud', await present(closedPayload({ aud: 'https://elsewhere.example' })), 'kb-claims');
addC('transaction-id-not-a-checkout', await present(closedPayload({ transaction_id: b64sha('nothing') })), 'closed-transaction-id');
addC('wrong-closed-vct', await present(closedPayload({ vct: 'mandate.payment.2' })), 'closed-vct');
{
  const p = await present(closedPayload());
  const parts = p.split('~');
  addC('sd-hash-after-dropping-a-disclosure', [parts[0], ...parts.slice(2)].join('~'), 'kb-sd-hash');
}

// ---- receipts (§16.8): checkout, payment and mandate receipt JWTs under the pinned parties, and the checkout JWT's signature.
// Fields follow AP2 v0.2's code/sdk/schemas/ap2/{checkout,payment}_receipt.json and the Mandate Receipt of agent_authorization.md (Apache-2.0).
const parties = { merchant: { iss: 'https://demo-merchant.example', key: 'merchant' }, provider: { iss: AUD, key: 'provider' } };
const paymentRef = b64sha(closed[0].presentation);
const H = { alg: 'ES256', typ: 'JWT' };
const checkoutOk = { iss: parties.merchant.iss, iat: NOW, reference: checkoutHash, status: 'Success', order_id: 'order-1' };
const paymentOk = { iss: AUD, iat: NOW, reference: paymentRef, status: 'Success', payment_id: 'pay-1', psp_confirmation_id: 'psp-1', network_confirmation_id: 'net-1' };
const receipts = [];
const addR = (name, type, jwt, expect, reference) => receipts.push({ name, type, jwt, expect, ...(reference === undefined ? {} : { reference }) });
const rawJws = (k, headerText, payloadText) => {
  const input = `${b64(Buffer.from(headerText))}.${b64(Buffer.from(payloadText))}`;
  return `${input}.${b64(p256.sign(sha(Buffer.from(input, 'ascii')), k.d, { lowS: false }).toCompactRawBytes())}`;
};
addR('checkout-success', 'checkout', jws(keys.merchant, H, checkoutOk), 'ok', checkoutHash);
addR('checkout-error', 'checkout', jws(keys.merchant, H, { iss: parties.merchant.iss, iat: NOW, reference: checkoutHash, status: 'Error', error: 'invalid_mandate', error_description: 'out of stock' }), 'ok', checkoutHash);
addR('payment-success', 'payment', jws(keys.provider, H, paymentOk), 'ok', paymentRef);
addR('payment-error', 'payment', jws(keys.provider, { alg: 'ES256' }, { iss: AUD, iat: NOW, reference: paymentRef, status: 'Error', payment_id: 'pay-2', error: 'invalid_mandate', error_description: 'over budget' }), 'ok', paymentRef);
addR('mandate-success', 'mandate', jws(keys.provider, H, { iss: AUD, iat: NOW, reference: paymentRef, result: 'success' }), 'ok', paymentRef);
addR('mandate-error', 'mandate', jws(keys.provider, H, { iss: AUD, iat: NOW, reference: paymentRef, result: 'error', error: 'unresolved_constraint' }), 'ok', paymentRef);
addR('payment-signed-by-merchant', 'payment', jws(keys.merchant, H, paymentOk), 'receipt-issuer');
addR('payment-wrong-iss', 'payment', jws(keys.provider, H, { ...paymentOk, iss: 'https://someone-else.example' }), 'receipt-issuer');
addR('payment-signed-by-other', 'payment', jws(keys.other, H, paymentOk), 'receipt-signature');
{
  const good = jws(keys.provider, H, paymentOk);
  const sig = good.split('.')[2];
  addR('payment-signature-bit-flipped', 'payment', `${good.slice(0, good.length - sig.length)}${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`, 'receipt-signature');
  addR('payment-garbage-appended', 'payment', `${good}.AAAA`, 'receipt-malformed');
  addR('payment-header-es384', 'payment', jws(keys.provider, { alg: 'ES384', typ: 'JWT' }, paymentOk), 'receipt-malformed');
}
addR('payment-without-payment-id', 'payment', jws(keys.provider, H, { ...paymentOk, payment_id: undefined }), 'receipt-malformed');
addR('success-payment-without-confirmations', 'payment', jws(keys.provider, H, { ...paymentOk, psp_confirmation_id: undefined }), 'receipt-malformed');
addR('checkout-success-without-order-id', 'checkout', jws(keys.merchant, H, { ...checkoutOk, order_id: undefined }), 'receipt-malformed');
addR('iat-in-exponent-form', 'payment', rawJws(keys.provider, JSON.stringify(H), JSON.stringify(paymentOk).replace(`"iat":${NOW}`, '"iat":1.893456e9')), 'receipt-malformed');
addR('duplicate-member', 'payment', rawJws(keys.provider, JSON.stringify(H), JSON.stringify(paymentOk).replace('{', '{"status":"Error",')), 'receipt-malformed');
addR('reference-not-a-digest', 'payment', jws(keys.provider, H, { ...paymentOk, reference: 'abc' }), 'receipt-malformed');
addR('mandate-result-unknown', 'mandate', jws(keys.provider, H, { iss: AUD, iat: NOW, reference: paymentRef, result: 'maybe' }), 'receipt-malformed');
const checkouts = [
  { name: 'merchant-signed', jwt: checkoutJwt, expect: 'ok' },
  { name: 'signed-by-provider', jwt: jws(keys.provider, H, { merchant, line_items: [{ id: 'sku-1', quantity: 1 }] }), expect: 'checkout-signature' },
  { name: 'header-with-crit', jwt: jws(keys.merchant, { ...H, crit: ['b64'] }, { merchant }), expect: 'checkout-signature' },
  { name: 'payload-not-an-object', jwt: jws(keys.merchant, H, ['merchant']), expect: 'checkout-signature' },
];

// ---- open checkout mandates and closed checkout mandates (§16.11), generated after every vector above
// (one salt counter: the earlier vectors stay byte-identical). Field values follow AP2's
// docs/ap2/checkout_mandate.md example (google-agentic-commerce/AP2, Apache-2.0); the cart follows
// code/sdk/schemas/ucp/types/{checkout,line_item}.json (merchant, line_items[].item.id, quantity).
const demoMerchant = { id: 'merchant_1', name: 'Demo Merchant', website: 'https://demo-merchant.example' };
const shoe = { id: 'supershoe_limited_edition_gold_sneaker_womens_9_0', title: 'SuperShoe Limited Edition Gold' };
const socks = { id: 'best_socks', title: 'The Best Socks' };
const checkoutPayload = (over = {}, constraintsOver) => ({
  vct: 'mandate.checkout.open.1', iat: IAT, exp: EXP,
  cnf: { jwk: keys.agent.publicKey },
  constraints: constraintsOver ?? [
    { type: 'checkout.line_items', items: [{ id: 'line_1', acceptable_items: [shoe], quantity: 1 }, { id: 'line_2', acceptable_items: [socks], quantity: 2 }] },
    { type: 'checkout.allowed_merchants', allowed: [demoMerchant] },
  ],
  ...over,
});
const validCheckout = await issue(checkoutPayload());
add('valid-checkout', validCheckout, 'ok', { agent: 'agent' });
const lineItems = checkoutPayload().constraints.slice(0, 1);
add('checkout-unknown-constraint', await issue(checkoutPayload({}, [...lineItems, { type: 'checkout.max_total', amount: 100 }])), 'constraint-unknown');
add('payment-constraint-in-checkout', await issue(checkoutPayload({}, [...lineItems, { type: 'payment.budget', currency: 'USD', max: 10 }])), 'constraint-unknown');
add('checkout-without-line-items', await issue(checkoutPayload({}, [{ type: 'checkout.allowed_merchants', allowed: [demoMerchant] }])), 'constraint-missing');
add('checkout-line-items-share-an-item', await issue(checkoutPayload({}, [{ type: 'checkout.line_items', items: [{ id: 'a', acceptable_items: [shoe], quantity: 1 }, { id: 'b', acceptable_items: [shoe, socks], quantity: 1 }] }])), 'constraint-unsupported');
add('checkout-line-items-quantity-zero', await issue(checkoutPayload({}, [{ type: 'checkout.line_items', items: [{ id: 'a', acceptable_items: [shoe], quantity: 0 }] }])), 'constraint-malformed');

const MERCHANT_AUD = parties.merchant.iss;
const line = (id, item, quantity) => ({ id, item, quantity, totals: [{ type: 'subtotal', amount: 100 * quantity }] });
const cart = (over = {}) => ({ id: 'checkout-1', merchant: demoMerchant, line_items: [line('li_1', shoe, 1), line('li_2', socks, 2)], status: 'ready_for_complete', currency: 'USD', totals: [{ type: 'total', amount: 19_900 }], links: [], ...over });
const cartJwt = (over, k = keys.merchant) => jws(k, H, cart(over));
const closedCheckoutPayload = (jwt, over = {}) => ({ iat: NOW, aud: MERCHANT_AUD, nonce: 'c-1', vct: 'mandate.checkout.1', checkout_jwt: jwt, checkout_hash: b64sha(jwt), ...over });
async function presentCheckout(kbPayload, kbKey = keys.agent) {
  const inst = await instance();
  inst.config({ kbSigner: signerOf(kbKey) });
  const all = { constraints: Object.fromEntries(checkoutPayload().constraints.map((_, i) => [i, true])) };
  return inst.present(validCheckout, all, { kb: { payload: kbPayload } });
}
const closedCheckout = [];
const addK = (name, presentation, expect, extra = {}) => closedCheckout.push({ name, open: 'valid-checkout', presentation, now: NOW, aud: MERCHANT_AUD, merchant: 'merchant', expect, ...extra });
const goodCart = cartJwt();
addK('valid-checkout-cart', await presentCheckout(closedCheckoutPayload(goodCart)), 'ok', { violations: [] });
addK('merchant-not-allowed', await presentCheckout(closedCheckoutPayload(cartJwt({ merchant: { id: 'merchant_2', name: 'Other Merchant' } }))), 'ok', { violations: ['checkout.allowed_merchants'] });
addK('quantity-short', await presentCheckout(closedCheckoutPayload(cartJwt({ line_items: [line('li_1', shoe, 1), line('li_2', socks, 1)] }))), 'ok', { violations: ['checkout.line_items'] });
addK('item-in-no-requirement', await presentCheckout(closedCheckoutPayload(cartJwt({ line_items: [line('li_1', shoe, 1), line('li_2', socks, 2), line('li_3', { id: 'hat', title: 'Hat' }, 1)] }))), 'ok', { violations: ['checkout.line_items'] });
addK('checkout-kb-by-other-key', await presentCheckout(closedCheckoutPayload(goodCart), keys.other), 'kb-signature');
addK('checkout-wrong-aud', await presentCheckout(closedCheckoutPayload(goodCart, { aud: AUD })), 'kb-claims');
addK('checkout-hash-not-of-the-jwt', await presentCheckout(closedCheckoutPayload(goodCart, { checkout_hash: b64sha('another checkout') })), 'closed-transaction-id');
addK('checkout-wrong-closed-vct', await presentCheckout(closedCheckoutPayload(goodCart, { vct: 'mandate.checkout.2' })), 'closed-vct');
addK('payment-vct-under-checkout', await presentCheckout(closedCheckoutPayload(goodCart, { vct: 'mandate.payment.1' })), 'closed-vct');
{
  const p = await presentCheckout(closedCheckoutPayload(goodCart));
  const parts = p.split('~');
  addK('checkout-sd-hash-after-dropping-a-disclosure', [parts[0], ...parts.slice(2)].join('~'), 'kb-sd-hash');
}
addK('cart-signed-by-provider', await presentCheckout(closedCheckoutPayload(cartJwt({}, keys.provider))), 'checkout-signature');
addK('cart-without-line-items', await presentCheckout(closedCheckoutPayload(cartJwt({ line_items: [] }))), 'checkout-malformed');
addK('cart-line-item-without-item', await presentCheckout(closedCheckoutPayload(cartJwt({ line_items: [{ id: 'sku-1', quantity: 1 }] }))), 'checkout-malformed');

return {
  parties, receipts, checkouts, closedCheckout,
  description: 'AP2 v0.2 open payment mandates (RFC 9901 SD-JWT, ES256) and closed payment mandates (KB-JWT) (PROTOCOL.md §16). open: verify presentation with the issuer key at now (Unix seconds), and the agent key when named; expect ok or the refusal code. closed: verify against the named open vector with aud, nonce, checkoutHashes, openCheckoutHash; when ok, the constraints it violates given history. receipts: verify jwt as a receipt of type under parties (iss and the named key of merchant and provider); expect ok (then reference) or the refusal code (§16.8). checkouts: the merchant signature on a checkout JWT (expect ok or checkout-signature). closedCheckout (§16.11): closed checkout mandates against the named open checkout vector with aud and the merchant party; expect ok (then the checkout constraints violated by the cart) or the refusal code; checkout field values from AP2 docs/ap2/checkout_mandate.md (Apache-2.0). Keys derive from fixed labels (test keys). Merchant example fields from google-agentic-commerce/AP2 docs/ap2/agent_authorization.md (Apache-2.0). vi (§16.10): Verifiable Intent v0.1 L1 and L2 autonomous credentials; verify l1 with the issuer key and l2 over it at now, and the agent key when named; expect ok or the refusal code; payments: when ok, the mapped constraints\' violations for each payment given history; l3b: L3b checkout mandates over the named credential at now for the merchant party (iss and key); expect ok (then the L2 checkout constraints violated by the cart) or the refusal code. Its keys are its own; mandate field values from agent-intent/verifiable-intent spec/credential-format.md §11.2 (Apache-2.0).',
  keys: Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, { public: v.publicKey, private: v.privateKey }])),
  open, closed,
  vi: await viVectors(),
};
}
