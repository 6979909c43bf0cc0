/**
 * RFC 9901 SD-JWT verification for AP2 mandates: the canonical compact form,
 * the issuer's ES256 signature (jose), the released disclosures and their
 * digests, and the claims they reconstruct (@sd-jwt/core). Tally adds only
 * what the libraries leave to the verifier: strict JSON everywhere, exact
 * number text, and RFC 9901 §7.1's rejection rules (a disclosure no digest
 * references, a digest used twice).
 */
import { SDJwt } from '@sd-jwt/core';
import { compactVerify, importJWK, type JWK } from 'jose';
import { parseStrictJson } from '../protocol/index.js';
import { refuse, type MandateResult } from './codes.js';
import { b64sha256, canonicalB64url, sdJwtHasher, utf8Text } from './digest.js';

export { canonicalB64url } from './digest.js';

/** An issuer-signed SD-JWT after every check: its parts as received and the reconstructed claims. */
export interface VerifiedSdJwt {
  /** The issuer-signed JWT, byte for byte. */
  readonly jwt: string;
  /** The released disclosures, byte for byte, in the order presented. */
  readonly disclosures: readonly string[];
  readonly header: Readonly<Record<string, unknown>>;
  /** The payload as signed (with `_sd` digests). */
  readonly signed: Readonly<Record<string, unknown>>;
  /** The payload with every released disclosure substituted (no `_sd`, `_sd_alg`, `...`). */
  readonly claims: Readonly<Record<string, unknown>>;
}

/** The RFC 9901 digest of a disclosure: base64url(SHA-256(ASCII of its base64url text)). */
export function disclosureDigest(disclosure: string): string {
  return b64sha256(disclosure);
}

/**
 * Every number in a JSON text must denote exactly the value it parses to:
 * integers within ±(2^53−1), fractions without exponent whose digits (trailing
 * zeros aside) are the value's shortest round-trip decimal. So `150.0` and
 * `10.10` pass (150, 10.1) but `1e2` and `10.100000000000000001` are refused.
 */
export function exactNumbers(text: string): boolean {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') { inString = true; continue; }
    if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j]!)) j++;
      const lex = text.slice(i, j);
      i = j - 1;
      if (/[eE]/.test(lex)) return false;
      const n = Number(lex);
      if (!lex.includes('.')) { if (!Number.isSafeInteger(n)) return false; continue; }
      const trimmed = lex.replace(/0+$/, '').replace(/\.$/, '');
      if (String(n) !== (trimmed === '-0' ? '0' : trimmed) || Math.abs(n) > Number.MAX_SAFE_INTEGER) return false;
    }
  }
  return true;
}

