import fc from 'fast-check';
import { recoverMessageAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, test } from 'vitest';
import { TallyError } from '../../src/protocol/errors.js';
import {
  canonicalPayload,
  createSignerCache,
  recoverIntentSigner,
  signIntent,
  verifyIntentSignature,
} from '../../src/intent/index.js';
import type { UnsignedIntentInput } from '../../src/intent/index.js';
import { checkSignature } from '../../src/intent/check-signature.js';
import { SECP256K1_N, parseSignature } from '../../src/intent/signature.js';
import { ANVIL0_ADDRESS, ANVIL0_KEY, ANVIL1_KEY, anvil0, anvil1, hostileValues, openInput, transferInput } from './helpers.js';

const flipNibble = (sig: string, index: number): string => {
  const pos = 2 + index; // after 0x
  const c = sig[pos] as string;
  const flipped = (parseInt(c, 16) ^ 0x8).toString(16);
  return sig.slice(0, pos) + flipped + sig.slice(pos + 1);
};

/** The malleable twin (r, n − s, v ⊕ 1) of a low-s signature. */
const highSTwin = (sig: string): string => {
  const s = BigInt(`0x${sig.slice(66, 130)}`);
  const v = parseInt(sig.slice(130), 16);
  return `${sig.slice(0, 66)}${(SECP256K1_N - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}`;
};

/** Reference: canonical-encoding precheck, then viem recovery and compare. */
async function referenceVerify(payload: string, signature: string, expectedLower: string): Promise<boolean> {
  if (!parseSignature(signature).ok) return false;
  try {
    return (await recoverMessageAddress({ message: payload, signature: signature as `0x${string}` })).toLowerCase() === expectedLower;
  } catch {
    return false;
  }
}

