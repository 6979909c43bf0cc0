/**
 * The page opens signed notes with WebCrypto Ed25519 through the one rule
 * (`openPinnedNote`), asking twice because WebCrypto answers later. Here (Node
 * has the same WebCrypto) its verdicts must equal `openNote`'s with
 * node:crypto on good, forged, foreign and malformed notes — fixed cases and
 * random single-byte edits (fast-check, printed seed); and so must the witness
 * quorum rule run under the page's Ed25519Oracle equal it with node:crypto.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateEngineKey } from '../../src/receipt/keys/index.js';
import { decodeVerifierKey, openNote, parseVerifierKey, signNote } from '../../src/receipt/note/index.js';
import { toHex } from '../../src/protocol/index.js';
import { addSignatureLines, checkWitnessPolicy, cosignatureLine, cosignerKeyFrom, parseWitnessPolicy } from '../../src/witness/index.js';
import { parseWitnessPolicyWith } from '../../src/witness/policy/parse-text.js';
import { Ed25519Oracle, openNoteWebCrypto } from '../../src/web/browser/crypto.js';

const engine = generateEngineKey('tally.example/desk');
const other = generateEngineKey('tally.example/desk');
const witness = generateEngineKey('witness.example');
const decoded = (vkey: string) => {
  const r = decodeVerifierKey(vkey);
  if (!r.ok) throw new Error(r.message);
  return r.key;
};
const pinned = [engine.verifierKey, witness.verifierKey];

async function same(note: string): Promise<void> {
  const node = openNote(note, pinned);
  const web = await openNoteWebCrypto(note, pinned.map(decoded));
  expect(web).toEqual(node);
}

describe('openNoteWebCrypto', () => {
  const text = 'tally.example/desk/' + 'ab'.repeat(32) + '\n3\n' + 'A'.repeat(43) + '=\n';
  const good = signNote(text, [engine, witness]);

  it('agrees with openNote on good, foreign, forged and malformed notes', async () => {
    await same(good);
    await same(signNote(text, [other]));
    await same(signNote(text, [other, engine]));
    await same(good.replace('\n3\n', '\n4\n'));
    await same(good.slice(0, -2));
    await same('no signatures\n');
    expect((await openNoteWebCrypto(good, pinned.map(decoded))).ok).toBe(true);
    expect((await openNoteWebCrypto(good.replace('\n3\n', '\n4\n'), pinned.map(decoded))).ok).toBe(false);
  });

  it('agrees with openNote on every single-byte edit (seed 0x7a11e9)', async () => {
    const seed = 0x7a11e9;
    console.log(`fast-check seed ${seed}`);
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: good.length - 1 }), fc.integer({ min: 32, max: 126 }), async (at, code) => {
        await same(good.slice(0, at) + String.fromCharCode(code) + good.slice(at + 1));
      }),
      { seed, numRuns: 150 },
    );
  });
});

describe('checkWitnessPolicy under the page oracle', () => {
  const w1 = cosignerKeyFrom(generateEngineKey('w1.example'));
  const w2 = cosignerKeyFrom(generateEngineKey('w2.example'));
  const text = 'tally.example/desk/' + 'cd'.repeat(32) + '\n5\n' + 'B'.repeat(43) + '=\n';
  const note = addSignatureLines(signNote(text, [engine]), [cosignatureLine(text, w1, 1_700_000_000), cosignatureLine(text, w2, 1_700_000_001)]);
  const policyText = `witness w1.example ${toHex(w1.publicKey)}\nwitness w2.example ${toHex(w2.publicKey)}\ngroup g 2 w1.example w2.example\nquorum g\n`;
  const nodeLog = parseVerifierKey(engine.verifierKey);
  const nodePolicy = parseWitnessPolicy(policyText);
  if (!nodeLog.ok || !nodePolicy.ok) throw new Error('fixture');

  /** The node verdict (node:crypto) and the page's (WebCrypto through Ed25519Oracle) must be equal. */
  async function both(n: string): Promise<void> {
    const node = checkWitnessPolicy(n, [nodeLog.ok ? nodeLog.verifier : (undefined as never)], nodePolicy.ok ? nodePolicy.policy : (undefined as never));
    const oracle = new Ed25519Oracle();
    const webPolicy = parseWitnessPolicyWith(policyText, oracle.bind);
    if (!webPolicy.ok) throw new Error(webPolicy.message);
    const k = decoded(engine.verifierKey);
    const web = await oracle.exact(() => checkWitnessPolicy(n, [{ name: k.name, keyId: k.keyId, publicKey: k.publicKey, verify: oracle.bind(k.publicKey) }], webPolicy.policy));
    expect(web).toEqual(node);
  }

  it('agrees with node:crypto on a met quorum, a missing cosignature, and single-byte edits (seed 0x3c0516)', async () => {
    await both(note);
    await both(addSignatureLines(signNote(text, [engine]), [cosignatureLine(text, w1, 1_700_000_000)]));
    const seed = 0x3c0516;
    console.log(`fast-check seed ${seed}`);
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: note.length - 1 }), fc.integer({ min: 32, max: 126 }), async (at, code) => {
        await both(note.slice(0, at) + String.fromCharCode(code) + note.slice(at + 1));
      }),
      { seed, numRuns: 100 },
    );
  });
});
