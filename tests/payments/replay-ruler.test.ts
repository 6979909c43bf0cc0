/**
 * The one choice of replay ruler (`tally replay` and the grader's page): read
 * from the genesis spec, a payment policy first, and the AP2 ruler only when
 * the caller can hand it in.
 */
import { describe, expect, it } from 'vitest';
import { chooseReplayRuler, sealedAuthorityOf } from '../../src/payments/index.js';
import { createIntentRuler } from '../../src/rules/intent.js';
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

  it('picks payments, referee, intent or ap2, and says when the AP2 ruler is not at hand', () => {
    expect(chooseReplayRuler('auto', 'payments').name).toBe('payments');
    expect(typeof chooseReplayRuler('auto', 'payments').ruler).toBe('function');
    expect(chooseReplayRuler('auto', 'mandate').name).toBe('referee');
    expect(chooseReplayRuler('auto', undefined).name).toBe('intent');
    expect(chooseReplayRuler('referee', 'payments').name).toBe('referee');
    expect(chooseReplayRuler('payments', undefined).name).toBe('payments');
    expect(chooseReplayRuler('none', 'payments')).toEqual({ name: 'none', ruler: null });
    const page = chooseReplayRuler('auto', 'ap2');
    expect(page).toEqual({ name: 'ap2' });
    const ap2 = () => createIntentRuler();
    expect(chooseReplayRuler('auto', 'ap2', ap2)).toEqual({ name: 'ap2', ruler: ap2 });
    expect(chooseReplayRuler('ap2', undefined, ap2).ruler).toBe(ap2);
  });
});
