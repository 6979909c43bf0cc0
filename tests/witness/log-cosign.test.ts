/**
 * Witnesses cosign the engine log (PROTOCOL.md §15.6). In process, against
 * the real witness over real HTTP and a real SQLite store: a round submits
 * the log's checkpoint with a consistency proof from the witness's size;
 * the cadence and the per-witness budget bound the requests; a witness that
 * takes only origins equal to its key names cosigns the log and refuses a
 * session origin; its per-origin rate limit answers 429; a store restored
 * from a copy cannot get the witness to cosign a log without a leaf it saw.
 * Then as processes: `tally witness serve --origin-is-key-name` and
 * `tally serve --log-key --witness-policy`, a cosigned `/log/checkpoint`
 * with no session origin submitted, and `tally export` / `tally verify
 * --log-key --policy` holding the day to the witnessed log.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { EngineLog, verifyLogBinding } from '../../src/log/index.js';
import { createNotary, generateEngineKey, loadEngineKeyFile, parseVerifierKey } from '../../src/receipt/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { LogCosigner, MemoryWitnessStore, checkWitnessPolicy, cosignerKeyFrom, createWitness, createWitnessHttpServer, parseWitnessPolicy, submitCheckpoint, type Witness } from '../../src/witness/index.js';
import { TALLY, tally } from '../cli/helpers.js';
import { authDoc, startServer, TOKENS } from '../server/helpers.js';
import { drive } from '../log/day.js';
import { startListening } from './serve.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-log-cosign-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const engineKey = generateEngineKey('tally.example/desk');
const logKey = generateEngineKey('tally.example/desk/log');
const wKey = cosignerKeyFrom(generateEngineKey('w1.example'));

function verifierOf(vkey: string) {
  const p = parseVerifierKey(vkey);
  if (!p.ok) throw new Error(p.message);
  return p.verifier;
}

async function listen(witness: Witness): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createWitnessHttpServer(witness);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

function policyOf(url: string) {
  const hex = Buffer.from(wKey.verifierKey.split('+').slice(2).join('+'), 'base64').subarray(1).toString('hex');
  const text = `witness w1.example ${hex} ${url}\nquorum w1.example\n`;
  const p = parseWitnessPolicy(text);
  if (!p.ok) throw new Error(p.message);
  return { text, policy: p.policy };
}

describe('LogCosigner against a real witness', () => {
  it('cosigns the log at its cadence and within its budget; the witness takes the log origin and refuses a session origin', async () => {
    let t = 1_000_000;
    const witness = createWitness({ key: wKey, store: new MemoryWitnessStore(), originIsKeyName: true, now: () => Math.floor(t / 1000) });
    await witness.trustLogKey(logKey.verifierKey);
    await witness.trustLogKey(engineKey.verifierKey);
    const w = await listen(witness);
    const store = new SqliteStore(join(dir, 'inproc.db'));
    try {
      const engine = createEngine({ store });
      const notary = createNotary({ key: engineKey });
      const a = await drive(engine, 'lc-a', 2);
      const sealed = await notary.sealWithReceipt(engine, a);
      if (!sealed.ok) throw new Error(sealed.message);
      const log = new EngineLog({ store, key: logKey, minIntervalMs: 0, now: () => t });
      const cosigner = new LogCosigner({ log, witnesses: [{ url: w.url, verifier: wKey.verifier }], store, intervalMs: 1000, budget: { requests: 2, windowMs: 60_000 }, now: () => t });
      const r1 = await cosigner.round();
      expect(r1?.outcomes).toEqual([{ witness: 'w1.example', status: 'cosigned' }]);
      const { policy } = policyOf(w.url);
      expect(checkWitnessPolicy(r1!.checkpoint.signedCheckpoint, [verifierOf(logKey.verifierKey)], policy)).toMatchObject({ ok: true, signed: ['w1.example'] });
      // The cosignature is kept in the store: a new cosigner (a restarted server) serves it without asking.
      const again = new LogCosigner({ log, witnesses: [{ url: w.url, verifier: wKey.verifier }], store });
      expect(await again.cosigned(r1!.checkpoint)).toBe(r1!.checkpoint.signedCheckpoint);

      // C2SP tlog-witness monitor retrieval: the latest cosigned log checkpoint by the SHA-256 of its origin.
      const byHash = await fetch(`${w.url}/${createHash('sha256').update(logKey.name).digest('hex')}/checkpoint`);
      const served = await byHash.text();
      expect(byHash.status).toBe(200);
      expect(served.startsWith(`${logKey.name}\n${r1!.checkpoint.size}\n`)).toBe(true);
      expect(checkWitnessPolicy(served, [verifierOf(logKey.verifierKey)], policy)).toMatchObject({ ok: true, signed: ['w1.example'] });
      expect((await fetch(`${w.url}/${'00'.repeat(32)}/checkpoint`)).status).toBe(404);
      expect((await fetch(`${w.url}/${createHash('sha256').update(logKey.name).digest('hex').toUpperCase()}/checkpoint`)).status).toBe(404);
      expect((await fetch(`${w.url}/${createHash('sha256').update(logKey.name).digest('hex')}/checkpoint`, { method: 'POST', body: 'x' })).status).toBe(405);
      // A session origin is not the key's name: this witness refuses it (404), as litewitness does.
      const sessionBody = `old 0\n\n${sealed.signedCheckpoint}`;
      expect(await submitCheckpoint(w.url, sessionBody)).toMatchObject({ kind: 'refused', status: 404 });

      // Within the cadence nothing is asked; after it, a grown log is submitted from the witness's size.
      const b = await drive(engine, 'lc-b', 1);
      await notary.issueCheckpoint(engine, b);
      t += 500;
      expect(await cosigner.round()).toBe(r1);
      t += 600;
      const r2 = await cosigner.round();
      expect(r2!.checkpoint.size).toBeGreaterThan(r1!.checkpoint.size);
      expect(r2!.outcomes).toEqual([{ witness: 'w1.example', status: 'cosigned' }]);
      // The budget (2 requests a minute) is spent: the next grown log waits.
      await drive(engine, 'lc-c', 1);
      t += 1100;
      const r3 = await cosigner.round();
      expect(r3!.outcomes).toMatchObject([{ witness: 'w1.example', status: 'deferred' }]);
      expect(r3!.cosignedBy).toEqual([]);
      t += 60_000;
      expect((await cosigner.round())!.outcomes).toEqual([{ witness: 'w1.example', status: 'cosigned' }]);
    } finally {
      await store.close();
      await w.close();
    }
  });

  it('the witness’s per-origin rate limit answers 429 with Retry-After, and nothing changes', async () => {
    let now = 5000;
    const witness = createWitness({ key: wKey, store: new MemoryWitnessStore(), originRate: { checkpoints: 1, windowSeconds: 60 }, now: () => now });
    await witness.trustLogKey(logKey.verifierKey);
    const w = await listen(witness);
    const store = new SqliteStore(join(dir, 'rate.db'));
    try {
      const engine = createEngine({ store });
      await drive(engine, 'rate-a', 1);
      const log = new EngineLog({ store, key: logKey, minIntervalMs: 0 });
      const cp1 = await log.checkpoint();
      expect((await witness.addCheckpoint(`old 0\n\n${cp1.signedCheckpoint}`)).ok).toBe(true);
      await drive(engine, 'rate-b', 1);
      const cp2 = await log.checkpoint();
      const body = `old ${cp1.size}\n${(await log.consistencyProof(cp1.size, cp2.size)).map((h) => Buffer.from(h).toString('base64') + '\n').join('')}\n${cp2.signedCheckpoint}`;
      const res = await fetch(`${w.url}/add-checkpoint`, { method: 'POST', body });
      expect([res.status, res.headers.get('retry-after')]).toEqual([429, '60']);
      now += 30;
      expect(await witness.addCheckpoint(body)).toMatchObject({ ok: false, status: 429, retryAfter: 30 });
      now += 31;
      expect(await witness.addCheckpoint(body)).toMatchObject({ ok: true, size: cp2.size });
    } finally {
      await store.close();
      await w.close();
    }
  });

  it('a store restored from a copy cannot get the witness to cosign a log without a leaf it saw', async () => {
    const witness = createWitness({ key: wKey, store: new MemoryWitnessStore(), originIsKeyName: true });
    await witness.trustLogKey(logKey.verifierKey);
    const w = await listen(witness);
    const db = join(dir, 'rollback.db');
    const copy = join(dir, 'rollback-copy.db');
    let store = new SqliteStore(db);
    try {
      const engine = createEngine({ store });
      await drive(engine, 'rb-a', 1);
      await store.close();
      copyFileSync(db, copy);
      store = new SqliteStore(db);
      await drive(createEngine({ store }), 'rb-b', 1);
      const witnesses = [{ url: w.url, verifier: wKey.verifier }];
      const first = await new LogCosigner({ log: new EngineLog({ store, key: logKey, minIntervalMs: 0 }), witnesses, store }).round();
      expect(first!.outcomes).toEqual([{ witness: 'w1.example', status: 'cosigned' }]);
      expect(first!.checkpoint.size).toBe(2);
      await store.close();
      // The restored copy holds 1 leaf, then grows another way: 2 and 3 leaves, leaf 1 not the one the witness saw.
      store = new SqliteStore(copy);
      await drive(createEngine({ store }), 'rb-other', 1);
      await drive(createEngine({ store }), 'rb-more', 1);
      const restored = new LogCosigner({ log: new EngineLog({ store, key: logKey, minIntervalMs: 0 }), witnesses, store });
      const r = await restored.round();
      expect(r!.outcomes).toMatchObject([{ witness: 'w1.example', status: 'conflict' }]);
      expect(r!.cosignedBy).toEqual([]);
      expect(restored.conflict).toMatch(/w1\.example/);
      await expect(restored.round()).rejects.toMatchObject({ code: 'TALLY_LOG_WITNESS_CONFLICT' });
    } finally {
      await store.close();
      await w.close();
    }
  });

  it('same size, other root: the witness answers 422 (C2SP tlog-witness, C2SP/C2SP#280), never cosigns it, and the cosigner stops as a conflict', async () => {
    const wstore = new MemoryWitnessStore();
    const witness = createWitness({ key: wKey, store: wstore, originIsKeyName: true });
    await witness.trustLogKey(logKey.verifierKey);
    const w = await listen(witness);
    const db = join(dir, 'same-size.db');
    const copy = join(dir, 'same-size-copy.db');
    let store = new SqliteStore(db);
    try {
      await drive(createEngine({ store }), 'ss-a', 1);
      await store.close();
      copyFileSync(db, copy);
      store = new SqliteStore(db);
      await drive(createEngine({ store }), 'ss-b', 1);
      const witnesses = [{ url: w.url, verifier: wKey.verifier }];
      const first = await new LogCosigner({ log: new EngineLog({ store, key: logKey, minIntervalMs: 0 }), witnesses, store }).round();
      expect(first!.outcomes).toEqual([{ witness: 'w1.example', status: 'cosigned' }]);
      const held = first!.checkpoint;
      await store.close();
      // The restored copy grows to the SAME size another way: leaf 1 is not the one the witness saw.
      store = new SqliteStore(copy);
      await drive(createEngine({ store }), 'ss-other', 1);
      const log = new EngineLog({ store, key: logKey, minIntervalMs: 0 });
      const restored = new LogCosigner({ log, witnesses, store });
      const r = await restored.round();
      expect(r!.checkpoint.size).toBe(held.size);
      expect(r!.checkpoint.root).not.toBe(held.root);
      // The copy knows no witness size: old 0 is answered 409 with size 2, then old 2 = size 2 with another root is 422.
      expect(r!.outcomes).toMatchObject([{ witness: 'w1.example', status: 'conflict', message: expect.stringContaining('answered 422 to size 2') }]);
      expect(r!.cosignedBy).toEqual([]);
      await expect(restored.round()).rejects.toMatchObject({ code: 'TALLY_LOG_WITNESS_CONFLICT' });
      // On the wire: 422, not a text/x.tlog.size 409; the witness still holds the root it cosigned.
      const raw = await fetch(`${w.url}/add-checkpoint`, { method: 'POST', body: `old ${held.size}\n\n${r!.checkpoint.signedCheckpoint}` });
      expect([raw.status, raw.headers.get('content-type')]).toEqual([422, expect.not.stringContaining('x.tlog.size')]);
      expect(await submitCheckpoint(w.url, `old ${held.size}\n\n${r!.checkpoint.signedCheckpoint}`)).toMatchObject({ kind: 'refused', status: 422 });
      expect(Buffer.from((await wstore.latest(held.origin))!.root).toString('hex')).toBe(held.root);
    } finally {
      await store.close();
      await w.close();
    }
  });
});

describe('tally serve --log-key --witness-policy with tally witness serve --origin-is-key-name', () => {
  it('usage: --witness-sessions needs --log-key; a policy without --key needs --log-key', () => {
    writeFileSync(join(dir, 'auth.json'), JSON.stringify(authDoc()));
    writeFileSync(join(dir, 'usage-policy'), `witness w9.example ${'ab'.repeat(32)} http://127.0.0.1:1\nquorum w9.example\n`);
    const sessions = tally(['serve', '--db', join(dir, 'usage.db'), '--witness-sessions', '--auth', join(dir, 'auth.json')], { cwd: dir });
    expect([sessions.code, sessions.stderr]).toEqual([2, expect.stringContaining('--witness-sessions needs --log-key')]);
    const noKey = tally(['serve', '--db', join(dir, 'usage.db'), '--witness-policy', join(dir, 'usage-policy'), '--auth', join(dir, 'auth.json')], { cwd: dir });
    expect([noKey.code, noKey.stderr]).toEqual([2, expect.stringContaining('or --log-key: witnesses then cosign the engine log')]);
  });

  it('the served log checkpoint is cosigned, no session origin reaches the witness, and the exported day verifies against the witnessed log', async () => {
    const env = { TALLY_KEY: join(dir, 'engine.key'), TALLY_ENGINE_NAME: 'tally.example/desk' };
    const vkey = tally(['key', 'new'], { cwd: dir, env }).stdout.trim();
    const logKeyFile = join(dir, 'log.key');
    tally(['key', 'new', '--key', logKeyFile, '--name', 'tally.example/desk/log'], { cwd: dir });
    const logVkey = (await loadEngineKeyFile(logKeyFile)).verifierKey;
    const db = join(dir, 'served.db');
    const store = new SqliteStore(db);
    const engine = createEngine({ store });
    const sid = await drive(engine, 'served-a', 2);
    const sealed = await createNotary({ key: await loadEngineKeyFile(env.TALLY_KEY) }).sealWithReceipt(engine, sid);
    if (!sealed.ok) throw new Error(sealed.message);
    await store.close();
    const wv = tally(['witness', 'keygen', '--name', 'w2.example', '--key', join(dir, 'w2.key')]).stdout.trim();
    const w = await startListening([TALLY, 'witness', 'serve', '--key', join(dir, 'w2.key'), '--db', join(dir, 'w2.db'), '--log-key', logVkey, '--log-key', vkey, '--origin-is-key-name', '--origin-rate', '100/60']);
    const hex = Buffer.from(wv.split('+').slice(2).join('+'), 'base64').subarray(1).toString('hex');
    writeFileSync(join(dir, 'policy'), `witness w2.example ${hex} ${w.url}\nquorum w2.example\n`);
    writeFileSync(join(dir, 'other-policy'), `witness w3.example ${'ab'.repeat(32)}\nquorum w3.example\n`);
    const server = await startServer({ db, args: ['--key', env.TALLY_KEY, '--log-key', logKeyFile, '--witness-policy', join(dir, 'policy'), '--log-interval', '0', '--log-cosign-interval', '100'], env, dir });
    try {
      // The engine key signs a session checkpoint while serving: with the engine log on, no witness is asked for it.
      const sessionCp = await fetch(`${server.url}/sessions/${sid}/checkpoint`, { headers: { authorization: `Bearer ${TOKENS.auditor}` } });
      expect(sessionCp.status).toBe(200);
      let cp = '';
      for (let i = 0; i < 100 && !cp.includes('\u2014 w2.example '); i++) {
        cp = await (await fetch(`${server.url}/log/checkpoint`)).text();
        if (!cp.includes('\u2014 w2.example ')) await new Promise((r) => setTimeout(r, 100));
      }
      const policy = parseWitnessPolicy(`witness w2.example ${hex} ${w.url}\nquorum w2.example\n`);
      if (!policy.ok) throw new Error(policy.message);
      expect(checkWitnessPolicy(cp, [verifierOf(logVkey)], policy.policy)).toMatchObject({ ok: true, signed: ['w2.example'] });
    } finally {
      await server.stop();
    }
    w.child.kill('SIGTERM');
    await w.exited;
    // Every request the witness answered was the engine log's: no session checkpoint was submitted.
    const lines = w.stderr().trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { status: number; origin?: string });
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toMatchObject({ status: 200, origin: 'tally.example/desk/log' });

    const out = join(dir, 'export');
    const ex = tally(['export', '--db', db, '--session', sid, '--out', out, '--key', env.TALLY_KEY, '--log-key', logKeyFile], { cwd: dir });
    expect(ex.code, ex.stderr).toBe(0);
    const v = tally(['verify', join(out, 'bundle.jsonl'), '--vkey', join(out, 'engine.vkey'), '--checkpoint', join(out, 'receipt.note'), '--log-key', join(out, 'log.vkey'), '--policy', join(dir, 'policy')], { cwd: dir });
    expect([v.code, v.stderr]).toEqual([0, '']);
    expect(v.stdout).toMatch(/engine log {3}leaf \d+ of tally\.example\/desk\/log .*cosigned by w2\.example \(witness quorum met\)/);
    const other = tally(['verify', join(out, 'bundle.jsonl'), '--vkey', join(out, 'engine.vkey'), '--checkpoint', join(out, 'receipt.note'), '--log-key', join(out, 'log.vkey'), '--policy', join(dir, 'other-policy')], { cwd: dir });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('witnesses: below-quorum');
    expect(verifyLogBinding(await import('node:fs').then((f) => f.readFileSync(join(out, 'log-proof.tlog-proof'), 'utf8')), { logVerifiers: [logVkey], checkpoint: { origin: sealed.checkpoint.origin, size: sealed.checkpoint.size, root: sealed.checkpoint.root }, seal: true })).toMatchObject({ ok: true });
  });
});
