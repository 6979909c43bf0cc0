/**
 * Issue #11 from outside the CLI: `tally verify` (plain and --parallel)
 * refuses a re-linked bundle whose genesis line starts with a BOM, prints
 * JSON for a frame nesting past the one depth limit, and `tally open --spec`
 * refuses a spec file past the limit, with a duplicate key or a BOM with a
 * clean typed error (never an uncaught one).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { JSON_MAX_DEPTH, canonicalJson, type CanonicalObject } from '../../src/protocol/index.js';
import { runDay } from '../helpers/day.js';
import { relink } from '../helpers/relink.js';
import { tally } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-strict-'));
const dec = new TextDecoder();
const nested = (levels: number): string => '['.repeat(levels) + '1' + ']'.repeat(levels);

describe('tally verify: one encoding', () => {
  it('a BOM on the genesis line of a re-linked bundle is invalid (exit 1, entry 0), plain and --parallel', async () => {
    const { lines } = await runDay({ wakes: 2 });
    const file = join(dir, 'bom.jsonl');
    writeFileSync(file, encodeBundle(relink(lines, 0, Uint8Array.from([0xef, 0xbb, 0xbf, ...lines[0]!]))));
    for (const extra of [[], ['--parallel']]) {
      const r = tally(['verify', file, '--json', ...extra]);
      expect(r.code, r.stderr).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, index: 0, code: 'not-json' });
    }
  });

  it('a frame nesting past the limit: exit 1 with JSON on stdout, no throw', async () => {
    const { lines } = await runDay({ wakes: 1 });
    const { data: _shallow, ...rest } = JSON.parse(dec.decode(lines[1]!)) as Record<string, unknown>;
    const deep = `{"data":${nested(JSON_MAX_DEPTH)},${canonicalJson(rest as CanonicalObject).slice(1)}`;
    const file = join(dir, 'deep.jsonl');
    writeFileSync(file, encodeBundle(relink(lines, 1, new TextEncoder().encode(deep))));
    for (const extra of [[], ['--parallel']]) {
      const r = tally(['verify', file, '--json', ...extra]);
      expect(r.code, r.stderr).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, index: 1, code: 'not-canonical' });
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe('tally open --spec: the strict parser and the one depth rule', () => {
  const db = join(dir, 'tally.db');
  const spec = (name: string, body: string): string => {
    const p = join(dir, name);
    writeFileSync(p, body);
    return p;
  };

  it('a spec nesting to level 64 of its genesis entry opens; one level more is refused with malformed-entry (exit 1)', () => {
    // The spec is level 2 of the genesis entry: its own 63 levels reach 64.
    const fits = tally(['open', '--spec', spec('fits.json', `{"name":"fits","x":${nested(JSON_MAX_DEPTH - 2)}}`), '--db', db, '--json']);
    expect(fits.code, fits.stderr).toBe(0);
    const over = tally(['open', '--spec', spec('over.json', `{"name":"over","x":${nested(JSON_MAX_DEPTH - 1)}}`), '--db', db, '--json']);
    expect(over.code, over.stderr).toBe(1);
    expect(JSON.parse(over.stdout)).toMatchObject({ ok: false, diagnostic: 'malformed-entry' });
    expect(over.stderr).not.toMatch(/\n\s+at /);
  });

  it.each([
    ['too-deep', `{"name":"deeper","x":${nested(JSON_MAX_DEPTH)}}`],
    ['duplicate-key', '{"name":"a","name":"b"}'],
    ['bom', '\uFEFF{"name":"bom"}'],
    ['lone-surrogate', '{"name":"a\\ud800"}'],
  ])('a spec file with %s is invalid input (exit 1, as an invalid bundle is) naming it', (code, body) => {
    const r = tally(['open', '--spec', spec(`${code}.json`, body), '--db', db]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(code);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a spec file that is not UTF-8 is refused, not repaired', () => {
    const p = join(dir, 'latin1.json');
    writeFileSync(p, Uint8Array.from([...new TextEncoder().encode('{"name":"caf'), 0xe9, ...new TextEncoder().encode('"}')]));
    const r = tally(['open', '--spec', p, '--db', db]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('invalid-utf8');
  });
});
