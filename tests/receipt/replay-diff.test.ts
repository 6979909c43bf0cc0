/**
 * The field-level diff of a replay divergence (issue 29): `fieldChanges`
 * names exactly the fields that differ, and `tally replay` prints them
 * (`ruling.quota.cap: recorded "999999", re-derived "146"`) and gives them in
 * --json as recorded / rederived / changes (expected / actual kept).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalJson, type CanonicalObject, type CanonicalValue } from '../../src/protocol/index.js';
import { changeLine, fieldChanges } from '../../src/receipt/index.js';
import { resealedForgery } from '../web/forge.js';

const TALLY = resolve(import.meta.dirname, '../../dist/cli/main.js');

const leaf = fc.oneof(fc.string({ maxLength: 6 }), fc.integer({ min: -1000, max: 1000 }), fc.boolean());
const tree = fc.letrec<{ v: CanonicalValue }>((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(fc.oneof(fc.constantFrom('quota', 'cap', 'used', 'a', 'b'), fc.string({ maxLength: 4 })), tie('v'), { maxKeys: 4 })),
})).v;

/** The leaves of `v` with their paths, as fieldChanges names them. */
function leaves(v: CanonicalValue, at: string, out: [string, CanonicalValue][] = []): [string, CanonicalValue][] {
  if (Array.isArray(v)) v.forEach((x, i) => leaves(x, `${at}[${i}]`, out));
  else if (typeof v === 'object') for (const k of Object.keys(v).sort()) leaves((v as CanonicalObject)[k]!, /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(k) ? `${at}.${k}` : `${at}[${JSON.stringify(k)}]`, out);
  else out.push([at, v]);
  return out;
}

/** `v` with its `n`th leaf replaced by `to`. */
function replaced(v: CanonicalValue, n: number, to: CanonicalValue): CanonicalValue {
  let k = -1;
  const go = (x: CanonicalValue): CanonicalValue => {
    if (Array.isArray(x)) return x.map(go);
    if (typeof x === 'object') return Object.fromEntries(Object.keys(x).sort().map((key) => [key, go((x as CanonicalObject)[key]!)]));
    k++;
    return k === n ? to : x;
  };
  return go(v);
}

describe('fieldChanges', () => {
  it('names the one changed field, with both values', () => {
    const recorded = { quota: { cap: '999999', used: '1', locked: '0' }, intent: { admitted: true } };
    const rederived = { quota: { cap: '146', used: '1', locked: '0' }, intent: { admitted: true } };
    const c = fieldChanges(recorded, rederived, 'ruling');
    expect(c).toEqual([{ path: 'ruling.quota.cap', recorded: '999999', rederived: '146' }]);
    expect(changeLine(c[0]!)).toBe('ruling.quota.cap: recorded "999999", re-derived "146"');
  });

  it('says which side lacks a field, indexes arrays, quotes odd keys, and caps the list', () => {
    expect(fieldChanges({ a: 1, t: [{ ok: true }] }, { b: 2, t: [{ ok: false }, 'x'], 'odd key': 3 })).toEqual([
      { path: 'a', recorded: 1 },
      { path: 'b', rederived: 2 },
      { path: '["odd key"]', rederived: 3 },
      { path: 't[0].ok', recorded: true, rederived: false },
      { path: 't[1]', rederived: 'x' },
    ]);
    expect(changeLine({ path: 'a', recorded: 1 })).toBe('a: recorded 1, re-derived (absent)');
    expect(fieldChanges({ x: 1 }, [1])).toEqual([{ path: '(the value)', recorded: { x: 1 }, rederived: [1] }]);
    const many = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i]));
    expect(fieldChanges(many, {})).toHaveLength(50);
  });

  it('is empty exactly when the canonical texts are equal (seed 0xd1ff)', () => {
    fc.assert(
      fc.property(tree, tree, (a, b) => {
        expect(fieldChanges(a, b, 'x', Infinity).length === 0).toBe(canonicalJson(a) === canonicalJson(b));
        expect(fieldChanges(a, a, 'x', Infinity)).toEqual([]);
      }),
      { seed: 0xd1ff, numRuns: 400 },
    );
  });

  it('finds a mutated leaf at its path and nothing else (seed 0xd200)', () => {
    fc.assert(
      fc.property(tree, fc.nat(), leaf, (v, pick, to) => {
        const ls = leaves(v, 'ruling');
        fc.pre(ls.length > 0);
        const n = pick % ls.length;
        const [path, was] = ls[n]!;
        fc.pre(canonicalJson(was) !== canonicalJson(to));
        expect(fieldChanges(v, replaced(v, n, to), 'ruling', Infinity)).toEqual([{ path, recorded: was, rederived: to }]);
      }),
      { seed: 0xd200, numRuns: 400 },
    );
  });
});

describe('tally replay shows what changed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-replay-diff-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the changed field and gives recorded / rederived / changes in --json', () => {
    const demo = spawnSync(process.execPath, [TALLY, 'demo', '--out', dir], { encoding: 'utf8' });
    expect(demo.status, demo.stderr).toBe(0);
    const lines = readFileSync(join(dir, 'bundle.jsonl'), 'utf8').split('\n').slice(0, -1);
    const forged = join(dir, 'forged.jsonl');
    writeFileSync(forged, resealedForgery(lines));
    const first = lines.map((l) => JSON.parse(l) as { kind: string; ruling?: { quota?: { cap: string } } }).find((e) => e.kind === 'turn' && e.ruling?.quota !== undefined)!;
    const cap = first.ruling!.quota!.cap;
    const text = spawnSync(process.execPath, [TALLY, 'replay', forged], { encoding: 'utf8' });
    expect(text.status).toBe(1);
    expect(text.stderr).toContain(`  ruling.quota.cap: recorded "999999", re-derived ${JSON.stringify(cap)}\n`);
    expect(text.stderr).not.toContain('  recorded   {');
    const json = spawnSync(process.execPath, [TALLY, 'replay', forged, '--json'], { encoding: 'utf8' });
    const r = JSON.parse(json.stdout) as { divergences: { kind: string; changes: unknown[]; recorded: { quota: { cap: string } }; rederived: { quota: { cap: string } }; expected: unknown; actual: unknown }[] };
    const d = r.divergences[0]!;
    expect(d.kind).toBe('ruling-diverged');
    expect(d.changes).toEqual([{ path: 'ruling.quota.cap', recorded: '999999', rederived: cap }]);
    expect(d.recorded.quota.cap).toBe('999999');
    expect(d.rederived.quota.cap).toBe(cap);
    // The first names, kept for compatibility: the same values.
    expect(d.expected).toEqual(d.recorded);
    expect(d.actual).toEqual(d.rederived);
  });
});
