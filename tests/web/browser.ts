/**
 * Debian's Chromium driven by playwright-core for the audit page's tests.
 * `CHROMIUM` is undefined (and the tests skip, saying why) when
 * /usr/bin/chromium is absent; CI installs it (.ci/run).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BrowserContext } from 'playwright-core';

/** Path of the system Chromium, when installed. */
export const CHROMIUM = existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined;
// CI installs Chromium and sets TALLY_REQUIRE_CHROMIUM: there a missing browser fails the
// browser suites instead of letting them skip (as TALLY_PG_URL does for PostgreSQL).
if (CHROMIUM === undefined && process.env['TALLY_REQUIRE_CHROMIUM'] === '1') {
  throw new Error('TALLY_REQUIRE_CHROMIUM=1 but /usr/bin/chromium is absent: the browser tests cannot run (apt-get install -y chromium)');
}
/** Why browser tests skip. */
export const SKIP_REASON = 'browser tests skipped: /usr/bin/chromium is absent (apt-get install -y chromium; CI installs it)';
/** The built CLI the tests drive from outside. */
export const TALLY = resolve(import.meta.dirname, '../../dist/cli/main.js');
/** The built single-file page. */
export const PAGE = resolve(import.meta.dirname, '../../dist/web/index.html');

/** Runs the built CLI and returns its exit code and output. */
export function tally(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [TALLY, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A fresh temp folder holding the demo day (`tally demo --out`): bundle, note, key, proof. */
export function demoDayDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const demo = tally(['demo', '--out', dir]);
  if (demo.code !== 0) throw new Error(`tally demo exited ${demo.code}: ${demo.stderr}`);
  return dir;
}

/** Screenshots land here (gitignored). */
export const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts/web');

/**
 * A fresh headless Chromium profile, offline except for what the page asks of
 * its origin. `bypassCSP` lets a test inject a checker (axe-core) into the
 * page; the page's own code never needs it.
 */
export async function launch(options: { readonly bypassCSP?: boolean; readonly locale?: string; readonly timezoneId?: string; readonly colorScheme?: 'light' | 'dark' } = {}): Promise<BrowserContext> {
  const { chromium } = await import('playwright-core');
  mkdirSync(ARTIFACTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'tally-chromium-'));
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM!,
    headless: true,
    acceptDownloads: true,
    bypassCSP: options.bypassCSP === true,
    viewport: { width: 1280, height: 800 },
    ...(options.locale === undefined ? {} : { locale: options.locale }),
    ...(options.timezoneId === undefined ? {} : { timezoneId: options.timezoneId }),
    ...(options.colorScheme === undefined ? {} : { colorScheme: options.colorScheme }),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
