/**
 * intents.json (PROTOCOL.md §9, §14): every signed Intent re-derived by the
 * library, by viem (an independent Keccak / EIP-191 / ecrecover) and by
 * `tally intent hash|verify`; every validation answered alike by
 * `validateIntent`, the worker pool and (for the signature) `tally intent verify`;
 * and both by a Python implementation written from PROTOCOL.md §9 (standard
 * library only: its own Keccak-256 and secp256k1 recovery).
 */
import { hashMessage, keccak256, recoverMessageAddress, stringToBytes } from 'viem';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INTENT_CODES, canonicalPayload, eip191Digest, intentHash, recoverIntentSigner, signIntent, validateIntent, type IntentPool, type UnsignedIntentInput } from '../../src/intent/index.js';
import { cliBatch, spawnOut } from './cli.js';
import { VECTORS, loadVectors } from './corpus.js';

const hasPython = spawnSync('python3', ['--version']).status === 0;

interface Signed {
  name: string;
  input: UnsignedIntentInput;
  equivalentInputs?: UnsignedIntentInput[];
  payload: string;
  intentHash: string;
  eip191Digest: string;
  signature: string;
  signer: string;
  intent: Record<string, string>;
}
type Expect = { ok: true; intentHash: string; signer: string } | { ok: false; stage: string; code: string };
interface Validation {
  name: string;
  intent: unknown;
  options?: { clockSkewMs?: number; maxTtlHorizonMs?: number; limits?: { maxIntegerDigits?: number; maxFractionDigits?: number } };
  usedNonces?: [string, string][];
  expect: Expect;
}
const v = loadVectors<{ keys: { name: string; privateKey: `0x${string}`; address: string }[]; registry: Record<string, string>; now: number; signed: Signed[]; validations: Validation[] }>('intents.json');
const keyOf = (address: string) => v.keys.find((k) => k.address === address)!.privateKey;

describe('signed Intents (§9): payload, hash, EIP-191 digest, signature', () => {
  it('the first case is seed 000\'s reference example, with its published hash and signature', () => {
    const ref = v.signed[0]!;
    expect(ref.name).toMatch(/^seed 000 reference example/);
    expect(ref.intentHash).toBe('0x85ce2b999baf6548cfe141072013e077a79c2314a115750bcac77e7a8b4fee1f');
    expect(ref.signature).toBe('0xbf8882aabc1712ff651c635a63719c4609be5150e1fb7b35649d7929a78ef38708bb532490ef3a651878f07ae18dc0d4c4c23520749db5c31385e2d0352c5b5f1c');
  });

  it.each(v.signed.map((c) => [c.name, c] as const))('library: %s', async (_n, c) => {
    expect(canonicalPayload(c.input)).toBe(c.payload);
    for (const e of c.equivalentInputs ?? []) expect(canonicalPayload(e)).toBe(c.payload);
    expect(intentHash(c.input)).toBe(c.intentHash);
    expect('0x' + Buffer.from(eip191Digest(c.payload)).toString('hex')).toBe(c.eip191Digest);
    const again = await signIntent(c.input, keyOf(c.signer));
    expect(again).toEqual(c.intent);
    expect(again.signature).toBe(c.signature);
    expect(await recoverIntentSigner(c.intent)).toBe(c.signer);
  });

  it.each(v.signed.map((c) => [c.name, c] as const))('viem (independent Keccak-256, EIP-191, ecrecover): %s', async (_n, c) => {
    expect(keccak256(stringToBytes(c.payload))).toBe(c.intentHash);
    expect(hashMessage(c.payload)).toBe(c.eip191Digest);
    expect(await recoverMessageAddress({ message: c.payload, signature: c.signature as `0x${string}` })).toBe(c.signer);
  });

  it('tally intent hash --json and tally intent verify --json (spawned) agree on every case', async () => {
    const runs = await cliBatch(v.signed.flatMap((c) => [['intent', 'hash', JSON.stringify(c.input), '--json'], ['intent', 'verify', JSON.stringify(c.intent), '--signer', c.signer, '--json']]));
    v.signed.forEach((c, i) => {
      expect(JSON.parse(runs[2 * i]!.stdout), c.name).toEqual({ ok: true, payload: c.payload, intentHash: c.intentHash });
      expect(JSON.parse(runs[2 * i + 1]!.stdout), c.name).toEqual({ ok: true, signer: c.signer, expected: c.signer });
    });
  });
});

