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
      io.stderr.write(`\r${progressLine(label, done, total, rate, columns(io))}\x1b[K`);
    },
    done() {
      if (tty && shown) io.stderr.write('\r\x1b[K');
    },
  };
}

/** The terminal's width (80 when unknown). */
function columns(io: CommandIO): number {
  const c = (io.stderr as { columns?: unknown }).columns;
  return typeof c === 'number' && c > 0 ? c : 80;
}

/** Seconds as m:ss (h:mm:ss from an hour on). */
export function etaText(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  const [h, m, r] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const ss = String(r).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/**
 * One progress line that fits in `width - 1` columns (so it never wraps): the
 * bar shrinks first (down to nothing), then the line is cut. With a total and
 * a rate, it ends with the time left at that rate ("ETA 1:05").
 */
export function progressLine(label: string, done: number, total: number | undefined, rate: number, width: number): string {
  const room = Math.max(1, width - 1);
  if (total === undefined || total <= 0) return `${label} ${done} (${rate}/s)`.slice(0, room);
  const eta = rate > 0 && done < total ? `, ETA ${etaText((total - done) / rate)}` : '';
  const tail = ` ${done}/${total} (${rate}/s${eta})`;
  const barWidth = Math.min(30, room - label.length - tail.length - 3);
  if (barWidth < 5) return `${label}${tail}`.slice(0, room);
  const filled = Math.min(barWidth, Math.round((done / total) * barWidth));
  return `${label} [${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}]${tail}`;
}
