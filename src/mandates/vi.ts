/**
 * A Verifiable Intent v0.1 (Mastercard/Google, spec/credential-format.md)
 * **L2 autonomous credential** verified offline as an agent's authority, in
 * the order that spec gives (§3.5, §4.7, §13.4; PROTOCOL.md §16.10):
 *
 * - L1, the issuer's SD-JWT (`typ` "sd+jwt"): ES256 under the issuer's key,
 *   disclosures (RFC 9901, the same checks as AP2's), `_sd_alg` sha-256,
 *   `vct` the registry's card profile exactly, `iss`/`sub`, `iat ≤ t < exp`,
 *   no `sd_hash`, `cnf.jwk` the user's key;
 * - L2, the user's KB-SD-JWT+KB (`typ` "kb-sd-jwt+kb"): ES256 under L1's
 *   `cnf.jwk` (the first link of the key chain), disclosures, `sd_hash` =
 *   SHA-256 of L1 as recorded, `iat ≤ t < exp ≤` L1 `exp`, `nonce`/`iss`/`aud`;
 * - its mandates (the `delegate_payload` disclosures): exactly one
 *   `mandate.payment.open` and one `mandate.checkout.open`, each with the
 *   same `cnf {jwk, kid}` (the agent's key: the second link), paired by the
 *   payment mandate's `payment.reference` = the checkout mandate
 *   disclosure's digest;
 * - the payment mandate's constraints, renamed to their AP2 types and parsed
 *   by the one constraint parser (unknown types fail closed there).
 *
 * The result is an {@link OpenMandate} like AP2's, so one constraint
 * evaluator rules both.
 */
import { calculateJwkThumbprint, type JWK } from 'jose';
import { refuse, type MandateResult } from './codes.js';
import { parseConstraints } from './constraints.js';
import { b64sha256, publicP256, type OpenMandate } from './open.js';
import { canonicalB64url, disclosureDigest, verifySdJwt, type VerifiedSdJwt } from './sdjwt.js';
import { utf8Text } from './digest.js';

/** The VCT registry of VI v0.1 (§10) that Tally accepts; the L1 profile is the reference one. */
export const VI_VCT = { l1: 'https://credentials.mastercard.com/card', payment: 'mandate.payment.open', checkout: 'mandate.checkout.open' } as const;
/** The `typ` of each layer (§2). */
export const VI_TYP = { l1: 'sd+jwt', l2: 'kb-sd-jwt+kb' } as const;

/**
 * VI constraint types and the AP2 type whose rule enforces them, with the
 * member renames (VI name → AP2 name). Anything else is passed through
 * unchanged, so an unknown type meets the parser's fail-closed rule.
 */
const VI_TO_AP2: Readonly<Record<string, { readonly type: string; readonly rename?: Readonly<Record<string, string>> }>> = {
  'payment.amount': { type: 'payment.amount_range' },
  'payment.allowed_payee': { type: 'payment.allowed_payees', rename: { allowed_payees: 'allowed' } },
  'payment.budget': { type: 'payment.budget' },
  'payment.agent_recurrence': { type: 'payment.agent_recurrence' },
  'payment.reference': { type: 'payment.reference' },
  // The checkout mandate's (§11.2), evaluated against an L3b's cart (vi-checkout.ts).
  'mandate.checkout.allowed_merchant': { type: 'checkout.allowed_merchants', rename: { allowed_merchants: 'allowed' } },
  'mandate.checkout.line_items': { type: 'checkout.line_items' },
};

/** A verified VI L2 autonomous credential: the open payment mandate as Tally rules it, and what the chain shows. */
export interface ViCredential extends OpenMandate {
  /** The user's key (L1 `cnf.jwk`), which signed L2. */
  readonly userKey: JWK;
  /** The agent's key id (`cnf.kid` of the mandates). */
  readonly agentKid: string;
  /** The open checkout mandate's disclosure text (its digest is the payment mandate's `payment.reference`). */
  readonly checkoutDisclosure: string;
  /** The open payment mandate's disclosure text (an L3a's `sd_hash` covers it). */
  readonly paymentDisclosure: string;
  /** The open checkout mandate as disclosed (an L3b's cart is checked against its constraints). */
  readonly checkoutMandate: Readonly<Record<string, unknown>>;
  readonly l1: VerifiedSdJwt;
}

