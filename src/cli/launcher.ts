/**
 * A server started by `npx tally … serve &` runs under npm's wrapper:
 * `npm exec` → `sh -c tally …` → node. `kill $!` (and `kill %1` in a script)
 * reaches only npm, which does not pass the signal on, so the server would
 * live on, orphaned, holding its port. {@link watchLauncher} notices that the
 * npm process that started us is gone and asks the server to stop as if it
 * had been sent SIGTERM.
 *
 * Only when npm started us (`npm_command` is set): a server started directly
 * (`tally serve &`, systemd, `nohup`) keeps running when its parent exits, as
 * a daemon should. Linux only (it reads `/proc`); elsewhere it watches nothing.
 */
import { readFileSync } from 'node:fs';

/** The parent pid and argv of `pid`, from /proc; `gone` when there is no such process, `unreadable` when /proc could not be read (no verdict). */
function proc(pid: number): { readonly ppid: number; readonly argv: readonly string[] } | 'gone' | 'unreadable' {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').filter((a) => a !== '');
    return Number.isSafeInteger(ppid) ? { ppid, argv } : 'unreadable';
  } catch (e) {
    // Only a missing entry means the process is gone: an open that fails for another reason (EMFILE,
    // an injected EROFS, ENOMEM) says nothing about it, and must not stop the server.
    const code = (e as { code?: unknown }).code;
    return code === 'ENOENT' || code === 'ESRCH' ? 'gone' : 'unreadable';
  }
}

/**
 * Whether argv is npm's or npx's command line: npm sets its process title to
 * `npm exec …` (one string), else `node …/npm-cli.js exec …` or `npx …`.
 */
function isNpm(argv: readonly string[]): boolean {
  return argv.slice(0, 2).some((a) => /(^|\/)(npm|npx)(-cli\.js)?$/.test(a.split(' ')[0]!));
}

/**
 * The chain of ancestors from our parent up to the npm process that started
 * us (at most four steps), or undefined when npm did not start us or the
 * chain cannot be read.
 */
export function launcherChain(env: NodeJS.ProcessEnv, self: number = process.pid): number[] | undefined {
  if (env['npm_command'] === undefined || env['npm_command'] === '' || process.platform !== 'linux') return undefined;
  const chain: number[] = [];
  let pid = self;
  for (let step = 0; step < 4; step++) {
    const p = proc(pid);
    if (typeof p === 'string' || p.ppid <= 1) return undefined;
    chain.push(p.ppid);
    const parent = proc(p.ppid);
    if (typeof parent === 'string') return undefined;
    if (isNpm(parent.argv)) return chain;
    pid = p.ppid;
  }
  return undefined;
}

/**
 * Calls `onGone` once when the npm process that started us exits (checked
 * every `intervalMs`: each link of the chain from us up to it must still be
 * parent and child, so a reused pid is not mistaken for it). Returns a
 * function that stops watching. The timer never keeps the process alive.
 */
export function watchLauncher(env: NodeJS.ProcessEnv, onGone: () => void, intervalMs = 250): () => void {
  const chain = launcherChain(env);
  if (chain === undefined) return () => {};
  const links = [process.pid, ...chain];
  const timer = setInterval(() => {
    for (let i = 0; i + 1 < links.length; i++) {
      const p = proc(links[i]!);
      // Unreadable this time: no verdict; the next tick looks again.
      if (p === 'unreadable') return;
      if (p === 'gone' || p.ppid !== links[i + 1]) {
        clearInterval(timer);
        onGone();
        return;
      }
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
