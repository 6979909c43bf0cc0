/**
 * A small honest log for witness tests: an engine key, leaves, and signed
 * Tally session checkpoints with their RFC 6962 consistency proofs (built with
 * the public agent-tally/merkle functions, independent of the witness code).
 */
import { consistencyProof, leafHash, rootHash } from '../../src/merkle/index.js';
import { formatCheckpoint, formatConsistencyProof, generateEngineKey, signNote, type EngineKey } from '../../src/receipt/index.js';

export interface TestLog {
  readonly key: EngineKey;
  readonly origin: string;
  readonly leaves: Uint8Array[];
  append(n: number, tag?: string): void;
  /** The signed checkpoint at size `n` (default: all leaves). */
  checkpoint(n?: number): string;
  /** An add-checkpoint body from `old` to `n`. */
  body(old: number, n?: number): string;
  root(n: number): Uint8Array;
}

export function testLog(name = 'tally.example/acme', session = 'ab'.repeat(32), key: EngineKey = generateEngineKey(name)): TestLog {
  const leaves: Uint8Array[] = [];
  const origin = `${name}/${session}`;
  const log: TestLog = {
    key,
    origin,
    leaves,
    append(n, tag = 'e') {
      for (let i = 0; i < n; i++) leaves.push(leafHash(new TextEncoder().encode(`${tag}${leaves.length}`)));
    },
    root: (n) => rootHash(leaves.slice(0, n)),
    checkpoint(n = leaves.length) {
      return signNote(formatCheckpoint({ origin, size: n, root: rootHash(leaves.slice(0, n)) }), [key]);
    },
    body(old, n = leaves.length) {
      const proof = old === 0 || old === n ? [] : consistencyProof(leaves, old, n);
      return formatConsistencyProof({ oldSize: old, proof, signedCheckpoint: log.checkpoint(n) });
    },
  };
  return log;
}
