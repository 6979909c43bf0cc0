import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { TallyError } from '../../src/protocol/errors.js';
import {
  DEFAULT_INTENT_LIMITS,
  INTENT_CODES,
  INTENT_CODE_STAGE,
  INTENT_STAGES,
  createNonceGuard,
  createSignerCache,
  intentHash,
  signIntent,
  validateIntent,
} from '../../src/intent/index.js';
import type { IntentCode, IntentStage, UnsignedIntentInput, ValidateIntentOptions, ValidateIntentResult } from '../../src/intent/index.js';
import { SECP256K1_N } from '../../src/intent/signature.js';
import { ANVIL0_ADDRESS, ANVIL0_KEY, ANVIL1_KEY, TTL, baseOptions, closeInput, hostileValues, openInput, transferInput } from './helpers.js';

const TTL_MS = Date.parse(TTL);

async function run(input: UnsignedIntentInput, opts: Partial<ValidateIntentOptions> = {}, key: `0x${string}` = ANVIL0_KEY): Promise<ValidateIntentResult> {
  return validateIntent(await signIntent(input, key), baseOptions(opts));
}

function expectRejected(r: ValidateIntentResult, stage: IntentStage, code: IntentCode): void {
  expect(r.ok ? 'accepted' : `${r.stage}/${r.code}: ${r.message}`).toMatch(new RegExp(`^${stage}/${code}:`));
}

describe('validateIntent — acceptance', () => {
  test.each([
    ['open', openInput],
    ['modify', { ...openInput, action: 'modify', tp: '70000', sl: '60000.5' }],
    ['close', closeInput],
    ['transfer', transferInput],
  ] as const)('%s is accepted with its hash and signer', async (_name, input) => {
    const r = await run(input);
    if (!r.ok) throw new Error(`${r.stage}/${r.code}: ${r.message}`);
    expect(r.intent_hash).toBe(intentHash(input));
    expect(r.signer).toBe(ANVIL0_ADDRESS);
    expect(r.intent.size).toMatch(/^[0-9.]+$/);
  });

  test('async seams and checksum-insensitive registered addresses work', async () => {
    for (const address of [ANVIL0_ADDRESS.toLowerCase(), `0x${ANVIL0_ADDRESS.slice(2).toUpperCase()}`]) {
      const r = await run(openInput, { resolveSigner: async () => address, isNonceUsed: async () => false });
      expect(r.ok).toBe(true);
    }
  });

  test('uses only the given now, never the wall clock', async () => {
    const past = { ...openInput, ttl: '2001-01-01T00:00:00Z' };
    expect((await run(past, { now: Date.UTC(2000, 0, 1) })).ok).toBe(true);
    expectRejected(await run(openInput, { now: Date.UTC(2031, 0, 1) }), 'ttl', 'expired');
  });
});

