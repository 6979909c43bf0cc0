/**
 * Debian's Chromium driven by playwright-core for the audit page's tests.
 * `CHROMIUM` is undefined (and the tests skip, saying why) when
 * /usr/bin/chromium is absent; CI installs it (.ci/run).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

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

/**
 * Opens the page from file and loads a day from files, as a grader does:
 * the bundle, and when `pinned` the demo folder's `receipt.note` and
 * `engine.vkey` (and `log` the engine log's binding and key files); waits for `wait` (by default until replay has spoken).
 * `errors` collects the page's errors and console errors, when given.
 */
export async function loadFiles(ctx: BrowserContext, o: { readonly bundle: string; readonly dir?: string; readonly pinned?: boolean; readonly wait?: string; readonly errors?: string[]; readonly log?: { readonly proof?: string; readonly key?: string } }): Promise<Page> {
  const page = await ctx.newPage();
  const errors = o.errors;
  if (errors !== undefined) {
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  }
  await page.goto(`file://${PAGE}`);
  await page.setInputFiles('#in-bundle', o.bundle);
  if (o.pinned === true) {
    if (o.dir === undefined) throw new Error('loadFiles: a pinned load needs the demo folder (dir)');
    await page.setInputFiles('#in-checkpoint', join(o.dir, 'receipt.note'));
    await page.setInputFiles('#in-key', join(o.dir, 'engine.vkey'));
  }
  if (o.log?.proof !== undefined) await page.setInputFiles('#in-log-proof', o.log.proof);
  if (o.log?.key !== undefined) await page.setInputFiles('#in-log-key', o.log.key);
  await page.click('#load-files');
  await page.waitForSelector(o.wait ?? 'body[data-replayed]', { timeout: 60_000 });
  return page;
}
