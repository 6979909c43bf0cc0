/**
 * The day's engine-log binding in the grader's page (Chromium via
 * playwright-core): the demo's `log-proof.tlog-proof` checked against the
 * pinned `log.vkey` by the one rule of src/log/binding-rule.ts, bundled —
 * the banner shows where the day is in the log; a mutated binding fails the
 * pin with the code `tally verify --log-key --json` gives; a pinned log key
 * without a binding is TALLY_LOG_BINDING_MISSING, a failure, never a
 * warning; a binding without the key is said to be unchecked. `tally view
 * --log-key` embeds the same and the page answers the same. A day opened
 * from a real `tally serve --log-key` fetches its binding (GET
 * /sessions/:id/log-proof) and checks it the same way.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveSession, newEngineKey, startServer, TOKENS } from '../server/helpers.js';
import { CHROMIUM, demoDayDir, launch, loadFiles, SKIP_REASON, tally } from './browser.js';

if (!CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!CHROMIUM)('the engine-log binding in the page', () => {
  let dir: string;
  let ctx: BrowserContext;
  const file = (n: string): string => join(dir, n);
  const wait = 'body[data-ready=true]';
  const cli = (proof: string) => tally(['verify', file('bundle.jsonl'), '--vkey', file('engine.vkey'), '--checkpoint', file('receipt.note'), '--log-key', file('log.vkey'), '--log-proof', file(proof), '--json']);

  beforeAll(async () => {
    dir = demoDayDir('tally-web-log-');
    const proof = readFileSync(file('log-proof.tlog-proof'), 'utf8');
    // The leaf's index moved by one: the inclusion path no longer leads to the signed root.
    writeFileSync(file('log-proof-index.tlog-proof'), proof.replace(/^index (\d+)$/m, (_m, i: string) => `index ${Number(i) + 1}`));
    ctx = await launch();
  }, 180_000);

  afterAll(async () => {
    await ctx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const load = async (log: { proof?: string; key?: string }): Promise<Page> => {
    const errors: string[] = [];
    const page = await loadFiles(ctx, { bundle: file('bundle.jsonl'), dir, pinned: true, wait, errors, log: { ...(log.proof ? { proof: file(log.proof) } : {}), ...(log.key ? { key: file(log.key) } : {}) } });
    expect(errors, errors.join('\n')).toEqual([]);
    return page;
  };

  it('a valid binding: pinned, the leaf and log named as tally verify --log-key names them', async () => {
    const r = cli('log-proof.tlog-proof');
    expect(r.code, r.stderr).toBe(0);
    const b = JSON.parse(r.stdout).logBinding as { index: number; log: { origin: string; size: number } };
    const page = await load({ proof: 'log-proof.tlog-proof', key: 'log.vkey' });
    expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
    expect(await page.getAttribute('#banner', 'data-log')).toBe('bound');
    expect(await page.textContent('#banner-log')).toBe(`engine log: leaf ${b.index} of ${b.log.origin} (size ${b.log.size}), the seal, signed by the log key you pinned`);
    await page.close();
  });

  it('a mutated binding fails the pin with the CLI’s code; another day’s key as the log key is TALLY_LOG_UNSIGNED', async () => {
    const r = cli('log-proof-index.tlog-proof');
    expect(r.code).toBe(1);
    const code = (JSON.parse(r.stdout) as { code: string }).code;
    expect(code).toMatch(/^TALLY_LOG_/);
    const page = await load({ proof: 'log-proof-index.tlog-proof', key: 'log.vkey' });
    expect(await page.getAttribute('#banner', 'data-state')).toBe('failed-pin');
    expect(await page.getAttribute('#banner', 'data-code')).toBe(code);
    expect(await page.textContent('#banner strong')).toContain(`engine-log binding fails (log: ${code})`);
    // The day itself verified: it stays browsable, unpinned.
    expect(await page.isVisible('#banner-unpinned')).toBe(true);
    await page.close();
    const wrong = await load({ proof: 'log-proof.tlog-proof', key: 'engine.vkey' });
    expect(await wrong.getAttribute('#banner', 'data-code')).toBe('TALLY_LOG_UNSIGNED');
    await wrong.close();
  });

  it('a pinned log key and no binding: TALLY_LOG_BINDING_MISSING, a failure; a binding without the key: unchecked, said so', async () => {
    const missing = await load({ key: 'log.vkey' });
    expect(await missing.getAttribute('#banner', 'data-state')).toBe('failed-pin');
    expect(await missing.getAttribute('#banner', 'data-code')).toBe('TALLY_LOG_BINDING_MISSING');
    await missing.close();
    const unchecked = await load({ proof: 'log-proof.tlog-proof' });
    expect(await unchecked.getAttribute('#banner', 'data-state')).toBe('pinned');
    expect(await unchecked.getAttribute('#banner', 'data-log')).toBe('unchecked');
    expect(await unchecked.textContent('#banner-log')).toContain('not checked');
    await unchecked.close();
  });

  it('tally view --log-key embeds the binding (beside the receipt) and the page requires it', async () => {
    const view = async (out: string, extra: string[]): Promise<Page> => {
      const r = tally(['view', file('bundle.jsonl'), '--checkpoint', file('receipt.note'), '--vkey', file('engine.vkey'), '--log-key', file('log.vkey'), '--out', file(out), ...extra]);
      expect(r.code, r.stderr).toBe(0);
      const page = await ctx.newPage();
      await page.goto(`file://${file(out)}`);
      await page.waitForSelector(wait, { timeout: 60_000 });
      return page;
    };
    const ok = await view('bound.html', []);
    expect(await ok.getAttribute('#banner', 'data-log')).toBe('bound');
    await ok.close();
    const bad = await view('mutated.html', ['--log-proof', file('log-proof-index.tlog-proof')]);
    expect(await bad.getAttribute('#banner', 'data-state')).toBe('failed-pin');
    expect(await bad.getAttribute('#banner', 'data-code')).toMatch(/^TALLY_LOG_/);
    await bad.close();
    expect(tally(['view', file('bundle.jsonl'), '--log-proof', file('log-proof.tlog-proof')]).code).toBe(2);
  });

  it('a day opened from tally serve: the page fetches the served binding and checks it under the pinned log key, as tally verify does', async () => {
    const vkey = newEngineKey(file('served.key'), 'tally.example/served');
    const logVkey = newEngineKey(file('served-log.key'), 'tally.example/served/log');
    writeFileSync(file('served-log.vkey'), `${logVkey}\n`);
    const srv = await startServer({ db: 'memory:', args: ['--key', file('served.key'), '--log-key', file('served-log.key'), '--log-interval', '0'] });
    try {
      const { sid, step } = await liveSession(srv.url, 'served log day');
      await step();
      await step();
      // What tally verify answers on the same bytes: the bundle, its checkpoint and the served binding.
      const auth = { headers: { authorization: `Bearer ${TOKENS.auditor}` } };
      writeFileSync(file('served.jsonl'), await (await fetch(`${srv.url}/sessions/${sid}/bundle`, auth)).text());
      const cp = await (await fetch(`${srv.url}/sessions/${sid}/checkpoint`, auth)).text();
      writeFileSync(file('served.note'), cp);
      const served = await fetch(`${srv.url}/sessions/${sid}/log-proof?size=${cp.split('\n')[1]}`, auth);
      expect(served.status).toBe(200);
      writeFileSync(file('served.tlog-proof'), await served.text());
      writeFileSync(file('served-engine.vkey'), `${vkey}\n`);
      const verify = (logKey: string) => tally(['verify', file('served.jsonl'), '--unsealed', '--vkey', file('served-engine.vkey'), '--checkpoint', file('served.note'), '--log-key', logKey, '--log-proof', file('served.tlog-proof'), '--json']);
      const ok = verify(file('served-log.vkey'));
      expect(ok.code, ok.stderr).toBe(0);
      const b = JSON.parse(ok.stdout).logBinding as { index: number; log: { origin: string; size: number } };
      const open = async (logKey: string, proof?: string): Promise<Page> => {
        const page = await ctx.newPage();
        const errors: string[] = [];
        page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
        await page.goto(`${srv.url}/`);
        await page.fill('#srv-session', sid);
        await page.fill('#srv-token', TOKENS.auditor);
        await page.fill('#in-key-text', vkey);
        // One fetch of the day (not following it live): the binding is of the checkpoint fetched.
        await page.uncheck('#srv-follow');
        await page.setInputFiles('#in-log-key', logKey);
        if (proof !== undefined) await page.setInputFiles('#in-log-proof', proof);
        await page.click('#load-server');
        await page.waitForSelector(wait, { timeout: 60_000 });
        await page.locator('#banner[data-state]:not([data-state=""])').first().waitFor();
        expect(errors, errors.join('\n')).toEqual([]);
        return page;
      };
      const page = await open(file('served-log.vkey'));
      expect(await page.getAttribute('#banner', 'data-state')).toBe('pinned');
      expect(await page.getAttribute('#banner', 'data-log'), `${await page.textContent('#srv-status')} / ${await page.textContent('#banner')}`).toBe('bound');
      expect(await page.textContent('#banner-log')).toBe(`engine log: leaf ${b.index} of ${b.log.origin} (size ${b.log.size}), signed by the log key you pinned`);
      await page.close();
      // Another key pinned as the log key: refused with the CLI's code.
      const wrongCode = (JSON.parse(verify(file('served-engine.vkey')).stdout) as { code: string }).code;
      expect(wrongCode).toBe('TALLY_LOG_UNSIGNED');
      const wrong = await open(file('served-engine.vkey'));
      expect(await wrong.getAttribute('#banner', 'data-state')).toBe('failed-pin');
      expect(await wrong.getAttribute('#banner', 'data-code')).toBe(wrongCode);
      await wrong.close();
      // A tampered binding picked beside the served day (its index moved by one): refused with the CLI's code.
      writeFileSync(file('served-index.tlog-proof'), readFileSync(file('served.tlog-proof'), 'utf8').replace(/^index (\d+)$/m, (_m, i: string) => `index ${Number(i) + 1}`));
      const cliCode = (JSON.parse(tally(['verify', file('served.jsonl'), '--unsealed', '--vkey', file('served-engine.vkey'), '--checkpoint', file('served.note'), '--log-key', file('served-log.vkey'), '--log-proof', file('served-index.tlog-proof'), '--json']).stdout) as { code: string }).code;
      expect(cliCode).toMatch(/^TALLY_LOG_/);
      const tampered = await open(file('served-log.vkey'), file('served-index.tlog-proof'));
      expect(await tampered.getAttribute('#banner', 'data-code')).toBe(cliCode);
      await tampered.close();
    } finally {
      await srv.stop();
    }
  }, 180_000);
});
