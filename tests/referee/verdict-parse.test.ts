import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJudgeResponse } from '../../src/referee/index.js';

const enc = new TextEncoder();
const wrap = (content: unknown) => enc.encode(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: typeof content === 'string' ? content : JSON.stringify(content) } }] }));
const ACTION = 'TALLY_ACTION_V1|x|s|open|BTC-PERP|1|0xab';
const good = { reason: 'fine', verdict: 'ALLOW', action: ACTION };
const row = (index: number, outcome = 'PASS', certainty = 'solid') => ({ index, outcome, certainty });

describe('reading a judge response: exactly the schema, else DENY', () => {
  it('reads the verdict object and the assessment matrix', () => {
    expect(parseJudgeResponse(wrap(good), 2)).toEqual({ ok: true, format: 'verdict', decision: 'ALLOW', reason: 'fine', action: ACTION });
    expect(parseJudgeResponse(wrap({ ...good, verdict: 'DENY' }), 2)).toMatchObject({ ok: true, decision: 'DENY' });
    expect(parseJudgeResponse(wrap({ assessments: [row(1), row(0)] }), 2)).toEqual({ ok: true, format: 'matrix', decision: 'ALLOW', reason: 'all 2 rules PASS (solid)' });
    expect(parseJudgeResponse(wrap({ assessments: [row(0), row(1, 'PASS', 'moderate')] }), 2)).toEqual({ ok: true, format: 'matrix', decision: 'DENY', reason: 'rule 1: PASS (moderate)' });
    expect(parseJudgeResponse(wrap({ assessments: [row(0, 'AMBIGUOUS', 'solid'), row(1, 'FAIL', 'weak')] }), 2)).toMatchObject({ decision: 'DENY', reason: 'rule 0: AMBIGUOUS (solid); rule 1: FAIL (weak)' });
    expect(parseJudgeResponse(wrap({ ...good, reason: 'é'.repeat(280) }), 1)).toMatchObject({ ok: true });
  });

  // Negative cases by mutation of a good answer.
  it.each<[string, Uint8Array]>([
    ['a missing key', wrap({ reason: 'x', verdict: 'ALLOW' })],
    ['an extra key', wrap({ ...good, confidence: 1 })],
    ['a lower-case verdict', wrap({ ...good, verdict: 'allow' })],
    ['a boolean verdict', wrap({ ...good, verdict: true })],
    ['a reason of 281 characters', wrap({ ...good, reason: 'é'.repeat(281) })],
    ['a numeric reason', wrap({ ...good, reason: 1 })],
    ['a non-string action', wrap({ ...good, action: ['x'] })],
    ['prose around the JSON', wrap(`Here you go: ${JSON.stringify(good)}`)],
    ['a code fence', wrap('```json\n' + JSON.stringify(good) + '\n```')],
    ['an array', wrap([good])],
    ['null content', enc.encode(JSON.stringify({ choices: [{ message: { content: null } }] }))],
    ['no choices', enc.encode(JSON.stringify({ reason: 'x', verdict: 'ALLOW', action: ACTION }))],
    ['empty choices', enc.encode(JSON.stringify({ choices: [] }))],
    ['not JSON', enc.encode('ALLOW')],
    ['invalid UTF-8', Uint8Array.from([0x7b, 0xff, 0x7d])],
    ['a short matrix', wrap({ assessments: [row(0)] })],
    ['a long matrix', wrap({ assessments: [row(0), row(1), row(2)] })],
    ['a duplicate index', wrap({ assessments: [row(0), row(0)] })],
    ['an out-of-range index', wrap({ assessments: [row(0), row(2)] })],
    ['a negative index', wrap({ assessments: [row(0), row(-1)] })],
    ['a fractional index', wrap({ assessments: [row(0), { ...row(1), index: 0.5 }] })],
    ['a string index', wrap({ assessments: [row(0), { ...row(1), index: '1' }] })],
    ['an unknown outcome', wrap({ assessments: [row(0), row(1, 'OK')] })],
    ['an unknown certainty', wrap({ assessments: [row(0), row(1, 'PASS', 'high')] })],
    ['an extra entry key', wrap({ assessments: [row(0), { ...row(1), note: 'x' }] })],
    ['an extra root key', wrap({ assessments: [row(0), row(1)], verdict: 'ALLOW' })],
    // Issue #11: one strict parser; the schema is exact, including its key order.
    ['a duplicate verdict (DENY then ALLOW)', wrap(`{"reason":"x","verdict":"DENY","verdict":"ALLOW","action":${JSON.stringify(ACTION)}}`)],
    ['a duplicate reason', wrap(`{"reason":"x","reason":"y","verdict":"ALLOW","action":${JSON.stringify(ACTION)}}`)],
    ['a duplicate key in the envelope', enc.encode(`{"choices":[],"choices":[{"message":{"content":${JSON.stringify(JSON.stringify(good))}}}]}`)],
    ['a duplicate key in a matrix row', wrap('{"assessments":[{"index":0,"outcome":"PASS","certainty":"solid"},{"index":1,"index":1,"outcome":"PASS","certainty":"solid"}]}')],
    ['the keys in another order', wrap({ verdict: 'ALLOW', reason: 'fine', action: ACTION })],
    ['the keys in another order (action first)', wrap({ action: ACTION, reason: 'fine', verdict: 'ALLOW' })],
    ['a lone surrogate in the reason', wrap(`{"reason":"a\\ud800","verdict":"ALLOW","action":${JSON.stringify(ACTION)}}`)],
    ['a BOM before the response', Uint8Array.from([0xef, 0xbb, 0xbf, ...wrap(good)])],
  ])('%s is unparsable', (_name, bytes) => {
    expect(parseJudgeResponse(bytes, 2).ok).toBe(false);
  });

  it('no random answer is ALLOW unless it has exactly the schema (seed 0x7e4d)', () => {
    const value = fc.oneof(fc.string(), fc.constantFrom('ALLOW', 'DENY', 'PASS', 'solid', ACTION), fc.integer(), fc.boolean());
    const key = fc.constantFrom('reason', 'verdict', 'action', 'assessments', 'index', 'outcome', 'certainty', 'x');
    const obj = fc.dictionary(key, fc.oneof(value, fc.array(fc.dictionary(key, value), { maxLength: 3 })), { maxKeys: 4 });
    fc.assert(
      fc.property(obj, (o) => {
        const r = parseJudgeResponse(wrap(o), 2);
        if (r.ok && r.decision === 'ALLOW') {
          const keys = Object.keys(o).sort().join(',');
          expect(['action,reason,verdict', 'assessments']).toContain(keys);
          if (keys === 'assessments') for (const e of o['assessments'] as Array<Record<string, unknown>>) expect(e).toMatchObject({ outcome: 'PASS', certainty: 'solid' });
          else expect(o['verdict']).toBe('ALLOW');
        }
      }),
      { seed: 0x7e4d, numRuns: 500 },
    );
  });
});
