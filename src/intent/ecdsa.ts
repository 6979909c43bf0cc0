/**
 * secp256k1 primitives behind signer recovery and the cached-key fast path.
 *
 * Equivalence argument (why {@link verifyWithPoint} ≡ "recover, then compare"):
 * recovery with parity bit v lifts R = (r, y) with y of parity v and returns
 * Q' = r⁻¹(sR − eG). The fast path computes R' = (e·s⁻¹)G + (r·s⁻¹)Q and accepts
 * iff R' ≠ ∞, x(R') = r exactly and parity(y(R')) = v. If it accepts, R' = R,
 * so sR = eG + rQ and Q' = Q. Conversely, if Q' = Q then R = s⁻¹(eG + rQ) = R'.
 * (A plain ECDSA verify would only check x(R') ≡ r mod n and ignore v, which is
 * NOT equivalent to recovery.) Property-tested against viem's recovery.
 *
 * Pinned to @noble/curves 1.9.x: we use only its public surface
 * (`ProjectivePoint`, `Signature`, `utils.precompute`, `multiply`).
 * `multiplyUnsafe` is deliberately avoided on precomputed points: in 1.9.1 it
 * feeds a full 256-bit scalar to 128-bit endomorphism tables and returns wrong
 * points; constant-time `multiply` splits the scalar and is correct.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { invert } from '@noble/curves/abstract/modular.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { toHex } from '../protocol/hex.js';
import type { ParsedSignature } from './signature.js';

/** A secp256k1 point (noble projective representation). */
export type CurvePoint = typeof secp256k1.ProjectivePoint.BASE;

const N = secp256k1.CURVE.n;
const G = secp256k1.ProjectivePoint.BASE;

/** Window size of the per-key precomputed tables (W=8: ~2.2k points, ~0.4 MB, ~20 ms to build). */
export const PRECOMPUTE_WINDOW = 8;

function digestScalar(digest: Uint8Array): bigint {
  // bits2int for a 32-byte digest and a 256-bit order is the plain integer, then reduced mod n.
  return BigInt(`0x${toHex(digest)}`) % N;
}

/** Recovers the public key point, or null when no valid point exists. Never throws. */
export function recoverPoint(digest: Uint8Array, sig: ParsedSignature): CurvePoint | null {
  try {
    return new secp256k1.Signature(sig.r, sig.s).addRecoveryBit(sig.recovery).recoverPublicKey(digest);
  } catch {
    return null;
  }
}

/** Lowercase `0x` Ethereum address of a public key point. */
export function addressOfPoint(point: CurvePoint): string {
  const uncompressed = point.toRawBytes(false);
  return `0x${toHex(keccak_256(uncompressed.subarray(1)).subarray(12))}`;
}

/** Parses a SEC1 public key (33 or 65 bytes, hex); throws on an invalid point. */
export function pointFromPublicKey(publicKeyHex: string): CurvePoint {
  const hex = publicKeyHex.startsWith('0x') ? publicKeyHex.slice(2) : publicKeyHex;
  const point = secp256k1.ProjectivePoint.fromHex(hex);
  point.assertValidity();
  return point;
}

/** Builds the fixed-window tables of `point` so later `multiply` calls are ~3× cheaper. */
export function precomputePoint(point: CurvePoint): CurvePoint {
  const p = secp256k1.utils.precompute(PRECOMPUTE_WINDOW, point);
  p.multiply(1n); // build the tables now rather than on the first verification
  return p;
}

/**
 * True iff recovering `sig` over `digest` yields exactly `point` (see the
 * module comment for the equivalence). Never throws.
 */
export function verifyWithPoint(digest: Uint8Array, sig: ParsedSignature, point: CurvePoint): boolean {
  try {
    const e = digestScalar(digest);
    const w = invert(sig.s, N);
    const u1 = (e * w) % N;
    const u2 = (sig.r * w) % N;
    const a = u1 === 0n ? secp256k1.ProjectivePoint.ZERO : G.multiply(u1);
    const sum = a.add(point.multiply(u2));
    if (sum.equals(secp256k1.ProjectivePoint.ZERO)) return false;
    const { x, y } = sum.toAffine();
    return x === sig.r && Number(y & 1n) === sig.recovery;
  } catch {
    return false;
  }
}