const optionsOf = (c: Validation) => ({
  now: v.now,
  ...c.options,
  isNonceUsed: (a: string, n: string) => (c.usedNonces ?? []).some(([ua, un]) => ua === a && un === n),
});
const answer = (r: Awaited<ReturnType<typeof validateIntent>> | undefined): Expect | undefined => (r === undefined ? undefined : r.ok ? { ok: true, intentHash: r.intent_hash, signer: r.signer } : { ok: false, stage: r.stage, code: r.code });

describe('Intent validations (§9 validation order): every verifier gives the first failing stage and code', () => {
  it('every intent code has a validation vector', () => {
    expect(INTENT_CODES.filter((code) => !v.validations.some((c) => !c.expect.ok && c.expect.code === code))).toEqual([]);
  });

  it.each(v.validations.map((c) => [c.name, c] as const))('validateIntent: %s', async (_n, c) => {
    const r = await validateIntent(c.intent, { ...optionsOf(c), resolveSigner: (a) => (Object.hasOwn(v.registry, a) ? v.registry[a] : null) });
    expect(answer(r)).toEqual(c.expect);
  });

  let pool: IntentPool | undefined;
  afterAll(() => pool?.close());
  it('the worker pool (validateAuthored over {"intent": …}) agrees on every case', async () => {
    // The pool loads its worker from the built package (as the codec tests do).
    const { createIntentPool } = (await import('../../dist/intent/index.js')) as { createIntentPool: (o: { workers: number }) => IntentPool };
    pool = createIntentPool({ workers: 1 });
    const got = [];
    for (const c of v.validations) got.push(answer(await pool.validateAuthored(new TextEncoder().encode(JSON.stringify({ intent: c.intent })), { ...optionsOf(c), signers: v.registry })));
    expect(got).toEqual(v.validations.map((c) => c.expect));
  });

  it('tally intent verify --signer <registry address> (spawned): valid exactly when the signature stage passes', async () => {
    const put = v.validations.filter((c) => c.expect.ok || !['unknown_signer'].includes(c.expect.code));
    const runs = await cliBatch(put.map((c) => ['intent', 'verify', JSON.stringify(c.intent), '--signer', v.registry[(c.intent as { agent_id: string }).agent_id] ?? v.registry['alpha']!, '--json']));
    const wrong = put.flatMap((c, i) => {
      const passes = c.expect.ok || !['invalid_schema', 'bad_signature'].includes(c.expect.code);
      const got = (JSON.parse(runs[i]!.stdout) as { ok: boolean }).ok;
      return got === passes && runs[i]!.code === (passes ? 0 : 1) ? [] : [`${c.name}: CLI says ${got}`];
    });
    expect(wrong).toEqual([]);
  });
});

describe.skipIf(!hasPython)('intents.json: the Python implementation written from PROTOCOL.md §9', () => {
  it('python3 tests/golden/verify_intent.py --corpus reproduces every signed case and answers every validation', async () => {
    const out = JSON.parse(await spawnOut('python3', [join(import.meta.dirname, '../golden/verify_intent.py'), '--corpus', join(VECTORS, 'intents.json')])) as { signed: unknown[]; validations: unknown[] };
    expect(out.signed).toEqual(v.signed.map((c) => ({ payload: c.payload, intentHash: c.intentHash, eip191Digest: c.eip191Digest, signer: c.signer })));
    expect(out.validations).toEqual(v.validations.map((c) => c.expect));
  });
});
