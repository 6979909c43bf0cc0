/**
 * Every verifier of the receipt layer takes untrusted input: hostile values
 * must come back as a rejection (or a usage TallyError), never as a crash, a
 * hang or caller code running inside an error message.
 */
import { describe, expect, it } from 'vitest';
import {
  checkEntryBytes,
  createNotary,
  generateEngineKey,
  openSessionCheckpoint,
  parseConsistencyProof,
  parseGradeText,
  peekSessionCheckpoint,
  splitSessionOrigin,
  verifyCheckpointConsistency,
  verifyGrade,
  verifyTurnReceipt,
} from '../../src/receipt/index.js';
import { intentDay } from './fixtures.js';

let trapped = 0;
const trap = new Proxy(new Uint8Array(4), {
  get(t, p, r) {
    if (p === 'toString' || p === Symbol.toPrimitive || p === 'valueOf') trapped++;
    return Reflect.get(t, p, r) as unknown;
  },
});
const HOSTILE: unknown[] = [undefined, null, 0, -1, 1.5, Number.NaN, 10e9999, 2n ** 70n, '', 'x'.repeat(100_000), [], {}, { length: '1e30' }, trap, Symbol('s'), () => 1, new Uint8Array(0)];
const key = generateEngineKey('tally.example/desk');
const V = [key.verifierKey];

describe('hostile input to the receipt verifiers', () => {
  it('verifyTurnReceipt, openSessionCheckpoint, verifyGrade, consistency: a rejection for every hostile text', () => {
    for (const h of HOSTILE) {
      const t = h as string;
      expect(verifyTurnReceipt(t, { verifiers: V }).ok).toBe(false);
      expect(openSessionCheckpoint(t, V).ok).toBe(false);
      expect(verifyGrade(t, { verifiers: V }).ok).toBe(false);
      expect(parseGradeText(t).ok).toBe(false);
      expect(parseConsistencyProof(t).ok).toBe(false);
      expect(verifyCheckpointConsistency(t, t, [], { verifiers: V }).ok).toBe(false);
      expect(peekSessionCheckpoint(t)).toBeUndefined();
      expect(splitSessionOrigin(t)).toBeUndefined();
      expect(checkEntryBytes(h as Uint8Array).ok).toBe(false);
    }
    expect(trapped).toBe(0);
  });

  it('the notary refuses hostile sessions, sizes and indexes as results, naming them by type only', async () => {
    const { engine, sid } = await intentDay({ name: 'hostile' });
    const notary = createNotary({ key });
    for (const h of HOSTILE) {
      const x = h as number;
      const s = h as string;
      const results: Array<{ ok: boolean; message?: string }> = [await notary.issueCheckpoint(engine, s), await notary.consistencyProof(engine, sid, x, 3)];
      // 0 is a fine index (the genesis).
      if (h !== 0) results.push(await notary.inclusionProof(engine, sid, x), await notary.turnReceipt(engine, sid, x));
      for (const r of results) {
        expect(r.ok).toBe(false);
        expect(r.message?.length ?? 0).toBeLessThan(300);
      }
      // undefined means "the default size" for these two.
      if (h !== undefined) {
        expect((await notary.issueCheckpoint(engine, sid, x)).ok).toBe(false);
        expect((await notary.turnReceipt(engine, sid, 1, { size: x })).ok).toBe(false);
      }
    }
    expect(trapped).toBe(0);
    expect(() => createNotary({ key: {} as never })).toThrow(/engine key/);
  });
});
