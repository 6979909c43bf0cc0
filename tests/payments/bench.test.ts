import { expect, test } from 'vitest';
import { benchPayments } from '../../src/bench/payments.js';

test('benchPayments rules every payment and reports finite throughputs (numbers are for `npm run bench`, not asserted)', async () => {
  const [f] = await benchPayments(12);
  expect(f!.name).toBe('x402 payment turns ruled (engine + payment referee)');
  expect(f!.perSecond).toBeGreaterThan(0);
  expect(f!.baselinePerSecond).toBeGreaterThan(0);
  expect(Number.isFinite(f!.ratio)).toBe(true);
});
