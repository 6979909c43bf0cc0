import AjvModule from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, expectTypeOf, test } from 'vitest';
import {
  INTENT_ACTIONS,
  intentJsonSchema,
  intentSchema,
  unsignedIntentJsonSchema,
  unsignedIntentSchema,
} from '../../src/intent/index.js';
import type { Intent, IntentAction, IntentInput, UnsignedIntent } from '../../src/intent/index.js';
import { closeInput, openInput, transferInput } from './helpers.js';

const SIG = `0x${'11'.repeat(32)}${'22'.repeat(32)}1b`;
const parse = (v: unknown) => unsignedIntentSchema.safeParse(v);

describe('intent schema', () => {
  test('normalizes every action to strings', () => {
    expect(unsignedIntentSchema.parse(openInput)).toEqual({
      action: 'open',
      agent_id: 'agent-1',
      nonce: '1',
      ttl: '2030-01-01T00:01:00.000Z',
      size: '1',
      market: 'BTC-PERP',
      side: 'long',
      leverage: '3',
      max_slippage: '0.005',
    });
    expect(unsignedIntentSchema.parse({ ...openInput, action: 'modify', tp: '65000.50', sl: 1e3 })).toMatchObject({ action: 'modify', tp: '65000.5', sl: '1000' });
    expect(unsignedIntentSchema.parse(closeInput)).toMatchObject({ size: '0.5', max_slippage: '0.01' });
    expect(unsignedIntentSchema.parse(transferInput)).toMatchObject({ target_address: '0x000000000000000000000000000000000000dead' });
    expect(intentSchema.parse({ ...transferInput, signature: SIG.toUpperCase().replace('0X', '0x') }).signature).toBe(SIG);
  });

  test('types are derived from the schema', () => {
    expectTypeOf<Intent['size']>().toEqualTypeOf<string>();
    expectTypeOf<IntentInput['size']>().toEqualTypeOf<string | number>();
    expectTypeOf<IntentAction>().toEqualTypeOf<'open' | 'modify' | 'close' | 'transfer'>();
    expectTypeOf<Extract<UnsignedIntent, { action: 'transfer' }>>().not.toHaveProperty('market');
    expectTypeOf<Extract<Intent, { action: 'open' }>['tp']>().toEqualTypeOf<string | undefined>();
    expect([...INTENT_ACTIONS]).toEqual(['open', 'modify', 'close', 'transfer']);
  });

  test('target_address is structurally permitted on every action (stage f polices it)', () => {
    for (const input of [openInput, closeInput, { ...openInput, action: 'modify' }]) {
      expect(parse({ ...input, target_address: transferInput.target_address }).success).toBe(true);
    }
    expect(parse({ ...transferInput, target_address: undefined }).success).toBe(true);
  });

  test('explicit undefined optionals are omitted; null is rejected', () => {
    const r = unsignedIntentSchema.parse({ ...openInput, tp: undefined });
    expect(Object.hasOwn(r, 'tp')).toBe(false);
    expect(parse({ ...openInput, tp: null }).success).toBe(false);
    expect(parse({ ...transferInput, target_address: null }).success).toBe(false);
  });

  test.each([
    ['unknown key', { ...openInput, extra: 1 }],
    ['field of another action', { ...closeInput, leverage: '2' }],
    ['tp on close', { ...closeInput, tp: '1' }],
    ['missing field', (({ market: _m, ...rest }) => rest)(openInput)],
    ['unknown action', { ...openInput, action: 'withdraw' }],
    ['bad side', { ...openInput, side: 'LONG' }],
    ['signature on unsigned', { ...openInput, signature: SIG }],
    ['size NaN', { ...openInput, size: NaN }],
    ['size Infinity', { ...openInput, size: Infinity }],
    ['size hex', { ...openInput, size: '0x10' }],
    ['size bigint', { ...openInput, size: 10n }],
    ['size exponent bomb', { ...openInput, size: '1e8000000' }],
    ['size 81 integer digits', { ...openInput, size: '1'.repeat(81) }],
    ['ttl without zone', { ...openInput, ttl: '2030-01-01T00:00:00' }],
    ['ttl impossible', { ...openInput, ttl: '2030-02-30T00:00:00Z' }],
    ['nonce too long', { ...openInput, nonce: 'n'.repeat(129) }],
    ['nonce empty', { ...openInput, nonce: '' }],
    ['nonce with space', { ...openInput, nonce: 'a b' }],
    ['nonce not integer', { ...openInput, nonce: 1.5 }],
    ['nonce unsafe integer', { ...openInput, nonce: 2 ** 53 }],
    ['agent_id too long', { ...openInput, agent_id: 'a'.repeat(129) }],
    ['market with space', { ...openInput, market: 'BTC PERP' }],
    ['target short', { ...transferInput, target_address: '0xdead' }],
    ['array', [openInput]],
    ['string', 'open'],
  ])('rejects %s', (_name, input) => {
    expect(parse(input).success).toBe(false);
  });

  test('nonce tokens: numbers become their decimal token, strings stay opaque', () => {
    expect(unsignedIntentSchema.parse({ ...openInput, nonce: 5 }).nonce).toBe('5');
    expect(unsignedIntentSchema.parse({ ...openInput, nonce: '5' }).nonce).toBe('5');
    expect(unsignedIntentSchema.parse({ ...openInput, nonce: '05' }).nonce).toBe('05');
    expect(unsignedIntentSchema.parse({ ...openInput, nonce: 'n'.repeat(128) }).nonce).toHaveLength(128);
    expect(unsignedIntentSchema.parse({ ...openInput, nonce: Number.MAX_SAFE_INTEGER }).nonce).toBe('9007199254740991');
  });
});

