/**
 * Verdicts in colour on a terminal only: `script` gives the built CLI a real
 * pseudo-terminal; NO_COLOR, --no-color and a pipe each turn colour off. The
 * progress bar ends with an ETA when the total is known.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TALLY, tally } from './helpers.js';

const golden = resolve(import.meta.dirname, '../golden/transcript.jsonl');
const dir = mkdtempSync(join(tmpdir(), 'tally-colour-'));
const ESC = '\x1b[';

/** Runs the built tally on a pseudo-terminal (util-linux script); returns what the terminal showed. */
function onTerminal(args: string[], env: Record<string, string> = {}): string {
  const quoted = [process.execPath, TALLY, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const base: Record<string, string | undefined> = { ...process.env, npm_command: '', NO_COLOR: '', ...env };
  delete base['TALLY_NO_PROGRESS']; // any value, even empty, turns the progress bar off
  const r = spawnSync('script', ['-qec', quoted, '/dev/null'], { encoding: 'utf8', env: base, timeout: 60_000 });
  expect(r.status, r.stderr).not.toBeNull();
  return r.stdout;
}

describe('colour for verdicts', () => {
  it('a terminal shows the verdict in colour: unpinned yellow, pinned green, invalid red', () => {
    expect(onTerminal(['verify', golden])).toContain(`${ESC}1;33mvalid, unpinned${ESC}0m (internal consistency only`);
    const root = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../golden/golden.json'), 'utf8')) as { receipt: { receiptRoot: string } }).receipt.receiptRoot;
    expect(onTerminal(['verify', golden, '--root', root])).toContain(`${ESC}1;32mvalid${ESC}0m, pinned to receipt root ${root}`);
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, readFileSync(golden, 'utf8').replace('"ordinal":1,', '"ordinal":1 ,'));
    expect(onTerminal(['verify', bad])).toMatch(new RegExp(`\\x1b\\[1;31minvalid\\x1b\\[0m: entry \\d+: not-canonical`));
  });

  it('NO_COLOR, --no-color and a pipe print no escape codes', () => {
    expect(onTerminal(['verify', golden], { NO_COLOR: '1' })).not.toContain(`${ESC}1;`);
    expect(onTerminal(['verify', golden, '--no-color'])).not.toContain(`${ESC}1;`);
    const piped = tally(['verify', golden]);
    expect(piped.stdout).toMatch(/^valid, unpinned/);
    expect(piped.stdout).not.toContain('\x1b');
  });
});

describe('progress ETA', () => {
  it('progressLine ends with the time left at the current rate', async () => {
    const { progressLine, etaText } = (await import(resolve(import.meta.dirname, '../../dist/cli/progress.js'))) as typeof import('../../src/cli/progress.js');
    expect(progressLine('verifying', 250, 1000, 50, 80)).toBe('verifying [########......................] 250/1000 (50/s, ETA 0:15)');
    expect(progressLine('verifying', 1000, 1000, 50, 80)).toBe('verifying [##############################] 1000/1000 (50/s)');
    expect(progressLine('replaying', 7, undefined, 3, 80)).toBe('replaying 7 (3/s)');
    expect(etaText(3725)).toBe('1:02:05');
    expect(etaText(59.2)).toBe('1:00');
  });

  it('a terminal run with a known total shows the ETA', async () => {
    // Progress is reported after each 1 MiB read (the verdict-only path): a day of several of them.
    const { createEngine } = await import('../../src/session/index.js');
    const { encodeBundle } = await import('../../src/codec/index.js');
    const engine = createEngine();
    const open = await engine.open({ name: 'eta', wakes: 4000 });
    if (!open.ok) throw new Error(open.message);
    for (let i = 0; i < 4000; i++) {
      const f = await engine.frame({ sessionId: open.sessionId, ordinal: i - 1, time: 1000 + i });
      if (!f.ok) throw new Error(f.message);
      const t = await engine.turn({ sessionId: open.sessionId, ordinal: i - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
      if (!t.ok) throw new Error(t.message);
    }
    if (!(await engine.finalize(open.sessionId)).ok) throw new Error('seal');
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(open.sessionId)) lines.push(l);
    const day = join(dir, 'eta.jsonl');
    writeFileSync(day, encodeBundle(lines));
    expect(lines.length).toBe(8002);
    expect(onTerminal(['verify', day, '--size', '8002'])).toMatch(/verifying \[[#.]+\] \d+\/8002 \(\d+\/s, ETA \d+:\d\d\)/);
  });
});
