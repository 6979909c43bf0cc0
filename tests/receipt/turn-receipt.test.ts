import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBase64, createNotary, generateEngineKey, parseTlogProof, formatTlogProof, verifyTurnReceipt, type VerifyTurnReceiptResult } from '../../src/receipt/index.js';
import { intentDay, linesOf } from './fixtures.js';

const key = generateEngineKey('tally.example/desk');
const impostor = generateEngineKey('tally.example/desk'); // same name, other key

const { engine, sid } = await intentDay({ name: 'turn-receipts' });
const notary = createNotary({ key });
const sealed = await notary.sealWithReceipt(engine, sid);
if (!sealed.ok) throw new Error(sealed.message);
const lines = await linesOf(engine, sid);
const size = lines.length;
async function receipt(i: number, n = size): Promise<string> {
  const r = await notary.turnReceipt(engine, sid, i, { size: n });
  if (!r.ok) throw new Error(r.message);
  return r.text;
}
const TURN = 4; // turn 0: an intent rejected as expired
const good = await receipt(TURN);

function outcome(r: VerifyTurnReceiptResult): string {
  return r.ok ? 'ok' : `${r.stage}/${r.code}`;
}
const check = (text: string, verifiers: readonly string[] = [key.verifierKey]) => outcome(verifyTurnReceipt(text, { verifiers }));

/** Rewrites one part of a receipt and re-formats it. */
function edit(text: string, change: (p: { index: number; proof: Uint8Array[]; signedCheckpoint: string; extraData?: Uint8Array }) => void): string {
  const r = parseTlogProof(text);
  if (!r.ok) throw new Error(r.message);
  const p = { ...r.tlogProof, proof: [...r.tlogProof.proof] } as { index: number; proof: Uint8Array[]; signedCheckpoint: string; extraData?: Uint8Array };
  change(p);
  return formatTlogProof(p);
}

describe('single-turn receipts (C2SP tlog-proof with the entry bytes)', () => {
  it('is one standard tlog-proof: header, extra = entry bytes, index, path, blank line, the sealed checkpoint', () => {
    const lines0 = good.split('\n');
    expect(lines0[0]).toBe('c2sp.org/tlog-proof@v1');
    expect(lines0[1]).toBe(`extra ${encodeBase64(lines[TURN]!)}`);
    expect(lines0[2]).toBe(`index ${TURN}`);
    expect(good.endsWith(sealed.ok ? sealed.signedCheckpoint : '-')).toBe(true);
  });

  it('verifies: the entry, its session, the checkpoint and the signer come back', () => {
    const r = verifyTurnReceipt(good, { verifiers: [key.verifierKey], pin: { sessionId: sid, size, receiptRoot: sealed.ok ? sealed.receipt.receiptRoot : '' } });
    expect(r.ok && [r.index, r.entry.kind, r.sessionId, r.checkpoint.size, r.checkpoint.signedBy[0]?.name]).toEqual([TURN, 'turn', sid, size, 'tally.example/desk']);
  });

  it('the genesis (index 0) and the seal (last index) have receipts too', async () => {
    expect(check(await receipt(0))).toBe('ok');
    expect(check(await receipt(size - 1))).toBe('ok');
  });

  it('rejects each mutation at its stage (negative vectors by mutation)', async () => {
    expect(check(good, [impostor.verifierKey])).toBe('note/no-pinned-signature');
    expect(check(good, [generateEngineKey('other.example').verifierKey])).toBe('note/no-pinned-signature');
    expect(check(edit(good, (p) => (p.index = TURN + 1)))).toBe('inclusion/root-mismatch');
    expect(check(edit(good, (p) => (p.index = TURN - 1)))).toBe('inclusion/root-mismatch');
    expect(check(edit(good, (p) => (p.index = size)))).toBe('inclusion/index-out-of-range');
    expect(check(edit(good, (p) => (p.index = 0)))).toBe('entry/wrong-position');
    expect(check(edit(good, (p) => p.proof.pop()))).toBe('inclusion/wrong-proof-size');
    expect(check(edit(good, (p) => p.proof.push(new Uint8Array(32))))).toBe('inclusion/wrong-proof-size');
    expect(check(edit(good, (p) => p.proof.reverse()))).toBe('inclusion/root-mismatch');
    expect(check(edit(good, (p) => (p.extraData = lines[TURN + 2]!)))).toBe('inclusion/root-mismatch');
    expect(check(edit(good, (p) => delete p.extraData))).toBe('proof/missing-entry');
    expect(check(edit(good, (p) => (p.extraData = lines[0]!)))).toBe('entry/wrong-position');
    // A forged entry that still parses (ruling edited, canonical): the leaf no longer matches.
    const recorded = new TextDecoder().decode(lines[TURN]!);
    expect(recorded).toContain('"code":"expired"');
    const forged = new TextEncoder().encode(recorded.replace('"code":"expired"', '"code":"ttl_too_far"'));
    expect(check(edit(good, (p) => (p.extraData = forged)))).toBe('inclusion/root-mismatch');
    // The checkpoint: a signature bit, the size, the origin.
    const cp = sealed.ok ? sealed.signedCheckpoint : '';
    const sigAt = cp.lastIndexOf(' ') + 10;
    const flipped = cp.slice(0, sigAt) + (cp[sigAt] === 'A' ? 'B' : 'A') + cp.slice(sigAt + 1);
    expect(check(edit(good, (p) => (p.signedCheckpoint = flipped)))).toBe('note/bad-signature');
    expect(check(edit(good, (p) => (p.signedCheckpoint = cp.replace(`\n${size}\n`, `\n${size + 1}\n`))))).toBe('note/bad-signature');
    // Garbage after the signature lines, or before the header.
    expect(check(`${good}junk\n`)).toBe('note/malformed-note');
    expect(check(`x${good}`)).toBe('proof/bad-header');
  });

  it('an entry of another session under this checkpoint is refused as such', async () => {
    const other = await intentDay({ engine, name: 'elsewhere', nonceBase: 50 });
    const otherLines = await linesOf(engine, other.sid);
    expect(check(edit(good, (p) => (p.extraData = otherLines[TURN]!)))).toBe('entry/wrong-session');
  });

  it('a receipt against a mid-day checkpoint verifies; pinning the sealed day refuses it', async () => {
    const mid = await receipt(TURN, 7);
    expect(check(mid)).toBe('ok');
    expect(outcome(verifyTurnReceipt(mid, { verifiers: [key.verifierKey], pin: { size } }))).toBe('pin/pin-mismatch');
  });

  it('no single-character change anywhere in a receipt is accepted (seed 0x7e57)', () => {
    fc.assert(
      fc.property(fc.nat({ max: good.length - 1 }), fc.constantFrom('A', 'a', '0', '/', '+', '=', ' ', '\n', 'x'), (at, ch) => {
        fc.pre(good[at] !== ch);
        const text = good.slice(0, at) + ch + good.slice(at + 1);
        expect(verifyTurnReceipt(text, { verifiers: [key.verifierKey] }).ok).toBe(false);
      }),
      { seed: 0x7e57, numRuns: 400 },
    );
  });
});
