/**
 * `tally demo --out DIR` writes the engine log too: DIR/log/ (C2SP
 * tlog-tiles of the demo store's log), DIR/log.vkey, and the day's seal in
 * the log's signed checkpoint as a tlog-proof — checked here from the files
 * alone (the log key, the proof, the tiles), as a new user would.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { runDemo } from '../../src/demo/run.js';
import { entryHash, parseEngineLogLeaf, parseEntryBundle, rfc6962Hasher, rootFromLeafHashes, toHex } from '../../src/protocol/index.js';
import { parseTlogProof, verifyTlogProof } from '../../src/receipt/index.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';
import { inProcess } from '../cli/in-process.js';

afterAll(removeTempDirs);

describe('tally demo writes the engine log and the day’s inclusion in it', async () => {
  const out = tempDir('demo-log');
  const report = await runDemo({ seed: 3, wakes: 6, out });

  it('the log check passes and the files are there', () => {
    expect(report.checks.log).toMatchObject({ ok: true });
    for (const f of ['log/checkpoint', 'log/tile/0/000.p/2', 'log/tile/entries/000.p/2', 'log.vkey', 'log-proof.tlog-proof']) expect(existsSync(join(out, f)), f).toBe(true);
  });

  it('from the files alone: the proof opens with log.vkey, its leaf is this day’s seal, the tiles rebuild the signed root', () => {
    const vkey = readFileSync(join(out, 'log.vkey'), 'utf8').trim();
    const text = readFileSync(join(out, 'log-proof.tlog-proof'), 'utf8');
    const p = parseTlogProof(text);
    if (!p.ok || !p.tlogProof.extraData) throw new Error('no proof');
    const leaf = p.tlogProof.extraData;
    const v = verifyTlogProof(text, { verifiers: [vkey], leafHash: entryHash(sha256, leaf), origin: 'demo.tally.invalid/log' });
    if (!v.ok) throw new Error(v.message);
    expect(parseEngineLogLeaf(leaf)).toEqual({ ok: true, leaf: { kind: 'checkpoint', origin: `demo.tally.invalid/${report.sessionId}`, size: report.receipt.size, root: report.receipt.receiptRoot, seal: true } });
    const leaves = parseEntryBundle(new Uint8Array(readFileSync(join(out, 'log/tile/entries/000.p/2'))))!;
    expect(leaves.map((l) => parseEngineLogLeaf(l).ok)).toEqual([true, true]);
    expect(toHex(rootFromLeafHashes(rfc6962Hasher(sha256), leaves.map((l) => entryHash(sha256, l))))).toBe(toHex(v.checkpoint.root));
    // The proof against another leaf (the open leaf) fails.
    expect(verifyTlogProof(text, { verifiers: [vkey], leafHash: entryHash(sha256, leaves[0]!), origin: 'demo.tally.invalid/log' })).toMatchObject({ ok: false, stage: 'inclusion' });
  });

  it('the summary lists the log files and its check', () => {
    expect(report.files.logProof).toBe(join(out, 'log-proof.tlog-proof'));
    expect(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')).checks.log.ok).toBe(true);
  });

  it('running the demo again into the same store reuses the day: the log does not grow', async () => {
    const again = await runDemo({ seed: 3, wakes: 6, out });
    expect(again.mode).toBe('reused');
    expect(again.checks.log).toMatchObject({ ok: true, index: report.checks.log.index });
    const r = await inProcess(['tiles', 'export', join(out, 'log2'), '--db', join(out, 'tally.db'), '--log-key', join(out, 'nokey.key'), '--log-origin', 'demo.tally.invalid/other']);
    // A fresh log key under another origin would be a second log of the same leaves: the store's log key is recorded, so it is refused.
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('signed with another log key');
    expect(r.stderr).toContain(readFileSync(join(out, 'log.vkey'), 'utf8').trim());
  });
});
