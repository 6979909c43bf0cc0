// One engine process of the replay storm. Opens the shared store and then
// follows the parent's lockstep: on "slot <ord>" it delivers frame <ord> and
// answers it in every session at once — the same frames as its siblings,
// turns that are identical, conflicting, or that claim a nonce shared by all
// sessions — and reports "slotDone"; on "finalize" it seals every session.
// Prints one JSON line per call result.
import { createInterface } from 'node:readline';
import { createEngine } from '../../../dist/session/index.js';
import { openStore } from '../../../dist/store/index.js';
import { claimBytes, nonceRuler } from './ruler.mjs';

const cfg = JSON.parse(process.argv[2]);
const w = cfg.worker;
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const store = await openStore(cfg.location, cfg.postgres ? { postgres: cfg.postgres } : {});
const engine = createEngine({ store, ruler: nonceRuler });

const rl = createInterface({ input: process.stdin });
const commands = [];
const waiting = [];
rl.on('line', (l) => (waiting.length > 0 ? waiting.shift()(l) : commands.push(l)));
const next = () => (commands.length > 0 ? Promise.resolve(commands.shift()) : new Promise((resolve) => waiting.push(resolve)));
// A little jitter so that no process is always first to the lock.
const jitter = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 2));

/** What this worker answers at (session, ordinal). */
function claimFor(si, ord) {
  switch ((ord + 1) % 3) {
    case 0: return ['agent-same', `s${si}-o${ord}`]; // every worker sends the same turn
    case 1: return ['agent-own', `s${si}-o${ord}-w${w}`]; // every worker its own turn
    default: return ['agent-shared', `o${ord}`]; // the same nonce in every session
  }
}

out({ ready: true });
await next(); // "open"
const sids = await Promise.all(
  Array.from({ length: cfg.sessions }, async (_, si) => {
    await jitter();
    const o = await engine.open({ name: `storm-${cfg.run}-${si}`, day: '2026-11-30' });
    out({ verb: 'open', si, ok: o.ok, created: o.created });
    return o.sessionId;
  }),
);
out({ stepDone: 'open' });

async function slot(si, ord) {
  const sid = sids[si];
  await jitter();
  const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1000 + (ord + 1) * 1000, data: { ord } });
  out({ verb: 'frame', w, si, ord, ok: f.ok, duplicate: f.duplicate, diagnostic: f.diagnostic });
  if (!f.ok) return;
  const [agent, nonce] = claimFor(si, ord);
  await jitter();
  const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: claimBytes(agent, nonce) } });
  out({ verb: 'turn', w, si, ord, ok: t.ok, duplicate: t.duplicate, diagnostic: t.diagnostic, ruling: t.ruling, index: t.index, nonce: `${agent}/${nonce}` });
}

for (let ord = -1; ord < cfg.wakes; ord++) {
  await next(); // "slot <ord>"
  await Promise.all(sids.map((_, si) => slot(si, ord)));
  out({ stepDone: `slot ${ord}` });
}

await next(); // "finalize"
await Promise.all(
  sids.map(async (sid, si) => {
    await jitter();
    const fin = await engine.finalize(sid, { storm: cfg.run });
    out({ verb: 'finalize', si, ok: fin.ok, duplicate: fin.duplicate, diagnostic: fin.diagnostic, sid });
  }),
);
out({ stepDone: 'finalize' });
// What group commit did in this process (PostgreSQL), for the parent to check batches formed.
if (store.groupCommitStats) out({ groupCommit: store.groupCommitStats });
rl.close();
await store.close();
