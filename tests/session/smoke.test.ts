import { describe, expect, it } from 'vitest';
import { verifyBundle } from '../../src/codec/index.js';
import { runDay } from '../helpers/day.js';

describe('a small day', () => {
  it('records, seals and verifies', async () => {
    const { bundle, receipt, sid } = await runDay({ wakes: 5 });
    const r = await verifyBundle([bundle]);
    expect(r.ok).toBe(true);
    if (r.ok && receipt) {
      expect(r.receiptRoot).toBe(receipt.receiptRoot);
      expect(r.size).toBe(receipt.size);
      expect(r.sessionId).toBe(sid);
      expect(r.head).toBe(receipt.head);
    }
  });
});
