/**
 * A pool of verification child processes (./child.ts) for the segments split:
 * each proves the segments it is sent on its stdin and answers on its stdout
 * (./pipe-frames.ts). The segments' bytes go through one shared file, opened
 * here, handed to every child as its fd 3 and unlinked at once (in /dev/shm
 * where there is one: memory, not disk; nothing is left behind however the
 * process ends — where an open file cannot be unlinked, it is removed at
 * close instead): written with one `writeSync`, read with one `readSync`, no
 * waiting on a pipe while this thread verifies its own segment. Each request
 * takes a region of the file, free again when its answer comes (so the file
 * is at most the segments in flight). Children start lazily, are kept while the pool lives,
 * never keep this process alive while idle (their pipes are unref'd whenever
 * no segment is in flight), and end when the pool closes or this process
 * dies (their stdin then ends).
 *
 * Processes, not threads, because node:crypto's SHA-256 slows to about half
 * speed per call while two threads of one process hash (see ./child.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TallyError } from '../../protocol/errors.js';
import type { SegmentJob, SegmentResult, SegmentTicket } from './layout.js';
import { FINISH, FrameReader, PROVE, readAnswer, readProven, requestFrame } from './pipe-frames.js';

const CHILD_PATH = fileURLToPath(new URL('./child.js', import.meta.url));

interface Waiting {
  readonly resolve: (r: SegmentResult) => void;
  readonly reject: (e: unknown) => void;
  readonly slot: Slot;
  readonly region: Region;
  ticket?: SegmentTicket;
}

/** A part of the shared file. */
interface Region {
  readonly offset: number;
  readonly capacity: number;
  busy: boolean;
}

interface Slot {
  readonly child: ChildProcess;
  inFlight: number;
  /** The end of the child's stderr, for the error when it fails. */
  stderr: string;
}

/** The process pool's side of {@link VerifyPool}: segments only. @internal */
export interface ProcessPool {
  readonly size: number;
  submit(job: SegmentJob): SegmentTicket;
  /** The children's process ids (started ones), for their peak memory. @internal */
  pids(): number[];
  close(): Promise<void>;
}

