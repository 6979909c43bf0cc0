/**
 * The witness core against every state store (memory, SQLite, PostgreSQL when
 * TALLY_PG_URL answers): the C2SP tlog-witness answers, the rule "never a
 * smaller size, never an inconsistent root", and the rollback race.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatCheckpoint, generateEngineKey, signNote } from '../../src/receipt/index.js';
import { cosignerKeyFrom, createWitness, MemoryWitnessStore, PostgresWitnessStore, SqliteWitnessStore, addSignatureLines, verifyCosignatures, type WitnessStore } from '../../src/witness/index.js';
import { dropSchema, freshSchemaName, pgReady, PG_URL, warnIfSkipped } from '../store/helpers/pg.js';
import { testLog } from './helpers.js';

warnIfSkipped('tests/witness/witness.test.ts');
const dir = mkdtempSync(join(tmpdir(), 'tally-witness-'));
const schemas: string[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  for (const s of schemas) await dropSchema(s);
});

let n = 0;
const stores: [string, () => Promise<WitnessStore>][] = [
  ['memory', async () => new MemoryWitnessStore()],
  ['sqlite', async () => SqliteWitnessStore.open(join(dir, `w${n++}.db`))],
  ...(pgReady
    ? ([
        [
          'postgres',
          async () => {
            const schema = freshSchemaName('witness');
            schemas.push(schema);
            return PostgresWitnessStore.open({ url: PG_URL!, schema });
          },
        ],
      ] as [string, () => Promise<WitnessStore>][])
    : []),
];

const wkey = cosignerKeyFrom(generateEngineKey('witness.example/w1'));

describe.each(stores)('witness on %s state', (_name, open) => {
  async function setup() {
    const store = await open();
    let clock = 1_700_000_000;
    const witness = createWitness({ key: wkey, store, now: () => clock++ });
    const log = testLog();
    await witness.trustLogKey(log.key.verifierKey);
    return { store, witness, log };
  }

  it('cosigns a first checkpoint, then only consistent growth; the lines verify', async () => {
    const { store, witness, log } = await setup();
    log.append(3);
    const first = await witness.addCheckpoint(log.body(0));
    expect(first).toMatchObject({ ok: true, status: 200, size: 3 });
    log.append(4);
    const second = await witness.addCheckpoint(log.body(3));
    expect(second).toMatchObject({ ok: true, status: 200, size: 7 });
    if (!second.ok) return;
    const note = addSignatureLines(log.checkpoint(7), [second.lines]);
    expect(verifyCosignatures(note, [log.key], [wkey.verifier])).toMatchObject({ ok: true, cosignatures: [{ name: 'witness.example/w1', time: second.time }] });
    expect((await store.latest(log.origin))?.size).toBe(7);
    await store.close();
  });

  it('gives each refusal its C2SP status', async () => {
    const { store, witness, log } = await setup();
    log.append(5);
    expect(await witness.addCheckpoint(log.body(0, 3))).toMatchObject({ status: 200 });
    const stranger = testLog('other.example');
    stranger.append(2);
    expect(await witness.addCheckpoint(stranger.body(0))).toMatchObject({ status: 404, code: 'unknown-origin' });
    const impostor = testLog('tally.example/acme'); // same name, other key
    impostor.append(5);
    expect(await witness.addCheckpoint(impostor.body(0))).toMatchObject({ status: 403, code: 'no-trusted-signature' });
    expect(await witness.addCheckpoint(log.body(3, 5).replace('old 3', 'old 6'))).toMatchObject({ status: 400, code: 'old-size-too-large' });
    expect(await witness.addCheckpoint('old 3\nnot base64\n\nx\n')).toMatchObject({ status: 400, code: 'malformed-request' });
    expect(await witness.addCheckpoint(`old 03\n\n${log.checkpoint(5)}`)).toMatchObject({ status: 400, code: 'malformed-request' });
    const tooLong = `old 3\n${`${Buffer.alloc(32).toString('base64')}\n`.repeat(64)}\n${log.checkpoint(5)}`;
    expect(await witness.addCheckpoint(tooLong)).toMatchObject({ status: 400, code: 'malformed-request' });
    expect(await witness.addCheckpoint(log.body(2, 5).replace('old 2', 'old 2'))).toMatchObject({ status: 409, code: 'old-size-mismatch', size: 3 });
    const bad = log.body(3, 5).replace(/^old 3\n(.)/, (_m, c: string) => `old 3\n${c === 'A' ? 'B' : 'A'}`);
    expect(await witness.addCheckpoint(bad)).toMatchObject({ status: 422, code: 'bad-consistency-proof' });
    expect((await store.latest(log.origin))?.size).toBe(3);
    await store.close();
  });

  it('never cosigns a smaller size or another root at a cosigned size (a split view)', async () => {
    const { store, witness, log } = await setup();
    log.append(6);
    expect(await witness.addCheckpoint(log.body(0))).toMatchObject({ status: 200, size: 6 });
    // Rollback: an older checkpoint, honestly claiming old 6, is "old > new".
    expect(await witness.addCheckpoint(`old 6\n\n${log.checkpoint(4)}`)).toMatchObject({ status: 400, code: 'old-size-too-large' });
    // Rollback claiming the old size 0: conflict, answer carries the cosigned size.
    expect(await witness.addCheckpoint(log.body(0, 4))).toMatchObject({ status: 409, size: 6 });
    // A fork of the same log at size 6 (same key, different entries).
    const fork = testLog('tally.example/acme', 'ab'.repeat(32), log.key);
    fork.append(6, 'fork');
    // C2SP tlog-witness (C2SP/C2SP#280): same size, other root is 422, with no size body.
    const split = await witness.addCheckpoint(fork.body(6));
    expect(split).toMatchObject({ status: 422, code: 'root-mismatch' });
    expect(split).not.toHaveProperty('size');
    fork.append(2, 'fork');
    expect(await witness.addCheckpoint(fork.body(6))).toMatchObject({ status: 422 });
    expect(sameBytes((await store.latest(log.origin))!.root, log.root(6))).toBe(true);
    await store.close();
  });

  it('size 0: only the empty tree\'s root (SHA-256 of ""), with an empty proof (C2SP tlog-witness: else 422)', async () => {
    const { store, witness, log } = await setup();
    const empty = log.checkpoint(0);
    const other = signNote(formatCheckpoint({ origin: log.origin, size: 0, root: new Uint8Array(32).fill(7) }), [log.key]);
    expect(await witness.addCheckpoint(`old 0\n\n${other}`)).toMatchObject({ status: 422, code: 'bad-empty-root' });
    expect(await store.latest(log.origin)).toBeUndefined();
    expect(await witness.addCheckpoint(`old 0\n\n${empty}`)).toMatchObject({ status: 200, size: 0 });
    log.append(3);
    // From old size 0 the proof must be empty, even though something (the empty tree) was cosigned.
    expect(await witness.addCheckpoint(`old 0\n${Buffer.from(log.leaves[0]!).toString('base64')}\n\n${log.checkpoint()}`)).toMatchObject({ status: 422, code: 'bad-consistency-proof' });
    expect(await witness.addCheckpoint(log.body(0))).toMatchObject({ status: 200, size: 3 });
    await store.close();
  });

  it('re-cosigns the checkpoint it already holds (a lost answer is never a lost cosignature)', async () => {
    const { store, witness, log } = await setup();
    log.append(4);
    expect(await witness.addCheckpoint(log.body(0))).toMatchObject({ status: 200 });
    expect(await witness.addCheckpoint(log.body(0))).toMatchObject({ status: 409, size: 4 });
    expect(await witness.addCheckpoint(log.body(4))).toMatchObject({ status: 200, size: 4 });
    expect(await witness.addCheckpoint(`old 4\n${Buffer.alloc(32).toString('base64')}\n\n${log.checkpoint(4)}`)).toMatchObject({ status: 422 });
    await store.close();
  });

  it('the rollback race: of concurrent submissions from one cosigned state, exactly one is cosigned', async () => {
    const { store, witness, log } = await setup();
    log.append(3);
    expect(await witness.addCheckpoint(log.body(0))).toMatchObject({ status: 200 });
    log.append(9);
    // Request A (3 → 5) and B (3 → 12) and more, all checked against the stored size 3.
    const sizes = [5, 12, 4, 8, 12, 6];
    const results = await Promise.all(sizes.map((s) => witness.addCheckpoint(log.body(3, s))));
    const won = results.filter((r) => r.ok);
    expect(won).toHaveLength(1);
    const winner = won[0]!;
    for (const r of results) if (!r.ok) expect(r).toMatchObject({ status: 409, size: winner.ok ? winner.size : -1 });
    expect((await store.latest(log.origin))?.size).toBe(winner.ok ? winner.size : -1);
    await store.close();
  });
});

describe('SQLite witness state', () => {
  it('survives a reopen (keys and latest checkpoint), and two handles on one file never both win a swap', async () => {
    const path = join(dir, 'shared.db');
    const a = SqliteWitnessStore.open(path);
    const log = testLog();
    log.append(3);
    const w = createWitness({ key: wkey, store: a });
    await w.trustLogKey(log.key.verifierKey);
    expect(await w.addCheckpoint(log.body(0))).toMatchObject({ status: 200 });
    await a.close();
    const b = SqliteWitnessStore.open(path);
    const c = SqliteWitnessStore.open(path);
    expect(await b.logKeys()).toEqual([log.key.verifierKey]);
    const held = (await b.latest(log.origin))!;
    expect(held.size).toBe(3);
    const next = { size: 5, root: new Uint8Array(32).fill(1), signedCheckpoint: 'x\n', time: 1 };
    const r = await Promise.all([b.compareAndSwap(log.origin, held, next), c.compareAndSwap(log.origin, held, { ...next, size: 6 })]);
    expect(r.filter(Boolean)).toHaveLength(1);
    await b.close();
    await c.close();
  });
});

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a).equals(Buffer.from(b));
}
