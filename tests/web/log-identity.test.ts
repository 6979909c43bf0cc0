/**
 * The grader's page pins a log identity (PROTOCOL.md §15.8), in Chromium
 * via playwright-core, against a real `tally serve --log-key`: the identity
 * (`tally log identity`) is opened and the day's binding checked under it by
 * the one rules of src/identity (document-rule.ts, binding-rule.ts) with
 * WebCrypto's Ed25519, and the page's verdict equals `tally verify
 * --log-identity --json` on the same bytes: bound (the shard shown); an
 * identity whose root key did not sign it; an identity of another log
 * (TALLY_LOG_IDENTITY_WRONG_LOG); a tampered binding; an identity not yet
 * valid and one expired (the browser's clock). Then the live follow: every
 * checkpoint it pins to has its served binding (GET …/log-proof?size=n)
 * checked under the identity; a binding tampered on the wire (page.route)
 * fails the pin with the CLI's code and the follow stops.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateEngineKey } from '../../src/receipt/index.js';
import { signNote } from '../../src/receipt/note/sign.js';
import { liveSession, newEngineKey, startServer, TOKENS, type ServerProc } from '../server/helpers.js';
import { CHROMIUM, launch, PAGE, SKIP_REASON, tally } from './browser.js';

if (!CHROMIUM) console.warn(SKIP_REASON);

/** The leaf's index moved by one: the inclusion path no longer leads to the signed root. */
const tamper = (proof: string): string => proof.replace(/^index (\d+)$/m, (_m, i: string) => `index ${Number(i) + 1}`);

