import { describe, expect, expectTypeOf, test } from 'vitest';
import { INTENT_CODES, INTENT_CODE_STAGE, INTENT_RULING_CATALOGUE, INTENT_STAGES } from '../../src/intent/index.js';
import type { IntentCode, IntentRejection, IntentStage } from '../../src/intent/index.js';

describe('ruling vocabulary', () => {
  test('tuples and unions are the same sets (type level)', () => {
    expectTypeOf<(typeof INTENT_STAGES)[number]>().toEqualTypeOf<IntentStage>();
    expectTypeOf<(typeof INTENT_CODES)[number]>().toEqualTypeOf<IntentCode>();
    expectTypeOf<(typeof INTENT_RULING_CATALOGUE)[number]['code']>().toEqualTypeOf<IntentCode>();
    expectTypeOf<Extract<IntentRejection, { code: 'replayed_nonce' }>['stage']>().toEqualTypeOf<'nonce'>();
  });

  test('stages are in normative order a → f', () => {
    expect([...INTENT_STAGES]).toEqual(['schema', 'signature', 'nonce', 'ttl', 'bounds', 'target']);
  });

  test('the catalogue has every code exactly once, in stage order, with its stage and guidance', () => {
    expect(INTENT_RULING_CATALOGUE.map((e) => e.code)).toEqual([...INTENT_CODES]);
    expect(new Set(INTENT_CODES).size).toBe(INTENT_CODES.length);
    const stageIndex = INTENT_RULING_CATALOGUE.map((e) => INTENT_STAGES.indexOf(e.stage));
    expect(stageIndex).toEqual([...stageIndex].sort((a, b) => a - b));
    for (const e of INTENT_RULING_CATALOGUE) {
      expect(INTENT_CODE_STAGE[e.code]).toBe(e.stage);
      expect(e.when.length).toBeGreaterThan(10);
      expect(e.fix.length).toBeGreaterThan(10);
    }
    for (const stage of INTENT_STAGES) expect(INTENT_RULING_CATALOGUE.some((e) => e.stage === stage)).toBe(true);
  });

  test('is frozen and JSON-serializable (for `tally codes`)', () => {
    expect(Object.isFrozen(INTENT_RULING_CATALOGUE)).toBe(true);
    expect(Object.isFrozen(INTENT_RULING_CATALOGUE[0])).toBe(true);
    expect(Object.isFrozen(INTENT_STAGES) && Object.isFrozen(INTENT_CODES) && Object.isFrozen(INTENT_CODE_STAGE)).toBe(true);
    expect(JSON.parse(JSON.stringify(INTENT_RULING_CATALOGUE))).toEqual(INTENT_RULING_CATALOGUE);
  });
});
