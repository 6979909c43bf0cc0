/**
 * `tally serve` that cannot listen creates and migrates nothing: with its
 * port (or its --metrics-bind port) taken, it exits 3 naming the address and
 * no database file appears, where it used to create and migrate the store
 * first and only then fail to bind.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally } from './helpers.js';

const TOKENS = JSON.stringify({ tokens: [{ name: 'a', role: 'auditor', sha256: 'ab'.repeat(32) }] });

describe('tally serve on a taken port', () => {
  it('exits 3 naming the address and creates no store', async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    const port = (busy.address() as AddressInfo).port;
    try {
      const dir = mkdtempSync(join(tmpdir(), 'tally-serve-busy-'));
      const db = join(dir, 'state', 'tally.db');
      const r = tally(['serve', '--db', db, '--port', String(port)], { cwd: dir, env: { TALLY_TOKENS: TOKENS } });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
      const m = tally(['serve', '--db', db, '--port', '0', '--metrics-bind', `127.0.0.1:${port}`], { cwd: dir, env: { TALLY_TOKENS: TOKENS } });
      expect(m.code, m.stderr).toBe(3);
      expect(m.stderr).toContain(`cannot listen on 127.0.0.1:${port} for metrics`);
      expect(existsSync(db)).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      await new Promise<void>((r) => busy.close(() => r()));
    }
  });
});
