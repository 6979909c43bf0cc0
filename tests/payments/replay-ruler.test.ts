/**
 * The one choice of replay ruler (`tally replay` and the grader's page): read
 * from the genesis spec, a payment policy first, and the AP2 ruler for an AP2
 * or VI day (in the page as in the CLI).
 */
import { describe, expect, it } from 'vitest';
import { chooseReplayRuler, sealedAuthorityOf } from '../../src/payments/index.js';
import type { TurnRuler } from '../../src/session/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { paySpec } from './fixtures.js';

describe('chooseReplayRuler', () => {
  it('reads the authority from the genesis spec, a payment policy before its mandate', () => {
    const spec = paySpec('choice') as unknown as Record<string, unknown>;
    expect(spec['mandate']).toBeDefined();
    expect(sealedAuthorityOf(spec)).toBe('payments');
    expect(sealedAuthorityOf({ ...spec, payments: undefined })).toBe('mandate');
    expect(sealedAuthorityOf({ mcp: {} })).toBe('mandate');
    expect(sealedAuthorityOf({ ap2: 'x' })).toBe('ap2');
    expect(sealedAuthorityOf({ vi: 'x' })).toBe('ap2');
    for (const none of [{}, null, [], 'spec', { other: 1 }]) expect(sealedAuthorityOf(none)).toBeUndefined();
  });

  it('picks payments, referee, intent or ap2, and gives the AP2 ruler to every caller', () => {
    expect(chooseReplayRuler('auto', 'payments').name).toBe('payments');
    expect(typeof chooseReplayRuler('auto', 'payments').ruler).toBe('function');
    expect(chooseReplayRuler('auto', 'mandate').name).toBe('referee');
    expect(chooseReplayRuler('auto', undefined).name).toBe('intent');
    expect(chooseReplayRuler('referee', 'payments').name).toBe('referee');
    expect(chooseReplayRuler('payments', undefined).name).toBe('payments');
    expect(chooseReplayRuler('none', 'payments')).toEqual({ name: 'none', ruler: null });
    // The AP2 ruler, for the page as for the CLI: a factory over the replay's store whose spec check is AP2's.
    for (const chosen of [chooseReplayRuler('auto', 'ap2'), chooseReplayRuler('ap2', undefined)]) {
      expect(chosen.name).toBe('ap2');
      expect(typeof chosen.ruler).toBe('function');
      const ruler = (chosen.ruler as (s: MemoryStore) => TurnRuler)(new MemoryStore());
      expect(ruler.checkSpec?.({ ap2: 'x' } as never)).toMatch(/^spec\.ap2 must be/);
      expect(ruler.checkSpec?.({ vi: 'x' } as never)).toBeDefined();
    }
  });
});
