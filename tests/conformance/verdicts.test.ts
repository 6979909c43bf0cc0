/**
 * verdicts.json (PROTOCOL.md §10, §14): judge verdicts and their signatures,
 * read by `assessVerdict` and cross-checked with an independent EIP-191
 * recovery (viem) and a Python one (tests/golden/verify_intent.py, its own
 * Keccak-256 and secp256k1) over the signed text rebuilt from the bytes; panel answers
 * re-verified by `reverifyPanel` and counted by `quorumOf`.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { recoverMessageAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { assessVerdict, judgeRequestBytes, quorumOf, reverifyPanel, type PanelMember } from '../../src/referee/index.js';
import type { CanonicalObject } from '../../src/protocol/index.js';
import { VECTORS, loadVectors } from './corpus.js';
import { spawnOut } from './cli.js';

const hasPython = spawnSync('python3', ['--version']).status === 0;

interface Verdict {
  name: string;
  model: string;
  requestSha256: string;
  response: string;
  responseSha256: string;
  signedText: string;
  signature: string;
  trusted: string[];
  action: string;
  ruleCount: number;
  operatorSigned?: boolean;
  independent?: boolean;
  expect: { admitted: boolean; code?: string; signer?: string; decision?: string; format?: string };
}
interface PanelCase {
  name: string;
  members: PanelMember[];
  quorum: number;
  answers: unknown[];
  expect: { ok: false; evidence: string } | { ok: true; admitted: boolean; k: number; n: number; allow: number; answers: { admitted: boolean; code?: string }[] };
}
const v = loadVectors<{ request: { rules: string[]; action: string; intent: CanonicalObject; context: string; model: string; requestSha256: string; requestBytes: string }; verdicts: Verdict[]; panels: PanelCase[] }>('verdicts.json');
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const base = { rules: v.request.rules, action: v.request.action, intent: v.request.intent, context: v.request.context };

describe('the judge request (§10)', () => {
  it('the request bytes are rebuilt from the request fields, and hash to requestSha256', () => {
    const bytes = judgeRequestBytes({ model: v.request.model, ...base });
    expect(Buffer.from(bytes).toString('base64')).toBe(v.request.requestBytes);
    expect(sha(bytes)).toBe(v.request.requestSha256);
  });
});

describe('verdicts (§10): every reader agrees with every expected result', () => {
  it.each(v.verdicts.map((c) => [c.name, c] as const))('assessVerdict: %s', (_n, c) => {
    const response = Buffer.from(c.response, 'base64');
    const r = assessVerdict({ model: c.model, requestSha256: c.requestSha256, response, signature: c.signature, trusted: c.trusted, action: c.action, ruleCount: c.ruleCount, ...(c.operatorSigned ? { operatorSigned: true } : {}), ...(c.independent ? { independent: true } : {}) });
    const { message: _m, ...got } = r;
    expect(got).toEqual(c.expect);
  });

  it.each(v.verdicts.map((c) => [c.name, c] as const))('independent EIP-191 (viem) over <model>:<sha256(req)>:<sha256(resp)>: %s', async (_n, c) => {
    const response = Buffer.from(c.response, 'base64');
    expect(sha(response)).toBe(c.responseSha256);
    expect(c.signedText).toBe(`${c.model}:${c.requestSha256}:${c.responseSha256}`);
    // Tally's signature rules (§9): 65 bytes, low s, v in {27, 28}; a signature outside them recovers nothing.
    const raw = /^0x[0-9a-f]{130}$/.test(c.signature) ? Buffer.from(c.signature.slice(2), 'hex') : undefined;
    const lowS = raw !== undefined && BigInt('0x' + raw.subarray(32, 64).toString('hex')) <= 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
    const strict = raw !== undefined && lowS && (raw[64] === 27 || raw[64] === 28);
    const signer = strict ? (await recoverMessageAddress({ message: c.signedText, signature: c.signature as `0x${string}` })).toLowerCase() : undefined;
    expect(signer).toBe(c.expect.signer);
    if (c.expect.signer !== undefined && c.expect.code !== 'judge_untrusted_signer') expect(c.trusted).toContain(signer);
  });
});

describe.skipIf(!hasPython)('verdicts: the Python EIP-191 recovery written from PROTOCOL.md §10', () => {
  it('python3 tests/golden/verify_intent.py --verdicts recovers every expected signer, and trusts exactly the trusted ones', async () => {
    const out = JSON.parse(await spawnOut('python3', [join(import.meta.dirname, '../golden/verify_intent.py'), '--verdicts', join(VECTORS, 'verdicts.json')])) as { signer: string | null; trusted: boolean }[];
    expect(out.map((o) => o.signer)).toEqual(v.verdicts.map((c) => c.expect.signer ?? null));
    // A signature that recovers to a trusted judge is what every admitted verdict has; a refused one never recovers to one unless it failed later (parse, action, decision, independence).
    v.verdicts.forEach((c, i) => expect(out[i]!.trusted, c.name).toBe(c.expect.admitted || (c.expect.code !== undefined && c.expect.code !== 'judge_untrusted_signer') || c.name.includes('judges_independent')));
  });
});

describe('panels in quorum (§10): re-verified answers and the k-of-n outcome', () => {
  it.each(v.panels.map((c) => [c.name, c] as const))('reverifyPanel + quorumOf: %s', (_n, c) => {
    const panel = { members: c.members, quorum: c.quorum };
    const re = reverifyPanel(panel, base, c.answers, base.rules.length);
    if (typeof re === 'string') {
      expect({ ok: false, evidence: re }).toEqual(c.expect);
      return;
    }
    const q = quorumOf(panel, re);
    expect({ ok: true, admitted: q.admitted, ...q.figures, answers: re.map((a) => ({ admitted: a.admitted, ...(a.code ? { code: a.code } : {}) })) }).toEqual(c.expect);
  });
});
