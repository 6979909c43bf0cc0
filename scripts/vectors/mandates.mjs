// mandates.json (PROTOCOL.md §10, "The principal's signature"): signed
// version-2 mandates — the signed bytes, the EIP-712 typed data and digest in
// full, the signature and the recovered principal — and refusals made by
// mutating a signed spec (one bit of the signature, its high-s twin, a byte of
// the spec, another key, the scheme, the signature removed). Signed with the
// public Hardhat/Anvil test keys. Called by gen-vectors.mjs.
import { privateKeyToAccount } from 'viem/accounts';
import { checkMandateSignature, mandateDigest, mandateSignedText, mandateTypedData, signMandateWithKey } from '../../dist/referee/index.js';
import { toHex } from '../../dist/protocol/index.js';
import { INTENT_KEYS } from './intents.mjs';

/** Anvil #3 (the principal), #4 (operator), #5 (executor), #7 (another key). */
const KEYS = {
  principal: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  operator: '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  executor: '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  other: '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356',
};
const A = (k) => privateKeyToAccount(k).address;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const T0 = 1893456000000;

function baseSpec(name = 'mandate-corpus') {
  return {
    name,
    agents: { alpha: A(INTENT_KEYS.alpha), beta: A(INTENT_KEYS.beta) },
    intent: { maxTtlHorizonMs: 3600000 },
    mandate: {
      version: 2, instance: 'desk-corpus/1', principal: A(KEYS.principal), operator: A(KEYS.operator), executor: A(KEYS.executor),
      actions: ['open', 'close'], markets: ['BTC-PERP'], caps: { size: '5', leverage: '10', slippage: '0.05' }, quota: { cap: '10' }, tx_cap: 6,
      starts_at: T0, expires_at: T0 + 86400000, rules: ['Only long positions.'], judges: [A('0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e')],
    },
  };
}
const sigOf = (spec) => spec.mandate.signature;
const withSig = (spec, signature) => ({ ...spec, mandate: { ...spec.mandate, signature } });
const flipBit = (hex, byte, bit) => {
  const b = Buffer.from(hex.slice(2), 'hex');
  b[byte] ^= 1 << bit;
  return `0x${b.toString('hex')}`;
};
const highS = (hex) => {
  const s = BigInt(`0x${hex.slice(66, 130)}`);
  const v = Number.parseInt(hex.slice(130), 16);
  return `${hex.slice(0, 66)}${(N - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}`;
};

function expectOf(spec) {
  const r = checkMandateSignature(spec);
  return r.ok ? { ok: true, scheme: r.scheme, signer: r.signer } : { ok: false, code: r.code };
}

function signedCase(name, note, spec, scheme) {
  const signed = signMandateWithKey(spec, KEYS.principal, scheme);
  const e = expectOf(signed);
  if (!e.ok) throw new Error(`${name}: does not verify`);
  return {
    name, note, spec: signed, signedText: mandateSignedText(signed), ...(scheme === 'eip712' ? { typedData: mandateTypedData(signed) } : {}),
    digest: `0x${toHex(mandateDigest(signed, scheme))}`, signature: sigOf(signed).value, expect: e,
  };
}

function refused(name, note, spec, code) {
  const e = expectOf(spec);
  if (e.ok || e.code !== code) throw new Error(`${name}: expected ${code}, got ${JSON.stringify(e)}`);
  return { name, note, spec, expect: e };
}