describe('validateIntent — each stage and code', () => {
  test('a schema: invalid_schema, with no hash', async () => {
    const signed = await signIntent(openInput, ANVIL0_KEY);
    const r = await validateIntent({ ...signed, extra: true }, baseOptions());
    expectRejected(r, 'schema', 'invalid_schema');
    expect(r.ok === false && 'intent_hash' in r).toBe(false);
  });

  test('a schema: a too-long nonce is a schema-stage rejection (before any signature work)', async () => {
    const signed = await signIntent(openInput, ANVIL0_KEY);
    let resolved = 0;
    const r = await validateIntent({ ...signed, nonce: 'n'.repeat(129) }, baseOptions({ resolveSigner: () => (resolved++, ANVIL0_ADDRESS) }));
    expectRejected(r, 'schema', 'invalid_schema');
    expect(resolved).toBe(0);
    expect(r.ok === false && r.message).toMatch(/^nonce:/);
    expectRejected(await validateIntent({ ...signed, size: '1e8000000' }, baseOptions()), 'schema', 'invalid_schema');
  });

  test('b signature: unknown_signer and bad_signature', async () => {
    expectRejected(await run(openInput, { resolveSigner: () => null }), 'signature', 'unknown_signer');
    expectRejected(await run(openInput, { resolveSigner: () => undefined }), 'signature', 'unknown_signer');
    expectRejected(await run(openInput, { resolveSigner: () => '0x1234' }), 'signature', 'unknown_signer');
    expectRejected(await run(openInput, {}, ANVIL1_KEY), 'signature', 'bad_signature');
    const signed = await signIntent(openInput, ANVIL0_KEY);
    expectRejected(await validateIntent({ ...signed, size: '2' }, baseOptions()), 'signature', 'bad_signature');
  });

  test('b signature: a high-s (malleable) signature is bad_signature', async () => {
    const signed = await signIntent(openInput, ANVIL0_KEY);
    const s = BigInt(`0x${signed.signature.slice(66, 130)}`);
    const twin = `${signed.signature.slice(0, 66)}${(SECP256K1_N - s).toString(16).padStart(64, '0')}${signed.signature.endsWith('1b') ? '1c' : '1b'}`;
    const r = await validateIntent({ ...signed, signature: twin }, baseOptions());
    expectRejected(r, 'signature', 'bad_signature');
    expect(r.ok === false && r.message).toMatch(/high/);
  });

  test('c nonce: replayed_nonce names the first user through the nonce guard', async () => {
    const guard = createNonceGuard();
    const first = await run(openInput, { isNonceUsed: guard.lookup });
    if (!first.ok) throw new Error('first should pass');
    expect(guard.reserve(first.intent.agent_id, first.intent.nonce, first.intent_hash)).toEqual({ ok: true });
    const replay = await run({ ...openInput, size: '2' }, { isNonceUsed: guard.lookup });
    expectRejected(replay, 'nonce', 'replayed_nonce');
    expect(replay.ok === false && replay.usedBy).toBe(first.intent_hash);
    const plain = await run(openInput, { isNonceUsed: () => true });
    expectRejected(plain, 'nonce', 'replayed_nonce');
    expect(plain.ok === false && 'usedBy' in plain).toBe(false);
  });

  test('f target: only on transfer, required on transfer', async () => {
    expectRejected(await run({ ...openInput, target_address: transferInput.target_address }), 'target', 'target_only_on_transfer');
    expectRejected(await run({ ...closeInput, target_address: transferInput.target_address }), 'target', 'target_only_on_transfer');
    const { target_address: _t, ...noTarget } = transferInput;
    expectRejected(await run(noTarget), 'target', 'target_required_on_transfer');
  });
});

