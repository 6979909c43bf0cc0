// intents.json (PROTOCOL.md §9): signed Intents (payload → hash → EIP-191
// digest → signature, from fixed public test keys) and validations (an Intent
// with a registry, the used nonces and the frame time → the first failing
// stage and code). Called by scripts/gen-vectors.mjs; deterministic (RFC 6979
// signatures, no clock).
import { privateKeyToAccount } from 'viem/accounts';
import { canonicalPayload, eip191Digest, intentHash, recoverIntentSigner, signIntent, validateIntent, INTENT_CODES } from '../../dist/intent/index.js';

/** Public test keys (Anvil/Hardhat accounts 0–2): they never hold value. */
export const INTENT_KEYS = {
  alpha: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  beta: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  stranger: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
};
const addr = (k) => privateKeyToAccount(k).address;
const hex = (b) => '0x' + Buffer.from(b).toString('hex');
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * The reference example of seed 000 (Vector's docs/examples/signed-intent.json,
 * "A worked, signed example"): signer Anvil #0. Its signature and hash are the
 * published ones; generation stops if Tally signs it otherwise.
 */
const VECTOR_REFERENCE = {
  unsigned: { action: 'open', agent_id: 'agent-001', market: 'BTC-PERP', side: 'long', size: '1000', leverage: '3', max_slippage: '0.01', nonce: '42', ttl: '2030-01-01T00:00:00.000Z' },
  intentHash: '0x85ce2b999baf6548cfe141072013e077a79c2314a115750bcac77e7a8b4fee1f',
  signature: '0xbf8882aabc1712ff651c635a63719c4609be5150e1fb7b35649d7929a78ef38708bb532490ef3a651878f07ae18dc0d4c4c23520749db5c31385e2d0352c5b5f1c',
};

const T0 = 1893456000000; // 2030-01-01T00:00:00Z
const iso = (ms) => new Date(ms).toISOString();
const base = { action: 'open', agent_id: 'alpha', nonce: '7', ttl: iso(T0 + 600000), size: '2', market: 'BTC-PERP', side: 'long', leverage: '3', max_slippage: '0.01' };

/** Flips the signature to its high-s twin (same signer, second encoding). */
function highS(sig) {
  const b = Buffer.from(sig.slice(2), 'hex');
  const s = BigInt('0x' + b.subarray(32, 64).toString('hex'));
  const t = (N - s).toString(16).padStart(64, '0');
  return '0x' + b.subarray(0, 32).toString('hex') + t + (b[64] === 27 ? '1c' : '1b');
}