describe('signIntent / recoverIntentSigner / verifyIntentSignature', () => {
  test('round trip: the harness signature recovers to the signing address', async () => {
    for (const input of [openInput, transferInput]) {
      const intent = await signIntent(input, ANVIL0_KEY);
      expect(intent.signature).toMatch(/^0x[0-9a-f]{128}1[bc]$/);
      expect(await recoverIntentSigner(intent)).toBe(ANVIL0_ADDRESS);
      expect(await verifyIntentSignature(intent, ANVIL0_ADDRESS)).toBe(true);
      expect(await verifyIntentSignature(intent, anvil1.address)).toBe(false);
    }
    expect((await signIntent(openInput, anvil0)).signature).toBe((await signIntent(openInput, ANVIL0_KEY)).signature); // RFC 6979
  });

  test('address comparison is checksum-insensitive', async () => {
    const intent = await signIntent(openInput, ANVIL0_KEY);
    for (const spelling of [ANVIL0_ADDRESS, ANVIL0_ADDRESS.toLowerCase(), `0x${ANVIL0_ADDRESS.slice(2).toUpperCase()}`]) {
      expect(await verifyIntentSignature(intent, spelling)).toBe(true);
    }
    expect(await verifyIntentSignature({ ...intent, signature: intent.signature.toUpperCase().replace('0X', '0x') }, ANVIL0_ADDRESS)).toBe(true);
  });

  test('every single flipped nibble of the signature fails', async () => {
    const intent = await signIntent(openInput, ANVIL0_KEY);
    for (let i = 0; i < 130; i++) {
      const tampered = { ...intent, signature: flipNibble(intent.signature, i) };
      expect(await verifyIntentSignature(tampered, ANVIL0_ADDRESS)).toBe(false);
      expect(await recoverIntentSigner(tampered)).not.toBe(ANVIL0_ADDRESS);
    }
  });

  test('changing any signed field after signing fails', async () => {
    const intent = await signIntent(openInput, ANVIL0_KEY);
    const mutations = [{ size: '1.0001' }, { leverage: '4' }, { nonce: '2' }, { ttl: '2030-01-01T00:01:00.001Z' }, { side: 'short' }, { market: 'ETH-PERP' }, { tp: '1' }, { agent_id: 'agent-2' }];
    for (const m of mutations) expect(await verifyIntentSignature({ ...intent, ...m }, ANVIL0_ADDRESS)).toBe(false);
  });

  test('a malleable high-s twin and v ∈ {0, 1} encodings are rejected', async () => {
    const intent = await signIntent(openInput, ANVIL0_KEY);
    const twin = highSTwin(intent.signature);
    // The twin IS a valid signature by the same key to plain ecrecover...
    expect(await recoverMessageAddress({ message: canonicalPayload(intent), signature: twin as `0x${string}` })).toBe(ANVIL0_ADDRESS);
    // ...and is refused here.
    expect(await verifyIntentSignature({ ...intent, signature: twin }, ANVIL0_ADDRESS)).toBe(false);
    expect(await recoverIntentSigner({ ...intent, signature: twin })).toBeNull();
    const v01 = `${intent.signature.slice(0, 130)}${intent.signature.endsWith('1b') ? '00' : '01'}`;
    expect(await recoverMessageAddress({ message: canonicalPayload(intent), signature: v01 as `0x${string}` })).toBe(ANVIL0_ADDRESS);
    expect(await verifyIntentSignature({ ...intent, signature: v01 }, ANVIL0_ADDRESS)).toBe(false);
  });

  test('flipping only v (same r, s) fails on both paths — a plain ECDSA verify would accept it', async () => {
    const intent = await signIntent(openInput, ANVIL0_KEY);
    const flippedV = `${intent.signature.slice(0, 130)}${intent.signature.endsWith('1b') ? '1c' : '1b'}`;
    const cache = createSignerCache();
    cache.register(anvil0.publicKey);
    expect(await verifyIntentSignature({ ...intent, signature: flippedV }, ANVIL0_ADDRESS, { signerCache: cache })).toBe(false);
    expect(await verifyIntentSignature({ ...intent, signature: flippedV }, ANVIL0_ADDRESS)).toBe(false);
    expect(await verifyIntentSignature(intent, ANVIL0_ADDRESS, { signerCache: cache })).toBe(true);
  });

  test('never throws: hostile intents and addresses give null / false', async () => {
    const intent = await signIntent(openInput, ANVIL0_KEY);
    for (const h of hostileValues()) {
      await expect(recoverIntentSigner(h)).resolves.toBeNull();
      await expect(verifyIntentSignature(h, ANVIL0_ADDRESS)).resolves.toBe(false);
      await expect(verifyIntentSignature(intent, h as string)).resolves.toBe(false);
    }
    for (const signature of ['0x', `0x${'00'.repeat(65)}`, `0x${'ff'.repeat(65)}`, `0x${'00'.repeat(64)}1b`, `${intent.signature}00`, intent.signature.slice(0, 130)]) {
      await expect(recoverIntentSigner({ ...intent, signature })).resolves.toBeNull();
      await expect(verifyIntentSignature({ ...intent, signature }, ANVIL0_ADDRESS)).resolves.toBe(false);
    }
  });

  const arbUnsigned = fc
    .record({
      action: fc.constantFrom('open', 'modify'),
      agent_id: fc.stringMatching(/^[!-~]{1,24}$/),
      nonce: fc.oneof(fc.maxSafeInteger(), fc.stringMatching(/^[!-~]{1,24}$/)),
      ttl: fc.integer({ min: 0, max: 4_102_444_800_000 }),
      size: fc.stringMatching(/^[1-9][0-9]{0,6}(\.[0-9]{1,6})?$/),
      market: fc.constantFrom('BTC-PERP', 'kPEPE-PERP'),
      side: fc.constantFrom('long', 'short'),
      leverage: fc.integer({ min: 1, max: 50 }),
      max_slippage: fc.integer({ min: 0, max: 1000 }).map((n) => n / 1000),
    })
    .map((x) => x as UnsignedIntentInput);

  test('round trip and single-nibble tamper over random Intents and keys (seed 0x5167)', async () => {
    const signers = [ANVIL0_KEY, ANVIL1_KEY] as const;
    await fc.assert(
      fc.asyncProperty(arbUnsigned, fc.nat(1), fc.nat(129), async (input, k, nibble) => {
        const key = signers[k]!;
        const address = privateKeyToAccount(key).address;
        const intent = await signIntent(input, key);
        expect(await recoverIntentSigner(intent)).toBe(address);
        expect(await verifyIntentSignature(intent, address.toLowerCase())).toBe(true);
        expect(await verifyIntentSignature({ ...intent, signature: flipNibble(intent.signature, nibble) }, address)).toBe(false);
      }),
      { seed: 0x5167, numRuns: 60 },
    );
  });

  test('signIntent rejects misuse with coded errors', async () => {
    await expect(signIntent({ ...openInput, size: 'x' }, ANVIL0_KEY)).rejects.toMatchObject({ code: 'TALLY_INTENT_INVALID' });
    await expect(signIntent(openInput, '0x1234')).rejects.toMatchObject({ code: 'TALLY_INTENT_SIGNER_INVALID' });
    await expect(signIntent(openInput, `0x${'00'.repeat(32)}`)).rejects.toBeInstanceOf(TallyError);
  });
});

