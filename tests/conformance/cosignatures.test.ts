/**
 * cosignatures.json (PROTOCOL.md §12.1, §14): witness cosignatures on the
 * golden receipt. Two readers must agree with each expected result: the
 * library's `verifyCosignatures`, a second reader written here from the
 * C2SP tlog-cosignature text with nothing but node:crypto, and the Python
 * receipt verifier (tests/golden/verify_receipt.py --cosignatures).
 */
import { spawnSync } from 'node:child_process';
import { createHash, createPublicKey, verify as edVerify } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCosignerVerifierKey, verifyCosignatures } from '../../src/witness/index.js';
import { VECTORS, loadVectors } from './corpus.js';
import { spawnOut } from './cli.js';

const hasPython = spawnSync('python3', ['--version']).status === 0;

interface Case {
  name: string;
  note: string;
  expect: { ok: true; cosigners: { name: string; time: number }[] } | { ok: false; code: string };
}
const v = loadVectors<{ engineKey: string; cosignerKeys: string[]; cases: Case[] }>('cosignatures.json');

/** A pinned key from its vkey text `name+hex8+base64(type ‖ pub32)`. */
function pinned(vkey: string) {
  const [name, id, b64] = [vkey.slice(0, vkey.indexOf('+')), vkey.split('+')[1]!, vkey.split('+').slice(2).join('+')];
  const raw = Buffer.from(b64, 'base64');
  const keyId = createHash('sha256').update(Buffer.concat([Buffer.from(name + '\n'), raw])).digest().subarray(0, 4).toString('hex');
  if (keyId !== id) throw new Error(`key ID of ${vkey}`);
  const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw.subarray(1)]), format: 'der', type: 'spki' });
  return { name, keyId, type: raw[0]!, key };
}

/** The second reader: note split, pinned lines must verify, unknown lines ignored, cosigners with their time. */
function naiveOpen(note: string): { ok: true; cosigners: { name: string; time: number }[] } | { ok: false } {
  const keys = [v.engineKey, ...v.cosignerKeys].map(pinned);
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) return { ok: false };
  const text = note.slice(0, split + 1);
  const cosigners: { name: string; time: number }[] = [];
  let engine = false;
  for (const line of note.slice(split + 2, -1).split('\n')) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!m) return { ok: false };
    const raw = Buffer.from(m[2]!, 'base64');
    if (raw.length < 5 || raw.toString('base64') !== m[2]) return { ok: false };
    const k = keys.find((p) => p.name === m[1] && p.keyId === raw.subarray(0, 4).toString('hex'));
    if (k === undefined) continue;
    if (k.type === 0x01) {
      if (raw.length !== 68 || !edVerify(null, Buffer.from(text), k.key, raw.subarray(4))) return { ok: false };
      engine = true;
      continue;
    }
    if (raw.length !== 76) return { ok: false };
    const time = raw.readBigUInt64BE(4);
    if (time > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false };
    if (!edVerify(null, Buffer.from(`cosignature/v1\ntime ${time}\n${text}`), k.key, raw.subarray(12))) return { ok: false };
    cosigners.push({ name: k.name, time: Number(time) });
  }
  return engine ? { ok: true, cosigners } : { ok: false };
}

describe('cosignature vectors (§12.1): every reader agrees with every expected result', () => {
  const cosigners = v.cosignerKeys.map((k) => {
    const p = parseCosignerVerifierKey(k);
    if (!p.ok) throw new Error(p.message);
    return p.verifier;
  });
  it.each(v.cases.map((c) => [c.name, c] as const))('verifyCosignatures: %s', (_n, c) => {
    const r = verifyCosignatures(c.note, [v.engineKey], cosigners);
    expect(r.ok ? { ok: true, cosigners: r.cosignatures.map((s) => ({ name: s.name, time: s.time })) } : { ok: false, code: r.code }).toEqual(c.expect);
  });
  it.each(v.cases.map((c) => [c.name, c] as const))('a second reader from the C2SP text (node:crypto): %s', (_n, c) => {
    expect(naiveOpen(c.note)).toEqual(c.expect.ok ? c.expect : { ok: false });
  });
  it.skipIf(!hasPython)('python3 tests/golden/verify_receipt.py --cosignatures gives every case its expected result', async () => {
    const out = JSON.parse(await spawnOut('python3', [join(import.meta.dirname, '../golden/verify_receipt.py'), '--cosignatures', join(VECTORS, 'cosignatures.json')])) as unknown[];
    expect(out).toEqual(v.cases.map((c) => c.expect));
  });
  it('covers valid cosignatures and the three refusals the spec names: wrong key, wrong timestamp, altered checkpoint', () => {
    for (const what of ['wrong key', 'wrong timestamp', 'altered checkpoint']) expect(v.cases.find((c) => c.name.startsWith(what))?.expect.ok, what).toBe(false);
    expect(v.cases.filter((c) => c.expect.ok && c.expect.cosigners.length > 0).length).toBeGreaterThan(2);
  });
});