export async function intentVectors() {
  const signedCases = [];
  const sign = async (name, unsigned, key, equivalent = []) => {
    const intent = await signIntent(unsigned, key);
    const payload = canonicalPayload(unsigned);
    for (const e of equivalent) if (canonicalPayload(e) !== payload) throw new Error(`intent ${name}: an equivalent input normalises otherwise`);
    const v = { name, input: unsigned, ...(equivalent.length ? { equivalentInputs: equivalent } : {}), payload, intentHash: intentHash(unsigned), eip191Digest: hex(eip191Digest(payload)), signature: intent.signature, signer: addr(key), intent };
    if ((await recoverIntentSigner(intent)) !== v.signer) throw new Error(`intent ${name}: does not recover its signer`);
    signedCases.push(v);
    return intent;
  };
  const ref = await sign('seed 000 reference example (Vector docs/examples/signed-intent.json, signer Anvil #0)', VECTOR_REFERENCE.unsigned, INTENT_KEYS.alpha);
  if (ref.signature !== VECTOR_REFERENCE.signature || intentHash(ref) !== VECTOR_REFERENCE.intentHash) throw new Error('the seed 000 reference example is not reproduced');
  await sign('PROTOCOL.md §9 example: loose numbers and a +02:00 ttl normalise', { action: 'open', agent_id: 'agent-1', nonce: 42, ttl: '2030-01-01T02:00:00+02:00', size: 1, market: 'BTC-PERP', side: 'long', leverage: 3, max_slippage: 0.005 }, INTENT_KEYS.alpha,
    [{ action: 'open', agent_id: 'agent-1', nonce: '42', ttl: '2030-01-01T00:00:00.000Z', size: '1.000', market: 'BTC-PERP', side: 'long', leverage: '3.0', max_slippage: '5e-3' }]);
  await sign('modify with tp and sl', { action: 'modify', agent_id: 'alpha', nonce: 'n-43', ttl: '2029-12-31T19:00:00-05:00', size: '.25', market: 'ETH-PERP', side: 'short', leverage: '25e-1', max_slippage: '1e-2', tp: '3000.50', sl: '4.2e3' }, INTENT_KEYS.alpha);
  await sign('close (no side, no leverage; -0.0 slippage is 0)', { action: 'close', agent_id: 'alpha', nonce: 44, ttl: T0, size: '1.', market: 'BTC-PERP', max_slippage: '-0.0' }, INTENT_KEYS.alpha);
  await sign('transfer: target address lower-cased', { action: 'transfer', agent_id: 'beta', nonce: 45, ttl: '2030-01-01T00:00:00Z', size: 100, target_address: '0x000000000000000000000000000000000000dEaD' }, INTENT_KEYS.beta);

  // ---- validations: every intent code, and the accepted shapes around them
  const registry = { alpha: addr(INTENT_KEYS.alpha), beta: addr(INTENT_KEYS.beta) };
  const now = T0;
  const good = await signIntent(base, INTENT_KEYS.alpha);
  const s = (over, key = INTENT_KEYS.alpha) => signIntent({ ...base, ...over }, key);
  const drop = (o, ...keys) => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
  const sig = good.signature;
  const transfer = drop({ ...base, action: 'transfer' }, 'side', 'leverage', 'market', 'max_slippage');
  const cases = [
    ['accepted: the base open intent', good],
    ['accepted: ttl equal to now (expiry is exclusive)', await s({ ttl: iso(now) })],
    ['accepted: ttl one skew behind now with clockSkewMs', await s({ ttl: iso(now - 5000) }), { clockSkewMs: 5000 }],
    ['accepted: ttl exactly at the horizon', await s({ ttl: iso(now + 3600000) }), { maxTtlHorizonMs: 3600000 }],
    ['accepted: 18 integer digits (the default limit)', await s({ size: '1'.repeat(18) })],
    ['accepted: slippage 1 (the top of [0, 1])', await s({ max_slippage: '1' })],
    ['accepted: transfer with a target', await signIntent({ ...transfer, target_address: '0x000000000000000000000000000000000000dEaD' }, INTENT_KEYS.alpha)],
    ['invalid_schema: unknown key', { ...good, extra: '1' }],
    ['invalid_schema: missing signature', drop(good, 'signature')],
    ['invalid_schema: ttl without a time zone', { ...good, ttl: '2030-01-01T00:10:00' }],
    ['invalid_schema: side on a transfer is an unknown member for its action', { ...good, action: 'transfer', target_address: '0x000000000000000000000000000000000000dead' }],
    ['invalid_schema: agent_id with a space', { ...good, agent_id: 'al pha' }],
    ['unknown_signer: agent not in the registry', await s({ agent_id: 'gamma' })],
    ['bad_signature: signed by another key', await s({}, INTENT_KEYS.stranger)],
    ['bad_signature: a field altered after signing', { ...good, size: '3' }],
    ['bad_signature: high-s twin of a valid signature', { ...good, signature: highS(sig) }],
    ['bad_signature: v = 0 spelling', { ...good, signature: sig.slice(0, -2) + (sig.endsWith('1b') ? '00' : '01') }],
    ['bad_signature: r = 0', { ...good, signature: '0x' + '0'.repeat(64) + sig.slice(66) }],
    ['replayed_nonce: (alpha, 7) already used', good, {}, [['alpha', '7']]],
    ['accepted: the same nonce used by another agent does not count', good, {}, [['beta', '7']]],
    ['expired: ttl one millisecond before now', await s({ ttl: iso(now - 1) })],
    ['ttl_too_far: one millisecond past the horizon', await s({ ttl: iso(now + 3600001) }), { maxTtlHorizonMs: 3600000 }],
    ['nonpositive_size: size 0', await s({ size: '0' })],
    ['nonpositive_size: negative size', await s({ size: '-1' })],
    ['nonpositive_leverage: leverage 0', await s({ leverage: '0' })],
    ['slippage_out_of_range: slippage above 1', await s({ max_slippage: '1.01' })],
    ['slippage_out_of_range: negative slippage', await s({ max_slippage: '-0.01' })],
    ['nonpositive_tp: tp 0', await s({ tp: '0' })],
    ['nonpositive_sl: negative sl', await s({ sl: '-5' })],
    ['magnitude_exceeded: 19 integer digits', await s({ size: '1'.repeat(19) })],
    ['magnitude_exceeded: 5 integer digits over limits.maxIntegerDigits 4', await s({ size: '12345' }), { limits: { maxIntegerDigits: 4 } }],
    ['scale_exceeded: 19 fraction digits', await s({ size: '0.' + '1'.repeat(19) })],
    ['target_only_on_transfer: target on an open', await s({ target_address: '0x000000000000000000000000000000000000dead' })],
    ['target_required_on_transfer: transfer without a target', await signIntent(transfer, INTENT_KEYS.alpha)],
    ['first failure wins: expired and nonpositive size gives expired (stage d before e)', await s({ ttl: iso(now - 1), size: '0' })],
    ['first failure wins: replayed and expired gives replayed_nonce (c before d)', await s({ ttl: iso(now - 1) }), {}, [['alpha', '7']]],
  ];
  const validations = [];
  for (const [name, intent, options = {}, used = []] of cases) {
    const clean = JSON.parse(JSON.stringify(intent)); // drops undefined members
    const r = await validateIntent(clean, { resolveSigner: (a) => (Object.hasOwn(registry, a) ? registry[a] : null), isNonceUsed: (a, n) => used.some(([ua, un]) => ua === a && un === n), now, ...options });
    const want = name.startsWith('accepted') ? 'ok' : name.startsWith('first failure') ? name.match(/gives (\w+)/)[1] : name.split(':')[0];
    const got = r.ok ? 'ok' : r.code;
    if (got !== want) throw new Error(`intent validation ${name}: expected ${want}, got ${JSON.stringify(r)}`);
    validations.push({ name, intent: clean, ...(Object.keys(options).length ? { options } : {}), ...(used.length ? { usedNonces: used } : {}), expect: r.ok ? { ok: true, intentHash: r.intent_hash, signer: r.signer } : { ok: false, stage: r.stage, code: r.code } });
  }
  for (const c of INTENT_CODES) if (!validations.some((v) => v.expect.code === c)) throw new Error(`no intent validation vector for ${c}`);
  return {
    description: 'Signed Intents (PROTOCOL.md §9, §14). signed: an input, its canonical payload (the signed text), intentHash = 0x ‖ hex(Keccak-256(payload)), the EIP-191 digest, the signature (RFC 6979, low s, v ∈ {27, 28}) by the named key of `keys` and the recovered EIP-55 signer; equivalentInputs normalise to the same payload. The first case is seed 000\'s reference example, reproduced exactly. validations: validateIntent with the registry `registry`, now = `now` (frame time, epoch ms), the used (agent_id, nonce) pairs `usedNonces` and options (clockSkewMs, maxTtlHorizonMs, limits): the accepted hash and signer, or the first failing stage and code (§9 validation order).',
    keys: Object.entries(INTENT_KEYS).map(([name, privateKey]) => ({ name, privateKey, address: addr(privateKey) })),
    registry,
    now,
    signed: signedCases,
    validations,
  };
}
