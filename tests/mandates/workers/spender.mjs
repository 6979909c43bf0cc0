// One spender process of the AP2 budget race: opens the shared store (a
// PostgreSQL schema), opens its own session under the open mandate, waits for
// "go" on stdin, then answers one frame with each prepared purchase (a closed
// payment mandate turn body) as fast as it can. Prints one JSON line per ruling.
import { createInterface } from 'node:readline';
import { createEngine } from '../../../dist/engine.js';
import { openStore } from '../../../dist/store/index.js';
import { createAp2Ruler } from '../../../dist/mandates/index.js';

const cfg = JSON.parse(process.argv[2]);
const store = await openStore(cfg.location);
const engine = createEngine({ store, ruler: createAp2Ruler({ store }) });
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const o = await engine.open({ name: cfg.name, ap2: cfg.ap2 });
if (!o.ok) throw new Error(o.message);
out({ ready: true });
const rl = createInterface({ input: process.stdin });
await new Promise((resolve) => rl.once('line', resolve));
let ordinal = -1;
for (const body of cfg.bodies) {
  const f = await engine.frame({ sessionId: o.sessionId, ordinal, time: cfg.time, ...(ordinal === -1 && cfg.data ? { data: cfg.data } : {}) });
  if (!f.ok) throw new Error(f.message);
  ordinal++;
  const t = await engine.turn({ sessionId: o.sessionId, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: new TextEncoder().encode(body) } });
  if (!t.ok) throw new Error(t.message);
  out({ session: o.sessionId, index: t.index, ...t.ruling.ap2 });
}
await store.close();
out({ done: true });
rl.close();
