/**
 * A second SD-JWT verifier, written from RFC 9901 (§4, §7.1, §7.3) with
 * node:crypto only — no @sd-jwt, no jose, nothing from src/ — so a mistake
 * shared with the library Tally uses cannot pass both. It answers only what
 * the RFC fixes: the issuer's ES256 signature, that every released disclosure
 * is referenced by a digest in the signed payload or another disclosure, and
 * the KB-JWT's signature and sd_hash.
 */
import { createHash, createPublicKey, verify as ecVerify, type JsonWebKey } from 'node:crypto';

const b64 = (s: string): Buffer => Buffer.from(s, 'base64url');
const json = (s: string): unknown => JSON.parse(b64(s).toString('utf8'));

/** JWS ES256 (RFC 7515/7518 §3.4): signature is r||s over ASCII(header.payload). */
export function es256(jws: string, jwk: JsonWebKey): boolean {
  const [h, p, s] = jws.split('.');
  if (h === undefined || p === undefined || s === undefined) return false;
  const header = json(h) as { alg?: string };
  if (header.alg !== 'ES256') return false;
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } as JsonWebKey, format: 'jwk' });
  return ecVerify('sha256', Buffer.from(`${h}.${p}`, 'ascii'), { key, dsaEncoding: 'ieee-p1363' }, b64(s));
}

function digests(v: unknown, out: Set<string>): void {
  if (Array.isArray(v)) for (const e of v) {
    if (e && typeof e === 'object' && !Array.isArray(e) && typeof (e as Record<string, unknown>)['...'] === 'string') out.add((e as Record<string, string>)['...']!);
    else digests(e, out);
  }
  else if (v && typeof v === 'object') for (const [k, e] of Object.entries(v)) {
    if (k === '_sd' && Array.isArray(e)) for (const d of e) out.add(String(d));
    else digests(e, out);
  }
}

export interface IndependentVerdict {
  readonly signature: boolean;
  readonly disclosuresReferenced: boolean;
  /** Only for a presentation ending in a KB-JWT. */
  readonly kbSignature?: boolean;
  readonly sdHash?: boolean;
}

/** RFC 9901 checks of `<jwt>~<d>~…~[<kb>]`. */
export function independentVerify(compact: string, issuer: JsonWebKey, holder?: JsonWebKey): IndependentVerdict {
  const parts = compact.split('~');
  const jwt = parts[0]!;
  const kb = parts[parts.length - 1]!;
  const ds = parts.slice(1, -1);
  let signature = false;
  try { signature = es256(jwt, issuer); } catch { signature = false; }
  const referenced = new Set<string>();
  try {
    digests(json(jwt.split('.')[1]!), referenced);
    for (const d of ds) { const arr = json(d) as unknown[]; digests(arr[arr.length - 1], referenced); }
  } catch { return { signature, disclosuresReferenced: false }; }
  // §4.2.3: the digest is over the ASCII bytes of the base64url disclosure text.
  const disclosuresReferenced = ds.every((d) => referenced.has(createHash('sha256').update(d, 'ascii').digest('base64url')));
  if (kb === '' || !holder) return { signature, disclosuresReferenced };
  let kbSignature = false;
  try { kbSignature = es256(kb, holder); } catch { kbSignature = false; }
  // §4.3.1: sd_hash covers everything up to and including the last ~.
  const sdPart = compact.slice(0, compact.length - kb.length);
  const claimed = (json(kb.split('.')[1]!) as { sd_hash?: string }).sd_hash;
  return { signature, disclosuresReferenced, kbSignature, sdHash: claimed === createHash('sha256').update(sdPart, 'ascii').digest('base64url') };
}
