/**
 * A client that drives a day over the wire through faults: every call is
 * retried with the SAME arguments until the server answers 200; every 503
 * must be the typed transient `unavailable` (anything else fails the test).
 * Every 200 is an acknowledgement and goes into an fsync'd log first, then
 * the day goes on. Afterwards {@link checkStore} re-reads the file.
 */
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { encodeBundle, verifyBundle } from '../../../src/codec/index.js';
import { openStore } from '../../../src/store/index.js';
import { TOKENS, get, rpc } from '../../server/helpers.js';

const RT = TOKENS.runtime;

/** What a drive saw. */
export interface DriveStats {
  acks: number;
  duplicates: number;
  unavailable: number;
}

/** An append-only acknowledgement log, fsync'd after every line. */
export class AckLog {
  private readonly fd: number;
  constructor(readonly path: string) {
    this.fd = openSync(path, 'a');
  }
  add(kind: string, ordinal: number, index: number, hash: string): void {
    writeSync(this.fd, `${kind} ${ordinal} ${index} ${hash}\n`);
    fsyncSync(this.fd);
  }
  close(): void {
    closeSync(this.fd);
  }
  /** index → entry hash, read back from disk. */
  static read(path: string): Map<number, string> {
    const m = new Map<number, string>();
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (line === '') continue;
      const [, , index, hash] = line.split(' ') as [string, string, string, string];
      const prev = m.get(Number(index));
      if (prev !== undefined && prev !== hash) throw new Error(`index ${index} acknowledged with two hashes: ${prev} and ${hash}`);
      m.set(Number(index), hash);
    }
    return m;
  }
}

/** Calls until 200, checking every failure is 503 `unavailable` (retryable). */
export async function untilOk(url: string, method: string, params: unknown, stats: DriveStats, maxAttempts = 4000): Promise<Record<string, unknown>> {
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    let r;
    try {
      r = await rpc(url, RT, method, params);
    } catch (e) {
      throw new Error(`${method}: the server did not answer (${String(e)})`);
    }
    if (r.status === 200 && r.body.result !== undefined) return r.body.result;
    expect({ status: r.status, type: r.body.error?.data.type, retryable: r.body.error?.data.retryable }, JSON.stringify(r.body)).toEqual({ status: 503, type: 'unavailable', retryable: true });
    stats.unavailable++;
    await sleep(attempt < 20 ? 2 : 20);
  }
  throw new Error(`${method}: still unavailable after ${maxAttempts} attempts`);
}

/**
 * How soon after a fault ends the server must be ready again. A SQLite store
 * whose recovery failed tries again at most once per `recoveryIntervalMs`
 * (default 1 s) and answers the last attempt in between, so recovery is seen
 * within about one interval; the rest is slack for a loaded machine.
 */
export const RECOVERY_WITHIN_MS = 5_000;

/** Polls `GET /readyz` until it answers 200; fails unless that happens within `withinMs`. Returns the ms it took. */
export async function untilReady(url: string, withinMs = RECOVERY_WITHIN_MS): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const r = await get(url, undefined, '/readyz');
    const took = performance.now() - t0;
    if (r.status === 200) return took;
    expect(r.status, r.text).toBe(503);
    if (took > withinMs) throw new Error(`not ready ${Math.round(took)} ms after the fault ended: ${r.text}`);
    await sleep(20);
  }
}

/** Opens (idempotently, through faults) the session named `name`. */
export async function openDay(url: string, name: string, stats: DriveStats): Promise<string> {
  const r = await untilOk(url, 'session/open', { spec: { name, day: '2026-11-30', run: name } }, stats);
  return r['sessionId'] as string;
}

/**
 * One day driven step by step (frame, then its turn): {@link Day.step} makes
 * ONE call for the next slot — the same arguments until it is acknowledged —
 * and says whether it was acknowledged or answered 503 `unavailable`.
 */
export class Day {
  private frame: Record<string, unknown> | undefined;
  constructor(
    readonly url: string,
    readonly sid: string,
    private readonly log: AckLog,
    private readonly stats: DriveStats,
    public ordinal = -1,
  ) {}

