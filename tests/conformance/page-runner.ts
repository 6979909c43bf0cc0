/**
 * The grader's desk as a corpus runner: the real built page
 * (dist/web/index.html) in Debian's Chromium, driven through its own form —
 * the bundle picked as a file, the pins and "accept a day not sealed yet"
 * typed in — and read from the verdict banner's data attributes. Nothing of
 * the page is imported: it is the verifier under test as a grader meets it.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CHROMIUM, launch } from '../web/browser.js';
import { bundleBytes } from './corpus.js';
import type { Outcome, Runner } from './runners.js';

const PAGE = resolve(import.meta.dirname, '../../dist/web/index.html');

/** The runner, when Chromium and the built page are there (CI installs Chromium; the global setup builds). */
export function pageRunner(): Runner | undefined {
  if (!CHROMIUM || !existsSync(PAGE)) return undefined;
  return {
    name: "the grader's desk in Chromium (the built page)",
    run: async (cases) => {
      const dir = mkdtempSync(join(tmpdir(), 'tally-corpus-page-'));
      const ctx = await launch();
      try {
        const page = await ctx.newPage();
        await page.goto(`file://${PAGE}`);
        const out: Outcome[] = [];
        for (const [i, c] of cases.entries()) {
          const file = join(dir, `${i}.jsonl`);
          writeFileSync(file, bundleBytes(c));
          const pin = c.options?.pin ?? {};
          // The form folds away once a day is shown; open it to fill in the next.
          await page.evaluate("document.getElementById('load').open = true");
          await page.fill('#pin-root', pin.receiptRoot ?? '');
          await page.fill('#pin-session', pin.sessionId ?? '');
          await page.fill('#pin-size', pin.size === undefined ? '' : String(pin.size));
          await page.setChecked('#in-unsealed', c.options?.requireSealed === false);
          await page.setInputFiles('#in-bundle', file);
          await page.evaluate("document.body.removeAttribute('data-ready')");
          await page.click('#load-files');
          await page.waitForSelector('body[data-ready=true]', { timeout: 30_000 });
          const a = (n: string) => page.getAttribute('#banner', n);
          const state = await a('data-state');
          // Typed pins that hold make the day "valid, pinned" (as tally verify --root); without any, "valid, unpinned".
          if (state === 'unpinned' || state === 'pinned') {
            out.push({ ok: true, sessionId: (await a('data-session')) ?? undefined, size: Number(await a('data-size')), receiptRoot: (await a('data-root')) ?? undefined, sealed: (await a('data-sealed')) === 'true' });
          } else if (state === 'failed-entry') {
            out.push({ ok: false, index: Number(await a('data-index')), code: (await a('data-code')) ?? undefined });
          } else {
            out.push({ ok: false, code: `banner state ${state}` });
          }
        }
        return out;
      } finally {
        await ctx.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
