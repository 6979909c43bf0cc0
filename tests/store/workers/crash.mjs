// The crash victim: appends to a few days in a loop, forever, and prints one
// line per ACKNOWLEDGED append (written only after the append resolved):
//   ack <day> <index> <entryHash>
// On start it prints `start <day> <sessionId> <size>`: where it resumes.
import { createEngine } from '../../../dist/session/index.js';
import { openStore } from '../../../dist/store/index.js';
import { claimBytes, nonceRuler } from './ruler.mjs';

const cfg = JSON.parse(process.argv[2]);
const store = await openStore(cfg.location);
const engine = createEngine({ store, ruler: nonceRuler });
const say = (line) => process.stdout.write(line + '\n');

async function day(di) {
  const o = await engine.open({ name: `crash-${cfg.run}-${di}`, day: '2026-11-30' });
  if (!o.ok) throw new Error(o.message);
  const sid = o.sessionId;
  let d = await engine.describe(sid);
  say(`start ${di} ${sid} ${d.size}`);
  for (;;) {
    if (d.pending) {
      const p = d.pending;
      const t = await engine.turn({ sessionId: sid, ordinal: p.ordinal, parentHash: p.entryHash, frameRoot: p.frameRoot, body: { kind: 'authored', bytes: claimBytes(`crash-${di}`, `n${p.ordinal}`) } });
      if (!t.ok) throw new Error(t.message);
      if (!t.duplicate) say(`ack ${di} ${t.index} ${t.entryHash}`);
    } else {
      const ord = d.nextOrdinal;
      const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1000 + (ord + 1) * 1000, data: { ord, pad: 'x'.repeat((ord + 1) % 50) } });
      if (!f.ok) throw new Error(f.message);
      if (!f.duplicate) say(`ack ${di} ${f.index} ${f.entryHash}`);
    }
    d = await engine.describe(sid);
  }
}

await Promise.all(Array.from({ length: cfg.days }, (_, di) => day(di)));
