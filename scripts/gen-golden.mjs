#!/usr/bin/env node
// Regenerates the committed golden transcript (tests/golden/): a small, fully
// deterministic day recorded by the engine. Run after `npm run build`:
//   node scripts/gen-golden.mjs
// A change to any byte rule changes these files; tests/golden/golden.test.ts
// then fails until the change is deliberate and the files are regenerated.
import { writeFileSync, mkdirSync } from 'node:fs';
import { createEngine } from '../dist/index.js';

const enc = new TextEncoder();
// Optional argument: another output directory (the golden test regenerates into a temp dir).
const out = process.argv[2] ? new URL(`file://${process.argv[2].replace(/\/?$/, '/')}`) : new URL('../tests/golden/', import.meta.url);
mkdirSync(out, { recursive: true });

const engine = createEngine();
const spec = { name: 'golden-day', day: '2026-11-30', desk: 'example', params: { wakes: 3, unicode: 'café ✓ \u{1F600}' } };
const open = await engine.open(spec);
const sid = open.sessionId;
const frames = [
  { ordinal: -1, time: 1796083200000, data: { kind: 'open', prices: { 'BTC-PERP': '97000.5' } } },
  { ordinal: 0, time: 1796083260000, data: { prices: { 'BTC-PERP': '97010' }, fills: [] } },
  { ordinal: 1, time: 1796083320000 },
  { ordinal: 2, time: 1796083380000, data: { prices: { 'BTC-PERP': '96990.25' } } },
];
const bodies = [
  { kind: 'authored', bytes: enc.encode('{"plan":"watch"}') },
  { kind: 'authored', bytes: enc.encode('open long 0.1 BTC-PERP') },
  { kind: 'stand-down', failureClass: 'timeout' },
  { kind: 'authored', bytes: new Uint8Array([0x00, 0xff, 0x0a, 0x22, 0x5c]) },
];
for (let i = 0; i < frames.length; i++) {
  const f = await engine.frame({ sessionId: sid, ...frames[i] });
  const t = await engine.turn({ sessionId: sid, ordinal: frames[i].ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: bodies[i] });
  if (!t.ok) throw new Error(t.message);
}
const fin = await engine.finalize(sid, { summary: 'golden', turns: 4 });
const lines = [];
for await (const l of engine.exportEntries(sid)) lines.push(Buffer.from(l).toString('utf8'));
writeFileSync(new URL('transcript.jsonl', out), lines.map((l) => l + '\n').join(''));
const events = await engine.events(sid, -1, 1000);
writeFileSync(
  new URL('golden.json', out),
  JSON.stringify({ spec, sessionId: sid, entryHashes: events.events.map((e) => e.hash), receipt: fin.receipt }, null, 2) + '\n',
);
console.log(`wrote ${lines.length} entries, receipt root ${fin.receipt.receiptRoot}`);
