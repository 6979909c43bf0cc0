import type { CommandIO } from './command.js';

/** A progress line on a terminal (stderr), silent when stderr is not a TTY. */
export interface Progress {
  tick(done: number, total?: number): void;
  done(): void;
}

/**
 * Progress on stderr, redrawn at most ~10 times a second, only when stderr is
 * a terminal (so piped output and logs stay clean).
 */
export function progressReporter(io: CommandIO, label: string): Progress {
  const tty = io.stderr.isTTY === true && io.env['TALLY_NO_PROGRESS'] === undefined;
  let last = 0;
  let shown = false;
  const started = performance.now();
  return {
    tick(done, total) {
      if (!tty) return;
      const now = performance.now();
      if (now - last < 100) return;
      last = now;
      shown = true;
      const rate = Math.round(done / Math.max(0.001, (now - started) / 1000));
      if (total !== undefined && total > 0) {
        const width = 30;
        const filled = Math.min(width, Math.round((done / total) * width));
        io.stderr.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} (${rate}/s)   `);
      } else {
        io.stderr.write(`\r${label} ${done} (${rate}/s)   `);
      }
    },
    done() {
      if (tty && shown) io.stderr.write('\r\x1b[K');
    },
  };
}
