/**
 * The wire's pure parts: token hashing and matching, the auth config schema
 * (negatives by mutation), the depth scan (against an independent recursive
 * measure), the token bucket (with a fake clock), and the JSON-RPC envelope.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Authenticator, hashToken, parseAuthConfig, generateToken } from '../../src/server/auth.js';
import { nestsDeeperThan, parseJsonBody } from '../../src/server/json.js';
import { TokenBucket, RateLimiter } from '../../src/server/rate-limit.js';
import { handleRpc } from '../../src/server/rpc.js';
import type { CallOutcome } from '../../src/server/service.js';

const enc = new TextEncoder();

describe('tokens', () => {
  it('hashToken is SHA-256 of the UTF-8 token, lowercase hex', () => {
    // printf 'abc' | sha256sum
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(generateToken()).toMatch(/^tly_[A-Za-z0-9_-]{43}$/);
    expect(generateToken()).not.toBe(generateToken());
  });

  it('a token matches only its own hash; every one-character mutation is refused (seed 0x7a11)', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[!-~]{16,64}$/), { minLength: 1, maxLength: 8 }), fc.nat(), fc.nat(), (raw, pick, at) => {
        const tokens = [...new Set(raw)];
        const cfg = parseAuthConfig({ tokens: tokens.map((t, i) => ({ name: `t${i}`, role: 'runtime', sha256: hashToken(t) })) });
        if (!cfg.ok) throw new Error(cfg.problem);
        const auth = new Authenticator(cfg.config);
        const i = pick % tokens.length;
        const t = tokens[i]!;
        expect(auth.authenticate(`Bearer ${t}`)?.name).toBe(`t${i}`);
        const j = at % t.length;
        const c = t.charCodeAt(j);
        const mutated = t.slice(0, j) + String.fromCharCode(c === 0x7e ? 0x21 : c + 1) + t.slice(j + 1);
        if (!tokens.includes(mutated)) expect(auth.authenticate(`Bearer ${mutated}`)).toBeUndefined();
        expect(auth.authenticate(t)).toBeUndefined(); // no scheme
        if (!tokens.includes(hashToken(t))) expect(auth.authenticate(`Bearer ${hashToken(t)}`)).toBeUndefined(); // the hash is not the token
      }),
      { seed: 0x7a11, numRuns: 200 },
    );
  });

  it('refuses oversize and empty tokens before hashing', () => {
    const long = 'x'.repeat(513);
    const cfg = parseAuthConfig({ tokens: [{ name: 'long', role: 'auditor', sha256: hashToken(long) }] });
    if (!cfg.ok) throw new Error(cfg.problem);
    const auth = new Authenticator(cfg.config);
    expect(auth.principalOf(long)).toBeUndefined();
    expect(auth.principalOf('')).toBeUndefined();
    expect(auth.authenticate(undefined)).toBeUndefined();
  });
});

describe('auth config', () => {
  const good = {
    tokens: [
      { name: 'rt', role: 'runtime', sha256: hashToken('a'.repeat(20)) },
      { name: 'al', role: 'agent', agents: ['alpha'], signer: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', sha256: hashToken('b'.repeat(20)) },
      { name: 'au', role: 'auditor', sha256: hashToken('c'.repeat(20)), rate: { perSecond: 2, burst: 4 } },
    ],
  };

  it('accepts the documented shapes (object with tokens, or a bare array)', () => {
    expect(parseAuthConfig(good).ok).toBe(true);
    expect(parseAuthConfig(good.tokens).ok).toBe(true);
    const r = parseAuthConfig(good);
    if (r.ok) expect(new Authenticator(r.config).principalOf('b'.repeat(20))).toEqual({ name: 'al', role: 'agent', agents: ['alpha'], signer: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266' });
  });

  it('refuses each mutation of a good config', () => {
    const t = (i: number, patch: Record<string, unknown>) => ({ tokens: good.tokens.map((x, k) => (k === i ? { ...x, ...patch } : x)) });
    const bad: [string, unknown][] = [
      ['uppercase hash', t(0, { sha256: hashToken('a'.repeat(20)).toUpperCase() })],
      ['short hash', t(0, { sha256: 'ab' })],
      ['a raw token instead of a hash', t(0, { sha256: 'a'.repeat(20) })],
      ['unknown role', t(0, { role: 'admin' })],
      ['operator is not configurable', t(0, { role: 'operator' })],
      ['agent without agents', { tokens: [{ name: 'x', role: 'agent', sha256: hashToken('q'.repeat(20)) }] }],
      ['agent with no agents', t(1, { agents: [] })],
      ['agent token bound to no signer (a name alone)', { tokens: [{ name: 'x', role: 'agent', agents: ['alpha'], sha256: hashToken('q'.repeat(20)) }] }],
      ['agent token with a malformed signer', t(1, { signer: '0xf39F' })],
      ['signer on a runtime token', t(0, { signer: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' })],
      ['agents on a runtime token', t(0, { agents: ['alpha'] })],
      ['unknown key', t(2, { token: 'secret' })],
      ['duplicate name', t(1, { name: 'rt' })],
      ['duplicate hash', t(1, { sha256: hashToken('a'.repeat(20)) })],
      ['empty name', t(0, { name: '' })],
      ['bad rate', t(2, { rate: { perSecond: 0, burst: 1 } })],
      ['not an object', 'tokens'],
    ];
    for (const [why, doc] of bad) expect(parseAuthConfig(doc).ok, why).toBe(false);
  });
});

/** Independent measure: depth of a parsed value (recursive). */
function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (typeof v === 'object' && v !== null) return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  return 0;
}

