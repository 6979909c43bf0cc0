/**
 * `tally view` from the outside: it writes one HTML file with the day's exact
 * bytes embedded in an inert data block (no `<` inside it), prints its path,
 * and refuses bad usage (2) and unreadable files (3). `tally serve` serves
 * the same page at `/` with its hash-only CSP and without a token.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromBase64 } from '../../src/protocol/index.js';
import { loadAuditPage } from '../../src/web/index.js';
import { startServer } from '../server/helpers.js';

const TALLY = resolve(import.meta.dirname, '../../dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'tally-view-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tally(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [TALLY, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('tally view', () => {
  it('embeds the exact bytes in an inert block and prints the path', () => {
    const bytes = Buffer.concat([Buffer.from('</script><script>alert(1)</script>\n'), Buffer.from([0xff, 0xfe, 0x0a])]);
    const bundle = join(dir, 'odd.jsonl');
    writeFileSync(bundle, bytes);
    writeFileSync(join(dir, 'k.vkey'), 'x+00000000+AA==\n');
    const r = tally(['view', bundle, '--vkey', join(dir, 'k.vkey'), '--out', join(dir, 'odd.html')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(join(dir, 'odd.html'));
    const html = readFileSync(join(dir, 'odd.html'), 'utf8');
    const m = /<script type="application\/json" id="tally-embedded">(.*?)<\/script>/s.exec(html)!;
    expect(m[1]).not.toContain('<');
    const data = JSON.parse(m[1]!) as { name: string; bundle: string; key: string };
    expect(Buffer.from(fromBase64(data.bundle)!)).toEqual(bytes);
    expect(data.key).toBe('x+00000000+AA==\n');
    expect(data.name).toBe('odd.jsonl');
    // The page itself is unchanged around the block: its CSP hash still matches.
    expect(html.replace(m[0], '').replace(/\n\n/, '\n')).toContain(loadAuditPage().html.slice(0, 200));
  });

  it('exits 2 on bad usage and 3 on a missing file', () => {
    expect(tally(['view']).code).toBe(2);
    expect(tally(['view', join(dir, 'absent.jsonl')]).code).toBe(3);
    expect(tally(['view', '--help']).stdout).toContain('Usage: tally view');
  });
});

describe('tally serve', () => {
  it('serves the page at / without a token, under a hash-only CSP', async () => {
    const srv = await startServer({ db: 'memory:' });
    try {
      const res = await fetch(`${srv.url}/`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toBe(`${loadAuditPage().csp}; frame-ancestors 'none'`);
      expect(csp).toMatch(/^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]{43}=' 'wasm-unsafe-eval'; style-src 'sha256-[A-Za-z0-9+/]{43}='; worker-src blob:; connect-src 'self';/);
      expect(await res.text()).toBe(loadAuditPage().html);
      expect((await fetch(`${srv.url}/sessions/${'a'.repeat(64)}/bundle`)).status).toBe(401);
    } finally {
      await srv.stop();
    }
  });
});
