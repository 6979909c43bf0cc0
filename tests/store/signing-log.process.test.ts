/**
 * Two OS processes sign from one database (a SQLite file; a PostgreSQL
 * schema): each records checkpoints of its own history of one origin — the
 * two agree on the first `fork` entries only — at interleaved sizes through
 * `SigningLog`. The store's compare-and-record must leave one root per size,
 * all from one history beyond the fork, and exactly the records the
 * processes were told succeeded. (An integration test of the cross-process
 * path — locks, busy waits, migrations by two openers; OS timing decides the
 * interleaving. The interleavings themselves are forced, deterministically,
 * by the fc.scheduler races in tests/receipt/signing-log.test.ts.)
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { entryHash, toHex } from '../../src/protocol/index.js';
import { PackedMerkleTree, formatPrivateKey, generateEngineKey, receiptHasher } from '../../src/receipt/index.js';
import { createEngine } from '../../src/engine.js';
import { openStore } from '../../src/store/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgReady, warnIfSkipped } from './helpers/pg.js';
import { removeTempDirs, tempDir } from './helpers/tmp.js';

warnIfSkipped('signing-log.process.test.ts');
afterAll(removeTempDirs);

const WORKER = resolve(import.meta.dirname, 'workers/signer.mjs');
const NOTARY_WORKER = resolve(import.meta.dirname, 'workers/notary.mjs');
const N = 40;
const FORK = 8;

interface Answer {
  readonly size: number;
  readonly ok: boolean;
  readonly duplicate?: boolean;
  readonly code?: string;
}

/** Starts a signer; resolves once it is ready, with a `go` trigger and its answers. */
async function signer(cfg: object, worker = WORKER): Promise<{ go: () => void; answers: Promise<Answer[]> }> {
  const p = spawn(process.execPath, [worker, JSON.stringify(cfg)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  p.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const lines = createInterface({ input: p.stdout });
  const answers: Answer[] = [];
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  const done = new Promise<Answer[]>((res, rej) => {
    lines.on('line', (l) => {
      const o = JSON.parse(l) as Answer & { ready?: boolean; done?: boolean };
      if (o.ready) ready();
      else if (o.done) res(answers);
      else answers.push(o);
    });
    p.once('exit', (code) => (code === 0 ? undefined : rej(new Error(`signer exited ${code}: ${err}`))));
  });
  await Promise.race([isReady, done]);
  return { go: () => p.stdin.end('go\n'), answers: done };
}

function historyRoot(h: 'A' | 'B', size: number): string {
  const t = new PackedMerkleTree(receiptHasher);
  const enc = new TextEncoder();
  for (let i = 0; i < size; i++) t.append(sha256(enc.encode(i < FORK || h === 'A' ? `A ${i}` : `B ${i}`)));
  return toHex(t.root(size));
}

async function race(location: string): Promise<void> {
  const origin = `process.test/${process.pid}`;
  // Both processes walk all sizes, in opposite orders: they meet in the middle.
  const up = Array.from({ length: N }, (_, i) => i + 1);
  const a = await signer({ location, origin, h: 'A', n: N, fork: FORK, sizes: up });
  const b = await signer({ location, origin, h: 'B', n: N, fork: FORK, sizes: [...up].reverse() });
  a.go();
  b.go();
  const [ra, rb] = await Promise.all([a.answers, b.answers]);
  const store = await openStore(location);
  try {
    const recs = await store.signedCheckpoints(origin);
    expect(new Set(recs.map((r) => r.size)).size).toBe(recs.length);
    const owners = new Set(recs.filter((r) => r.size > FORK).map((r) => (r.root === historyRoot('A', r.size) ? 'A' : r.root === historyRoot('B', r.size) ? 'B' : '?')));
    expect(owners.size).toBeLessThanOrEqual(1);
    expect([...owners]).not.toContain('?');
    const fresh = [...ra, ...rb].filter((x) => x.ok && !x.duplicate);
    expect(fresh.map((x) => x.size).sort((p, q) => p - q)).toEqual(recs.map((r) => r.size));
    // The loser was refused, by a code, on every size beyond the fork that it asked for.
    for (const x of [...ra, ...rb]) if (!x.ok) expect(['TALLY_SIGN_EQUIVOCATION', 'TALLY_SIGN_INCONSISTENT']).toContain(x.code);
    expect([...ra, ...rb].some((x) => !x.ok)).toBe(true);
  } finally {
    await store.close();
  }
}

describe('two signer processes on one database', () => {
  it('SQLite file: one root per size, one history beyond the fork', async () => {
    await race(join(tempDir('signers'), 'shared.db'));
  }, 60_000);

  it.skipIf(!pgReady)('PostgreSQL schema: one root per size, one history beyond the fork', async () => {
    const schema = freshSchemaName('signers');
    try {
      await race(`${PG_URL}${PG_URL!.includes('?') ? '&' : '?'}schema=${schema}`);
    } finally {
      await dropSchema(schema);
    }
  }, 60_000);
});

/**
 * Issue #34: two engine processes with one key on one store — one appends and
 * signs at its head after every append, the other signs at its head (and at
 * prefixes) as fast as it can. One honest history: every request is
 * consistent with everything signed, so none may be refused; before the
 * notary caught up from the store, the second process was refused
 * TALLY_SIGN_INCONSISTENT whenever the first signed past the tree it had
 * just read.
 */
async function twoEngines(location: string): Promise<void> {
  const key = generateEngineKey('process.test/desk');
  const store = await openStore(location);
  try {
    const engine = createEngine({ store });
    const open = await engine.open({ name: `two engines ${process.pid} ${location.length}` });
    if (!open.ok) throw new Error(open.message);
    const sid = open.sessionId;
    const f = await engine.frame({ sessionId: sid, ordinal: -1, time: 1_000 });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: new TextEncoder().encode('first') } });
    if (!t.ok) throw new Error(t.message);
    const common = { location, key: formatPrivateKey(key), sid };
    const writer = await signer({ ...common, role: 'writer', ordinal: 0, steps: 120 }, NOTARY_WORKER);
    const other = await signer({ ...common, role: 'signer', signs: 400 }, NOTARY_WORKER);
    writer.go();
    other.go();
    const [rw, ro] = await Promise.all([writer.answers, other.answers]);
    const all = [...rw, ...ro];
    expect(all.filter((x) => !x.ok)).toEqual([]);
    expect(rw.length).toBe(120);
    // Every record is the store's history at its size.
    const tree = new PackedMerkleTree(receiptHasher);
    for await (const line of engine.exportEntries(sid)) tree.append(entryHash(sha256, line));
    const recs = await store.signedCheckpoints(`${key.name}/${sid}`);
    expect(recs.length).toBeGreaterThan(100);
    for (const r of recs) expect(r.root, `size ${r.size}`).toBe(toHex(tree.root(r.size)));
  } finally {
    await store.close();
  }
}

describe('two engine processes signing one growing session (issue #34)', () => {
  it('SQLite file: no consistent request is refused', async () => {
    await twoEngines(join(tempDir('engines'), 'shared.db'));
  }, 120_000);

  it.skipIf(!pgReady)('PostgreSQL schema: no consistent request is refused', async () => {
    const schema = freshSchemaName('engines');
    try {
      await twoEngines(`${PG_URL}${PG_URL!.includes('?') ? '&' : '?'}schema=${schema}`);
    } finally {
      await dropSchema(schema);
    }
  }, 120_000);
});