describe('JSON Schema of the wire format', () => {
  const Ajv = AjvModule.default;
  const ajv = new Ajv({ strict: true, allErrors: false });
  const validateSigned = ajv.compile(intentJsonSchema);
  const validateUnsigned = ajv.compile(unsignedIntentJsonSchema);

  test('describes numerics as number or decimal string, and is strict', () => {
    const variants = unsignedIntentJsonSchema['oneOf'] as Array<{ properties: Record<string, unknown>; additionalProperties: unknown; required: string[] }>;
    expect(variants).toHaveLength(4);
    const open = variants[0]!;
    expect(open.additionalProperties).toBe(false);
    expect(open.properties['size']).toMatchObject({ anyOf: [{ type: 'number' }, { type: 'string', maxLength: 100 }] });
    expect(open.properties['ttl']).toMatchObject({ anyOf: [{ type: 'integer', minimum: -62_167_219_200_000, maximum: 253_402_300_799_999 }, { type: 'string', maxLength: 40 }] });
    expect(open.properties['nonce']).toMatchObject({ anyOf: [{ type: 'integer' }, { type: 'string', minLength: 1, maxLength: 128 }] });
    expect(open.required).not.toContain('tp');
    expect(Object.isFrozen(intentJsonSchema)).toBe(true);
  });

  test('accepts wire spellings an independent validator (ajv) agrees on', () => {
    expect(validateUnsigned(openInput)).toBe(true);
    expect(validateUnsigned({ ...openInput, size: '1.000', leverage: '3', max_slippage: '5e-3', nonce: 'n-1' })).toBe(true);
    expect(validateSigned({ ...transferInput, signature: SIG })).toBe(true);
    expect(validateUnsigned({ ...openInput, extra: 1 })).toBe(false);
    expect(validateUnsigned({ ...openInput, tp: null })).toBe(false);
    expect(validateUnsigned({ ...openInput, size: 'abc' })).toBe(false);
    expect(validateUnsigned({ ...openInput, ttl: '2030-01-01T00:00:00' })).toBe(false);
    expect(validateUnsigned({ ...openInput, nonce: 'n'.repeat(129) })).toBe(false);
    expect(validateSigned(openInput)).toBe(false); // no signature
  });

  const decimalSpelling = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e30, max: 1e30 }),
    fc.stringMatching(/^-?[0-9]{1,12}(\.[0-9]{0,12})?(e[+-]?[0-9]{1,2})?$/),
  );
  const wireIntent = fc.record({
    action: fc.constantFrom('open', 'modify'),
    agent_id: fc.stringMatching(/^[!-~]{1,128}$/),
    nonce: fc.oneof(fc.maxSafeInteger(), fc.stringMatching(/^[!-~]{1,128}$/)),
    ttl: fc.oneof(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.constant('2030-01-01T00:00:00+05:30')),
    size: decimalSpelling,
    market: fc.constantFrom('BTC-PERP', 'kPEPE-PERP', 'ETH/USD'),
    side: fc.constantFrom('long', 'short'),
    leverage: decimalSpelling,
    max_slippage: decimalSpelling,
    tp: fc.option(decimalSpelling, { nil: undefined }),
  }, { requiredKeys: ['action', 'agent_id', 'nonce', 'ttl', 'size', 'market', 'side', 'leverage', 'max_slippage'] });

  test('never rejects what the zod schema accepts (seed 0x5c4e)', () => {
    fc.assert(
      fc.property(wireIntent, (input) => {
        const json = JSON.parse(JSON.stringify(input)) as unknown; // the wire carries JSON
        return !parse(json).success || validateUnsigned(json) === true;
      }),
      { seed: 0x5c4e, numRuns: 500 },
    );
  });
});
