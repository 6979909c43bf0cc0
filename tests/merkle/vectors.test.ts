/**
 * RFC 6962 golden vectors from transparency-dev/merkle (copied verbatim to
 * tests/vectors/rfc6962, Apache-2.0, see its README.md and LICENSE).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../src/protocol/hex.js';
import {
  consistencyProof,
  createFrontier,
  createMerkleLevels,
  inclusionProof,
  leafHash,
  rootHash,
  sha256Hasher,
  verifyConsistency,
  verifyInclusion,
} from '../../src/merkle/index.js';

const VECTORS = fileURLToPath(new URL('../vectors/rfc6962/', import.meta.url));

interface Roots {
  leafInputsHex: string[];
  leafHashesHex: string[];
  rootsBySizeHex: string[];
}
interface InclusionProbe {
  leafIdx: number;
  treeSize: number;
  root: string;
  leafHash: string;
  proof: string[] | null;
  desc: string;
  wantErr: boolean;
}
interface ConsistencyProbe {
  size1: number;
  size2: number;
  root1: string;
  root2: string;
  proof: string[] | null;
  desc: string;
  wantErr: boolean;
}

const b64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64'));
const hex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const proofOf = (p: string[] | null): Uint8Array[] => (p ?? []).map(b64);

function jsonFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...jsonFiles(full));
    else if (name.endsWith('.json')) out.push(full);
  }
  return out;
}

/**
 * Probes whose expectation Tally deliberately does not share. Upstream accepts
 * sizes 1→1 with equal 12-byte "don't care" roots because it only compares the
 * roots; Tally rejects every hash that is not 32 bytes (`bad-hash-length`).
 */
const DEVIATIONS: Record<string, string> = {
  'consistency/additional/sizes-are-equal-one-and-proof-is-empty.json': 'bad-hash-length',
};

const roots = JSON.parse(readFileSync(join(VECTORS, 'roots.json'), 'utf8')) as Roots;
const leafHashes = roots.leafHashesHex.map(hex);

describe('roots.json (RFC 6962 leaves and roots, sizes 0..8)', () => {
  it('leaf hashes are SHA-256(0x00 ‖ data)', () => {
    expect(roots.leafInputsHex).toHaveLength(8);
    expect(roots.leafInputsHex.map((d) => toHex(leafHash(hex(d))))).toEqual(roots.leafHashesHex);
  });

  it('rootHash, Frontier and MerkleLevels give every root for sizes 0..8', () => {
    expect(roots.rootsBySizeHex).toHaveLength(9);
    const frontier = createFrontier();
    const levels = createMerkleLevels();
    for (let size = 0; size <= 8; size++) {
      const want = roots.rootsBySizeHex[size];
      expect(toHex(rootHash(leafHashes.slice(0, size))), `rootHash(${size})`).toBe(want);
      expect(toHex(frontier.root()), `frontier(${size})`).toBe(want);
      expect(toHex(levels.root()), `levels(${size})`).toBe(want);
      if (size < 8) {
        frontier.append(leafHashes[size]!);
        levels.append(leafHashes[size]!);
      }
    }
    for (let size = 0; size <= 8; size++) expect(toHex(levels.root(size))).toBe(roots.rootsBySizeHex[size]);
  });

  it('the empty root is SHA-256("")', () => {
    // printf '' | sha256sum
    expect(toHex(sha256Hasher.emptyRoot())).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('inclusion and consistency probes', () => {
  const inclusion = jsonFiles(join(VECTORS, 'inclusion'));
  const consistency = jsonFiles(join(VECTORS, 'consistency'));
  const levels = createMerkleLevels(leafHashes);

  it('reads all 196 probe files', () => {
    expect(inclusion.length + consistency.length).toBe(196);
    expect(inclusion.length).toBe(98);
    expect(consistency.length).toBe(98);
  });

  it('every inclusion probe: wantErr false accepted, wantErr true rejected', () => {
    let accepted = 0;
    for (const file of inclusion) {
      const name = relative(VECTORS, file);
      const p = JSON.parse(readFileSync(file, 'utf8')) as InclusionProbe;
      const got = verifyInclusion(b64(p.leafHash), p.leafIdx, p.treeSize, proofOf(p.proof), b64(p.root));
      expect(got.ok, `${name}: ${got.ok ? 'ok' : got.code}`).toBe(!p.wantErr);
      if (!p.wantErr) {
        accepted++;
        if (name.startsWith('inclusion/single-entry/')) {
          // The single-entry probes use the leaf "data": a one-leaf tree's root is its leaf hash.
          expect(toHex(b64(p.leafHash)), name).toBe(toHex(leafHash(new TextEncoder().encode('data'))));
          continue;
        }
        // Our generators produce the very same proof from the roots.json leaves.
        expect(toHex(levels.leafHash(p.leafIdx)), name).toBe(toHex(b64(p.leafHash)));
        expect(levels.inclusionProof(p.leafIdx, p.treeSize).map(toHex), name).toEqual(proofOf(p.proof).map(toHex));
        expect(inclusionProof(leafHashes, p.leafIdx, p.treeSize).map(toHex), name).toEqual(proofOf(p.proof).map(toHex));
      }
    }
    expect(accepted).toBe(6);
  });

  it('every consistency probe: wantErr false accepted, wantErr true rejected (one documented deviation)', () => {
    let accepted = 0;
    const deviated: string[] = [];
    for (const file of consistency) {
      const name = relative(VECTORS, file);
      const p = JSON.parse(readFileSync(file, 'utf8')) as ConsistencyProbe;
      const got = verifyConsistency(p.size1, p.size2, b64(p.root1), b64(p.root2), proofOf(p.proof));
      const deviation = DEVIATIONS[name];
      if (deviation !== undefined) {
        expect(p.wantErr, name).toBe(false);
        expect(got.ok ? 'ok' : got.code, name).toBe(deviation);
        deviated.push(name);
        continue;
      }
      expect(got.ok, `${name}: ${got.ok ? 'ok' : got.code}`).toBe(!p.wantErr);
      if (!p.wantErr) {
        accepted++;
        expect(levels.consistencyProof(p.size1, p.size2).map(toHex), name).toEqual(proofOf(p.proof).map(toHex));
        expect(consistencyProof(leafHashes, p.size1, p.size2).map(toHex), name).toEqual(proofOf(p.proof).map(toHex));
      }
    }
    expect(deviated).toEqual(Object.keys(DEVIATIONS));
    expect(accepted).toBe(5);
  });

  it('the 2^64-1 leaf index (unsafe after JSON.parse) is rejected as invalid-number, not a crash', () => {
    const p = JSON.parse(readFileSync(join(VECTORS, 'inclusion/0/leafIdx-sub-@1.json'), 'utf8')) as InclusionProbe;
    expect(Number.isSafeInteger(p.leafIdx)).toBe(false);
    const got = verifyInclusion(b64(p.leafHash), p.leafIdx, p.treeSize, proofOf(p.proof), b64(p.root));
    expect(got).toMatchObject({ ok: false, code: 'invalid-number' });
  });
});