function jsonPart(bytes: Uint8Array): MandateResult<unknown> {
  const r = parseStrictJson(bytes);
  if (!r.ok) return refuse('sdjwt-json', `not strict JSON: ${r.code} (${r.message})`);
  if (!exactNumbers(utf8Text(bytes))) return refuse('sdjwt-number', 'a number whose text is not exactly its value');
  return { ok: true, value: r.value };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Digests referenced anywhere in a value (`_sd` arrays and `{"...": d}` array elements). */
function collectDigests(v: unknown, out: string[]): void {
  if (Array.isArray(v)) {
    for (const e of v) {
      if (isObject(e) && Object.keys(e).length === 1 && typeof e['...'] === 'string') out.push(e['...']);
      else collectDigests(e, out);
    }
  } else if (isObject(v)) {
    for (const [k, e] of Object.entries(v)) {
      if (k !== '_sd' || !Array.isArray(e)) collectDigests(e, out);
      else for (const d of e) if (typeof d === 'string') out.push(d);
    }
  }
}

/** Splits and checks the canonical compact form; `kb` is the trailing KB-JWT ('' when none). */
export function splitCompact(compact: string): MandateResult<{ jwt: string; disclosures: string[]; kb: string }> {
  const parts = compact.split('~');
  if (parts.length < 2) return refuse('sdjwt-encoding', 'an SD-JWT is <jwt>~<disclosure>~…~ (no ~ found)');
  const jwt = parts[0]!;
  const kb = parts[parts.length - 1]!;
  const disclosures = parts.slice(1, -1);
  const segs = jwt.split('.');
  if (segs.length !== 3 || segs.some((s) => canonicalB64url(s) === undefined)) return refuse('sdjwt-encoding', 'the issuer-signed JWT is not three canonical base64url segments');
  for (const d of disclosures) if (canonicalB64url(d) === undefined) return refuse('sdjwt-encoding', 'a disclosure is not canonical base64url (or is empty)');
  if (kb !== '') {
    const k = kb.split('.');
    if (k.length !== 3 || k.some((s) => canonicalB64url(s) === undefined)) return refuse('kb-encoding', 'the key-binding JWT is not three canonical base64url segments');
  }
  return { ok: true, value: { jwt, disclosures, kb } };
}

const HEADER_KEYS = new Set(['alg', 'typ', 'kid']);

/**
 * The header a profile requires: by default AP2's (`alg` ES256, optional `typ` "dc+sd-jwt" and `kid`); with `typ`, exactly that `typ`
 * and a string `kid` (Verifiable Intent's layers), or with `kid: 'optional'` a string `kid` or none (the RFC 9901 examples of
 * docs/vectors/sd-jwt-examples.json, whose headers name no key).
 */
export interface SdJwtHeaderRule {
  readonly typ?: string;
  readonly kid?: 'required' | 'optional';
}

/**
 * Verifies the issuer-signed part of an SD-JWT (`<jwt>~<d>~…~`, no KB-JWT)
 * against `issuerKey`, in the order PROTOCOL.md §16.2 states (the header rule
 * as `options` says: §16.2 step 2, or §16.10's for Verifiable Intent).
 */
export async function verifySdJwt(compact: string, issuerKey: JWK, options: SdJwtHeaderRule = {}): Promise<MandateResult<VerifiedSdJwt>> {
  const split = splitCompact(compact);
  if (!split.ok) return split;
  const { jwt, disclosures, kb } = split.value;
  if (kb !== '') return refuse('sdjwt-encoding', 'an open mandate is presented without a key-binding JWT (it must end in ~)');
  const [h64, p64] = jwt.split('.') as [string, string, string];
  const header = jsonPart(canonicalB64url(h64)!);
  if (!header.ok) return refuse('sdjwt-header', header.message);
  const hv = header.value;
  if (options.typ !== undefined) {
    const kidOk = isObject(hv) && (typeof hv.kid === 'string' || (options.kid === 'optional' && hv.kid === undefined));
    if (!isObject(hv) || hv.alg !== 'ES256' || hv.typ !== options.typ || !kidOk || Object.keys(hv).some((k) => !HEADER_KEYS.has(k))) {
      return refuse('sdjwt-header', `the header must be exactly {alg:"ES256", typ:${JSON.stringify(options.typ)}, kid:<string>${options.kid === 'optional' ? ' (optional)' : ''}}`);
    }
  } else if (!isObject(hv) || hv.alg !== 'ES256' || (hv.typ !== undefined && hv.typ !== 'dc+sd-jwt') || Object.keys(hv).some((k) => !HEADER_KEYS.has(k))) {
    return refuse('sdjwt-header', 'the header must be {alg:"ES256"} with optional typ "dc+sd-jwt" and kid, nothing else');
  }
  try {
    await compactVerify(jwt, await importJWK(issuerKey, 'ES256'), { algorithms: ['ES256'] });
  } catch {
    return refuse('sdjwt-signature', "the ES256 signature does not verify under the issuer's key");
  }
  const payload = jsonPart(canonicalB64url(p64)!);
  if (!payload.ok) return payload;
  if (!isObject(payload.value)) return refuse('sdjwt-json', 'the payload is not a JSON object');
  const signed = payload.value;
  if (signed._sd_alg !== undefined && signed._sd_alg !== 'sha-256') return refuse('sdjwt-sd-alg', `_sd_alg ${JSON.stringify(signed._sd_alg)} is not sha-256`);

  // Disclosures: shape, then every one referenced exactly once (RFC 9901 §7.1 steps 3–5).
  const referenced: string[] = [];
  collectDigests(signed, referenced);
  const own = new Map<string, string>();
  for (const d of disclosures) {
    const v = jsonPart(canonicalB64url(d)!);
    if (!v.ok) return v;
    const arr = v.value;
    const okShape = Array.isArray(arr) && typeof arr[0] === 'string' && (arr.length === 2 || (arr.length === 3 && typeof arr[1] === 'string' && arr[1] !== '_sd' && arr[1] !== '...'));
    if (!okShape) return refuse('sdjwt-disclosure', 'a disclosure must be [salt, name, value] or [salt, value]');
    const digest = disclosureDigest(d);
    if (own.has(digest)) return refuse('sdjwt-duplicate-digest', 'a disclosure is released twice');
    own.set(digest, d);
    collectDigests(arr[arr.length - 1], referenced);
  }
  const seen = new Set<string>();
  for (const r of referenced) {
    if (seen.has(r)) return refuse('sdjwt-duplicate-digest', `digest ${r} is referenced twice`);
    seen.add(r);
  }
  for (const digest of own.keys()) if (!seen.has(digest)) return refuse('sdjwt-disclosure-digest', `a released disclosure (digest ${digest}) is referenced by no _sd or ... entry`);

  let claims: Record<string, unknown>;
  try {
    const sd = await SDJwt.fromEncode(compact, sdJwtHasher);
    claims = await sd.getClaims<Record<string, unknown>>(sdJwtHasher);
  } catch (e) {
    return refuse('sdjwt-disclosure', `the disclosures do not reconstruct the claims: ${(e as Error).message}`);
  }
  return { ok: true, value: { jwt, disclosures, header: hv, signed, claims } };
}