describe('validateIntent — boundary tables', () => {
  test.each([
    ['now === ttl is valid', { now: TTL_MS }, null],
    ['now = ttl + 1 is expired', { now: TTL_MS + 1 }, 'expired'],
    ['skew 1000: now = ttl + 1000 is valid', { now: TTL_MS + 1000, clockSkewMs: 1000 }, null],
    ['skew 1000: now = ttl + 1001 is expired', { now: TTL_MS + 1001, clockSkewMs: 1000 }, 'expired'],
    ['no horizon by default: ttl far ahead is valid', { now: TTL_MS - 10 * 365 * 86_400_000 }, null],
    ['horizon 60 s: ttl = now + 60 s is valid', { now: TTL_MS - 60_000, maxTtlHorizonMs: 60_000 }, null],
    ['horizon 60 s: ttl = now + 60 s + 1 is too far', { now: TTL_MS - 60_001, maxTtlHorizonMs: 60_000 }, 'ttl_too_far'],
    ['horizon 60 s, skew 5 s: ttl = now + 65 s is valid', { now: TTL_MS - 65_000, maxTtlHorizonMs: 60_000, clockSkewMs: 5000 }, null],
    ['horizon 60 s, skew 5 s: ttl = now + 65 s + 1 is too far', { now: TTL_MS - 65_001, maxTtlHorizonMs: 60_000, clockSkewMs: 5000 }, 'ttl_too_far'],
    ['horizon 0: ttl = now is valid', { now: TTL_MS, maxTtlHorizonMs: 0 }, null],
  ] as const)('ttl: %s', async (_name, opts, code) => {
    const r = await run(openInput, opts);
    if (code === null) expect(r.ok).toBe(true);
    else expectRejected(r, 'ttl', code);
  });

  test.each([
    ['max_slippage 0', { max_slippage: '0' }, null],
    ['max_slippage 1', { max_slippage: 1 }, null],
    ['max_slippage "1.0000000000000001"', { max_slippage: '1.0000000000000001' }, 'slippage_out_of_range'],
    ['max_slippage -0.0001', { max_slippage: '-0.0001' }, 'slippage_out_of_range'],
    ['max_slippage 5 (a percentage)', { max_slippage: 5 }, 'slippage_out_of_range'],
    ['size 0', { size: 0 }, 'nonpositive_size'],
    ['size -0.0 (normalizes to 0)', { size: '-0.0' }, 'nonpositive_size'],
    ['size -1', { size: -1 }, 'nonpositive_size'],
    ['size smallest positive at scale 18', { size: '0.000000000000000001' }, null],
    ['leverage 0', { leverage: 0 }, 'nonpositive_leverage'],
    ['tp 0', { tp: '0' }, 'nonpositive_tp'],
    ['sl -5', { sl: '-5' }, 'nonpositive_sl'],
    ['size with 18 integer digits', { size: '9'.repeat(18) }, null],
    ['size with 19 integer digits', { size: '1'.repeat(19) }, 'magnitude_exceeded'],
    ['tp 1e18 (19 digits)', { tp: '1e18' }, 'magnitude_exceeded'],
    ['size with 18 fraction digits', { size: `0.${'1'.repeat(18)}` }, null],
    ['size with 19 fraction digits', { size: `0.${'1'.repeat(19)}` }, 'scale_exceeded'],
    ['max_slippage with 19 fraction digits', { max_slippage: `0.${'1'.repeat(19)}` }, 'scale_exceeded'],
    ['sign checks run before magnitude: leverage -1 with size 1e30', { leverage: -1, size: '1e30' }, 'nonpositive_leverage'],
    ['magnitude runs before scale: size 1e30, leverage 0.{19}', { size: '1e30', leverage: `0.${'1'.repeat(19)}` }, 'magnitude_exceeded'],
  ] as const)('bounds: %s', async (_name, patch, code) => {
    const r = await run({ ...openInput, ...patch });
    if (code === null) expect(r.ok ? 'ok' : `${r.code}: ${r.message}`).toBe('ok');
    else expectRejected(r, 'bounds', code);
  });

  test('limits are configurable', async () => {
    expectRejected(await run({ ...openInput, size: '123' }, { limits: { maxIntegerDigits: 2 } }), 'bounds', 'magnitude_exceeded');
    expect((await run({ ...openInput, size: '99.5' }, { limits: { maxIntegerDigits: 2, maxFractionDigits: 3 } })).ok).toBe(true);
    expectRejected(await run({ ...openInput, size: '99.5555' }, { limits: { maxFractionDigits: 3 } }), 'bounds', 'scale_exceeded');
    expect((await run({ ...openInput, size: '1'.repeat(40) }, { limits: { maxIntegerDigits: 80 } })).ok).toBe(true);
  });

  test('each limit admits exactly its own count of digits and refuses one more (defaults and configured)', async () => {
    // At the boundary, where an off-by-one lives: N digits pass, N + 1 do not.
    for (const n of [DEFAULT_INTENT_LIMITS.maxIntegerDigits, 1, 3]) {
      const limits = n === DEFAULT_INTENT_LIMITS.maxIntegerDigits ? {} : { limits: { maxIntegerDigits: n } };
      expect((await run({ ...openInput, size: '9'.repeat(n) }, limits)).ok, `${n} integer digits`).toBe(true);
      expectRejected(await run({ ...openInput, size: '9'.repeat(n + 1) }, limits), 'bounds', 'magnitude_exceeded');
    }
    for (const n of [DEFAULT_INTENT_LIMITS.maxFractionDigits, 3, 4]) {
      // From 3 digits: openInput's max_slippage 0.005 has three.
      const limits = n === DEFAULT_INTENT_LIMITS.maxFractionDigits ? {} : { limits: { maxFractionDigits: n } };
      const r = await run({ ...openInput, size: `1.${'9'.repeat(n)}` }, limits);
      expect(r.ok ? 'ok' : `${r.code}: ${r.message}`, `${n} fraction digits`).toBe('ok');
      expectRejected(await run({ ...openInput, size: `1.${'9'.repeat(n + 1)}` }, limits), 'bounds', 'scale_exceeded');
    }
  });
});

