/**
 * The page opens signed notes with WebCrypto Ed25519 through the one rule
 * (`openPinnedNote`), asking twice because WebCrypto answers later. Here (Node
 * has the same WebCrypto) its verdicts must equal `openNote`'s with
 * node:crypto on good, forged, foreign and malformed notes — fixed cases and
 * random single-byte edits (fast-check, printed seed); and so must the witness
 * quorum rule run under the page's Ed25519Oracle equal it with node:crypto.
 * Agreement alone would pass a bug both sides share, so both are also held to
 * known answers: RFC 8032 §7.1 Ed25519 tests 1 and 2, FIPS 180-2 SHA-256
 * examples, and the expected quorum verdicts of the fixed cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateEngineKey } from '../../src/receipt/keys/index.js';
import { decodeVerifierKey, openNote, parseVerifierKey, signNote } from '../../src/receipt/note/index.js';
import { createHash } from 'node:crypto';
import { sha256 as codecSha256, sha256Into as codecSha256Into } from '../../src/codec/sha256.js';
import { fromHex, toHex } from '../../src/protocol/index.js';
import { ed25519PrivateKeyObject, ed25519PublicKeyObject, ed25519RawPublicKey, ed25519Sign, ed25519Verify } from '../../src/receipt/note/ed25519.js';
import { addSignatureLines, checkWitnessPolicy, cosignatureLine, cosignerKeyFrom, parseWitnessPolicy } from '../../src/witness/index.js';
import { parseWitnessPolicyWith } from '../../src/witness/policy/parse-text.js';
import { Ed25519Oracle, ed25519VerifyWebCrypto, openNoteWebCrypto, sha256 as pageSha256 } from '../../src/web/browser/crypto.js';
import { sha256At as pageSha256At, sha256Into as pageSha256Into } from '../../src/web/browser/sha256.js';
import { sha256Backend, sha256Ready } from '../../src/web/browser/sha256-wasm.js';

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

  /** The node verdict (node:crypto) and the page's (WebCrypto through Ed25519Oracle) must be equal; returns it. */
  async function both(n: string): Promise<Awaited<ReturnType<typeof checkWitnessPolicy>>> {
    const node = checkWitnessPolicy(n, [nodeLog.ok ? nodeLog.verifier : (undefined as never)], nodePolicy.ok ? nodePolicy.policy : (undefined as never));
    const oracle = new Ed25519Oracle();
    const webPolicy = parseWitnessPolicyWith(policyText, oracle.bind);
    if (!webPolicy.ok) throw new Error(webPolicy.message);
    const k = decoded(engine.verifierKey);
    const web = await oracle.exact(() => checkWitnessPolicy(n, [{ name: k.name, keyId: k.keyId, publicKey: k.publicKey, verify: oracle.bind(k.publicKey) }], webPolicy.policy));
    expect(web).toEqual(node);
    return web;
  }

  it('agrees with node:crypto on a met quorum, a missing cosignature, a forged one, and single-byte edits (seed 0x3c0516)', async () => {
    expect(await both(note)).toMatchObject({ ok: true, signed: ['w1.example', 'w2.example'], missing: [] });
    expect(await both(addSignatureLines(signNote(text, [engine]), [cosignatureLine(text, w1, 1_700_000_000)]))).toMatchObject({ ok: false, code: 'below-quorum', signed: ['w1.example'], missing: ['w2.example'] });
    // w2's cosignature line over another checkpoint, pasted under this one: a pinned witness's bad line rejects the note.
    const forged = addSignatureLines(signNote(text, [engine]), [cosignatureLine(text, w1, 1_700_000_000), cosignatureLine(text.replace('\n5\n', '\n6\n'), w2, 1_700_000_001)]);
    expect((await both(forged)).ok).toBe(false);
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

/** RFC 8032 §7.1, TEST 1 (empty message) and TEST 2 (one byte 0x72): secret key, public key, message, signature. */
const RFC8032 = [
  {
    name: 'TEST 1',
    secretKey: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    name: 'TEST 2',
    secretKey: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    publicKey: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature: '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
] as const;

/** FIPS 180-2 SHA-256 examples (one block, two blocks) and the empty message. */
const SHA256_KAT = [
  { message: '', digest: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
  { message: 'abc', digest: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad' },
  { message: 'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', digest: '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1' },
] as const;

/** The same bytes with bit 0 of byte `at` flipped. */
const flip = (b: Uint8Array, at: number): Uint8Array => {
  const c = b.slice();
  c[at] = c[at]! ^ 1;
  return c;
};

describe('known answers (the page and node:crypto are each held to published vectors)', () => {
  describe.each(RFC8032)('Ed25519 RFC 8032 $name', (v) => {
    const publicKey = fromHex(v.publicKey);
    const message = fromHex(v.message);
    const signature = fromHex(v.signature);

    it('node:crypto derives the public key and the exact signature from the secret key, and verifies it', () => {
      const priv = ed25519PrivateKeyObject(fromHex(v.secretKey));
      expect(toHex(ed25519RawPublicKey(priv))).toBe(v.publicKey);
      expect(toHex(ed25519Sign(priv, message))).toBe(v.signature);
      const pub = ed25519PublicKeyObject(publicKey)!;
      expect(ed25519Verify(pub, message, signature)).toBe(true);
      expect(ed25519Verify(pub, message, flip(signature, 0))).toBe(false);
      expect(ed25519Verify(pub, new Uint8Array([...message, 0]), signature)).toBe(false);
    });

    it('the page (WebCrypto, directly and through Ed25519Oracle) accepts the vector and refuses any edit of it', async () => {
      expect(await ed25519VerifyWebCrypto(publicKey, message, signature)).toBe(true);
      expect(await ed25519VerifyWebCrypto(publicKey, message, flip(signature, 0))).toBe(false);
      expect(await ed25519VerifyWebCrypto(publicKey, message, flip(signature, 63))).toBe(false);
      expect(await ed25519VerifyWebCrypto(flip(publicKey, 0), message, signature)).toBe(false);
      expect(await ed25519VerifyWebCrypto(publicKey, new Uint8Array([...message, 0]), signature)).toBe(false);
      const oracle = new Ed25519Oracle();
      const verify = oracle.bind(publicKey);
      expect(await oracle.exact(() => [verify(message, signature), verify(message, flip(signature, 32))])).toEqual([true, false]);
    });
  });

  it.each(SHA256_KAT)('SHA-256 of $message: the page (whichever of its two answers) and the engine (node:crypto)', ({ message, digest }) => {
    const bytes = new TextEncoder().encode(message);
    expect(createHash('sha256').update(bytes).digest('hex'), 'cross-check of the vector').toBe(digest);
    expect(toHex(pageSha256(bytes))).toBe(digest);
    expect(toHex(codecSha256(bytes))).toBe(digest);
    for (const into of [pageSha256Into, codecSha256Into]) {
      const out = new Uint8Array(32);
      into(bytes, out);
      expect(toHex(out)).toBe(digest);
    }
  });
});

describe("the page's WebAssembly SHA-256 (hash-wasm)", () => {
  it('loads, answers the published vectors, and equals node:crypto on random inputs and views (seed 0x5a256)', async () => {
    await sha256Ready;
    // Node has WebAssembly and no CSP: the fast path must be the one answering, or this test checks noble twice.
    expect(sha256Backend()).toBe('wasm');
    for (const { message, digest } of SHA256_KAT) expect(toHex(pageSha256(new TextEncoder().encode(message)))).toBe(digest);
    const seed = 0x5a256;
    console.log(`fast-check seed ${seed}`);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), fc.nat({ max: 40 }), fc.nat({ max: 40 }), (bytes, cutStart, cutEnd) => {
        // A view into a larger array, as the verifier's preimages are.
        const view = bytes.subarray(Math.min(cutStart, bytes.length), Math.max(Math.min(cutStart, bytes.length), bytes.length - cutEnd));
        const want = createHash('sha256').update(view).digest('hex');
        expect(toHex(pageSha256(view))).toBe(want);
        const out = new Uint8Array(40).fill(7);
        pageSha256At(view, out, 5);
        expect(toHex(out.subarray(5, 37))).toBe(want);
        expect([...out.subarray(0, 5), ...out.subarray(37)]).toEqual([7, 7, 7, 7, 7, 7, 7, 7]);
      }),
      { seed, numRuns: 300 },
    );
  });
});