export interface ViOptions {
  /** The L1 issuer's public key (the payment network or bank). */
  readonly issuerKey: JWK;
  /** Frame time, Unix seconds (integer). */
  readonly now: number;
  /** When given, the mandates' cnf must name exactly this key (RFC 7638 thumbprint). */
  readonly agentKey?: JWK;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** iat ≤ now < exp, both integers (the same codes as AP2's open mandate). */
function lifetime(c: Readonly<Record<string, unknown>>, now: number, layer: string): MandateResult<{ iat: number; exp: number }> {
  const { iat, exp } = c;
  if (!Number.isSafeInteger(iat) || !Number.isSafeInteger(exp)) return refuse('mandate-time-missing', `${layer} must carry integer iat and exp`);
  if (now < (iat as number)) return refuse('mandate-not-yet-valid', `frame time ${now} is before ${layer} iat ${iat as number}`);
  if (now >= (exp as number)) return refuse('mandate-expired', `frame time ${now} is at or after ${layer} exp ${exp as number}`);
  return { ok: true, value: { iat: iat as number, exp: exp as number } };
}

/** The mandate's constraints in AP2's vocabulary (members renamed; unknown types untouched). */
export function asAp2(constraints: unknown): unknown {
  if (!Array.isArray(constraints)) return constraints;
  return constraints.map((c) => {
    if (!isObject(c) || typeof c.type !== 'string') return c;
    const m = VI_TO_AP2[c.type];
    if (!m) return c;
    const out: Record<string, unknown> = { type: m.type };
    for (const [k, v] of Object.entries(c)) if (k !== 'type') out[m.rename?.[k] ?? k] = v;
    return out;
  });
}

/**
 * Verifies an L1 presentation (`<jwt>~<d>~…~`) and the L2 autonomous
 * credential over it (`<jwt>~<d>~…~`) at frame time `opts.now`.
 */
export async function verifyViCredential(l1Text: string, l2Text: string, opts: ViOptions): Promise<MandateResult<ViCredential>> {
  // ---- L1: the issuer binds the user's key
  const l1 = await verifySdJwt(l1Text, opts.issuerKey, { typ: VI_TYP.l1 });
  if (!l1.ok) return l1;
  const c1 = l1.value.claims;
  if (l1.value.signed._sd_alg !== 'sha-256') return refuse('sdjwt-sd-alg', 'VI requires _sd_alg "sha-256" in every layer');
  if (c1.vct !== VI_VCT.l1) return refuse('vi-l1', `L1 vct ${JSON.stringify(c1.vct)} is not ${VI_VCT.l1}`);
  if (!str(c1.iss) || !str(c1.sub)) return refuse('vi-l1', 'L1 must name its iss and sub');
  if (c1.sd_hash !== undefined) return refuse('vi-l1', 'L1 is the root of the chain: it carries no sd_hash');
  const t1 = lifetime(c1, opts.now, 'L1');
  if (!t1.ok) return t1;
  const userKey = isObject(c1.cnf) && Object.keys(c1.cnf).length === 1 ? publicP256(c1.cnf.jwk) : undefined;
  if (!userKey) return refuse('vi-l1', "L1 cnf must be {jwk: <the user's public EC P-256 key>}");

  // ---- L2: the user delegates to the agent, signed with L1's cnf key
  const l2 = await verifySdJwt(l2Text, userKey, { typ: VI_TYP.l2 });
  if (!l2.ok) return l2;
  const c2 = l2.value.claims;
  if (l2.value.signed._sd_alg !== 'sha-256') return refuse('sdjwt-sd-alg', 'VI requires _sd_alg "sha-256" in every layer');
  if (c2.sd_hash !== b64sha256(l1Text)) return refuse('vi-sd-hash', 'L2 sd_hash is not base64url(SHA-256(the L1 presentation))');
  const t2 = lifetime(c2, opts.now, 'L2');
  if (!t2.ok) return t2;
  if (t2.value.exp > t1.value.exp) return refuse('vi-claims', 'L2 exp must not exceed L1 exp');
  if (!str(c2.nonce) || !str(c2.iss) || !str(c2.aud)) return refuse('vi-claims', 'L2 must carry nonce, iss and aud strings');
  const signedDelegate = l2.value.signed.delegate_payload;
  if (!Array.isArray(signedDelegate) || !Array.isArray(c2.delegate_payload)) return refuse('vi-claims', 'L2 must carry delegate_payload, an array of {"...": digest}');

  // ---- the mandates: one open payment and one open checkout, one agent key, paired
  const mandates = c2.delegate_payload.filter(isObject);
  const payment = mandates.filter((m) => m.vct === VI_VCT.payment);
  const checkout = mandates.filter((m) => m.vct === VI_VCT.checkout);
  const other = mandates.find((m) => m.vct !== VI_VCT.payment && m.vct !== VI_VCT.checkout);
  if (other) return refuse('mandate-vct', `mandate vct ${JSON.stringify(other.vct)} is not ${VI_VCT.payment} or ${VI_VCT.checkout} (immediate-mode and unknown mandates are no session authority)`);
  if (payment.length !== 1 || checkout.length !== 1 || mandates.length !== c2.delegate_payload.length) return refuse('vi-mandates', 'the L2 must disclose exactly one open payment and one open checkout mandate');
  const [pm, cm] = [payment[0]!, checkout[0]!];
  const cnfOf = (m: Record<string, unknown>) => (isObject(m.cnf) && Object.keys(m.cnf).length === 2 && str(m.cnf.kid) ? { jwk: publicP256(m.cnf.jwk), kid: m.cnf.kid } : undefined);
  const pc = cnfOf(pm), cc = cnfOf(cm);
  if (!pc?.jwk || !cc?.jwk) return refuse('mandate-cnf', "each autonomous mandate's cnf must be {jwk: <public EC P-256 key>, kid: <string>}");
  if (pc.kid !== cc.kid || (await calculateJwkThumbprint(pc.jwk)) !== (await calculateJwkThumbprint(cc.jwk))) return refuse('vi-mandates', 'the payment and checkout mandates name different agent keys');
  if (opts.agentKey && (await calculateJwkThumbprint(pc.jwk)) !== (await calculateJwkThumbprint(opts.agentKey))) return refuse('mandate-cnf-mismatch', "cnf names another key than the agent's");
  if (!isObject(pm.payment_instrument)) return refuse('vi-mandates', 'the open payment mandate carries payment_instrument');
  // The checkout mandate's disclosure is the one whose value is the checkout mandate (digests name it in delegate_payload).
  const delegated = (vct: string) => l2.value.disclosures.find((d) => signedDelegate.some((e) => isObject(e) && e['...'] === disclosureDigest(d)) && carries(d, vct));
  const checkoutDisclosure = delegated(VI_VCT.checkout), paymentDisclosure = delegated(VI_VCT.payment);
  if (!checkoutDisclosure || !paymentDisclosure) return refuse('vi-mandates', 'the open mandates are not delegate_payload disclosures');
  const constraints = parseConstraints(asAp2(pm.constraints), 'payment');
  if (!constraints.ok) return constraints;
  const ref = constraints.value.find((c) => c.type === 'payment.reference');
  if (!ref || ref.conditionalTransactionId !== disclosureDigest(checkoutDisclosure)) return refuse('vi-mandates', "payment.reference must name the digest of the L2's checkout mandate disclosure (the pair)");
  return {
    ok: true,
    value: {
      kind: 'payment', id: b64sha256(`${l1Text}${l2Text}`), iat: t2.value.iat, exp: t2.value.exp, agentKey: pc.jwk, constraints: constraints.value, sdjwt: l2.value,
      userKey, agentKid: pc.kid, checkoutDisclosure, paymentDisclosure, checkoutMandate: cm, l1: l1.value,
    },
  };
}

/** Whether a disclosure is an array element whose value is a mandate of type `vct`. */
function carries(disclosure: string, vct: string): boolean {
  try {
    // A released disclosure is canonical base64url already (splitCompact).
    const b = canonicalB64url(disclosure);
    if (b === undefined) return false;
    const v = JSON.parse(utf8Text(b)) as unknown;
    return Array.isArray(v) && v.length === 2 && isObject(v[1]) && v[1].vct === vct;
  } catch {
    return false;
  }
}
