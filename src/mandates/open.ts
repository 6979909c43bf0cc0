/**
 * An AP2 open mandate (v0.2: `mandate.payment.open.1` or
 * `mandate.checkout.open.1`) verified offline as the authority of a session:
 * the user's ES256-signed SD-JWT with the disclosures released, its type, its
 * lifetime against the frame's time, the agent's key in `cnf`, and its
 * constraints. Order of checks and codes: PROTOCOL.md §16.2.
 */
import { calculateJwkThumbprint, type JWK } from 'jose';
import { refuse, type MandateResult } from './codes.js';
import { parseConstraints, type Constraint } from './constraints.js';
import { b64sha256 } from './digest.js';
import { verifySdJwt, type VerifiedSdJwt } from './sdjwt.js';

/** The exact `vct` of each open mandate type (AP2 v0.2 schemas; the suffix is the version). */
export const OPEN_VCT = { payment: 'mandate.payment.open.1', checkout: 'mandate.checkout.open.1' } as const;

export interface OpenMandate {
  readonly kind: 'payment' | 'checkout';
  /** base64url SHA-256 of the whole presentation text (`<jwt>~<d>~…~`): the mandate's id in Tally's history. */
  readonly id: string;
  readonly iat: number;
  readonly exp: number;
  /** The agent's public key (RFC 7800 cnf.jwk). */
  readonly agentKey: JWK;
  readonly constraints: readonly Constraint[];
  readonly sdjwt: VerifiedSdJwt;
}

export interface OpenMandateOptions {
  /** The user's public key (the issuer of the open mandate). */
  readonly issuerKey: JWK;
  /** Frame time, Unix seconds (integer). */
  readonly now: number;
  /** When given, cnf must name exactly this key (by RFC 7638 thumbprint). */
  readonly agentKey?: JWK;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const B64 = /^[A-Za-z0-9_-]{43}$/;

/** A public EC P-256 JWK with nothing private; `use`/`kid`/`alg` allowed. */
export function publicP256(v: unknown): JWK | undefined {
  if (!isObject(v) || v.kty !== 'EC' || v.crv !== 'P-256' || typeof v.x !== 'string' || typeof v.y !== 'string' || !B64.test(v.x) || !B64.test(v.y)) return undefined;
  if (Object.keys(v).some((k) => !['kty', 'crv', 'x', 'y', 'use', 'kid', 'alg'].includes(k))) return undefined;
  if ((v.use !== undefined && v.use !== 'sig') || (v.alg !== undefined && v.alg !== 'ES256') || (v.kid !== undefined && typeof v.kid !== 'string')) return undefined;
  return v as JWK;
}

/** base64url SHA-256 of ASCII text (AP2's checkout_hash / Tally's mandate id): ./digest.ts. */
export { b64sha256 } from './digest.js';

/** Verifies an open mandate presentation for use at frame time `opts.now`. */
export async function verifyOpenMandate(presentation: string, opts: OpenMandateOptions): Promise<MandateResult<OpenMandate>> {
  const sd = await verifySdJwt(presentation, opts.issuerKey);
  if (!sd.ok) return sd;
  const c = sd.value.claims;
  const kind = c.vct === OPEN_VCT.payment ? 'payment' : c.vct === OPEN_VCT.checkout ? 'checkout' : undefined;
  if (!kind) return refuse('mandate-vct', `vct ${JSON.stringify(c.vct)} is not ${OPEN_VCT.payment} or ${OPEN_VCT.checkout} (the version suffix must match exactly)`);
  const { iat, exp } = c;
  if (!Number.isSafeInteger(iat) || !Number.isSafeInteger(exp)) return refuse('mandate-time-missing', 'an open mandate must carry integer iat and exp');
  if (opts.now < (iat as number)) return refuse('mandate-not-yet-valid', `frame time ${opts.now} is before iat ${iat as number}`);
  if (opts.now >= (exp as number)) return refuse('mandate-expired', `frame time ${opts.now} is at or after exp ${exp as number}`);
  const cnf = c.cnf;
  const agentKey = isObject(cnf) && Object.keys(cnf).length === 1 ? publicP256(cnf.jwk) : undefined;
  if (!agentKey) return refuse('mandate-cnf', 'cnf must be {jwk: <public EC P-256 key>}');
  if (opts.agentKey && (await calculateJwkThumbprint(agentKey)) !== (await calculateJwkThumbprint(opts.agentKey))) {
    return refuse('mandate-cnf-mismatch', "cnf names another key than the agent's");
  }
  const constraints = parseConstraints(c.constraints, kind);
  if (!constraints.ok) return constraints;
  return { ok: true, value: { kind, id: b64sha256(presentation), iat: iat as number, exp: exp as number, agentKey, constraints: constraints.value, sdjwt: sd.value } };
}
