import { describe, expect, it } from 'vitest';
import { DEFAULT_JUDGE_RATE, checkRefereeSpec, parseMandate } from '../../src/referee/index.js';
import type { CanonicalObject } from '../../src/protocol/index.js';
import { judgedMandate, judgeAccount, mandate, refereeSpec } from './fixtures.js';

const ADDR = '0x1111111111111111111111111111111111111111';
const check = (m: Record<string, unknown>) => checkRefereeSpec(refereeSpec('m', m));

describe('mandate checks (at open)', () => {
  it('accepts the full mandate and fills defaults; addresses are compared lowercase', () => {
    const r = parseMandate(refereeSpec('m', judgedMandate()));
    expect(r.ok).toBe(true);
    if (!r.ok || !r.mandate) throw new Error('no mandate');
    expect(r.mandate.judges).toEqual([judgeAccount.address.toLowerCase()]);
    expect(r.mandate.weights).toEqual({ open: '1', modify: '1', close: '0.5', transfer: '1' });
    expect(r.mandate.judgeRate).toEqual({ max: DEFAULT_JUDGE_RATE.max, windowMs: DEFAULT_JUDGE_RATE.window_ms, dailyMax: undefined });
    expect(r.mandate.ticketTtlMs).toBe(86_400_000);
    expect(parseMandate({ name: 'none' })).toEqual({ ok: true, mandate: undefined });
  });

  const long = (n: number) => 'r'.repeat(n);
  it.each<[string, Record<string, unknown>, string]>([
    ['not an object', { __replace: [] }, 'spec.mandate must be an object'],
    ['an unknown member', { extra: 1 }, 'spec.mandate: unknown member "extra"'],
    ['a missing member', { tx_cap: undefined }, 'spec.mandate.tx_cap is required'],
    ['a bad instance', { instance: 'a|b' }, 'spec.mandate.instance must be'],
    ['a long instance', { instance: 'x'.repeat(65) }, 'spec.mandate.instance must be'],
    ['a zero principal', { principal: '0x' + '0'.repeat(40) }, 'spec.mandate.principal must not be the zero address'],
    ['a short operator', { operator: '0x1234' }, 'spec.mandate.operator must be a 0x-prefixed 20-byte hex address'],
    ['no actions', { actions: [] }, 'spec.mandate.actions must be a list of 1–4 entries'],
    ['an unknown action', { actions: ['open', 'swap'] }, 'spec.mandate.actions[1] must be one of'],
    ['a duplicate action', { actions: ['open', 'open'], targets: undefined }, 'spec.mandate.actions has a duplicate entry'],
    ['no markets for trading', { markets: undefined }, 'spec.mandate.markets is required'],
    ['a bad market', { markets: ['BTC PERP'] }, 'spec.mandate.markets[0] must be a market symbol'],
    ['too many markets', { markets: Array.from({ length: 33 }, (_, i) => `M${i}`) }, 'spec.mandate.markets must be a list of 1–32 entries'],
    ['targets without transfer', { actions: ['open'], targets: [ADDR] }, 'spec.mandate.targets is only meaningful'],
    ['a zero target', { targets: ['0x' + '0'.repeat(40)] }, 'spec.mandate.targets[0] must not be the zero address'],
    ['caps missing slippage', { caps: { size: '1', leverage: '1' } }, 'spec.mandate.caps.slippage is required'],
    ['a numeric cap', { caps: { size: 5, leverage: '1', slippage: '0.1' } }, 'spec.mandate.caps.size must be a canonical decimal string'],
    ['a non-canonical cap', { caps: { size: '5.0', leverage: '1', slippage: '0.1' } }, 'spec.mandate.caps.size must be a canonical decimal string'],
    ['a zero size cap', { caps: { size: '0', leverage: '1', slippage: '0.1' } }, 'spec.mandate.caps.size must be greater than 0'],
    ['a negative leverage cap', { caps: { size: '1', leverage: '-1', slippage: '0.1' } }, 'spec.mandate.caps.leverage must not be negative'],
    ['slippage above 1', { caps: { size: '1', leverage: '1', slippage: '1.5' } }, 'spec.mandate.caps.slippage must be a fraction in [0, 1]'],
    ['a huge size cap', { caps: { size: '1' + '0'.repeat(18), leverage: '1', slippage: '0.1' } }, 'more than 18 integer digits'],
    ['a fine-grained cap', { caps: { size: '0.' + '0'.repeat(18) + '1', leverage: '1', slippage: '0.1' } }, 'more than 18 fraction digits'],
    ['a zero quota', { quota: { cap: '0' } }, 'spec.mandate.quota.cap must be greater than 0'],
    ['a quota of 10^38', { quota: { cap: '1' + '0'.repeat(38) } }, 'more than 38 integer digits'],
    ['a weight for a disallowed action', { actions: ['open'], targets: undefined, quota: { cap: '1', weights: { close: '1' } } }, 'spec.mandate.quota.weights.close: not an allowed action'],
    ['a negative weight', { quota: { cap: '1', weights: { open: '-1' } } }, 'must not be negative'],
    ['tx_cap 0', { tx_cap: 0 }, 'spec.mandate.tx_cap must be an integer from 1 to 1000000'],
    ['tx_cap above the bound', { tx_cap: 1_000_001 }, 'spec.mandate.tx_cap must be an integer from 1 to 1000000'],
    ['expires_at 0', { expires_at: 0 }, 'spec.mandate.expires_at must be an integer'],
    ['no starts_at', { starts_at: undefined }, 'spec.mandate.starts_at is required'],
    ['a lifetime of 59.999 s (seed 003: at least 60 s)', { starts_at: 1_000_000, expires_at: 1_059_999 }, 'spec.mandate: lifetime expires_at − starts_at = 59999 ms must be from 60000 ms (60 s) to 2592000000 ms (30 days)'],
    ['a lifetime of 30 days and 1 ms', { starts_at: 1_000_000, expires_at: 1_000_000 + 2_592_000_001 }, 'lifetime expires_at − starts_at = 2592000001 ms'],
    ['an expiry before the start', { starts_at: 2_000_000, expires_at: 1_000_000 }, 'lifetime expires_at − starts_at = -1000000 ms'],
    ['a daily cap of 0', { rules: ['x'], judges: [ADDR], judge_rate: { max: 1, window_ms: 60_000, daily_max: 0 } }, 'spec.mandate.judge_rate.daily_max must be an integer from 1 to 1000000'],
    ['a short ticket ttl', { ticket_ttl_ms: 29_999 }, 'spec.mandate.ticket_ttl_ms must be an integer from 30000 to 86400000'],
    ['seven rules', { rules: Array.from({ length: 7 }, (_, i) => `rule ${i}`), judges: [ADDR] }, 'spec.mandate.rules must be a list of 1–6 entries'],
    ['a blank rule', { rules: ['  '], judges: [ADDR] }, 'spec.mandate.rules[0] must be a non-blank string of at most 800 characters'],
    ['a rule of 801 characters', { rules: [long(801)], judges: [ADDR] }, 'at most 800 characters'],
    ['rules without judges', { rules: ['Only long positions.'] }, 'spec.mandate.judges or spec.mandate.panel is required when the mandate has rules'],
    ['judges without rules', { judges: [ADDR] }, 'spec.mandate.judges needs spec.mandate.rules'],
    ['a duplicate judge', { rules: ['x'], judges: [ADDR, ADDR.toUpperCase().replace('0X', '0x')] }, 'spec.mandate.judges has a duplicate entry'],
    ['nine judges', { rules: ['x'], judges: Array.from({ length: 9 }, (_, i) => '0x' + String(i + 1).repeat(40).slice(0, 40)) }, 'spec.mandate.judges must be a list of 1–8 entries'],
    ['a judge rate of 0', { rules: ['x'], judges: [ADDR], judge_rate: { max: 0, window_ms: 60_000 } }, 'spec.mandate.judge_rate.max must be an integer from 1'],
    ['a judge window under a minute', { rules: ['x'], judges: [ADDR], judge_rate: { max: 1, window_ms: 59_999 } }, 'spec.mandate.judge_rate.window_ms must be an integer from 60000'],
  ])('refuses %s', (_name, over, message) => {
    const m = Object.hasOwn(over, '__replace') ? (over['__replace'] as Record<string, unknown>) : mandate(over);
    const problem = check(m);
    expect(problem).toContain(message);
  });

  it('accepts the lifetime bounds: exactly 60 s and exactly 30 days', () => {
    expect(check(mandate({ starts_at: 1_000_000, expires_at: 1_060_000 }))).toBeUndefined();
    expect(check(mandate({ starts_at: 1_000_000, expires_at: 1_000_000 + 2_592_000_000 }))).toBeUndefined();
  });

  it.each([['desk one'], [' alpha'], ['é'], ['x'.repeat(129)], ['tab\there']])('refuses agent id %j: it could never be an Intent agent_id', (id) => {
    const spec = { name: 'ids', agents: { [id]: ADDR } };
    expect(checkRefereeSpec(spec)).toMatch(/^spec\.agents: agent id .* must be 1–128 printable ASCII characters without spaces \(the Intent's agent_id\)$/);
  });

  it('accepts every agent id an Intent can carry', () => {
    expect(checkRefereeSpec({ name: 'ids', agents: { 'desk-1': ADDR, '~!x': ADDR, ['a'.repeat(128)]: ADDR } })).toBeUndefined();
  });

  it('accepts the largest rule set: six rules of 800 characters', () => {
    expect(check(mandate({ rules: Array.from({ length: 6 }, () => long(800)), judges: [ADDR] }))).toBeUndefined();
  });

  it('the intent checks still apply, and a mandate needs the signer registry', () => {
    expect(checkRefereeSpec({ name: 'x', agents: { a: '0x123' }, mandate: mandate() as CanonicalObject })).toContain('spec.agents.a');
    expect(checkRefereeSpec({ name: 'x', mandate: mandate() as CanonicalObject })).toContain('needs spec.agents');
  });
});
