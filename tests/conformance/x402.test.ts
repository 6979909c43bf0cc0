/**
 * docs/vectors/x402.json (PROTOCOL.md §17): every payload's EIP-712 digest three ways — the
 * payment referee's `authorizationDigest`, viem's `hashTypedData`, and a second computation
 * written from EIP-712 (tests/payments/naive-eip712.ts) — its signer recovered by the referee's
 * strict rule and by viem, its payment hash; and every scenario driven through the payment
 * referee engine gives its last turn exactly the recorded `x402.payment` ruling (and replays).
 */
import { describe, expect, it } from 'vitest';
import { hashTypedData, recoverTypedDataAddress, type Hex } from 'viem';
import { PAYMENT_REFUSAL_CODES, authorizationDigest, paymentHash, recoverAuthorizer } from '../../src/payments/index.js';
import type { CanonicalObject, SessionSpec } from '../../src/protocol/index.js';
import { naiveAuthorizationDigest } from '../payments/naive-eip712.js';
import { entriesOf, paymentsEngine, replayPayments } from '../payments/replay.js';
import { loadVectors } from './corpus.js';

type TypedData = { domain: Record<string, unknown>; types: Record<string, unknown>; primaryType: string; message: Record<string, string> };
interface Vectors {
  payloads: { name: string; typedData: TypedData; digest: string; signature: string; payload: CanonicalObject; paymentHash: string; signer: string }[];
  scenarios: { name: string; spec: SessionSpec; steps: { time: number; data: CanonicalObject; turn: string; recorded?: CanonicalObject }[]; expect: { index: number; code: string; payment: unknown } }[];
}
const v = loadVectors<Vectors>('x402.json');

const asMessage = (m: Record<string, string>) => ({ ...m, value: BigInt(m['value']!), validAfter: BigInt(m['validAfter']!), validBefore: BigInt(m['validBefore']!) });

describe('x402 payload vectors', () => {
  it.each(v.payloads.map((p) => [p.name, p] as const))('%s: digest three ways, signer two ways, payment hash', async (_n, p) => {
    const d = p.typedData.domain as { name: string; version: string; chainId: number; verifyingContract: string };
    const m = p.typedData.message;
    const a = { from: m['from']!, to: m['to']!, value: BigInt(m['value']!), validAfter: BigInt(m['validAfter']!), validBefore: BigInt(m['validBefore']!), nonce: m['nonce']! };
    expect(authorizationDigest(d, a)).toBe(p.digest);
    expect(hashTypedData({ ...p.typedData, message: asMessage(m) } as Parameters<typeof hashTypedData>[0])).toBe(p.digest);
    expect(naiveAuthorizationDigest(d, m)).toBe(p.digest);
    expect(recoverAuthorizer(p.digest as Hex, p.signature)).toBe(p.signer);
    expect((await recoverTypedDataAddress({ ...p.typedData, message: asMessage(m), signature: p.signature as Hex } as Parameters<typeof recoverTypedDataAddress>[0])).toLowerCase()).toBe(p.signer);
    expect(paymentHash(p.payload)).toBe(p.paymentHash);
    // The payload carries exactly the typed data's authorization and signature.
    expect(p.payload['payload']).toEqual({ authorization: m, signature: p.signature });
  });

  it('one flipped bit of the digest input changes the digest in every computation (the naive one is not a copy of a constant)', () => {
    const p = v.payloads[0]!;
    const m = { ...p.typedData.message, value: (BigInt(p.typedData.message['value']!) + 1n).toString() };
    const naive = naiveAuthorizationDigest(p.typedData.domain, m);
    expect(naive).not.toBe(p.digest);
    expect(hashTypedData({ ...p.typedData, message: asMessage(m) } as Parameters<typeof hashTypedData>[0])).toBe(naive);
  });
});

describe('x402 ruling scenarios', () => {
  it.each(v.scenarios.map((s) => [s.name, s] as const))('%s', async (_n, s) => {
    const engine = paymentsEngine();
    const o = await engine.open(s.spec);
    if (!o.ok) throw new Error(o.message);
    let last: { index: number; ruling?: unknown } | undefined;
    for (let k = 0; k < s.steps.length; k++) {
      const step = s.steps[k]!;
      const f = await engine.frame({ sessionId: o.sessionId, ordinal: k - 1, time: step.time, data: step.data });
      if (!f.ok) throw new Error(f.message);
      const t = await engine.turn({ sessionId: o.sessionId, ordinal: k - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: new TextEncoder().encode(step.turn) } }, step.recorded === undefined ? {} : { recordedRuling: step.recorded });
      if (!t.ok) throw new Error(t.message);
      last = t;
    }
    expect(last!.index).toBe(s.expect.index);
    expect((last!.ruling as { x402: { payment: unknown } }).x402.payment).toEqual(s.expect.payment);
    expect(await replayPayments(await entriesOf(engine, o.sessionId))).toEqual({ ok: true });
  });

  it('has a scenario for every payment refusal code', () => {
    const codes = new Set(v.scenarios.map((s) => s.expect.code));
    for (const c of PAYMENT_REFUSAL_CODES) expect(codes.has(c), c).toBe(true);
  });
});
