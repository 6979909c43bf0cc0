/**
 * The page opens signed notes with WebCrypto Ed25519 through the one rule
 * (`openPinnedNote`), asking twice because WebCrypto answers later. Here (Node
 * has the same WebCrypto) its verdicts must equal `openNote`'s with
 * node:crypto on good, forged, foreign and malformed notes — fixed cases and
 * random single-byte edits (fast-check, printed seed).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateEngineKey } from '../../src/receipt/keys/index.js';
import { decodeVerifierKey, openNote, signNote } from '../../src/receipt/note/index.js';
import { openNoteWebCrypto } from '../../src/web/browser/crypto.js';

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
