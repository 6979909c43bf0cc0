/**
 * When session checkpoint leaves of the engine log cannot be one session's
 * history (docs/PROTOCOL.md §15.10): the one rule the verifier (`tally
 * verify --log`) and the monitor (`tally monitor --log`) apply. Each finding
 * names the leaves by their positions in the log, and the roots that
 * disagree, so that it is a public proof anyone holding the log can check.
 *
 * - Two checkpoint leaves with one `(origin, size)` and two roots:
 *   `TALLY_LOG_EQUIVOCATION` (the engine key signed two trees of one size).
 * - A seal leaf and a leaf of the same origin with a larger size:
 *   `TALLY_LOG_INCONSISTENT` (the engine signed past the seal, which is the
 *   session's last entry).
 * - A checkpoint leaf whose root is not the root of the session's own tree
 *   at its size (the tree read from the session's bundle or tiles):
 *   `TALLY_LOG_SESSION_MISMATCH`.
 *
 * Pure: roots are compared as the leaves carry them (64 lowercase hex); the
 * session's tree is asked through `rootAt`.
 */
import type { CheckpointLeaf } from './leaf.js';

/** A checkpoint leaf at its position in the engine log. */
export interface IndexedCheckpointLeaf {
  readonly index: number;
  readonly leaf: CheckpointLeaf;
}

/** Every code of a {@link CheckpointConflict}. */
export const CHECKPOINT_CONFLICT_CODES = ['TALLY_LOG_EQUIVOCATION', 'TALLY_LOG_INCONSISTENT', 'TALLY_LOG_SESSION_MISMATCH'] as const;
/** A code of {@link CHECKPOINT_CONFLICT_CODES}. */
export type CheckpointConflictCode = (typeof CHECKPOINT_CONFLICT_CODES)[number];

/** Leaves of the log that cannot be one session's history. */
export interface CheckpointConflict {
  readonly code: CheckpointConflictCode;
  /** The session checkpoint origin both leaves (or the leaf and the tree) are of. */
  readonly origin: string;
  /** The leaves' positions in the engine log: two for two leaves; one for a leaf against the session's tree. */
  readonly leaves: readonly number[];
  /** The sizes the leaves record (one per leaf). */
  readonly sizes: readonly number[];
  /** The roots that disagree: each leaf's, then (for `TALLY_LOG_SESSION_MISMATCH`) the session tree's at that size. */
  readonly roots: readonly string[];
  readonly message: string;
}

/**
 * Whether two checkpoint leaves conflict (see the module comment: the first
 * two cases). Leaves of different origins, or one leaf twice, never do; the
 * same checkpoint logged twice (one size, one root) does not.
 *
 * @example
 * const c = checkpointConflict({ index: 1, leaf: a }, { index: 7, leaf: b });
 * if (c) refuse(c.code, c.leaves); // e.g. TALLY_LOG_EQUIVOCATION, [1, 7]
 */
export function checkpointConflict(a: IndexedCheckpointLeaf, b: IndexedCheckpointLeaf): CheckpointConflict | undefined {
  const x = a.leaf;
  const y = b.leaf;
  if (x.origin !== y.origin || a.index === b.index) return undefined;
  const base = { origin: x.origin, leaves: [a.index, b.index], sizes: [x.size, y.size], roots: [x.root, y.root] } as const;
  if (x.size === y.size && x.root !== y.root) {
    return { ...base, code: 'TALLY_LOG_EQUIVOCATION', message: `leaves ${a.index} and ${b.index} give ${x.origin} size ${x.size} two roots: ${x.root} and ${y.root}` };
  }
  const [seal, later] = x.seal && y.size > x.size ? [a, b] : y.seal && x.size > y.size ? [b, a] : [undefined, undefined];
  if (seal !== undefined && later !== undefined) {
    return { ...base, code: 'TALLY_LOG_INCONSISTENT', message: `leaf ${later.index} signs ${x.origin} at size ${later.leaf.size}, past the seal of leaf ${seal.index} at size ${seal.leaf.size} (roots ${later.leaf.root} and ${seal.leaf.root})` };
  }
  return undefined;
}

/**
 * Whether a checkpoint leaf records the session's own tree: `rootAt(size)`
 * is the root of the session's first `size` entries (64 lowercase hex), or
 * `undefined` when the tree read is smaller (then nothing is concluded).
 *
 * @example
 * const c = checkpointAgainstTree({ index: 4, leaf }, (n) => toHex(sessionTree.root(n)));
 */
export function checkpointAgainstTree(c: IndexedCheckpointLeaf, rootAt: (size: number) => string | undefined): CheckpointConflict | undefined {
  const tree = rootAt(c.leaf.size);
  if (tree === undefined || tree === c.leaf.root) return undefined;
  return {
    code: 'TALLY_LOG_SESSION_MISMATCH',
    origin: c.leaf.origin,
    leaves: [c.index],
    sizes: [c.leaf.size],
    roots: [c.leaf.root, tree],
    message: `leaf ${c.index} gives ${c.leaf.origin} size ${c.leaf.size} the root ${c.leaf.root}, but the session's own tree of that size has the root ${tree}`,
  };
}

/**
 * The checkpoint leaves seen so far, for a reader that goes through the log
 * in order (the monitor): {@link add} answers the first conflict a new leaf
 * has with one held — the first leaf of its `(origin, size)`, or its
 * origin's seal. Memory: one leaf per distinct `(origin, size)`.
 */
export class CheckpointLedger {
  private readonly bySize = new Map<string, IndexedCheckpointLeaf>();
  private readonly seals = new Map<string, IndexedCheckpointLeaf>();
  private readonly largest = new Map<string, IndexedCheckpointLeaf>();

  /** Records `c`; the conflict it has with a leaf held, if any (`c` is then not recorded). */
  add(c: IndexedCheckpointLeaf): CheckpointConflict | undefined {
    const { origin, size } = c.leaf;
    const key = `${origin}\n${size}`;
    for (const held of [this.bySize.get(key), this.seals.get(origin), c.leaf.seal ? this.largest.get(origin) : undefined]) {
      const conflict = held === undefined ? undefined : checkpointConflict(held, c);
      if (conflict) return conflict;
    }
    if (!this.bySize.has(key)) this.bySize.set(key, c);
    if (c.leaf.seal && !this.seals.has(origin)) this.seals.set(origin, c);
    const big = this.largest.get(origin);
    if (big === undefined || big.leaf.size < size) this.largest.set(origin, c);
    return undefined;
  }
}
