import { mkdtempSync, writeFileSync } from 'node:fs';
import { inProcess as run } from './in-process.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signIntent } from '../../src/intent/index.js';
import { CLI_DEFAULT_DB } from '../../src/cli/commands/session-io.js';
import { DEFAULT_DB_PATH } from '../../src/store/index.js';
import { KEY_ALPHA, alpha } from '../rules/fixtures.js';
import { tally } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-cli-session-'));
const db = join(dir, 'day.db');
const json = (r: { stdout: string }) => JSON.parse(r.stdout) as Record<string, unknown>;
const noStack = (r: { stderr: string }) => expect(r.stderr).not.toMatch(/\n\s+at /);

describe('driving a session from the shell (from outside)', () => {
  it('open → frame → turn → retry → conflict → finalize → events → describe', () => {
    const open = tally(['open', '--name', 'shell-day', '--db', db, '--json']);
    expect(open.code).toBe(0);
    const sid = json(open)['sessionId'] as string;
    expect(sid).toMatch(/^[0-9a-f]{64}$/);
    expect(json(tally(['open', '--name', 'shell-day', '--db', db, '--json']))).toMatchObject({ sessionId: sid, created: false });

    const f = tally(['frame', '--session', sid, '--ordinal', 'open', '--time', '2030-01-01T09:00:00Z', '--data', '{"note":"hello"}', '--db', db, '--json']);
    expect(f.code).toBe(0);
    const frame = json(f);
    expect(frame).toMatchObject({ ok: true, ordinal: -1, duplicate: false });

    const args = ['turn', '--session', sid, '--ordinal=-1', '--parent', frame['entryHash'] as string, '--frame-root', frame['frameRoot'] as string, '--text', 'plan: hold', '--db', db];
    const t = tally(args);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/^turn -1 recorded as entry 2/);
    const retry = tally([...args, '--json']);
    expect(retry.code).toBe(0);
    expect(json(retry)).toMatchObject({ duplicate: true, index: 2 });
    const other = tally(['turn', '--session', sid, '--ordinal=-1', '--parent', frame['entryHash'] as string, '--frame-root', frame['frameRoot'] as string, '--text', 'something else', '--db', db]);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/^tally turn: turn-conflict: /);
    noStack(other);

    // A turn with nothing pending, a frame out of order, then a wake answered with --auto and a stand-down.
    expect(tally(['turn', '--session', sid, '--auto', '--text', 'x', '--db', db]).stderr).toMatch(/not-pending/);
    const bad = tally(['frame', '--session', sid, '--ordinal', '3', '--time', '1893488400000', '--db', db]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^tally frame: broken-chain: /);
    expect(tally(['frame', '--session', sid, '--ordinal', '0', '--time', '1893488400000', '--db', db]).code).toBe(0);
    const auto = tally(['turn', '--session', sid, '--auto', '--stand-down', 'timeout', '--db', db, '--json']);
    expect(auto.code).toBe(0);
    expect(json(auto)).toMatchObject({ ordinal: 0, duplicate: false });

    const d = tally(['describe', '--session', sid, '--db', db, '--json']);
    expect(json(d)).toMatchObject({ phase: 'awaiting-frame', size: 5, nextOrdinal: 1, counts: { frames: 2, turns: 2, standDowns: 1 } });
    expect(tally(['describe', '--session', sid, '--db', db]).stdout).toContain('phase         awaiting-frame');

    const fin = tally(['finalize', '--session', sid, '--artifacts', '{"grade":"pending"}', '--db', db, '--json']);
    expect(fin.code).toBe(0);
    const receipt = json(fin)['receipt'] as { receiptRoot: string; size: number };
    expect(receipt.size).toBe(6);
    expect(json(tally(['finalize', '--session', sid, '--artifacts', '{"grade":"pending"}', '--db', db, '--json']))).toMatchObject({ duplicate: true, receipt });
    const sealed = tally(['frame', '--session', sid, '--ordinal', '1', '--time', '1893490200000', '--db', db]);
    expect(sealed.code).toBe(1);
    expect(sealed.stderr).toMatch(/^tally frame: sealed: /);

    const ev = tally(['events', '--session', sid, '--db', db, '--json']);
    expect(ev.code).toBe(0);
    const events = json(ev) as { events: { index: number; entry: { kind: string } }[]; more: boolean; phase: string };
    expect(events.events.map((e) => e.entry.kind)).toEqual(['genesis', 'frame', 'turn', 'frame', 'turn', 'finalize']);
    expect(events.phase).toBe('sealed');
    const page = json(tally(['events', '--session', sid, '--after', '2', '--limit', '2', '--db', db, '--json'])) as { events: { index: number }[]; more: boolean; next: number };
    expect(page.events.map((e) => e.index)).toEqual([3, 4]);
    expect(page).toMatchObject({ more: true, next: 4 });
    const text = tally(['events', '--session', sid, '--db', db]);
    expect(text.stdout).toContain('stand-down (timeout)');
    expect(text.stdout).toContain('note: plan: hold');

    const list = tally(['describe', '--db', db, '--json']);
    expect(json(list)).toMatchObject({ sessions: [{ sessionId: sid, name: 'shell-day', phase: 'sealed', size: 6 }] });
  });

  it('rules on signed intents when the spec registers agents (spec from a file, intent from a file)', async () => {
    const specPath = join(dir, 'spec.json');
    writeFileSync(specPath, JSON.stringify({ name: 'shell-intents', agents: { alpha: alpha.address }, intent: { maxTtlHorizonMs: 3_600_000 } }));
    const sid = json(tally(['open', '--spec', specPath, '--db', db, '--json']))['sessionId'] as string;
    expect(tally(['frame', '--session', sid, '--ordinal=-1', '--time', '1893456000000', '--db', db]).code).toBe(0);
    const intent = await signIntent({ action: 'open', agent_id: 'alpha', nonce: 'shell-1', ttl: '2030-01-01T00:10:00Z', size: '1', market: 'BTC-PERP', side: 'long', leverage: '3', max_slippage: '0.01' }, KEY_ALPHA);
    const file = join(dir, 'intent.json');
    writeFileSync(file, JSON.stringify({ intent, context: 'from the shell' }));
    const ok = tally(['turn', '--session', sid, '--auto', '--file', file, '--db', db]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/ruling +intent ADMITTED: open by alpha/);
    // The same signed intent in the next wake: recorded, with its rejection.
    expect(tally(['frame', '--session', sid, '--ordinal', '0', '--time', '1893456060000', '--db', db]).code).toBe(0);
    const again = tally(['turn', '--session', sid, '--auto', '--file', file, '--db', db, '--json']);
    expect(again.code).toBe(0);
    expect(json(again)).toMatchObject({ ruling: { intent: { admitted: false, code: 'replayed_nonce' } } });
  });

  it('takes the store from TALLY_DB, else .tally/tally.db in the working directory', () => {
    expect(CLI_DEFAULT_DB).toBe(DEFAULT_DB_PATH);
    const envDb = join(dir, 'env.db');
    const sid = json(tally(['open', '--name', 'env-day', '--json'], { cwd: dir, env: { TALLY_DB: envDb } }))['sessionId'] as string;
    expect(json(tally(['describe', '--session', sid, '--json'], { cwd: dir, env: { TALLY_DB: envDb } }))).toMatchObject({ name: 'env-day' });
    const cwd = mkdtempSync(join(tmpdir(), 'tally-cli-cwd-'));
    const r = tally(['open', '--name', 'default-day', '--json'], { cwd, env: { TALLY_DB: '' } });
    expect(json(r)).toMatchObject({ db: join(cwd, '.tally', 'tally.db') });
  });

  it('user errors: exit 2 for usage, 3 for a missing database or file, 1 for a diagnostic or input that is not JSON; never a stack trace', async () => {
    const sid = 'ab'.repeat(32);
    const cases: [string[], number, RegExp][] = [
      [['open', '--db', db], 2, /exactly one of --spec/],
      [['open', '--spec', '{not json', '--db', db], 1, /not valid JSON/],
      [['open', '--spec', join(dir, 'missing.json'), '--db', db], 3, /cannot read the spec/],
      [['open', '--spec', '{"nom":"x"}', '--db', db], 1, /malformed-entry: spec.name/],
      // `--ordinal -1` is the OPEN frame (no option is spelled like a number); the session is unknown.
      [['frame', '--session', sid, '--ordinal', '-1', '--time', '1', '--db', db], 1, /wrong-session/],
      [['frame', '--session', 'xyz', '--ordinal', '0', '--time', '1', '--db', db], 2, /--session must be 64/],
      [['frame', '--session', sid, '--ordinal', '0', '--time', 'yesterday', '--db', db], 2, /--time must be/],
      [['frame', '--session', sid, '--ordinal', '0', '--time', '1', '--db', join(dir, 'nope.db')], 3, /no database at/],
      [['frame', '--session', sid, '--ordinal', '0', '--time', '1', '--db', db], 1, /wrong-session/],
      [['turn', '--session', sid, '--auto', '--db', db], 2, /exactly one of --text/],
      [['turn', '--session', sid, '--ordinal', '0', '--text', 'x', '--db', db], 2, /--parent/],
      [['turn', '--session', sid, '--auto', '--stand-down', 'sleepy', '--db', db], 2, /--stand-down must be one of/],
      [['turn', '--session', sid, '--auto', '--file', join(dir, 'missing.bin'), '--db', db], 3, /cannot read/],
      [['events', '--session', sid, '--limit', '0', '--db', db], 2, /--limit must be/],
      [['finalize', '--session', sid, '--artifacts', '[1]', '--db', db], 1, /malformed-entry|wrong-session/],
      [['describe', '--session', sid, '--db', db], 1, /wrong-session/],
      [['frame', '--session', sid, '--ordinal', '--time', '1', '--db', db], 2, /--ordinal needs a value; to give one that starts with '-', write --ordinal=<value>/],
    ];
    // The dispatcher in process (the same code path as the binary, without 16 process start-ups).
    for (const [args, code, message] of cases) {
      const r = await run(args, { cwd: dir });
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.stderr, args.join(' ')).toMatch(message);
      noStack(r);
    }
    // And one of them through the binary, to tie the two together.
    const bin = tally(cases[7]![0]);
    expect(bin.code).toBe(3);
    expect(bin.stderr).toBe((await run(cases[7]![0], { cwd: dir })).stderr);
  });
});
