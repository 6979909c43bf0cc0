// One engine process of the judge-race test: opens the shared PostgreSQL
// schema, a referee engine whose judge is the test's real HTTP judge, and its
// OWN session (same mandate, same agents). On each stdin line `<round>` it
// delivers the round's frame and answers it with the round's intent, then
// prints the turn's verdict source (or intent code). Stdout: JSON lines.
import { createInterface } from 'node:readline';
import { createOpenAiJudge, createRefereeEngine } from '../../../dist/referee/index.js';
import { PostgresStore } from '../../../dist/store/index.js';

const cfg = JSON.parse(process.argv[2]);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const store = await PostgresStore.open({ url: cfg.url, schema: cfg.schema, poolSize: 2 });
const judge = createOpenAiJudge({ baseUrl: cfg.judgeUrl, model: 'race-model', signature: { key: cfg.judgeKey }, timeoutMs: 30_000 });
const { engine } = createRefereeEngine({ store, judge });
const opened = await engine.open(cfg.spec);
if (!opened.ok) throw new Error(opened.message);
const sid = opened.sessionId;
out({ ready: true, sid });
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  if (line === 'exit') break;
  const round = cfg.rounds[Number(line)];
  const f = await engine.frame({ sessionId: sid, ordinal: round.ordinal, time: round.time });
  if (!f.ok) throw new Error(f.message);
  const t = await engine.turn({ sessionId: sid, ordinal: round.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: new TextEncoder().encode(round.text) } });
  if (!t.ok) throw new Error(t.message);
  const r = t.ruling ?? {};
  out({ round: Number(line), sid, index: t.index, source: r.verdict?.source, intent: r.intent?.admitted ? 'admitted' : r.intent?.code, first: r.intent?.first });
}
await store.close();
process.exit(0);
