import { expect, test } from 'vitest';
import { benchReferee } from '../../src/bench/referee.js';

test('benchReferee runs and reports finite throughputs (numbers are for `npm run bench`, not asserted)', async () => {
  const [f] = await benchReferee(20);
  expect(f!.perSecond).toBeGreaterThan(0);
  expect(f!.baselinePerSecond).toBeGreaterThan(0);
  expect(Number.isFinite(f!.ratio)).toBe(true);
});
