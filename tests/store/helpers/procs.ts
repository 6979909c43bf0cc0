/**
 * Child OS processes for the multi-process tests. Workers are plain `.mjs`
 * files importing the BUILD OUTPUT (`dist/`), so dist must be current: the
 * vitest global setup (tests/setup/fresh-dist.ts) rebuilds it when any source
 * is newer, and {@link requireFreshDist} checks again per file.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Throws (failing the test with instructions) when dist/ is missing or older than the sources the workers run. */
export function requireFreshDist(): void {
  for (const area of ['protocol', 'codec', 'session', 'store']) {
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (name.endsWith('.ts')) {
          const out = join(ROOT, 'dist', p.slice(join(ROOT, 'src').length)).replace(/\.ts$/, '.js');
          if (!existsSync(out) || statSync(out).mtimeMs < statSync(p).mtimeMs) {
            throw new Error(`dist/ is missing or older than ${p.slice(ROOT.length)}: the worker processes run dist/. Run \`npx tsc -p tsconfig.build.json\` (npm test does it).`);
          }
        }
      }
    };
    walk(join(ROOT, 'src', area));
  }
}

/** A running worker: its stdout lines as they come, and its exit. */
export interface Worker {
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: string[];
  /** Resolves when `pred` holds for the lines so far (checked on every new line). */
  until(pred: (lines: readonly string[]) => boolean): Promise<void>;
  /** Exit code or signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Starts `node tests/store/workers/<script> <json config>`. */
export function startWorker(script: string, config: unknown): Worker {
  const child = spawn(process.execPath, [join(ROOT, 'tests', 'store', 'workers', script), JSON.stringify(config)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: { pred: (l: readonly string[]) => boolean; resolve: () => void; reject: (e: Error) => void }[] = [];
  let stderr = '';
  let carry = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stderr += d));
  child.stdout.on('data', (d: string) => {
    const parts = (carry + d).split('\n');
    carry = parts.pop()!;
    lines.push(...parts);
    for (const w of waiters.splice(0)) {
      if (w.pred(lines)) w.resolve();
      else waiters.push(w);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.on('close', (code, signal) => {
      for (const w of waiters.splice(0)) w.reject(new Error(`worker ${script} exited (${code ?? signal}) before the awaited output\n${stderr}`));
      resolve({ code, signal, stderr });
    });
  });
  return {
    child,
    lines,
    exited,
    until: (pred) =>
      pred(lines) ? Promise.resolve() : new Promise<void>((resolve, reject) => waiters.push({ pred, resolve, reject })),
  };
}

/** A small seeded PRNG (mulberry32) for kill timings. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