describe('JSON depth', () => {
  it('nestsDeeperThan agrees with the depth of the parsed value, brackets inside strings ignored (seed 0xdee9)', () => {
    const tricky = fc.constantFrom('[', ']', '{', '}', '"', '\\', '\\"', 'x');
    const leaf = fc.oneof(fc.integer(), fc.constant(null), fc.array(tricky).map((a) => a.join('')));
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('tree'), { maxLength: 3 }), fc.dictionary(fc.array(tricky, { maxLength: 3 }).map((a) => a.join('')), tie('tree'), { maxKeys: 3 })),
    }));
    fc.assert(
      fc.property(tree, fc.integer({ min: 0, max: 8 }), (v, max) => {
        const text = JSON.stringify(v);
        expect(nestsDeeperThan(text, max)).toBe(depthOf(v) > max);
      }),
      { seed: 0xdee9, numRuns: 300 },
    );
  });

  it('refuses a hostile 100 000-deep body without parsing it, and bad UTF-8 as a parse error', () => {
    const hostile = enc.encode('['.repeat(100_000) + ']'.repeat(100_000));
    expect(parseJsonBody(hostile, 64)).toMatchObject({ ok: false, type: 'too-deep' });
    expect(parseJsonBody(new Uint8Array([0x22, 0xc3, 0x22]), 64)).toMatchObject({ ok: false, type: 'parse-error' });
    expect(parseJsonBody(enc.encode('{"a":[1,{"b":2}]}'), 3)).toEqual({ ok: true, value: { a: [1, { b: 2 }] } });
    expect(parseJsonBody(enc.encode('{"a":[1,{"b":2}]}'), 2)).toMatchObject({ ok: false, type: 'too-deep' });
  });
});

