// One engine process of the two-signer race (issue #34): opens the shared
// store with the shared engine key, waits for "go" on stdin, then either
// appends frames and turns to the session and signs a checkpoint at the head
// after each (role "writer", as a `tally serve` that records and serves
// receipts), or signs checkpoints at the head and at a prefix as fast as it
// can (role "signer", as a second server or `tally checkpoint`). Prints one
// JSON line per signature, then "done".
import { createInterface } from 'node:readline';
import { createEngine } from '../../../dist/engine.js';
import { createNotary, parsePrivateKey } from '../../../dist/receipt/index.js';
import { openStore } from '../../../dist/store/index.js';

const cfg = JSON.parse(process.argv[2]);
const store = await openStore(cfg.location);
const engine = createEngine({ store });
const notary = createNotary({ key: parsePrivateKey(cfg.key) });
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const enc = new TextEncoder();

async function sign(size) {
  try {
    const r = await notary.issueCheckpoint(engine, cfg.sid, size);
    out(r.ok ? { ok: true, size: r.size } : { ok: false, code: r.code });
  } catch (e) {
    out({ ok: false, code: e?.code ?? String(e) });
  }
}

out({ ready: true });
const rl = createInterface({ input: process.stdin });
await new Promise((resolve) => rl.once('line', resolve));
if (cfg.role === 'writer') {
  for (let i = 0, ord = cfg.ordinal; i < cfg.steps; i++, ord++) {
    const f = await engine.frame({ sessionId: cfg.sid, ordinal: ord, time: 1_000 + (ord + 1) * 60_000 });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: cfg.sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`turn ${ord}`) } });
    if (!t.ok) throw new Error(t.message);
    await sign(undefined);
  }
} else {
  // Prefix sizes 1 to 3 only: the session holds 3 entries before either process starts, so each is
  // a size the store holds (a larger one could be asked before the writer reaches it, and be rightly
  // refused size-out-of-range).
  for (let i = 0; i < cfg.signs; i++) await sign(i % 3 === 2 ? 1 + ((i % 7) % 3) : undefined);
}
await store.close();
out({ done: true });
rl.close();
