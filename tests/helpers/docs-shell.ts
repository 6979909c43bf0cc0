/**
 * The docs shell test's parts (tests/docs-shell.test.ts runs the blocks from the
 * clone, tests/docs-shell-installed.test.ts from a project that installed the
 * packed tarball; two files, so the two runs go side by side on two workers).
 * Every shell block of README.md and docs/*.md, run verbatim with bash exactly
 * as a user meets it — no `tally` shim on PATH, `npx tally` resolved by npm
 * itself. Each block must exit 0, print its key outputs, and leave nothing
 * behind: no process it started (each block's processes carry a marker in
 * their environment, found in /proc) and no listener on a port it names. Wait
 * loops must be bounded (no `until` or `while` in a block).
 *
 * A block that needs an outside server or tool is marked in the document with
 * `<!-- shell-test: skip <reason> -->` on the line before its fence; skipped
 * blocks are listed with their reasons (keep them rare). The install block is
 * marked `<!-- shell-test: install -->`: it sets up the installed project (in
 * the clone there is nothing to install). Placeholders written `<like this>`
 * are filled from PLACEHOLDERS (one table, so a new placeholder must be added
 * here on purpose); any other `<…>` fails.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';

export const root = resolve(import.meta.dirname, '../..');
export const MARK = 'TALLY_DOCS_SHELL_BLOCK';

export interface Block {
  readonly doc: string;
  readonly line: number;
  readonly section: string;
  readonly code: string;
  readonly skip?: string;
  readonly install?: true;
}

/** Every ```sh / ```bash / ```shell fence of a document, with its section and marker. */
export function blocks(doc: string): Block[] {
  const lines = readFileSync(join(root, doc), 'utf8').split('\n');
  const out: Block[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^#{1,6} /.test(l)) section = l.replace(/^#+ /, '');
    if (!/^```(sh|bash|shell)\s*$/.test(l)) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const before = lines[start - 1] ?? '';
    const marker = /^<!-- shell-test: skip (.+?) -->$/.exec(before);
    out.push({ doc, line: start + 1, section, code: body.join('\n') + '\n', ...(marker ? { skip: marker[1]! } : {}), ...(before === '<!-- shell-test: install -->' ? { install: true as const } : {}) });
  }
  return out;
}

/** The documented placeholders and the shell text each stands for in this test's demo day. */
export const PLACEHOLDERS: Readonly<Record<string, string>> = {
  '<vkey>': '"$(cat engine.vkey)"',
  '<grader vkey>': '"$(npx tally grade key --key grader.key)"',
  // Filled per run with the tarball `npm pack` made (only the install block uses it).
  '<agent-tally tarball>': '"$TALLY_DOCS_TARBALL"',
};

/** Which directory a section's block runs in (the grader block works on the demo's files by their plain names). */
export const CWD: Readonly<Record<string, string>> = { Receipts: 'tally-demo' };

/** Key outputs: each block whose code matches the first pattern must print all the others on stdout. */
export const EXPECT: readonly (readonly [RegExp, readonly RegExp[]])[] = [
  [/^npx tally demo +#/m, [/tally demo: seed 1, 48 wakes/, /bundle ok/, /replay ok/, /next +npx tally inspect/, /REJECTED/, /valid, pinned to receipt root [0-9a-f]{64}/, /RULINGS/]],
  [/npx tally demo --ap2/, [/purchase 3 +encyclopedia-vol-1 +USD 12\.00 +REFUSED constraint-violated \(payment\.budget\)/, /evidence +ok/, /valid, pinned to the checkpoint tally-demo-ap2\/receipt\.note/, /all 5 rulings re-derived/, /valid: entry 4 of session [0-9a-f]{64}/, /step 3 checkout-receipt: pass/, /step 5 payment-receipt: pass/, /valid: all five dispute steps pass/]],
  [/^npx tally finalize/m, [/frame -1 recorded as entry 1/, /turn -1 recorded as entry 2/, /turn -1 already recorded \(duplicate\) as entry 2/, /stand-down \(timeout\)/, /sealed: 6 entries/, /phase +sealed/]],
  [/tally witness serve/, [/valid, pinned to the checkpoint sealed\.cp \(12 entries\)/, /cosigned by +w1\.example, w2\.example \(witness quorum met\)\n(?:.*\n)*valid: entry 4 of session/]],
  [/tally prove bundle/, [/valid, pinned to the checkpoint receipt\.note/, /valid: entry 4 of session [0-9a-f]{64} \(pinned checkpoint\)\nentry {8}turn 0 /, /re-derived/, /valid: grade of session/]],
  [/npx tally mandate sign/, [/valid: the mandate is signed by its principal 0x90f79bf6eb2c4f870365e785982e1f101e93b906 \(eip712\)/, /refused: the unsigned spec/, /session [0-9a-f]{64} \(created\)/]],
  [/--metrics-bind/, [/"ok":true/, /# TYPE target_info gauge/]],
  [/--log-key tally-demo\/log\.vkey/, [/engine log {3}leaf \d+ of demo\.tally\.invalid\/log \(size \d+\), the seal, signed by the log key/]],
  [/npx tally demo --x402/, [/rulings +admitted 3, offer_drift 1, over_budget 1\n/, /lifecycle +final SETTLED 3; 1 recorded UNKNOWN then reconciled/, /bundle ok/, /valid, pinned to the checkpoint tally-x402\/receipt\.note/, /ruler +payments/, /admitted: ticket 1, 10000 of 0x[0-9a-f]{40} .* final state SETTLED/, /reasons: offer_drift/]],
  [/--log tally-demo\/log\b/, [/engine log {3}read \d+ leaves: consistent with the binding/]],
  [/--sessions tally-demo\b/, [/sessions: 1 checkpoints match their session's own tree, 0 unchecked/]],
  [/npx tally mcp proxy --db gw\.db /, [/"id":1,"result":\{"content":\[\{"text":"Session [0-9a-f]{64} created/, /Tally refused this call \(tool_not_offered\)/, /valid, pinned to receipt root [0-9a-f]{64}/, /all 2 rulings re-derived/]],
];

export function fill(code: string): { code: string; unknown: string[] } {
  let out = code;
  for (const [k, v] of Object.entries(PLACEHOLDERS)) out = out.split(k).join(v);
  // `<word…>` outside a comment is an unfilled placeholder (a redirection `< file` has a space).
  const commands = out.split('\n').map((l) => l.replace(/\s#.*$/, ''));
  const unknown = commands.flatMap((l) => [...l.matchAll(/<[A-Za-z][^<>]*>/g)].map((m) => m[0]));
  return { code: out, unknown };
}

export const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
export const all = docs.flatMap(blocks);
export const runnable = all.filter((b) => b.skip === undefined && b.install === undefined);

/** The environment a user's shell has: no npm_* or vitest variables, nothing of Tally's set. */
export function userEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(npm_|VITEST|TALLY_|NODE_OPTIONS$|NODE_ENV$|INIT_CWD$)/i.test(k)) continue;
    env[k] = v;
  }
  return env;
}

/** Processes (pid and command line) whose environment carries `MARK=<mark>`. */
export function marked(mark: string): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/environ`, 'latin1').split('\0').includes(`${MARK}=${mark}`)) continue;
      out.push({ pid: Number(d), cmd: readFileSync(`/proc/${d}/cmdline`, 'latin1').split('\0').join(' ').trim() });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Whether something accepts connections on 127.0.0.1:port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), ok(true)));
    s.once('error', () => ok(false));
  });
}