describe('signer cache fast path', () => {
  test('fills itself on the first recovery and registers keys up front', async () => {
    const cache = createSignerCache();
    const intent = await signIntent(openInput, ANVIL0_KEY);
    expect(cache.has(ANVIL0_ADDRESS)).toBe(false);
    expect(await verifyIntentSignature(intent, anvil1.address, { signerCache: cache })).toBe(false);
    expect(cache.size).toBe(0); // a failed recovery caches nothing
    expect(await verifyIntentSignature(intent, ANVIL0_ADDRESS, { signerCache: cache })).toBe(true);
    expect(cache.has(ANVIL0_ADDRESS.toUpperCase().replace('0X', '0x'))).toBe(true);
    expect(cache.register(anvil1.publicKey)).toBe(anvil1.address.toLowerCase());
    expect(cache.size).toBe(2);
    expect(() => cache.register('0x04deadbeef')).toThrow(TallyError);
    cache.clear();
    expect(cache.size).toBe(0);
  });

  test('evicts the least recently used key', () => {
    const cache = createSignerCache({ maxEntries: 2 });
    const k2 = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
    cache.register(anvil0.publicKey);
    cache.register(anvil1.publicKey);
    expect(checkSignature('x', `0x${'00'.repeat(65)}`, anvil0.address.toLowerCase(), cache).ok).toBe(false); // does not touch recency (bad encoding)
    cache.register(k2.publicKey);
    expect([cache.has(anvil0.address), cache.has(anvil1.address), cache.has(k2.address)]).toEqual([false, true, true]);
    expect(() => createSignerCache({ maxEntries: 0 })).toThrow(TallyError);
  });

  // A small pool of keys keeps the per-key table build (~20 ms) out of the loop.
  const keys = [ANVIL0_KEY, ANVIL1_KEY, '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a', '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6'] as const;
  const accounts = keys.map((k) => privateKeyToAccount(k));
  const cache = createSignerCache();
  for (const a of accounts) cache.register(a.publicKey);

  const tamper = fc.oneof(
    fc.constant({ kind: 'none' as const }),
    fc.record({ kind: fc.constant('nibble' as const), index: fc.nat(129) }),
    fc.constant({ kind: 'flip-v' as const }),
    fc.record({ kind: fc.constant('other-key' as const), key: fc.nat(keys.length - 1) }),
    fc.record({ kind: fc.constant('random' as const), r: fc.bigInt({ min: 1n, max: SECP256K1_N - 1n }), s: fc.bigInt({ min: 1n, max: SECP256K1_N >> 1n }), v: fc.constantFrom(27, 28) }),
  );

  test('cached verification ≡ recovery ≡ viem recovery on random keys, messages and tampering (seed 0xfa57)', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.nat(keys.length - 1), fc.string({ unit: 'grapheme', maxLength: 200 }), tamper, async (k, message, t) => {
        const account = accounts[k]!;
        let signature = await account.signMessage({ message });
        if (t.kind === 'nibble') signature = flipNibble(signature, t.index) as `0x${string}`;
        if (t.kind === 'flip-v') signature = `${signature.slice(0, 130)}${signature.endsWith('1b') ? '1c' : '1b'}` as `0x${string}`;
        if (t.kind === 'other-key') signature = await accounts[t.key]!.signMessage({ message });
        if (t.kind === 'random') signature = `0x${t.r.toString(16).padStart(64, '0')}${t.s.toString(16).padStart(64, '0')}${t.v.toString(16)}`;
        const expected = account.address.toLowerCase();
        const fast = checkSignature(message, signature, expected, cache).ok;
        const slow = checkSignature(message, signature, expected).ok;
        const reference = await referenceVerify(message, signature, expected);
        if (fast) accepted++;
        expect(fast).toBe(reference);
        expect(slow).toBe(reference);
      }),
      { seed: 0xfa57, numRuns: 250 },
    );
    expect(accepted).toBeGreaterThan(20); // the property exercised both outcomes
  });
});
