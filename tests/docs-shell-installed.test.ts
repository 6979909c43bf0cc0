/**
 * Every shell block of README.md and docs/*.md, run verbatim from an empty
 * project of one's own that installed the packed tarball with the README's own
 * install block, and a newcomer's first hour in such a project. From the
 * clone: tests/docs-shell.test.ts. The parts: tests/helpers/docs-shell.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docs, installedProject, installEnv, MARK, marked, root, runAll, userEnv } from './helpers/docs-shell.js';

describe('every shell block of README.md and docs/ runs verbatim from an installed project', () => {
  it('runs each block from an empty project that installed the packed tarball with the README install block', async () => {
    const run = mkdtempSync(join(await installedProject(), 'run-'));
    try {
      await runAll(run, installEnv(), 'installed');
    } finally {
      rmSync(run, { recursive: true, force: true });
    }
  }, 1_800_000);
});


/**
 * A newcomer's first hour, scripted with documented commands only: every `npx tally <command>`
 * and each of its options must appear in README.md or docs/ (checked below), in a fresh directory
 * of the installed project, where no key exists until the newcomer makes one.
 */
const NEWCOMER = `
npx tally key new > engine.vkey
sid=$(npx tally open --name first-hour --json | jq -r .sessionId)
npx tally frame --session $sid --ordinal open --time 2030-01-01T09:00:00Z --data '{"mid":"97000.5"}'
npx tally turn --session $sid --auto --text hold
npx tally frame --session $sid --ordinal 0 --time 2030-01-01T09:30:00Z
npx tally turn --session $sid --auto --stand-down timeout
npx tally finalize --session $sid
npx tally export --session $sid --out day
npx tally verify day/bundle.jsonl --vkey "$(cat engine.vkey)" --checkpoint day/receipt.note
npx tally replay day/bundle.jsonl --vkey "$(cat engine.vkey)" --checkpoint day/receipt.note
`;

describe('a newcomer', () => {
  it('uses only documented commands and options', () => {
    const text = docs.map((d) => readFileSync(join(root, d), 'utf8')).join('\n');
    for (const line of NEWCOMER.trim().split('\n')) {
      const m = /npx tally ([a-z-]+)(.*)$/.exec(line)!;
      expect(text, `tally ${m[1]} is documented`).toContain(`tally ${m[1]}`);
      for (const opt of m[2]!.match(/--[a-z-]+/g) ?? []) expect(text, `${opt} of tally ${m[1]} is documented`).toMatch(new RegExp(`tally ${m[1]}\\b[^\\n]*${opt}\\b`));
    }
  });

  it('opens, records, seals, exports, verifies and replays a day in a fresh directory of a project that installed the tarball', async () => {
    const dir = mkdtempSync(join(await installedProject(), 'newcomer-'));
    try {
      const mark = randomBytes(8).toString('hex');
      const r = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', NEWCOMER], { cwd: dir, env: { ...userEnv(), [MARK]: mark }, encoding: 'utf8', timeout: 180_000, killSignal: 'SIGKILL' });
      const where = `exited ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
      expect(r.status, where).toBe(0);
      expect(r.stderr, where).toMatch(/created engine key .*\.tally\/engine\.key/);
      expect(r.stdout, where).toMatch(/sealed: 6 entries/);
      expect(r.stdout, where).toMatch(/exported session [0-9a-f]{64} \(6 entries, sealed\)/);
      expect(r.stdout, where).toMatch(/valid, pinned to the checkpoint day\/receipt\.note/);
      expect(r.stdout, where).toMatch(/replayed: 6 entries, 2 turns/);
      expect(marked(mark)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
