import { expect, test } from 'vitest';
import { benchReferee } from '../../src/bench/referee.js';

test('benchReferee runs and reports finite throughputs (numbers are for `npm run bench`, not asserted)', async () => {
  const figures = await benchReferee(20);
  expect(figures.map((f) => f.name)).toEqual([
    'refereed intent turns (policy + local judge + ticket)',
    'refereed intent turns, panel of 1 local judge (quorum 1)',
    'refereed intent turns, panel of 3 local judges (quorum 2)',
  ]);
  for (const f of figures) {
    expect(f.perSecond).toBeGreaterThan(0);
    expect(f.baselinePerSecond).toBeGreaterThan(0);
    expect(Number.isFinite(f.ratio)).toBe(true);
  }
});
