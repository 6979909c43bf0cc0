/**
 * The mandates layer's byte seam (src/mandates/digest.ts) against the Node
 * conversions it replaced, as properties (printed seed): every function must
 * give exactly what `Buffer` and node:crypto gave, so moving the layer off
 * Node (for the grader's page) changes no digest, no id and no verdict.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asciiBytes, b64sha256, canonicalB64url, hexSha256, sdJwtHasher, toBase64url, utf8Text } from '../../src/mandates/digest.js';

const SEED = 0xd16e57;
const runs = { seed: SEED, numRuns: 500 };

/** The rule canonicalB64url replaced: Buffer's lenient decode, kept only when it re-encodes to the text. */
function bufferCanonical(s: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(s) || s.length % 4 === 1) return undefined;
  const b = Buffer.from(s, 'base64url');
  return b.toString('base64url') === s ? new Uint8Array(b) : undefined;
}
const B64URL_CHARS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'];
// Text that is mostly base64url, sometimes padded, standard-alphabet or stray.
const b64ish = fc.array(fc.oneof({ weight: 20, arbitrary: fc.constantFrom(...B64URL_CHARS) }, { weight: 1, arbitrary: fc.constantFrom('=', '+', '/', ' ', '.', '~', 'é') }), { maxLength: 24 }).map((a) => a.join(''));

describe(`the mandates byte seam equals the Node conversions it replaced (seed ${SEED.toString(16)})`, () => {
  it('asciiBytes is Buffer.from(text, "ascii"), for any UTF-16 text', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => {
      expect(asciiBytes(s)).toEqual(new Uint8Array(Buffer.from(s, 'ascii')));
    }), runs);
  });

  it('utf8Text is Buffer#toString("utf8"), for any bytes (a BOM kept, ill-formed input replaced alike)', () => {
    fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 20 }).map((b) => new Uint8Array([0xef, 0xbb, 0xbf, ...b]))), (b) => {
      expect(utf8Text(b)).toBe(Buffer.from(b).toString('utf8'));
    }), runs);
  });

  it('toBase64url is Buffer#toString("base64url"); canonicalB64url accepts and decodes exactly what the Buffer round trip did', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 40 }), (b) => {
      const text = Buffer.from(b).toString('base64url');
      expect(toBase64url(b)).toBe(text);
      if (text !== '') expect(canonicalB64url(text)).toEqual(b);
    }), runs);
    fc.assert(fc.property(b64ish, (s) => {
      expect(canonicalB64url(s)).toEqual(bufferCanonical(s));
    }), runs);
  });

  it('the digests are node:crypto SHA-256 in the encodings they replaced', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.uint8Array({ maxLength: 64 }), (s, b) => {
      expect(b64sha256(s)).toBe(createHash('sha256').update(s, 'ascii').digest('base64url'));
      expect(hexSha256(b)).toBe(createHash('sha256').update(b).digest('hex'));
      expect(sdJwtHasher(s)).toEqual(new Uint8Array(createHash('sha256').update(Buffer.from(s, 'ascii')).digest()));
      expect(sdJwtHasher(b.slice().buffer)).toEqual(new Uint8Array(createHash('sha256').update(b).digest()));
    }), runs);
  });
});

describe('turn members hashed as ASCII are compact text (base64url, `.`, `~`) or the turn is malformed', () => {
  it('refuses a non-ASCII member, which asciiBytes would map onto another text', async () => {
    const { readTurn } = await import('../../src/mandates/ruler.js');
    const { readCheckoutTurn, readViTurn, readViPairTurn } = await import('../../src/mandates/index.js');
    const enc = (v: Record<string, string>) => new TextEncoder().encode(JSON.stringify(Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))));
    // 'é' (U+00E9) and 'ǩ' (U+01E9) have the same low byte: as ASCII they hash alike.
    expect(b64sha256('a.é')).toBe(b64sha256('a.ǩ'));
    const ok = { checkout_jwt: 'e30.e30.c2ln', open_checkout: 'e30.e30.c2ln~', payment: 'e30.e30.c2ln~WyJhIl0~' };
    expect(readTurn(enc(ok))).toEqual({ checkoutJwt: ok.checkout_jwt, openCheckout: ok.open_checkout, payment: ok.payment });
    for (const k of Object.keys(ok) as (keyof typeof ok)[]) expect(readTurn(enc({ ...ok, [k]: `${ok[k]}é` })), k).toBeUndefined();
    expect(readViTurn(enc({ checkout_jwt: ok.checkout_jwt, payment: ok.payment }))).toBeDefined();
    expect(readViTurn(enc({ checkout_jwt: `${ok.checkout_jwt}ǩ`, payment: ok.payment }))).toBeUndefined();
    expect(readCheckoutTurn(enc({ checkout: ok.payment }))).toBe(ok.payment);
    expect(readCheckoutTurn(enc({ checkout: `${ok.payment} ` }))).toBeUndefined();
    expect(readViPairTurn(enc({ checkout: ok.payment, payment: `${ok.payment}é` }))).toBeUndefined();
  });
});
