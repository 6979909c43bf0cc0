// cosignatures.json (PROTOCOL.md §12.1): witness cosignatures (C2SP
// tlog-cosignature/v1, Ed25519, key type 0x04) on the golden receipt, valid
// and invalid. Called by scripts/gen-vectors.mjs; deterministic (Ed25519 is).
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { engineKeyFromPrivateKey } from '../../dist/receipt/index.js';
import { addSignatureLines, cosignatureLine, cosignerKeyFrom, verifyCosignatures } from '../../dist/witness/index.js';

/** RFC 8032 §7.1 TEST 3 and TEST SHA(abc) secret keys: public test seeds. */
const WITNESS_SEEDS = {
  'witness.example/w1': 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
  'witness.example/w2': '833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42',
};
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const keyOf = (name, seed) => engineKeyFromPrivateKey(name, createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, Buffer.from(seed, 'hex')]), format: 'der', type: 'pkcs8' }));

export function cosignatureVectors() {
  const rg = JSON.parse(readFileSync(new URL('../../tests/receipt/golden/receipt.json', import.meta.url), 'utf8'));
  const [w1, w2] = Object.entries(WITNESS_SEEDS).map(([name, seed]) => cosignerKeyFrom(keyOf(name, seed)));
  const note = rg.checkpoint;
  const text = note.slice(0, note.lastIndexOf('\n\n') + 1);
  const T = 1796169600; // 2026-12-01T00:00:00Z
  const l1 = cosignatureLine(text, w1, T);
  const l2 = cosignatureLine(text, w2, T + 1);
  const [name1, b1] = l1.slice(2, -1).split(' ');
  const raw1 = Buffer.from(b1, 'base64');
  const withPayload = (p) => `\u2014 ${name1} ${p.toString('base64')}\n`;
  const timeSet = (t) => { const c = Buffer.from(raw1); c.writeBigUInt64BE(BigInt(t), 4); return withPayload(c); };
  const bitFlip = () => { const c = Buffer.from(raw1); c[c.length - 1] ^= 1; return withPayload(c); };
  const otherText = text.replace(/\n\d+\n/, '\n9\n');
  const cases = [
    ['engine signature and two cosignatures', addSignatureLines(note, [l1, l2]), { ok: true }],
    ['one cosignature (w1)', addSignatureLines(note, [l1]), { ok: true }],
    ['no cosignature: opens with the engine key alone, none verified', note, { ok: true }],
    ['cosignature at time 0', addSignatureLines(note, [cosignatureLine(text, w1, 0)]), { ok: true }],
    ['cosignature at time 2^53 - 1 (the largest Tally accepts)', addSignatureLines(note, [cosignatureLine(text, w1, Number.MAX_SAFE_INTEGER)]), { ok: true }],
    ['an unknown witness\'s line is ignored', addSignatureLines(note, [l1, cosignatureLine(text, cosignerKeyFrom(keyOf('witness.example/w9', '11'.repeat(32))), T)]), { ok: true }],
    ['wrong timestamp: the time in the line altered (the signature covers it)', addSignatureLines(note, [timeSet(T + 1)]), { ok: false }],
    ['time above 2^53 - 1 in the line', addSignatureLines(note, [timeSet(2 ** 53)]), { ok: false }],
    ['a bit of the signature flipped', addSignatureLines(note, [bitFlip()]), { ok: false }],
    ['wrong key: w2 signs under w1\'s name and key ID', addSignatureLines(note, [withPayload(Buffer.concat([raw1.subarray(0, 4), Buffer.from(l2.slice(2, -1).split(' ')[1], 'base64').subarray(4)]))]), { ok: false }],
    ['altered checkpoint: the cosignature of another size moved onto this note', addSignatureLines(note, [cosignatureLine(otherText, w1, T)]), { ok: false }],
    ['a cosignature line with a 4-byte payload', note + withPayload(raw1.subarray(0, 4)), { ok: false }],
    ['the engine key\'s type 0x01 signature presented as the witness (key ID differs: ignored)', addSignatureLines(note, [`\u2014 ${w1.name} ${Buffer.from(note.slice(note.lastIndexOf(' ') + 1, -1), 'base64').toString('base64')}\n`]), { ok: true }],
  ];
  const out = cases.map(([name, signed, want]) => {
    const r = verifyCosignatures(signed, [rg.engine.verifierKey], [w1.verifier, w2.verifier]);
    if (r.ok !== want.ok) throw new Error(`cosignature case ${name}: ${JSON.stringify(r)}`);
    return { name, note: signed, expect: r.ok ? { ok: true, cosigners: r.cosignatures.map((c) => ({ name: c.name, time: c.time })) } : { ok: false, code: r.code } };
  });
  return {
    description: 'Witness cosignatures (PROTOCOL.md §12.1, §14; C2SP tlog-cosignature/v1) on the golden receipt (tests/receipt/golden/receipt.json). Each note is opened with the engine key `engineKey` and the cosigner keys `cosignerKeys` pinned together (§11.2 rules: a pinned line must verify, unknown lines are ignored): expect the cosigners whose cosignature verified, in line order, with their time (POSIX seconds), or the refusal code. Witness keys: RFC 8032 §7.1 TEST 3 and TEST SHA(abc) seeds.',
    engineKey: rg.engine.verifierKey,
    cosignerKeys: [w1.verifierKey, w2.verifierKey],
    cases: out,
  };
}