describe('token bucket', () => {
  it('allows a burst, then one per 1/rate, and says how long to wait', () => {
    const b = new TokenBucket({ perSecond: 2, burst: 3 }, 0);
    expect([b.take(0), b.take(0), b.take(0)]).toEqual([0, 0, 0]);
    expect(b.take(0)).toBe(500);
    expect(b.take(250)).toBe(250);
    expect(b.take(500)).toBe(0);
    expect(b.take(500)).toBe(500);
    // Never more than the burst however long it waited.
    expect([b.take(1e6), b.take(1e6), b.take(1e6), b.take(1e6) > 0]).toEqual([0, 0, 0, true]);
    // A clock going backwards does not mint tokens.
    const c = new TokenBucket({ perSecond: 1, burst: 1 }, 1_000);
    expect(c.take(1_000)).toBe(0);
    expect(c.take(0)).toBeGreaterThan(0);
    expect(() => new TokenBucket({ perSecond: 0, burst: 1 }, 0)).toThrow(RangeError);
  });

  it('over any schedule, admitted requests never exceed burst + rate·elapsed (seed 0xb0c7)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 20 }), fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 200 }), (rate, burst, gaps) => {
        let now = 0;
        const clock = () => now;
        const rl = new RateLimiter({ perSecond: rate, burst }, clock);
        let admitted = 0;
        for (const g of gaps) {
          now += g;
          if (rl.take('k') === 0) admitted++;
        }
        expect(admitted).toBeLessThanOrEqual(burst + (rate * now) / 1000 + 1e-9);
      }),
      { seed: 0xb0c7, numRuns: 200 },
    );
  });

  it('the wait it names is exact: one ms earlier is still refused, at the wait it is admitted (seed 0xb0c8)', () => {
    // The upper bound above cannot see a bucket that admits too little; this boundary can.
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 20 }), fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 100 }), (rate, burst, gaps) => {
        let now = 0;
        const b = new TokenBucket({ perSecond: rate, burst }, 0);
        // A fresh bucket admits exactly `burst` at once.
        for (let i = 0; i < burst; i++) expect(b.take(0)).toBe(0);
        for (const g of gaps) {
          now += g;
          const wait = b.take(now);
          if (wait === 0) continue;
          if (wait > 1) expect(b.take(now + wait - 1)).toBeGreaterThan(0);
          now += wait;
          expect(b.take(now)).toBe(0);
        }
      }),
      { seed: 0xb0c8, numRuns: 300 },
    );
  });
});

describe('JSON-RPC envelope', () => {
  const echo = async (method: string, params: unknown): Promise<CallOutcome> =>
    method === 'fail' ? { ok: false, failure: { type: 'turn-conflict', message: 'no' }, meta: { method } } : { ok: true, result: { method, params: params as Record<string, unknown> }, meta: { method } };

  it('maps a single failure to its status, a batch to 200, notifications to 204', async () => {
    expect((await handleRpc({ jsonrpc: '2.0', id: 1, method: 'fail' }, echo, 4)).status).toBe(409);
    const ok1 = await handleRpc({ jsonrpc: '2.0', id: 'x', method: 'm', params: { a: 1 } }, echo, 4);
    expect(ok1).toMatchObject({ status: 200, body: { jsonrpc: '2.0', id: 'x', result: { method: 'm', params: { a: 1 } } } });
    const batch = await handleRpc([{ jsonrpc: '2.0', id: 1, method: 'fail' }, { jsonrpc: '2.0', method: 'm' }, { jsonrpc: '2.0', id: 2, method: 'm' }], echo, 4);
    expect(batch.status).toBe(200);
    expect((batch.body as unknown[]).length).toBe(2);
    expect(batch.calls.length).toBe(3);
    expect((await handleRpc([{ jsonrpc: '2.0', method: 'm' }], echo, 4)).status).toBe(204);
    expect((await handleRpc(Array.from({ length: 5 }, () => ({ jsonrpc: '2.0', id: 1, method: 'm' })), echo, 4)).status).toBe(400);
    expect((await handleRpc({ jsonrpc: '2.0', id: 1, method: 'm', extra: true }, echo, 4)).status).toBe(400);
    expect((await handleRpc({ jsonrpc: '2.0', id: 1.5e400, method: 'm' }, echo, 4)).status).toBe(400);
  });
});
