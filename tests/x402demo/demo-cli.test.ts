/**
 * `tally demo --x402` end to end with the BUILT command line: the demo starts its own local
 * chain, token, facilitator and resource servers, records the desk's day, and stops every part.
 * Checked from the files it writes (counts by ruling and lifecycle state, the bundle and both
 * evidence packs verified again by separate `tally` processes), and that nothing it started
 * survives: after a normal exit, and after SIGINT mid-run (the chain's port closed and its
 * process gone). The chain not starting fails this test; nothing here skips.
 *
 * Also: where the optional packages are missing (the built package copied beside a
 * node_modules without them) the demo names exactly what to `npm install`, and exits 1; where
 * the chain cannot start, a typed TALLY_DEMO_CHAIN error.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startChain } from '../../src/x402demo/chain.js';
import { X402_DEMO_INSTALL } from '../../src/x402demo/index.js';
import { TALLY, tally } from '../cli/helpers.js';

const root = resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
const scratch = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const listening = (port: number) =>
  new Promise<boolean>((ok) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), ok(true)));
    s.once('error', () => ok(false));
  });
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the built CLI; calls `onStderr` with everything written so far; resolves with the exit. */
function run(args: string[], cwd: string, onStderr?: (text: string, pid: number) => void) {
  const child = spawn(process.execPath, [TALLY, ...args], { cwd, env: { ...process.env, TALLY_NO_PROGRESS: '1', npm_command: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
    onStderr?.(stderr, child.pid!);
  });
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((ok) => child.once('close', (code, signal) => ok({ code, signal, stdout, stderr })));
}

const chainOf = (stderr: string) => {
  const m = /local chain \(Hardhat network, pid (\d+)\) listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
  return m ? { pid: Number(m[1]), port: Number(m[2]) } : undefined;
};

async function gone(c: { pid: number; port: number }): Promise<void> {
  for (let i = 0; i < 50 && (alive(c.pid) || (await listening(c.port))); i++) await sleep(100);
  expect(alive(c.pid), `chain process ${c.pid} still running`).toBe(false);
  expect(await listening(c.port), `chain port ${c.port} still open`).toBe(false);
}

describe('tally demo --x402', () => {
  it('records the desk day on a local chain, verifies it, and leaves nothing running', async () => {
    const dir = scratch('tally-x402-demo-');
    const r = await run(['demo', '--x402', '--out', 'day'], dir);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const chain = chainOf(r.stderr)!;
    expect(chain).toBeDefined();
    await gone(chain);
    expect(r.stdout).toMatch(/rulings +admitted 3, offer_drift 1, over_budget 1\n/);
    expect(r.stdout).toMatch(/lifecycle +final SETTLED 3; 1 recorded UNKNOWN then reconciled from chain evidence/);
    expect(r.stdout).toMatch(/bundle ok \(\d+ entries chained and sealed, 6 rulings re-derived byte for byte\)/);
    expect(r.stdout).toMatch(/next +tally verify day\/bundle\.jsonl --vkey "\$\(cat day\/engine\.vkey\)" --checkpoint day\/receipt\.note/);

    // The summary's counts, from the file.
    const summary = JSON.parse(readFileSync(join(dir, 'day/summary.json'), 'utf8')) as { rulings: object; lifecycle: object; budget: object; checks: { evidence: { ok: boolean }[] } };
    expect(summary.rulings).toEqual({ admitted: 3, offer_drift: 1, over_budget: 1 });
    expect(summary.lifecycle).toEqual({ final: { SETTLED: 3 }, everUnknown: 1 });
    expect(summary.budget).toMatchObject({ budget: '50000', used: '30000', locked: '0', free: '20000' });
    expect(summary.checks.evidence.map((e) => e.ok)).toEqual([true, true]);

    // Checked again by separate processes, from the files alone.
    const vkey = readFileSync(join(dir, 'day/engine.vkey'), 'utf8').trim();
    const v = tally(['verify', 'day/bundle.jsonl', '--vkey', vkey, '--checkpoint', 'day/receipt.note'], { cwd: dir });
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/^valid, pinned to the checkpoint day\/receipt\.note/);
    const rp = tally(['replay', 'day/bundle.jsonl', '--vkey', vkey, '--checkpoint', 'day/receipt.note'], { cwd: dir });
    expect(rp.code, rp.stdout + rp.stderr).toBe(0);
    expect(rp.stdout).toMatch(/ruler\s+payments/);
    const e3 = tally(['verify-evidence', 'day/payment-3.json', '--vkey', vkey], { cwd: dir });
    expect(e3.code, e3.stderr).toBe(0);
    expect(e3.stdout).toMatch(/admitted: ticket 3, 10000 of 0x[0-9a-f]{40} from .* final state SETTLED \(0x[0-9a-f]{64}\)/);
    const ed = tally(['verify-evidence', 'day/payment-drift.json', '--vkey', vkey], { cwd: dir });
    expect(ed.code, ed.stderr).toBe(0);
    expect(ed.stdout).toContain('reasons: offer_drift');
    // A pack edited by one byte is refused.
    const pack = readFileSync(join(dir, 'day/payment-3.json'), 'utf8');
    const edited = join(dir, 'edited.json');
    cpSync(join(dir, 'day/payment-3.json'), edited);
    writeFileSync(edited, pack.replace('"role":"offer"', '"role":"payment"'));
    expect(tally(['verify-evidence', 'edited.json', '--vkey', vkey], { cwd: dir }).code).toBe(1);
  }, 240_000);

  it('on SIGINT mid-run stops the chain and every server and exits 130', async () => {
    const dir = scratch('tally-x402-sigint-');
    let sent = false;
    const r = await run(['demo', '--x402', '--out', 'day'], dir, (text, pid) => {
      if (!sent && chainOf(text)) {
        sent = true;
        process.kill(pid, 'SIGINT');
      }
    });
    expect(sent, r.stderr).toBe(true);
    expect(r.code, r.stdout + r.stderr).toBe(130);
    await gone(chainOf(r.stderr)!);
  }, 240_000);

  it('says exactly what to npm install when the optional packages are missing, exit 1', () => {
    // The built package beside a node_modules that has everything but the demo's optional packages.
    const pkg = scratch('tally-x402-nodeps-');
    cpSync(join(root, 'dist'), join(pkg, 'dist'), { recursive: true });
    cpSync(join(root, 'package.json'), join(pkg, 'package.json'));
    mkdirSync(join(pkg, 'node_modules'));
    const left = ['hardhat', '@x402', 'express'];
    for (const n of readdirSync(join(root, 'node_modules'))) if (!left.includes(n)) symlinkSync(join(root, 'node_modules', n), join(pkg, 'node_modules', n));
    const out = spawnTally(pkg, ['demo', '--x402', '--out', 'day']);
    expect(out.status, out.stderr).toBe(1);
    expect(out.stderr).toContain(`Install them with: ${X402_DEMO_INSTALL}`);
    expect(out.stderr).toContain('[TALLY_DEMO_X402_DEPS]');
    const json = spawnTally(pkg, ['demo', '--x402', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: 'TALLY_DEMO_X402_DEPS', exit: 1 });
    // The plain demo does not need them.
    expect(spawnTally(pkg, ['demo', '--wakes', '0', '--out', 'plain']).status).toBe(0);
  }, 120_000);

  it('a chain that cannot start is a typed error (exited, or not listening in time)', async () => {
    await expect(startChain({ hre: 'file:///nonexistent/hardhat/hre.js', timeoutMs: 30_000 })).rejects.toMatchObject({ code: 'TALLY_DEMO_CHAIN', shortMessage: expect.stringMatching(/exited \(1\) before listening/) });
    await expect(startChain({ hre: 'data:text/javascript,await new Promise(() => setInterval(() => {}, 1000))', timeoutMs: 1500 })).rejects.toMatchObject({ code: 'TALLY_DEMO_CHAIN', shortMessage: expect.stringMatching(/did not start in 1500 ms/) });
  }, 60_000);
});

function spawnTally(cwd: string, args: string[]) {
  return spawnSync(process.execPath, [join(cwd, 'dist/cli/main.js'), ...args], { cwd, encoding: 'utf8', env: { ...process.env, npm_command: '' }, timeout: 60_000 }) as { status: number; stdout: string; stderr: string };
}