/** Starts (lazily) `size` verification children; see the module comment. */
export function createProcessPool(size: number): ProcessPool {
  const slots: Slot[] = [];
  const waiting = new Map<number, Waiting>();
  let busy = 0;
  let nextId = 0;
  let closed = false;
  let broken: unknown;
  let fd: number | undefined;
  const regions: Region[] = [];
  /** A free region of at least `length` bytes (a new one at the end of the file when none is). */
  const region = (length: number): Region => {
    let r = regions.find((x) => !x.busy && x.capacity >= length);
    if (r === undefined) {
      const last = regions[regions.length - 1];
      r = { offset: last === undefined ? 0 : last.offset + last.capacity, capacity: Math.max(length, 1 << 18), busy: false };
      regions.push(r);
    }
    r.busy = true;
    return r;
  };

  const refused = (err: unknown): SegmentTicket => ({ finish: () => Promise.reject(err) });
  const fail = (err: unknown): void => {
    broken ??= err;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  const hold = (on: boolean): void => {
    for (const s of slots) {
      for (const h of [s.child, s.child.stdin, s.child.stdout, s.child.stderr] as const) {
        const handle = h as { ref?: () => void; unref?: () => void } | null;
        if (on) handle?.ref?.();
        else handle?.unref?.();
      }
    }
  };
  const failed = (slot: Slot, what: string, details?: string): TallyError => {
    const said = [details, slot.stderr.trim()].filter((x) => x).join('; ');
    return new TallyError('TALLY_VERIFY_WORKER_FAILED', `A verification child process ${what}.`, said === '' ? {} : { details: said });
  };

  /** Where the shared file still has a name (where an open file cannot be unlinked): removed at close. */
  let named: string | undefined;
  /** Opens the shared file and starts the children; false (and the pool broken, with the reason) when it cannot. */
  const start = (): boolean => {
    const dir = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
    const path = join(dir, `tally-verify-${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      fd = openSync(path, 'wx+', 0o600);
    } catch (e) {
      broken = new TallyError('TALLY_VERIFY_WORKER_FAILED', `The verification pool could not create its shared file in ${dir}.`, { cause: e });
      return false;
    }
    try {
      for (let i = 0; i < size; i++) spawnChild(fd);
    } finally {
      try {
        unlinkSync(path);
      } catch {
        named = path;
      }
    }
    hold(false);
    return true;
  };
  const spawnChild = (shared: number): void => {
    {
      const child = spawn(process.execPath, [CHILD_PATH], { stdio: ['pipe', 'pipe', 'pipe', shared] });
      const slot: Slot = { child, inFlight: 0, stderr: '' };
      const reader = new FrameReader();
      child.stdout!.on('data', (chunk: Buffer) => {
        const frames = reader.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
        if (typeof frames === 'string') return fail(failed(slot, 'sent an unreadable answer', frames));
        for (const frame of frames) {
          const early = readProven(frame);
          if (early !== undefined) {
            const w = waiting.get(early.id);
            if (w === undefined || w.slot !== slot) return fail(failed(slot, 'sent an answer to no request'));
            w.ticket?.onProven?.(early.proven, early.provenEnd);
            continue;
          }
          const a = readAnswer(frame);
          const w = a === undefined ? undefined : waiting.get(a.id);
          if (a === undefined || w === undefined || w.slot !== slot) return fail(failed(slot, 'sent an answer to no request'));
          waiting.delete(a.id);
          w.region.busy = false;
          slot.inFlight--;
          if (--busy === 0) hold(false);
          w.resolve(a);
        }
      });
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (s: string) => (slot.stderr = (slot.stderr + s).slice(-2000)));
      child.on('error', (e) => fail(new TallyError('TALLY_VERIFY_WORKER_FAILED', 'A verification child process could not run.', { cause: e })));
      child.on('exit', (code, signal) => {
        if (!closed) fail(failed(slot, 'exited', `exit code ${code}${signal ? `, signal ${signal}` : ''}`));
      });
      // A pipe error (EPIPE when the child died mid-write) is reported by 'exit'.
      child.stdin!.on('error', () => undefined);
      slots.push(slot);
    }
  };

  return {
    size,
    submit(job) {
      if (closed) return refused(new TallyError('TALLY_VERIFY_POOL_CLOSED', 'The verification pool is closed.'));
      if (broken !== undefined) return refused(broken);
      if (slots.length === 0 && !start()) return refused(broken);
      let slot = slots[0]!;
      for (const s of slots) if (s.inFlight < slot.inFlight) slot = s;
      const r = region(job.length);
      try {
        let at = r.offset;
        for (const piece of job.pieces) {
          let put = 0;
          while (put < piece.length) put += writeSync(fd!, piece, put, piece.length - put, at + put);
          at += piece.length;
        }
      } catch (e) {
        r.busy = false;
        return refused(new TallyError('TALLY_VERIFY_WORKER_FAILED', 'The verification pool could not write a segment to its shared file.', { cause: e }));
      }
      if (busy++ === 0) hold(true);
      slot.inFlight++;
      const id = nextId++;
      let entry: Waiting | undefined;
      const answer = new Promise<SegmentResult>((resolve, reject) => waiting.set(id, (entry = { resolve, reject, slot, region: r })));
      answer.catch(() => undefined); // observed through finish
      slot.child.stdin!.write(requestFrame(id, PROVE, r.offset, job.length));
      const ticket: SegmentTicket = {
        finish(base) {
          if (waiting.has(id)) slot.child.stdin!.write(requestFrame(id, FINISH, base, 0));
          return answer;
        },
      };
      entry!.ticket = ticket;
      return ticket;
    },
    pids: () => slots.map((s) => s.child.pid).filter((p): p is number => p !== undefined),
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      fail(new TallyError('TALLY_VERIFY_POOL_CLOSED', 'The verification pool is closed.'));
      if (fd !== undefined) closeSync(fd);
      if (named !== undefined) rmSync(named, { force: true });
      // Held while they exit, so that awaiting the close keeps this process alive until they have.
      hold(true);
      await Promise.all(
        slots.map(
          (s) =>
            new Promise<void>((done) => {
              if (s.child.exitCode !== null || s.child.signalCode !== null) return done();
              s.child.once('exit', () => done());
              s.child.stdin!.end();
              setTimeout(() => s.child.kill('SIGKILL'), 2_000).unref();
            }),
        ),
      );
    },
  };
}