describe.skipIf(!CHROMIUM)('a pinned log identity in the page', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-web-identity-'));
  const file = (n: string): string => join(dir, n);
  const auth = { headers: { authorization: `Bearer ${TOKENS.auditor}` } };
  let ctx: BrowserContext;
  let srv: ServerProc;
  let vkey: string;
  let sid: string;
  let step: () => Promise<void>;

  const identity = (out: string, extra: string[]): void => {
    const r = tally(['log', 'identity', '--out', file(out), '--root-key', file('root.key'), '--root-name', 'tally.example/served/root', '--tiles', 'https://tally.example/served/log/', ...extra]);
    expect(r.code, r.stderr).toBe(0);
  };

  beforeAll(async () => {
    vkey = newEngineKey(file('served.key'), 'tally.example/served');
    writeFileSync(file('engine.vkey'), `${vkey}\n`);
    writeFileSync(file('log.vkey'), `${newEngineKey(file('log.key'), 'tally.example/served/log')}\n`);
    newEngineKey(file('other-log.key'), 'tally.example/other/log');
    identity('log.identity', ['--log-key', file('log.key'), '--not-before', '1']);
    // Another log's identity under the same root.
    identity('other.identity', ['--log-key', file('other-log.key'), '--not-before', '1']);
    // Not valid yet (from 2096), and expired (valid for one second in 1970): the browser's clock judges them as the system's does the CLI's.
    identity('future.identity', ['--log-key', file('log.key'), '--not-before', '4000000000']);
    identity('expired.identity', ['--log-key', file('log.key'), '--not-before', '1', '--not-after', '2']);
    // The identity's own text (root_key: root.key) signed by another root key and the log key.
    const note = readFileSync(file('log.identity'), 'utf8');
    const other = await loadOrCreateEngineKey(file('other-root.key'), 'tally.example/served/root');
    writeFileSync(file('other-root.identity'), signNote(note.slice(0, note.indexOf('\n\n') + 1), [other, await loadOrCreateEngineKey(file('log.key'), 'tally.example/served/log')]));
    srv = await startServer({ db: 'memory:', args: ['--key', file('served.key'), '--log-key', file('log.key'), '--log-interval', '0'] });
    ({ sid, step } = await liveSession(srv.url, 'identity day'));
    await step();
    await step();
    writeFileSync(file('day.jsonl'), await (await fetch(`${srv.url}/sessions/${sid}/bundle`, auth)).text());
    const cp = await (await fetch(`${srv.url}/sessions/${sid}/checkpoint`, auth)).text();
    writeFileSync(file('day.note'), cp);
    const served = await fetch(`${srv.url}/sessions/${sid}/log-proof?size=${cp.split('\n')[1]}`, auth);
    expect(served.status).toBe(200);
    const proof = await served.text();
    writeFileSync(file('day.tlog-proof'), proof);
    writeFileSync(file('tampered.tlog-proof'), tamper(proof));
    ctx = await launch();
  }, 180_000);

  afterAll(async () => {
    await ctx?.close();
    await srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (ids: string[], proof = 'day.tlog-proof') =>
    tally(['verify', file('day.jsonl'), '--unsealed', '--vkey', file('engine.vkey'), '--checkpoint', file('day.note'), ...ids.flatMap((f) => ['--log-identity', file(f)]), '--log-proof', file(proof), '--json']);

  const load = async (ids: string[], proof = 'day.tlog-proof'): Promise<Page> => {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`file://${PAGE}`);
    await page.setInputFiles('#in-bundle', file('day.jsonl'));
    await page.setInputFiles('#in-checkpoint', file('day.note'));
    await page.setInputFiles('#in-key', file('engine.vkey'));
    await page.check('#in-unsealed');
    await page.setInputFiles('#in-log-proof', file(proof));
    await page.setInputFiles('#in-log-identity', ids.map(file));
    await page.click('#load-files');
    await page.waitForSelector('body[data-ready=true]', { timeout: 60_000 });
    expect(errors, errors.join('\n')).toEqual([]);
    return page;
  };

  it('bound: the page names the shard, the leaf and the log as tally verify --log-identity does', async () => {
    const r = cli(['log.identity']);
    expect(r.code, r.stderr).toBe(0);
    const b = JSON.parse(r.stdout).logBinding as { index: number; log: { origin: string; size: number } };
    const page = await load(['log.identity']);
    expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
    expect(await page.getAttribute('#banner', 'data-log')).toBe('bound');
    expect(await page.textContent('#banner-log')).toBe(
      `engine log: leaf ${b.index} of ${b.log.origin} (size ${b.log.size}), signed by the log key of the current shard of the log identity you pinned (root key tally.example/served/root); the shard's policy requires no witness`,
    );
    await page.close();
  }, 120_000);

  it.each([
    ['an identity its root key did not sign', ['other-root.identity'], 'day.tlog-proof', 'TALLY_LOG_IDENTITY_UNSIGNED'],
    ['an identity of another log', ['other.identity'], 'day.tlog-proof', 'TALLY_LOG_IDENTITY_WRONG_LOG'],
    ['a tampered binding', ['log.identity'], 'tampered.tlog-proof', undefined],
    ['an identity not valid yet', ['future.identity'], 'day.tlog-proof', 'TALLY_LOG_IDENTITY_EXPIRED'],
    ['an expired identity', ['expired.identity'], 'day.tlog-proof', 'TALLY_LOG_IDENTITY_EXPIRED'],
  ] as const)('%s: the page fails the pin with the stage and code of tally verify --json', async (_what, ids, proof, want) => {
    const r = cli([...ids], proof);
    expect(r.code, r.stderr).toBe(1);
    const j = JSON.parse(r.stdout) as { stage: string; code: string };
    if (want !== undefined) expect(j.code).toBe(want);
    else expect(j.code).toMatch(/^TALLY_LOG_/);
    const page = await load([...ids], proof);
    expect(await page.getAttribute('#banner', 'data-state')).toBe('failed-pin');
    expect(await page.getAttribute('#banner', 'data-code')).toBe(j.code);
    expect(await page.textContent('#banner strong')).toContain(`engine-log binding fails (${j.stage}: ${j.code})`);
    // The chain and the session checkpoint verified: the day stays browsable, unpinned.
    expect(await page.isVisible('#banner-unpinned')).toBe(true);
    await page.close();
  }, 120_000);

  it('a log key and an identity together are refused, as the CLI refuses them (exit 2)', async () => {
    expect(tally(['verify', file('day.jsonl'), '--unsealed', '--vkey', file('engine.vkey'), '--checkpoint', file('day.note'), '--log-identity', file('log.identity'), '--log-key', file('engine.vkey')]).code).toBe(2);
    const page = await ctx.newPage();
    await page.goto(`file://${PAGE}`);
    await page.setInputFiles('#in-bundle', file('day.jsonl'));
    await page.setInputFiles('#in-log-key', file('engine.vkey'));
    await page.setInputFiles('#in-log-identity', file('log.identity'));
    await page.click('#load-files');
    await page.locator('#banner', { hasText: 'not both' }).waitFor();
    await page.close();
  }, 60_000);

  const follow = async (route?: (body: string) => string, pin: { input: string; file: string } = { input: '#in-log-identity', file: 'log.identity' }): Promise<Page> => {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    if (route !== undefined) {
      await page.route(/\/log-proof\?size=/, async (r) => {
        const res = await r.fetch();
        await r.fulfill({ response: res, body: route(await res.text()) });
      });
    }
    await page.goto(`${srv.url}/`);
    await page.fill('#srv-session', sid);
    await page.fill('#srv-token', TOKENS.auditor);
    await page.fill('#in-key-text', vkey);
    await page.setInputFiles(pin.input, file(pin.file));
    expect(await page.isChecked('#srv-follow')).toBe(true);
    await page.click('#load-server');
    await page.locator('#banner[data-state]:not([data-state=""])').first().waitFor({ timeout: 60_000 });
    expect(errors, errors.join('\n')).toEqual([]);
    return page;
  };

  it('the live follow fetches and checks the binding of each checkpoint under the identity; one tampered on the wire fails the pin', async () => {
    const asked: string[] = [];
    const page = await follow();
    page.on('request', (q) => q.url().includes('/log-proof') && asked.push(new URL(q.url()).search));
    await page.locator('#banner[data-log=bound]').waitFor({ timeout: 30_000 });
    expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
    const entries = () => page.textContent('#summary').then((t) => Number(/^(\d+) entries/.exec(t ?? '')?.[1]));
    const before = await entries();
    await step();
    await page.locator('#summary', { hasText: new RegExp(`^${before + 2} entries`) }).waitFor({ timeout: 30_000 });
    await page.locator('#banner[data-log=bound]').waitFor({ timeout: 30_000 });
    // The new checkpoint's binding was asked for at its size.
    await expect.poll(() => asked.includes(`?size=${before + 2}`), { timeout: 10_000 }).toBe(true);
    expect(await page.textContent('#banner-log')).toContain('the current shard of the log identity you pinned');
    await page.close();

    // What tally verify answers for a binding tampered the same way.
    const code = (JSON.parse(cli(['log.identity'], 'tampered.tlog-proof').stdout) as { code: string }).code;
    const bad = await follow(tamper);
    await bad.locator('#banner[data-state=failed-pin]').waitFor({ timeout: 30_000 });
    expect(await bad.getAttribute('#banner', 'data-code')).toBe(code);
    expect(await bad.textContent('#banner strong')).toContain(`engine-log binding fails (log: ${code})`);
    await bad.locator('#srv-status', { hasText: 'stopped: the day failed verification' }).waitFor({ state: 'attached', timeout: 10_000 });
    await bad.close();

    // A pinned log key (log.vkey) instead: the follow checks the served binding the same way.
    const byKey = await follow(undefined, { input: '#in-log-key', file: 'log.vkey' });
    await byKey.locator('#banner[data-log=bound]').waitFor({ timeout: 30_000 });
    expect(await byKey.textContent('#banner-log')).toContain('signed by the log key you pinned');
    await byKey.close();
    const byKeyBad = await follow(tamper, { input: '#in-log-key', file: 'log.vkey' });
    await byKeyBad.locator('#banner[data-state=failed-pin]').waitFor({ timeout: 30_000 });
    expect(await byKeyBad.getAttribute('#banner', 'data-code')).toBe(code);
    await byKeyBad.close();
  }, 180_000);
});
