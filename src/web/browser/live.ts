/**
 * The page side of following a live day on the engine that served it: each
 * poll asks only for the entries after the ones it has
 * (`GET /sessions/<id>/bundle?from=N`, at most BUNDLE_RANGE_MAX a request),
 * hands their bytes to the worker (which continues its one streaming
 * verification), then a signed checkpoint at exactly that size when the
 * engine signs, and with a log key or identity pinned the day's log binding
 * of that checkpoint (`GET /sessions/<id>/log-proof?size=N`).
 * Same origin only; the auditor token goes in the Authorization header.
 */
import { BUNDLE_RANGE_MAX } from '../../protocol/index.js';
import { httpWords } from './banner.js';
import type { LogInputs } from './log-binding.js';
import type { ToWorker } from './messages.js';

const POLL_MS = 1500;

/** A running follow. */
export interface Following {
  stop(): void;
}

/** Starts polling `session` for new entries into worker `w`; `status` reports in words. */
export function startFollowing(o: { session: string; token: string; vkey?: string; log?: Pick<LogInputs, 'logKey' | 'logIdentity'> }, w: Worker, status: (text: string) => void, fail: (what: string, words: string) => void): Following {
  const auth = { authorization: `Bearer ${o.token}` };
  let entries = 0;
  let bytes = 0;
  let requests = 0;
  let stopped = false;
  let timer = 0;
  const poll = async (): Promise<void> => {
    const pieces: Uint8Array[] = [];
    let failed = false;
    try {
      for (;;) {
        const res = await fetch(`/sessions/${o.session}/bundle?from=${entries}`, { headers: auth, cache: 'no-store' });
        requests++;
        if (!res.ok) {
          // Said in the banner; the pieces this poll already fetched still go to the worker (the next poll starts after them).
          failed = true;
          fail(`GET bundle?from=${entries}`, httpWords(res.status, await res.text()));
          break;
        }
        const got = new Uint8Array(await res.arrayBuffer());
        if (stopped || got.length === 0) break;
        let lines = 0;
        for (const b of got) if (b === 0x0a) lines++;
        entries += lines;
        bytes += got.length;
        pieces.push(got);
        if (lines < BUNDLE_RANGE_MAX) break;
      }
      let checkpoint: string | undefined;
      if (o.vkey !== undefined && !stopped && entries > 0 && pieces.length > 0) {
        // Signed at exactly the entries the worker will have: turns landing meanwhile cannot put the checkpoint beyond them.
        const c = await fetch(`/sessions/${o.session}/checkpoint?size=${entries}`, { headers: auth, cache: 'no-store' });
        if (c.ok) checkpoint = await c.text();
        else if (c.status !== 404) {
          failed = true;
          fail(`GET checkpoint?size=${entries}`, httpWords(c.status, await c.text()));
        }
      }
      let log: NonNullable<Extract<ToWorker, { type: 'append' }>['log']> | undefined;
      const pinnedLog = o.log !== undefined && (o.log.logKey !== undefined || o.log.logIdentity !== undefined) ? o.log : undefined;
      if (pinnedLog !== undefined && checkpoint !== undefined && !stopped) {
        // The binding of exactly that checkpoint (WIRE.md §5); none served (404) is for the rule to refuse (TALLY_LOG_BINDING_MISSING).
        const l = await fetch(`/sessions/${o.session}/log-proof?size=${entries}`, { headers: auth, cache: 'no-store' });
        if (l.ok) log = { ...pinnedLog, logProof: await l.text() };
        else if (l.status === 404) log = pinnedLog;
        else {
          // Not fetched: this poll's checkpoint is not used (no pin without its binding); the banner says why.
          failed = true;
          checkpoint = undefined;
          fail(`GET log-proof?size=${entries}`, httpWords(l.status, await l.text()));
        }
      }
      if (pieces.length > 0 && !stopped) {
        const msg: ToWorker = { type: 'append', pieces, ...(checkpoint === undefined || o.vkey === undefined ? {} : { checkpoint, vkey: o.vkey, ...(log === undefined ? {} : { log }) }) };
        w.postMessage(msg, pieces.map((p) => p.buffer));
      }
      if (!stopped && !failed) status(`following: ${entries} entries, ${bytes} bytes fetched in ${requests} requests (only new entries each time)`);
    } catch (e) {
      fail('following', `could not reach the engine (${e instanceof Error ? e.message : String(e)})`);
    } finally {
      if (!stopped) timer = window.setTimeout(() => void poll(), POLL_MS);
    }
  };
  void poll();
  return {
    stop() {
      stopped = true;
      window.clearTimeout(timer);
    },
  };
}
