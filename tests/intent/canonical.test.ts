import fc from 'fast-check';
import { hashMessage, keccak256, stringToBytes, toHex } from 'viem';
import { describe, expect, test } from 'vitest';
import { TallyError } from '../../src/protocol/errors.js';
import { canonicalPayload, eip191Digest, intentHash, unsignedIntentSchema } from '../../src/intent/index.js';
import type { UnsignedIntentInput } from '../../src/intent/index.js';
import { openInput, transferInput } from './helpers.js';

/** Independent RFC 8785 (JCS) serializer for objects whose values are strings. */
function jcsString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0c) out += '\\f';
    else if (c === 0x0d) out += '\\r';
    else if (c < 0x20) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
function jcsObjectOfStrings(obj: Record<string, string>): string {
  // JCS sorts keys by their UTF-16 code units.
  const keys = Object.keys(obj).sort((a, b) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = a.charCodeAt(i) - b.charCodeAt(i);
      if (d !== 0) return d;
    }
    return a.length - b.length;
  });
  return `{${keys.map((k) => `${jcsString(k)}:${jcsString(obj[k] as string)}`).join(',')}}`;
}

const shuffled = <T extends object>(obj: T, order: number[]): T => {
  const entries = Object.entries(obj);
  const out: Array<[string, unknown]> = [];
  const pool = [...entries];
  for (const k of order) if (pool.length > 0) out.push(...pool.splice(k % pool.length, 1));
  out.push(...pool);
  return Object.fromEntries(out) as T;
};

const printable = fc.stringMatching(/^[!-~]{1,40}$/);
const arbIntent = fc.record({
  action: fc.constantFrom('open', 'modify'),
  agent_id: printable,
  nonce: fc.oneof(fc.maxSafeInteger(), printable),
  ttl: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  size: fc.stringMatching(/^[0-9]{1,8}(\.[0-9]{1,8})?$/),
  market: fc.constantFrom('BTC-PERP', 'kPEPE-PERP'),
  side: fc.constantFrom('long', 'short'),
  leverage: fc.integer({ min: 1, max: 100 }),
  max_slippage: fc.integer({ min: 0, max: 10_000 }).map((n) => n / 10_000),
  tp: fc.option(fc.stringMatching(/^[0-9]{1,6}\.[0-9]{1,4}$/), { nil: undefined }),
  target_address: fc.option(fc.stringMatching(/^0x[0-9a-fA-F]{40}$/), { nil: undefined }),
}, { requiredKeys: ['action', 'agent_id', 'nonce', 'ttl', 'size', 'market', 'side', 'leverage', 'max_slippage'] }).map((x) => x as UnsignedIntentInput);

describe('canonical payload', () => {
  test('is the sorted, whitespace-free JSON of the normalized fields', () => {
    expect(canonicalPayload(openInput)).toBe(
      '{"action":"open","agent_id":"agent-1","leverage":"3","market":"BTC-PERP","max_slippage":"0.005","nonce":"1","side":"long","size":"1","ttl":"2030-01-01T00:01:00.000Z"}',
    );
    expect(canonicalPayload(transferInput)).toBe(
      '{"action":"transfer","agent_id":"agent-1","nonce":"3","size":"25","target_address":"0x000000000000000000000000000000000000dead","ttl":"2030-01-01T00:01:00.000Z"}',
    );
  });

  test('equivalent spellings give one payload and hash', () => {
    const spellings = [
      openInput,
      { ...openInput, size: '1.000', leverage: '3.0', max_slippage: '5e-3', nonce: '1', ttl: '2030-01-01T01:01:00+01:00' },
      { ...openInput, size: 1, leverage: 3.0, max_slippage: '.005', ttl: 1_893_456_060_000 },
    ];
    const hashes = new Set(spellings.map((s) => intentHash(s)));
    expect(hashes.size).toBe(1);
    const addressSpellings = [transferInput.target_address, transferInput.target_address.toLowerCase(), `0x${transferInput.target_address.slice(2).toUpperCase()}`];
    expect(new Set(addressSpellings.map((target_address) => canonicalPayload({ ...transferInput, target_address }))).size).toBe(1);
  });

  test('omits absent optionals and excludes the signature', () => {
    expect(canonicalPayload({ ...openInput, tp: undefined })).toBe(canonicalPayload(openInput));
    expect(canonicalPayload({ ...openInput, tp: '1' })).toContain('"tp":"1"');
    const signature = `0x${'11'.repeat(32)}${'22'.repeat(32)}1c`;
    expect(canonicalPayload({ ...openInput, signature })).toBe(canonicalPayload(openInput));
    expect(intentHash({ ...openInput, signature })).toBe(intentHash(openInput));
  });

  test('intent hash is keccak256 of the UTF-8 payload, EIP-191 digest matches viem (cross-check)', () => {
    const payload = canonicalPayload(openInput);
    expect(intentHash(openInput)).toBe(keccak256(stringToBytes(payload)));
    expect(intentHash(openInput)).toMatch(/^0x[0-9a-f]{64}$/);
    expect(toHex(eip191Digest(payload))).toBe(hashMessage(payload));
  });

  test('throws TALLY_INTENT_INVALID on input that does not parse (misuse)', () => {
    expect(() => canonicalPayload({ ...openInput, size: 'abc' })).toThrow(TallyError);
    // Asserted to throw: an assertion inside a catch would pass when nothing throws.
    expect(() => intentHash({} as never)).toThrow(expect.objectContaining({ code: 'TALLY_INTENT_INVALID' }));
    expect(() => canonicalPayload({ ...openInput, size: 'abc' })).toThrow(expect.objectContaining({ code: 'TALLY_INTENT_INVALID' }));
  });

  test('key order never changes the payload or hash (seed 0xc0de)', () => {
    fc.assert(
      fc.property(arbIntent, fc.array(fc.nat(20), { maxLength: 12 }), (input, order) => {
        return intentHash(shuffled(input, order)) === intentHash(input) && canonicalPayload(shuffled(input, order)) === canonicalPayload(input);
      }),
      { seed: 0xc0de, numRuns: 300 },
    );
  });

  test('equals RFC 8785 JCS of the normalized Intent, ASCII only (seed 0x8785)', () => {
    fc.assert(
      fc.property(arbIntent, (input) => {
        const normalized = unsignedIntentSchema.parse(input) as Record<string, string>;
        const payload = canonicalPayload(input);
        return payload === jcsObjectOfStrings(normalized) && /^[\x20-\x7e]*$/.test(payload) && !/\s/.test(payload.replace(/"[^"\\]*(?:\\.[^"\\]*)*"/g, ''));
      }),
      { seed: 0x8785, numRuns: 300 },
    );
  });
});
