// One engine process of the engine-log process tests (built code, dist/).
// Opens the shared store with the engine key given (same key in every
// process), waits for "go" on stdin, then:
// - mode "race": drives every session named in cfg.sessions (shared with the
//   other processes: the same specs, frames and turns, so they race on one
//   history), signs checkpoints at cfg.sizes and seals each;
// - mode "loop": opens, drives, checkpoints and seals fresh sessions
//   `${cfg.prefix}-0`, -1, … until killed.
// Prints one JSON line per signature the notary returned ({origin, size, root}).
import { createInterface } from 'node:readline';
import { createEngine } from '../../../dist/engine.js';
import { createNotary, parsePrivateKey } from '../../../dist/receipt/index.js';
import { openStore } from '../../../dist/store/index.js';

const cfg = JSON.parse(process.argv[2]);
const key = parsePrivateKey(cfg.key);
const store = await openStore(cfg.location);
const engine = createEngine({ store });
const notary = createNotary({ key });
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const T0 = Date.UTC(2026, 0, 5, 9);

async function drive(name, turns) {
  const o = await engine.open({ name });
  if (!o.ok) throw new Error(o.message);
  for (let i = 0; i < turns; i++) {
    const ordinal = i - 1;
    const f = await engine.frame({ sessionId: o.sessionId, ordinal, time: T0 + i * 1000 });
    if (!f.ok) throw new Error(`frame ${ordinal}: ${f.message}`);
    const t = await engine.turn({ sessionId: o.sessionId, ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
    if (!t.ok) throw new Error(`turn ${ordinal}: ${t.message}`);
  }
  return o.sessionId;
}

async function checkpoint(sid, size) {
  const c = await notary.issueCheckpoint(engine, sid, size);
  if (!c.ok) throw new Error(c.message);
  out({ origin: c.origin, size: c.size, root: c.root });
}

async function seal(sid) {
  const s = await notary.sealWithReceipt(engine, sid);
  if (!s.ok) throw new Error(s.message);
  out({ origin: s.checkpoint.origin, size: s.checkpoint.size, root: s.checkpoint.root });
}

out({ ready: true });
const rl = createInterface({ input: process.stdin });
await new Promise((resolve) => rl.once('line', resolve));
if (cfg.mode === 'race') {
  for (const name of cfg.sessions) {
    const sid = await drive(name, cfg.turns);
    for (const size of cfg.sizes) await checkpoint(sid, size);
    await seal(sid);
  }
} else {
  for (let i = 0; ; i++) {
    const sid = await drive(`${cfg.prefix}-${i}`, 2);
    await checkpoint(sid, 3);
    await seal(sid);
  }
}
await store.close();
out({ done: true });
rl.close();