export function mandateVectors() {
  const spec = baseSpec();
  const s712 = signMandateWithKey(spec, KEYS.principal, 'eip712');
  const s191 = signMandateWithKey(spec, KEYS.principal, 'eip191');
  const v712 = sigOf(s712).value;
  const cases = [
    signedCase('eip712: signed by the principal (Anvil #3)', 'EIP-712 typed data; domain {name "Tally mandate", version "2"}; digest = keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(Mandate))', spec, 'eip712'),
    signedCase('eip191: signed by the principal (Anvil #3)', 'personal_sign over "tally/referee/v2|mandate|" ‖ signedText', spec, 'eip191'),
    signedCase('eip712: a mandate with non-ASCII rule text (strings hash as UTF-8)', 'the rule "Nur Long-Positionen — keine Hebel über 3×." in the signed text and the typed string', { ...spec, mandate: { ...spec.mandate, rules: ['Nur Long-Positionen — keine Hebel über 3×.'] } }, 'eip712'),
    refused('unsigned: the signature member removed', 'a version-2 mandate without signature', spec, 'mandate_unsigned'),
    refused('signed by another key (Anvil #7)', 'recovers to the other key, not the principal', signMandateWithKey(spec, KEYS.other, 'eip712'), 'mandate_bad_signature'),
    refused('one bit of r flipped', 'byte 5 bit 0 of the eip712 signature', withSig(s712, { scheme: 'eip712', value: flipBit(v712, 5, 0) }), 'mandate_bad_signature'),
    refused('one bit of s flipped', 'byte 40 bit 3 of the eip712 signature', withSig(s712, { scheme: 'eip712', value: flipBit(v712, 40, 3) }), 'mandate_bad_signature'),
    refused('the high-s twin', 's replaced by n − s and v flipped: a valid ECDSA signature, refused (low s only)', withSig(s712, { scheme: 'eip712', value: highS(v712) }), 'mandate_bad_signature'),
    refused('v spelled 0/1', 'v = 27 written as 00', withSig(s712, { scheme: 'eip712', value: `${v712.slice(0, 130)}${(Number.parseInt(v712.slice(130), 16) - 27).toString(16).padStart(2, '0')}` }), 'mandate_bad_signature'),
    refused('scheme swapped (an eip712 signature labelled eip191)', 'the digest of the other scheme', withSig(s712, { scheme: 'eip191', value: v712 }), 'mandate_bad_signature'),
    refused('the eip191 signature labelled eip712', 'the digest of the other scheme', withSig(s191, { scheme: 'eip712', value: sigOf(s191).value }), 'mandate_bad_signature'),
    refused('quota.cap raised after signing', 'one figure of the mandate edited', { ...s712, mandate: { ...s712.mandate, quota: { cap: '1000' } } }, 'mandate_bad_signature'),
    refused('an agent added after signing', 'spec.agents is signed with the mandate', { ...s712, agents: { ...s712.agents, mallory: A(INTENT_KEYS.stranger) } }, 'mandate_bad_signature'),
    refused('another day: spec.name changed', 'the same signed mandate in a second session', { ...s712, name: 'mandate-corpus-2' }, 'mandate_bad_signature'),
    refused('the principal replaced by the signer of a forged copy', 'principal set to Anvil #7 after the principal signed', { ...s712, mandate: { ...s712.mandate, principal: A(KEYS.other) } }, 'mandate_bad_signature'),
    refused('signature with an extra member', '{scheme, value, by}', withSig(s712, { scheme: 'eip712', value: v712, by: 'principal' }), 'mandate_bad_signature'),
    refused('signature value truncated to 64 bytes', 'r ‖ s without v', withSig(s712, { scheme: 'eip712', value: v712.slice(0, 130) }), 'mandate_bad_signature'),
  ];
  return {
    description:
      'Principal-signed mandates (PROTOCOL.md §10, "The principal\'s signature"). spec: a session spec with a version-2 mandate and its signature {scheme, value}. signedText: canonical JSON of the spec without mandate.signature (what is signed). typedData (eip712): the EIP-712 typed data a wallet signs (domain, types, primaryType, message; message.spec = signedText). digest: the 32-byte digest the key signs (EIP-712, or EIP-191 of "tally/referee/v2|mandate|" ‖ signedText). signature: r ‖ s ‖ v (RFC 6979, so byte-equal). expect: {ok, scheme, signer (lowercase, = mandate.principal)} or {ok: false, code: mandate_unsigned | mandate_bad_signature}; the refusals are mutations of the first case.',
    keys: Object.entries(KEYS).map(([name, privateKey]) => ({ name, privateKey, address: A(privateKey) })),
    cases,
  };
}
