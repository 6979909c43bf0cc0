/**
 * Golden conformance vector for independent Intent emitters/verifiers.
 *
 * Regenerate (only when the contract changes on purpose):
 *   TALLY_REGEN=1 npx vitest run tests/intent/gen-vector.test.ts
 * Otherwise this test asserts the committed file is byte-for-byte what the
 * code produces, and cross-checks it with viem (hash, EIP-191 digest, ecrecover).
 *
 * Independent reproduction with Foundry (not run in CI):
 *   cast keccak '<canonical_payload>'                       # → intent_hash
 *   cast wallet sign --private-key <key> '<canonical_payload>'  # → signature (EIP-191)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { hashMessage, keccak256, recoverMessageAddress, stringToBytes, toHex } from 'viem';
import { expect, test } from 'vitest';
import { canonicalPayload, eip191Digest, intentHash, recoverIntentSigner, signIntent, validateIntent } from '../../src/intent/index.js';
import type { UnsignedIntentInput } from '../../src/intent/index.js';
import { ANVIL0_ADDRESS, ANVIL0_KEY } from './helpers.js';

const FILE = new URL('./vectors/signed-intent.json', import.meta.url);

interface Spec {
  name: string;
  input: UnsignedIntentInput;
  equivalent_inputs: UnsignedIntentInput[];
}

// Inputs deliberately use loose JS numbers (1.0, .005) and non-UTC zones.
const specs: Spec[] = [
  {
    name: 'open-loose-numbers',
    input: { action: 'open', agent_id: 'agent-1', nonce: 42, ttl: '2030-01-01T02:00:00+02:00', size: 1.0, market: 'BTC-PERP', side: 'long', leverage: 3, max_slippage: .005 },
    equivalent_inputs: [
      { action: 'open', agent_id: 'agent-1', nonce: '42', ttl: '2030-01-01T00:00:00.000Z', size: '1.000', market: 'BTC-PERP', side: 'long', leverage: '3.0', max_slippage: '5e-3' },
      { side: 'long', max_slippage: '0.0050', leverage: 3, market: 'BTC-PERP', size: '+1e0', ttl: 1_893_456_000_000, nonce: 42, agent_id: 'agent-1', action: 'open' },
    ],
  },
  {
    name: 'modify-with-tp-sl',
    input: { action: 'modify', agent_id: 'agent-1', nonce: 'n-43', ttl: '2030-01-01T00:00:00Z', size: '0.25', market: 'ETH-PERP', side: 'short', leverage: 2.5, max_slippage: 0.01, tp: '3000.50', sl: 4200 },
    equivalent_inputs: [{ action: 'modify', agent_id: 'agent-1', nonce: 'n-43', ttl: '2029-12-31T19:00:00-05:00', size: '.25', market: 'ETH-PERP', side: 'short', leverage: '25e-1', max_slippage: '1e-2', tp: 3000.5, sl: '4.2e3' }],
  },
  {
    name: 'close',
    input: { action: 'close', agent_id: 'agent-1', nonce: 44, ttl: '2030-01-01T00:00:00Z', size: 1, market: 'BTC-PERP', max_slippage: 0 },
    equivalent_inputs: [{ action: 'close', agent_id: 'agent-1', nonce: 44, ttl: '2030-01-01T00:00:00Z', size: '1.', market: 'BTC-PERP', max_slippage: '-0.0' }],
  },
  {
    name: 'transfer-to-dead',
    input: { action: 'transfer', agent_id: 'agent-1', nonce: 45, ttl: '2030-01-01T00:00:00Z', size: '100', target_address: '0x000000000000000000000000000000000000dEaD' },
    equivalent_inputs: [{ action: 'transfer', agent_id: 'agent-1', nonce: 45, ttl: '2030-01-01T00:00:00Z', size: 1e2, target_address: '0x000000000000000000000000000000000000DEAD' }],
  },
];

async function build(): Promise<unknown> {
  const vectors = [];
  for (const spec of specs) {
    const intent = await signIntent(spec.input, ANVIL0_KEY);
    const payload = canonicalPayload(spec.input);
    vectors.push({
      name: spec.name,
      input: spec.input,
      equivalent_inputs: spec.equivalent_inputs,
      canonical_payload: payload,
      intent_hash: intentHash(spec.input),
      eip191_digest: toHex(eip191Digest(payload)),
      signature: intent.signature,
      signer: ANVIL0_ADDRESS,
      intent,
    });
  }
  return {
    description:
      'Tally signed-Intent conformance vectors. canonical_payload = stable JSON of the normalized fields except signature (sorted keys, no whitespace, all values strings; equals RFC 8785 JCS). intent_hash = keccak256(utf8(canonical_payload)). signature = EIP-191 personal_sign of canonical_payload (RFC 6979, low-s, v in {27,28}).',
    regenerate: 'TALLY_REGEN=1 npx vitest run tests/intent/gen-vector.test.ts',
    signer: { note: 'Anvil/Hardhat test account #0: a publicly known test key that never holds value', private_key: ANVIL0_KEY, address: ANVIL0_ADDRESS },
    vectors,
  };
}

test('golden vector: emitter output equals the committed file, and an independent verifier agrees', async () => {
  const fresh = `${JSON.stringify(await build(), null, 2)}\n`;
  if (process.env['TALLY_REGEN'] === '1') writeFileSync(FILE, fresh);
  const committed = readFileSync(FILE, 'utf8');
  expect(committed).toBe(fresh);

  const doc = JSON.parse(committed) as { vectors: Array<{ input: UnsignedIntentInput; equivalent_inputs: UnsignedIntentInput[]; canonical_payload: string; intent_hash: string; eip191_digest: string; signature: `0x${string}`; signer: string; intent: Record<string, string> }> };
  expect(doc.vectors).toHaveLength(specs.length);
  for (const v of doc.vectors) {
    // Independent verifier (viem): hash, digest, ecrecover.
    expect(keccak256(stringToBytes(v.canonical_payload))).toBe(v.intent_hash);
    expect(hashMessage(v.canonical_payload)).toBe(v.eip191_digest);
    expect(await recoverMessageAddress({ message: v.canonical_payload, signature: v.signature })).toBe(v.signer);
    // This verifier, from the JSON as read back.
    expect(await recoverIntentSigner(v.intent)).toBe(v.signer);
    const r = await validateIntent(v.intent, { resolveSigner: () => v.signer, isNonceUsed: () => false, now: Date.UTC(2029, 11, 31) });
    expect(r.ok && r.intent_hash).toBe(v.intent_hash);
    // Every equivalent spelling signs identically.
    for (const alt of v.equivalent_inputs) {
      expect(canonicalPayload(alt)).toBe(v.canonical_payload);
      expect((await signIntent(alt, ANVIL0_KEY)).signature).toBe(v.signature);
    }
  }
});
