/**
 * docs/vectors/sd-jwt-examples.json — the SD-JWTs RFC 9901 and AP2's documentation publish —
 * against Tally's verifier (src/mandates) and the independent RFC 9901 verifier (./rfc9901.ts):
 * every published digest recomputed, every example given the answer the corpus names (accepted
 * under its own typ where its key is published, refused with the code Tally's AP2 profile
 * gives), every mutation refused, and the two verifiers agreeing wherever the RFC alone decides.
 */
import { readFileSync } from 'node:fs';
import type { JsonWebKey } from 'node:crypto';
import fc from 'fast-check';
import { compactVerify, importJWK, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { b64sha256, disclosureDigest, verifyOpenMandate, verifySdJwt } from '../../src/mandates/index.js';
import { independentVerify } from './rfc9901.js';

interface Example {
  name: string; source: string; compact: string; issuer: string | null; holder?: string;
  ap2: string; typed: { typ: string; kid: 'required' | 'optional'; expect: string };
  kb?: { expect: string; sdHash: string }; sdHashOf?: string; claims?: Record<string, unknown>;
}
interface Vectors {
  sources: { id: string; repo: string; commit: string; licence: string }[];
  keys: Record<string, { public: JWK }>;
  disclosures: { source: string; where: string; disclosure: string; digest: string; contents: unknown[] }[];
  listedDigests: { example: string; listed: string; isADisclosureDigest: boolean }[];
  examples: Example[];
  mutations: { name: string; of: string; compact: string; expect: string; rfcFails?: 'signature' | 'disclosuresReferenced' | 'kbSignature' | 'sdHash'; kb?: { expect: string } }[];
}
const V = JSON.parse(readFileSync(new URL('../../docs/vectors/sd-jwt-examples.json', import.meta.url), 'utf8')) as Vectors;
const key = (k: string): JWK => V.keys[k]!.public;
const sdPart = (c: string) => c.slice(0, c.lastIndexOf('~') + 1);
const kbOf = (c: string) => c.slice(c.lastIndexOf('~') + 1);
const NOW = 1_700_000_000; // inside every example's iat..exp

/** The KB-JWT of a presentation under the holder key (jose, as closed.ts checks it), then its sd_hash (Tally's b64sha256). */
async function kbAnswer(compact: string, holder: JWK): Promise<string> {
  try {
    await compactVerify(kbOf(compact), await importJWK(holder, 'ES256'), { algorithms: ['ES256'] });
  } catch {
    return 'kb-signature';
  }
  const payload = JSON.parse(Buffer.from(kbOf(compact).split('.')[1]!, 'base64url').toString('utf8')) as { sd_hash?: string };
  return payload.sd_hash === b64sha256(sdPart(compact)) ? 'ok' : 'kb-sd-hash';
}
const typedAnswer = async (compact: string, jwk: JWK, rule: Example['typed']) => {
  const r = await verifySdJwt(sdPart(compact), jwk, { typ: rule.typ, kid: rule.kid });
  return r.ok ? 'ok' : r.code;
};

describe('the specs\' own SD-JWT examples (docs/vectors/sd-jwt-examples.json)', () => {
  it('name their sources with a commit and a licence, and cover both specs', () => {
    for (const s of V.sources) expect(s).toMatchObject({ repo: expect.stringMatching(/\//), commit: expect.stringMatching(/^[0-9a-f]{40}$/), licence: expect.any(String) });
    expect(new Set(V.examples.map((e) => e.source))).toEqual(new Set(['rfc9901', 'ap2']));
    expect(V.disclosures.filter((d) => d.source === 'rfc9901').length).toBeGreaterThanOrEqual(80);
  });

  it('every published disclosure digest is what Tally recomputes, and the contents are the disclosure\'s JSON', () => {
    for (const d of V.disclosures) {
      expect(disclosureDigest(d.disclosure), d.where).toBe(d.digest);
      expect(JSON.parse(Buffer.from(d.disclosure, 'base64url').toString('utf8'))).toEqual(d.contents);
    }
  });

  it('AP2\'s JSON renderings list two digests that are not those of the encoded tokens\' disclosures (one transcription slip, one sd_hash)', () => {
    expect(V.listedDigests.filter((l) => !l.isADisclosureDigest).map((l) => l.example)).toEqual(['ap2-open-checkout-mandate', 'ap2-closed-checkout-mandate']);
  });

  it.each(V.examples.map((e) => [e.name, e] as const))('%s', async (_n, e) => {
    const issuers = e.issuer === null ? Object.keys(V.keys) : [e.issuer];
    for (const k of issuers) {
      expect(await typedAnswer(e.compact, key(k), e.typed), `typed under ${k}`).toBe(e.typed.expect);
      const ind = independentVerify(e.compact, key(k) as JsonWebKey, e.holder ? (key(e.holder) as JsonWebKey) : undefined);
      expect(ind.signature, `independent signature under ${k}`).toBe(e.typed.expect === 'ok');
      expect(ind.disclosuresReferenced).toBe(true);
      if (e.kb) expect(ind).toMatchObject({ kbSignature: true, sdHash: true });
    }
    const asMandate = await verifyOpenMandate(sdPart(e.compact), { issuerKey: key(e.issuer ?? 'rfc9901-issuer'), now: NOW });
    expect(asMandate.ok ? 'ok' : asMandate.code).toBe(e.ap2);
    if (e.kb) {
      expect(await kbAnswer(e.compact, key(e.holder!))).toBe(e.kb.expect);
      expect(b64sha256(sdPart(e.compact))).toBe(e.kb.sdHash);
    }
    if (e.sdHashOf) {
      const payload = JSON.parse(Buffer.from(e.compact.split('.')[1]!, 'base64url').toString('utf8')) as { sd_hash: string };
      expect(b64sha256(V.examples.find((o) => o.name === e.sdHashOf)!.compact)).toBe(payload.sd_hash);
    }
    if (e.claims) {
      const r = await verifySdJwt(sdPart(e.compact), key(e.issuer!), { typ: e.typed.typ, kid: e.typed.kid });
      expect(r.ok && r.value.claims).toEqual(e.claims);
    }
  });

  it('has a mutation of each kind from every signed example', () => {
    for (const e of V.examples.filter((x) => x.typed.expect === 'ok')) {
      const kinds = V.mutations.filter((m) => m.of === e.name).map((m) => m.name.split('/')[1]);
      expect(kinds).toEqual(expect.arrayContaining(['signature-flipped', 'payload-edited', 'padded', ...(e.kb ? ['kb-after-dropping-a-disclosure', 'kb-signature-flipped'] : [])]));
    }
  });

  it.each(V.mutations.map((m) => [m.name, m] as const))('mutation %s', async (_n, m) => {
    const of = V.examples.find((e) => e.name === m.of)!;
    expect(await typedAnswer(m.compact, key(of.issuer!), of.typed)).toBe(m.expect);
    const ind = independentVerify(m.compact, key(of.issuer!) as JsonWebKey, of.holder ? (key(of.holder) as JsonWebKey) : undefined);
    if (m.rfcFails) expect(ind[m.rfcFails], `independent verifier on ${m.rfcFails}`).toBe(false);
    if (m.kb) expect(await kbAnswer(m.compact, key(of.holder!))).toBe(m.kb.expect);
  });
});

const FUZZ_SEED = 0x9901;
describe(`one character of RFC 9901's §5.1 SD-JWT replaced is refused, never accepted (seed ${FUZZ_SEED.toString(16)})`, () => {
  it('anywhere in the JWT, a disclosure or a separator', async () => {
    const e = V.examples.find((x) => x.name === 'rfc9901-5.1-issuance')!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_~.='.split('');
    await fc.assert(fc.asyncProperty(fc.nat({ max: e.compact.length - 2 }), fc.constantFrom(...alphabet), async (i, c) => {
      fc.pre(e.compact[i] !== c);
      const mutated = e.compact.slice(0, i) + c + e.compact.slice(i + 1);
      expect(await typedAnswer(mutated, key('rfc9901-issuer'), e.typed)).not.toBe('ok');
    }), { seed: FUZZ_SEED, numRuns: 300 });
  });
});