  /** Pairs (frame + turn) completed so far. */
  get steps(): number {
    return this.ordinal + 1;
  }

  async step(): Promise<'ack' | 'unavailable'> {
    const params =
      this.frame === undefined
        ? { method: 'session/frame', params: { sessionId: this.sid, ordinal: this.ordinal, time: 1_000 + (this.ordinal + 2) * 60_000, data: { ordinal: this.ordinal, pad: 'p'.repeat((this.ordinal + 1) % 40) } } }
        : { method: 'session/turn', params: { sessionId: this.sid, ordinal: this.ordinal, parentHash: this.frame['entryHash'], frameRoot: this.frame['frameRoot'], body: { kind: 'authored', text: `step ${this.ordinal}` } } };
    const r = await rpc(this.url, RT, params.method, params.params);
    if (!(r.status === 200 && r.body.result !== undefined)) {
      expect({ status: r.status, type: r.body.error?.data.type, retryable: r.body.error?.data.retryable }, JSON.stringify(r.body)).toEqual({ status: 503, type: 'unavailable', retryable: true });
      this.stats.unavailable++;
      return 'unavailable';
    }
    const res = r.body.result;
    this.log.add(this.frame === undefined ? 'frame' : 'turn', this.ordinal, res['index'] as number, res['entryHash'] as string);
    this.stats.acks++;
    if (res['duplicate'] === true) this.stats.duplicates++;
    if (this.frame === undefined) this.frame = res;
    else {
      this.frame = undefined;
      this.ordinal++;
    }
    return 'ack';
  }

  /** Steps (retrying every 503 after a short pause) until `steps` pairs are done. */
  async driveTo(steps: number, maxAttempts = 4000): Promise<void> {
    let failures = 0;
    while (this.steps < steps) {
      if ((await this.step()) === 'ack') failures = 0;
      else if (++failures >= maxAttempts) throw new Error(`still unavailable after ${maxAttempts} attempts`);
      else await sleep(failures < 20 ? 2 : 20);
    }
  }
}

/** Drives frame+turn pairs for ordinals `from .. to-1` (ordinal -1 is the ready frame). */
export async function driveSteps(url: string, sid: string, from: number, to: number, log: AckLog, stats: DriveStats): Promise<void> {
  await new Day(url, sid, log, stats, from).driveTo(to + 1);
}

/**
 * Re-reads the store from disk: the chain verifies, no entry is torn or
 * missing, every acknowledged index holds the acknowledged hash, and the day
 * has each ordinal's frame and turn exactly once (`steps` pairs).
 */
export async function checkStore(location: string, sid: string, ackPath: string, steps: number): Promise<{ size: number; acked: number }> {
  const acked = AckLog.read(ackPath);
  const store = await openStore(location);
  try {
    const head = (await store.loadHead(sid))!;
    const rows = await store.readRange(sid, 0, head.size + 64);
    expect(rows.map((r) => r.index)).toEqual([...Array(head.size).keys()]);
    const v = await verifyBundle([encodeBundle(rows.map((r) => r.bytes))], { requireSealed: false });
    expect(v.ok, JSON.stringify(v)).toBe(true);
    for (const [index, hash] of acked) expect(rows[index]?.hash, `acknowledged entry ${index}`).toBe(hash);
    expect(head.size).toBe(1 + 2 * steps);
    expect(rows.slice(1).map((r) => `${r.kind}:${r.ordinal}`)).toEqual([...Array(steps).keys()].flatMap((i) => [`frame:${i - 1}`, `turn:${i - 1}`]));
    return { size: head.size, acked: acked.size };
  } finally {
    await store.close();
  }
}

/** No stack trace in a server's log (a typed error is logged with an empty stack; a crash prints `    at …`). */
export function expectNoStackTrace(stderr: string): void {
  expect(stderr).not.toMatch(/\n\s+at [^\n]+:\d+:\d+\)?/);
  expect(stderr).not.toMatch(/"stack":"[^"]/);
}