/** The ports a block names (`--port N`, `127.0.0.1:N`, `localhost:N`). */
export function portsOf(code: string): number[] {
  return [...new Set([...code.matchAll(/(?:--port[ =]|127\.0\.0\.1:|localhost:)([0-9]{2,5})\b/g)].map((m) => Number(m[1])))].filter((p) => p > 0);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs one block in `cwd`; fails on a non-zero exit, a missing key output, or anything left running. */
export async function runBlock(b: Block, cwd: string, env: Record<string, string>, where0: string, timeout = 180_000): Promise<number> {
  const { code, unknown } = fill(b.code);
  expect(unknown, `${b.doc}:${b.line}: unknown placeholders (add them to PLACEHOLDERS)`).toEqual([]);
  // The clone's run and the installed project's run go side by side: a block that names a port holds it alone.
  const release = await lockPorts(portsOf(b.code));
  try {
    return await runLocked(b, code, cwd, env, where0, timeout);
  } finally {
    release();
  }
}

/**
 * Holds `ports` across processes until the returned function is called: one
 * directory per port under the temp dir, made atomically, with the holder's
 * pid inside (a holder that died is taken over). Taken in ascending order, so
 * two blocks naming the same ports cannot wait on each other.
 */
async function lockPorts(ports: readonly number[]): Promise<() => void> {
  const held: string[] = [];
  const release = (): void => {
    for (const d of held.reverse()) rmSync(d, { recursive: true, force: true });
  };
  try {
    for (const port of [...ports].sort((a, b) => a - b)) {
      const dir = join(tmpdir(), `tally-docs-shell-port-${port}.lock`);
      for (let t = 0; ; t++) {
        try {
          mkdirSync(dir);
          writeFileSync(join(dir, 'pid'), String(process.pid));
          held.push(dir);
          break;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        }
        if (!holderAlive(dir)) rmSync(dir, { recursive: true, force: true });
        else if (t > 6_000) throw new Error(`port ${port} stayed locked for 20 minutes (${dir})`);
        else await sleep(200);
      }
    }
  } catch (e) {
    release();
    throw e;
  }
  return release;
}

/** Whether the process that made a port lock still runs (a lock without its pid counts as held for 10 s). */
function holderAlive(dir: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
  } catch {
    try {
      return statSync(dir).mtimeMs > Date.now() - 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function runLocked(b: Block, code: string, cwd: string, env: Record<string, string>, where0: string, timeout: number): Promise<number> {
  const mark = randomBytes(8).toString('hex');
  const t0 = performance.now();
  const r = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', code], { cwd, env: { ...env, [MARK]: mark }, encoding: 'utf8', timeout, killSignal: 'SIGKILL' });
  const ms = performance.now() - t0;
  const where = `${where0}: ${b.doc}:${b.line} (${b.section}) exited ${r.status}${r.signal ? ` (${r.signal}: timed out?)` : ''}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
  // Whatever the block started must be gone (a stopping server gets a few seconds).
  let left = marked(mark);
  for (let i = 0; i < 50 && left.length > 0; i++) {
    await sleep(100);
    left = marked(mark);
  }
  for (const p of left) process.kill(p.pid, 'SIGKILL');
  expect(left.map((p) => p.cmd), `${where}\n--- processes left running`).toEqual([]);
  for (const port of portsOf(b.code)) expect(await listening(port), `${where}\n--- port ${port} still listening`).toBe(false);
  expect(r.status, where).toBe(0);
  for (const [when, outputs] of EXPECT) if (when.test(b.code)) for (const re of outputs) expect(r.stdout, where).toMatch(re);
  return ms;
}

export async function runAll(base: string, env: Record<string, string>, label: string): Promise<void> {
  const times: string[] = [];
  for (const b of runnable) times.push(`${(await runBlock(b, join(base, CWD[b.section] ?? '.'), env, label)).toFixed(0).padStart(6)} ms  ${b.doc}:${b.line} (${b.section})`);
  console.log(`shell-test (${label}):\n${times.join('\n')}`);
}

/** npm's own settings for the installs (not the user's typing): use the cache first, no audit or fund lines. */
export const installEnv = () => ({ ...userEnv(), npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' });

let project: Promise<string> | undefined;
/**
 * An empty project of one's own that installed the packed tarball by running the README's install
 * block. It is kept between runs under a name that changes with the dependencies (a fresh install
 * builds better-sqlite3 and can take minutes); the install block runs every time, with a new tarball.
 */
export function installedProject(): Promise<string> {
  project ??= (async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
    const key = createHash('sha256').update(JSON.stringify([pkg['dependencies'], pkg['peerDependencies'], process.version])).digest('hex').slice(0, 12);
    const dir = join(tmpdir(), `tally-docs-project-${key}`);
    // A project whose install did not finish (the sentinel is written last) starts again from empty.
    const done = join(dir, '.installed');
    if (!existsSync(done)) rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const packs = mkdtempSync(join(tmpdir(), 'tally-docs-pack-'));
    try {
      const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packs], { cwd: root, encoding: 'utf8' });
      const tarball = join(packs, (JSON.parse(out) as { filename: string }[])[0]!.filename);
      await runBlock(all.find((b) => b.install)!, dir, { ...installEnv(), TALLY_DOCS_TARBALL: tarball }, 'install', 1_200_000);
    } finally {
      rmSync(packs, { recursive: true, force: true });
    }
    expect(existsSync(join(dir, 'node_modules', '.bin', 'tally'))).toBe(true);
    writeFileSync(done, `${new Date().toISOString()}\n`);
    return dir;
  })();
  return project;
}

