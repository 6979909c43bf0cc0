import { describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import {
  createNotary,
  generateEngineKey,
  indexBundle,
  peekSessionCheckpoint,
  turnReceiptFromBundle,
  verifyBundleCheckpoint,
  verifyTurnReceipt,
  type VerifyBundleCheckpointResult,
} from '../../src/receipt/index.js';
import { entriesOf, intentDay, linesOf, reseal } from './fixtures.js';

const key = generateEngineKey('tally.example/desk');
const notary = createNotary({ key });
const { engine, sid } = await intentDay({ name: 'bundle-day' });
const mid = await notary.issueCheckpoint(engine, sid, 9);
const sealed = await notary.sealWithReceipt(engine, sid);
if (!sealed.ok || !mid.ok) throw new Error('setup');
const lines = await linesOf(engine, sid);
const bundle = encodeBundle(lines);
const pinned = { verifiers: [key.verifierKey] };

const outcome = (r: VerifyBundleCheckpointResult) => (r.ok ? 'ok' : r.stage === 'chain' ? `chain/${r.code}` : `${r.stage}/${r.code}`);

describe('a bundle against a signed checkpoint', () => {
  it('the sealed checkpoint pins the whole day; a mid-day one is a prefix of it', async () => {
    const all = await verifyBundleCheckpoint([bundle], { signedCheckpoint: sealed.signedCheckpoint, verifiers: [key.verifierKey] });
    expect(all.ok && [all.coversAll, all.summary.receiptRoot]).toEqual([true, sealed.receipt.receiptRoot]);
    const prefix = await verifyBundleCheckpoint([bundle], { signedCheckpoint: mid.signedCheckpoint, verifiers: [key.verifierKey] });
    expect(prefix.ok && [prefix.coversAll, prefix.checkpoint.size]).toEqual([false, 9]);
  });

  it('a re-sealed forgery verifies on its own but not against the signed checkpoint', async () => {
    const entries = entriesOf(lines);
    const forged = reseal(entries.map((e) => (e.kind === 'finalize' ? { ...e, artifacts: { forged: true } } : e)));
    expect((await verifyBundle([forged.bundle])).ok).toBe(true);
    expect(outcome(await verifyBundleCheckpoint([forged.bundle], { signedCheckpoint: sealed.signedCheckpoint, verifiers: [key.verifierKey] }))).toBe('match/root-mismatch');
    // An edit inside the first 9 entries breaks the mid-day checkpoint too.
    const early = reseal(entries.map((e, i) => (i === 2 && e.kind === 'turn' ? { ...e, ruling: { edited: true } } : e)));
    expect(outcome(await verifyBundleCheckpoint([early.bundle], { signedCheckpoint: mid.signedCheckpoint, verifiers: [key.verifierKey] }))).toBe('match/root-mismatch');
  });

  it('wrong key, another session, a truncated bundle and a checkpoint beyond the bundle are each named', async () => {
    const other = await intentDay({ engine, name: 'other-day', nonceBase: 40 });
    const otherCp = await notary.issueCheckpoint(engine, other.sid);
    const cases: Array<[Promise<VerifyBundleCheckpointResult>, string]> = [
      [verifyBundleCheckpoint([bundle], { signedCheckpoint: sealed.signedCheckpoint, verifiers: [generateEngineKey('tally.example/desk').verifierKey] }), 'note/no-pinned-signature'],
      [verifyBundleCheckpoint([bundle], { signedCheckpoint: otherCp.ok ? otherCp.signedCheckpoint : '', verifiers: [key.verifierKey] }), 'chain/pin-mismatch'],
      [verifyBundleCheckpoint([bundle.subarray(0, bundle.length - 1)], { signedCheckpoint: sealed.signedCheckpoint, verifiers: [key.verifierKey] }), 'chain/missing-newline'],
      [verifyBundleCheckpoint([encodeBundle(lines.slice(0, 7))], { signedCheckpoint: mid.signedCheckpoint, verifiers: [key.verifierKey], requireSealed: false }), 'match/beyond-bundle'],
    ];
    for (const [p, want] of cases) expect(outcome(await p)).toBe(want);
  });
});

describe('proving from a bundle file (the engine database not needed)', () => {
  it('indexBundle + turnReceiptFromBundle give byte-identical receipts to the notary', async () => {
    const ix = await indexBundle([bundle], { entries: lines.map((_, i) => i) });
    if (!ix.ok) throw new Error(ix.message);
    for (let i = 0; i < lines.length; i++) {
      const fromBundle = turnReceiptFromBundle(ix, i, sealed.signedCheckpoint, pinned);
      const fromEngine = await notary.turnReceipt(engine, sid, i, { signedCheckpoint: sealed.signedCheckpoint });
      expect(fromBundle.ok && fromBundle.text).toBe(fromEngine.ok && fromEngine.text);
    }
    const m = turnReceiptFromBundle(ix, 3, mid.signedCheckpoint, pinned);
    expect(m.ok && verifyTurnReceipt(m.text, { verifiers: [key.verifierKey] }).ok).toBe(true);
    expect(turnReceiptFromBundle(ix, 9, mid.signedCheckpoint, pinned)).toMatchObject({ ok: false, code: 'index-out-of-range' });
  });

  it('peekSessionCheckpoint reads origin, size and root of a signed checkpoint', async () => {
    expect(peekSessionCheckpoint(sealed.signedCheckpoint)).toEqual({ engineName: 'tally.example/desk', sessionId: sid, size: lines.length, root: sealed.receipt.receiptRoot });
  });

  it('refuses to prove against a checkpoint of another transcript, or an entry it did not keep', async () => {
    const ix = await indexBundle([bundle], { entries: [1] });
    if (!ix.ok) throw new Error(ix.message);
    const forged = reseal(entriesOf(lines).map((e) => (e.kind === 'finalize' ? { ...e, artifacts: { x: 1 } } : e)));
    const fx = await indexBundle([forged.bundle], { entries: [1] });
    if (!fx.ok) throw new Error(fx.message);
    expect(turnReceiptFromBundle(fx, 1, sealed.signedCheckpoint, pinned)).toMatchObject({ ok: false, code: 'checkpoint-mismatch' });
    expect(turnReceiptFromBundle(ix, 2, sealed.signedCheckpoint, pinned)).toMatchObject({ ok: false, code: 'entry-not-loaded' });
    expect(turnReceiptFromBundle(ix, 1, 'not a checkpoint\n', pinned)).toMatchObject({ ok: false, code: 'checkpoint-unverified' });
    // The checkpoint must carry a valid signature by the pinned key: another key's (same name) is refused.
    expect(turnReceiptFromBundle(ix, 1, sealed.signedCheckpoint, { verifiers: [generateEngineKey('tally.example/desk').verifierKey] })).toMatchObject({
      ok: false,
      code: 'checkpoint-unverified',
      message: expect.stringContaining('no-pinned-signature'),
    });
  });

  it('indexBundle returns the chain error of a bad bundle', async () => {
    const r = await indexBundle([bundle.subarray(0, 40)]);
    expect(r).toMatchObject({ ok: false, code: 'missing-newline', index: 0 });
  });
});

describe('the checkpoint match on the verdict-only path', () => {
  it('gives what the entry path gives, for a checkpoint of every size and root', async () => {
    const { verifyChunksAgainstCheckpoint } = await import('../../src/receipt/proof/bundle-checkpoint.js');
    const { openSessionCheckpoint } = await import('../../src/receipt/index.js');
    const { sha256 } = await import('../../src/codec/index.js');
    const opened = openSessionCheckpoint(sealed.signedCheckpoint, [key.verifierKey]);
    if (!opened.ok) throw new Error('setup');
    const roots = new Map<number, string>();
    let prefixRoots = 0;
    for (let size = 1; size <= lines.length + 1; size++) {
      // The root at `size` from the reference tree, then a wrong one; and a size past the bundle.
      const full = size <= lines.length ? await verifyBundle([encodeBundle(lines.slice(0, size))], { requireSealed: false }) : undefined;
      if (full?.ok) roots.set(size, full.receiptRoot);
      for (const root of [roots.get(size) ?? sealed.receipt.receiptRoot, '0'.repeat(64)]) {
        const cp = { ...opened.checkpoint, size, root };
        const plain = await verifyChunksAgainstCheckpoint(sha256, [bundle], cp);
        let seen = 0;
        const withEntries = await verifyChunksAgainstCheckpoint(sha256, [bundle], cp, { onEntry: () => void seen++ });
        let accepted = 0;
        const withAccepted = await verifyChunksAgainstCheckpoint(sha256, [bundle], cp, { onAccepted: () => void accepted++ });
        expect(plain, `size ${size}`).toEqual(withEntries);
        expect(withAccepted, `size ${size}`).toEqual(withEntries);
        expect(accepted).toBe(seen);
        if (plain.ok) prefixRoots++;
      }
    }
    // Every size within the bundle matched with its own root, and no wrong root did.
    expect(prefixRoots).toBe(lines.length);
  });
});