describe('validateIntent — normative order', () => {
  // One injector per stage; each makes exactly its stage fail.
  interface Case {
    unsigned: Record<string, unknown>;
    post: Record<string, unknown>;
    opts: { -readonly [K in keyof ValidateIntentOptions]?: ValidateIntentOptions[K] };
  }
  const injectors: Record<IntentStage, (c: Case) => void> = {
    schema: (c) => void (c.post['extra'] = 1),
    signature: (c) => void (c.opts.resolveSigner = () => null),
    nonce: (c) => void (c.opts.isNonceUsed = () => true),
    ttl: (c) => void (c.opts.now = TTL_MS + 1),
    bounds: (c) => void (c.unsigned['size'] = '-1'),
    target: (c) => void (c.unsigned['target_address'] = transferInput.target_address),
  };

  test('every stage masks every later one (all 63 combinations, with and without signer cache)', async () => {
    const signerCache = createSignerCache();
    for (let mask = 1; mask < 1 << INTENT_STAGES.length; mask++) {
      const failing = INTENT_STAGES.filter((_, i) => (mask >> i) & 1);
      const c: Case = { unsigned: { ...openInput }, post: {}, opts: {} };
      for (const stage of failing) injectors[stage](c);
      const signed = await signIntent(c.unsigned as UnsignedIntentInput, ANVIL0_KEY);
      for (const cache of [undefined, signerCache]) {
        const r = await validateIntent({ ...signed, ...c.post }, baseOptions(cache === undefined ? c.opts : { ...c.opts, signerCache: cache }));
        expect(r.ok, failing.join('+')).toBe(false);
        if (!r.ok) expect(r.stage, failing.join('+')).toBe(failing[0]);
      }
    }
  });
});

describe('validateIntent — hostile input', () => {
  const closedSet = (r: ValidateIntentResult): boolean =>
    r.ok || ((INTENT_STAGES as readonly string[]).includes(r.stage) && (INTENT_CODES as readonly string[]).includes(r.code) && INTENT_CODE_STAGE[r.code] === r.stage && r.message.length <= 200);

  test('hostile values are invalid_schema (how fast: npm run bench, section hostile)', async () => {
    for (const h of hostileValues()) {
      const r = await validateIntent(h, baseOptions());
      expectRejected(r, 'schema', 'invalid_schema');
      expect(closedSet(r)).toBe(true);
    }
  });

  test('never throws on arbitrary input and always answers from the closed set (seed 0xbad1)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything({ withBigInt: true, withBoxedValues: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true }), async (input) => {
        const r = await validateIntent(input, baseOptions());
        return closedSet(r) && !r.ok;
      }),
      { seed: 0xbad1, numRuns: 500 },
    );
  });

  test('never throws on a signed Intent with one field mutated (seed 0xbad2)', async () => {
    const signed = (await signIntent(openInput, ANVIL0_KEY)) as Record<string, unknown>;
    const keys = [...Object.keys(signed), 'tp', 'target_address', 'extra'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...keys), fc.oneof(fc.anything({ withBigInt: true }), fc.string(), fc.double(), fc.constantFrom('1e8000000', '-0', '0', 'NaN', null, undefined)), async (key, value) => {
        const r = await validateIntent({ ...signed, [key]: value }, baseOptions());
        return closedSet(r);
      }),
      { seed: 0xbad2, numRuns: 300 },
    );
  });
});

describe('validateIntent — misuse throws coded errors', () => {
  test('invalid options', async () => {
    const signed = await signIntent(openInput, ANVIL0_KEY);
    const bad: Array<Partial<ValidateIntentOptions>> = [
      { now: Number.NaN },
      { now: undefined as unknown as number },
      { clockSkewMs: -1 },
      { maxTtlHorizonMs: 1.5 },
      { limits: { maxIntegerDigits: 81 } },
      { limits: { maxFractionDigits: -1 } },
    ];
    for (const o of bad) await expect(validateIntent(signed, baseOptions(o))).rejects.toMatchObject({ code: 'TALLY_INTENT_OPTIONS_INVALID' });
    await expect(validateIntent(signed, baseOptions({ isNonceUsed: () => 'yes' as unknown as boolean }))).rejects.toBeInstanceOf(TallyError);
  });

  test('a failing seam is an I/O error, not a ruling', async () => {
    const signed = await signIntent(openInput, ANVIL0_KEY);
    await expect(
      validateIntent(signed, baseOptions({ resolveSigner: () => Promise.reject(new Error('db down')) })),
    ).rejects.toMatchObject({ code: 'TALLY_INTENT_SEAM_FAILED' });
    await expect(
      validateIntent(signed, baseOptions({ isNonceUsed: () => { throw new Error('db down'); } })),
    ).rejects.toMatchObject({ code: 'TALLY_INTENT_SEAM_FAILED' });
  });
});
