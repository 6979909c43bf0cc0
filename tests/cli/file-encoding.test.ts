/**
 * Issue #11, CLI files: every note, proof, checkpoint and policy file the CLI
 * reads is taken in the one encoding — raw bytes, well-formed UTF-8, no BOM.
 * A BOM or invalid UTF-8 is invalid input (exit 1) naming the problem, never
 * stripped or replaced by U+FFFD before the note parser sees it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally } from './helpers.js';
import { inProcess } from './in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-file-enc-'));
const KEY = 'tally.example/golden+60fb338e+AddamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea';
const text = new TextEncoder().encode('tally.example/golden\n1\nAAAA\n\n— x\n');
const bad = {
  bom: { bytes: Uint8Array.from([0xef, 0xbb, 0xbf, ...text]), says: /byte order mark \(bom\)/ },
  'invalid-utf8': { bytes: Uint8Array.from([...text.slice(0, 5), 0xc3, 0x28, ...text.slice(5)]), says: /not well-formed UTF-8 \(invalid-utf8\)/ },
  'encoded surrogate': { bytes: Uint8Array.from([...text.slice(0, 5), 0xed, 0xa0, 0x80, ...text.slice(5)]), says: /invalid-utf8/ },
};
const bundle = join(dir, 'b.jsonl');
writeFileSync(bundle, '');

describe('CLI note/proof/checkpoint/policy files: one encoding', () => {
  for (const [name, { bytes, says }] of Object.entries(bad)) {
    it(`${name}: refused with exit 1 by every command that reads such a file`, async () => {
      const f = join(dir, `${name.replace(/ /g, '-')}.txt`);
      writeFileSync(f, bytes);
      const runs = [
        ['verify', bundle, '--vkey', KEY, '--checkpoint', f],
        ['verify-proof', f, '--vkey', KEY],
        ['verify-proof', f, '--vkey', KEY, '--checkpoint', f],
        ['prove', bundle, '--entry', '0', '--vkey', KEY, '--checkpoint', f],
        ['grade', 'verify', f, bundle, '--vkey', KEY],
        ['consistency', 'verify', f, f, '--vkey', KEY],
        ['verify-proof', f, '--vkey', KEY, '--policy', f],
      ];
      for (const args of runs) {
        const r = await inProcess(args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(1);
        expect(r.stderr, args.join(' ')).toMatch(says);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      }
    });
  }

  it('the binary: a BOM on a checkpoint file is exit 1 with the problem named', () => {
    const f = join(dir, 'bin-bom.txt');
    writeFileSync(f, bad.bom.bytes);
    const r = tally(['verify-proof', f, '--vkey', KEY]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(bad.bom.says);
  });
});
