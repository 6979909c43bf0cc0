/**
 * The EIP-55 spelling of intent addresses equals viem's `getAddress` (the
 * reference it replaced): the EIP's own vectors, and 500 addresses from a
 * fixed, printed seed.
 */
import { describe, expect, it } from 'vitest';
import { getAddress } from 'viem';
import { checksumAddress, lowerAddress } from '../../src/intent/address.js';

const SEED = 0x5eed55;

/** xorshift32: a fixed sequence of addresses. */
function addresses(seed: number, n: number): string[] {
  let x = seed >>> 0;
  const next = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let hex = '';
    for (let j = 0; j < 5; j++) hex += next().toString(16).padStart(8, '0');
    out.push(`0x${hex}`);
  }
  return out;
}

describe('intent addresses: EIP-55', () => {
  it('spells the EIP-55 vectors', () => {
    for (const v of ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB', '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb']) {
      expect(checksumAddress(v.toLowerCase())).toBe(v);
      expect(checksumAddress(v)).toBe(v);
    }
  });

  it(`equals viem's getAddress on 500 addresses (seed ${SEED})`, () => {
    for (const a of addresses(SEED, 500)) expect(checksumAddress(lowerAddress(a) ?? '')).toBe(getAddress(a));
  });

  it('refuses what is not an address', () => {
    expect(() => checksumAddress('0x123')).toThrow(TypeError);
    expect(() => checksumAddress('f39fd6e51aad88f6f4ce6ab8827279cfffb92266')).toThrow(TypeError);
  });
});
