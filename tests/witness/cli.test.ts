/**
 * `tally witness` from the outside (built CLI, child processes): keygen,
 * print-key, trust, serve over loopback, exit codes.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateEngineKey } from '../../src/receipt/index.js';
import { addSignatureLines, parseCosignerVerifierKey, submitCheckpoint, verifyCosignatures } from '../../src/witness/index.js';
import { TALLY, tally } from '../cli/helpers.js';
import { testLog } from './helpers.js';
import { startListening } from './serve.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-witness-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tally witness', () => {
  it('--help and usage errors', () => {
    const h = tally(['witness', '--help']);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('tally witness serve');
    expect(tally(['witness']).code).toBe(2);
    expect(tally(['witness', 'nope']).code).toBe(2);
    expect(tally(['witness', 'keygen'], { cwd: dir }).code).toBe(2);
    expect(tally(['witness', 'trust', 'not-a-key', '--db', join(dir, 'x.db')]).code).toBe(2);
    expect(tally(['witness', 'print-key', '--key', join(dir, 'missing.key')]).code).toBe(3);
  });

  it('keygen writes an owner-only key and prints a cosigner vkey; print-key prints the same', () => {
    const key = join(dir, 'w1.key');
    const g = tally(['witness', 'keygen', '--name', 'witness.example/w1', '--key', key]);
    expect(g.code).toBe(0);
    const vkey = g.stdout.trim();
    expect(parseCosignerVerifierKey(vkey)).toMatchObject({ ok: true, verifier: { name: 'witness.example/w1' } });
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(tally(['witness', 'print-key', '--key', key]).stdout.trim()).toBe(vkey);
    expect(tally(['witness', 'keygen', '--name', 'witness.example/w1', '--key', key]).stdout.trim()).toBe(vkey);
    const line = tally(['witness', 'print-key', '--key', key, '--policy-line', '--url', 'http://127.0.0.1:9']).stdout;
    const hex = Buffer.from(vkey.split('+').slice(2).join('+'), 'base64').subarray(1).toString('hex');
    expect(line).toBe(`witness witness.example/w1 ${hex} http://127.0.0.1:9\n`);
    expect(tally(['witness', 'print-key', '--key', key, '--url', 'http://x']).code).toBe(2);
  });

  it('trust + serve: cosigns over HTTP, persists, stops on SIGTERM with exit 0', async () => {
    const key = join(dir, 'w2.key');
    const db = join(dir, 'w2.db');
    const vkey = tally(['witness', 'keygen', '--name', 'witness.example/w2', '--key', key]).stdout.trim();
    const log = testLog('tally.example/acme', 'ab'.repeat(32), generateEngineKey('tally.example/acme'));
    expect(tally(['witness', 'trust', log.key.verifierKey, '--db', db]).code).toBe(0);
    const w = await startListening([TALLY, 'witness', 'serve', '--key', key, '--db', db, '--port', '0']);
    log.append(5);
    const r = await submitCheckpoint(w.url, log.body(0));
    expect(r.kind).toBe('cosigned');
    if (r.kind !== 'cosigned') return;
    const verifier = parseCosignerVerifierKey(vkey);
    expect(verifier.ok && verifyCosignatures(addSignatureLines(log.checkpoint(), r.lines), [log.key], [verifier.verifier])).toMatchObject({ ok: true });
    expect(w.stdout()).toContain(vkey);
    w.child.kill('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
    expect(w.stderr()).toContain('"status":200');
    // The state survived: a restarted witness knows size 5.
    const again = await startListening([TALLY, 'witness', 'serve', '--key', key, '--db', db]);
    expect(await submitCheckpoint(again.url, log.body(0))).toEqual({ kind: 'conflict', size: 5 });
    again.child.kill('SIGTERM');
    await again.exited;
  });
});
