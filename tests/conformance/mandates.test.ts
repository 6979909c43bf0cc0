/**
 * The signed-mandate vectors (docs/vectors/mandates.json, PROTOCOL.md §10 "The
 * principal's signature", §14.2) through every reader: the library
 * (`checkMandateSignature`, `mandateSignedText`, `mandateDigest`,
 * `mandateTypedData`, and the signers, byte-equal by RFC 6979), a second
 * computation of both digests from the EIP-712 / EIP-191 texts
 * (tests/referee/naive-mandate.ts), viem's own recovery, the engine's `open`
 * (refusal code at the head of the message, nothing written), and
 * `tally mandate verify --json` (spawned).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recoverMessageAddress, recoverTypedDataAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { toHex, type SessionSpec } from '../../src/protocol/index.js';
import { MANDATE_EIP191_PREFIX, checkMandateSignature, createRefereeRuler, mandateDigest, mandateSignedText, mandateTypedData, signMandate, signMandateWithKey, type MandateSignatureScheme } from '../../src/referee/index.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { naiveEip191Digest, naiveEip712Digest, naiveSignedText } from '../referee/naive-mandate.js';
import { cliBatch } from './cli.js';
import { loadVectors } from './corpus.js';

type Expect = { ok: true; scheme: MandateSignatureScheme; signer: string } | { ok: false; code: 'mandate_unsigned' | 'mandate_bad_signature' };
interface Case {
  name: string;
  note: string;
  spec: SessionSpec & { mandate: { signature?: { scheme: MandateSignatureScheme; value: `0x${string}` } } };
  signedText?: string;
  typedData?: ReturnType<typeof mandateTypedData>;
  digest?: string;
  signature?: string;
  expect: Expect;
}
const corpus = loadVectors<{ keys: { name: string; privateKey: `0x${string}`; address: string }[]; cases: Case[] }>('mandates.json');
const cases = corpus.cases;
const principalKey = corpus.keys.find((k) => k.name === 'principal')!.privateKey;

describe('mandate vectors (docs/vectors/mandates.json)', () => {
  it('cover both schemes and both refusal codes', () => {
    const kinds = new Set(cases.map((c) => (c.expect.ok ? c.expect.scheme : c.expect.code)));
    expect([...kinds].sort()).toEqual(['eip191', 'eip712', 'mandate_bad_signature', 'mandate_unsigned']);
  });

  it.each(cases.map((c) => [c.name, c] as const))('the library gives the expected result: %s', (_n, c) => {
    const r = checkMandateSignature(c.spec);
    expect(r.ok ? { ok: true, scheme: r.scheme, signer: r.signer } : { ok: false, code: r.code }).toEqual(c.expect);
  });

  it.each(cases.filter((c) => c.expect.ok).map((c) => [c.name, c] as const))('signed text, typed data, digest and signature reproduce, by the library and from the texts: %s', async (_n, c) => {
    const scheme = c.spec.mandate.signature!.scheme;
    expect(mandateSignedText(c.spec)).toBe(c.signedText);
    expect(naiveSignedText(c.spec)).toBe(c.signedText);
    expect(`0x${toHex(mandateDigest(c.spec, scheme))}`).toBe(c.digest);
    expect(scheme === 'eip712' ? naiveEip712Digest(c.spec) : naiveEip191Digest(c.spec)).toBe(c.digest);
    // RFC 6979: the same key signs the same bytes, with noble synchronously and with viem's signTypedData / signMessage.
    const { signature: _s, ...unsigned } = c.spec.mandate;
    const bare = { ...c.spec, mandate: unsigned };
    expect((signMandateWithKey(bare, principalKey, scheme)['mandate'] as { signature: { value: string } }).signature.value).toBe(c.signature);
    expect(((await signMandate(bare, principalKey, scheme))['mandate'] as { signature: { value: string } }).signature.value).toBe(c.signature);
    // viem recovers the principal on its own.
    const sig = c.signature as `0x${string}`;
    const recovered = scheme === 'eip712' ? await recoverTypedDataAddress({ ...c.typedData!, signature: sig }) : await recoverMessageAddress({ message: MANDATE_EIP191_PREFIX + c.signedText!, signature: sig });
    expect(recovered.toLowerCase()).toBe(c.expect.ok ? c.expect.signer : '');
    if (scheme === 'eip712') expect(JSON.parse(JSON.stringify(mandateTypedData(c.spec)))).toEqual(c.typedData);
  });

  it('the referee engine opens exactly the valid ones; a refusal names its code first and writes nothing', async () => {
    for (const c of cases) {
      const store = new MemoryStore();
      const o = await new Engine({ store, ruler: createRefereeRuler({ store }) }).open(c.spec);
      if (c.expect.ok) expect(o, c.name).toMatchObject({ ok: true, created: true });
      else {
        expect(o, c.name).toMatchObject({ ok: false, diagnostic: 'malformed-entry', message: expect.stringMatching(new RegExp(`^${c.expect.code}: `)) });
        expect(await store.listSessions(), c.name).toEqual([]);
      }
    }
  });

  it('tally mandate verify --json (spawned)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-mandates-'));
    const runs = await cliBatch(
      cases.map((c, i) => {
        const file = join(dir, `${i}.json`);
        writeFileSync(file, JSON.stringify(c.spec));
        return ['mandate', 'verify', file, '--json'];
      }),
    );
    runs.forEach((r, i) => {
      const c = cases[i]!;
      const out = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(r.code, c.name).toBe(c.expect.ok ? 0 : 1);
      if (c.expect.ok) expect(out, c.name).toEqual({ ok: true, scheme: c.expect.scheme, signer: c.expect.signer, principal: c.expect.signer });
      else expect(String(out['problem']), c.name).toMatch(new RegExp(`^${c.expect.code}: `));
    });
  });
});
