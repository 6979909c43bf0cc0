/**
 * Source of stored perfect-subtree hashes. `node(level, index)` MUST return
 * the root of the perfect subtree over leaves `[index·2^level, (index+1)·2^level)`
 * (level 0 = leaf hashes) and MUST throw if that subtree is not complete in
 * the store. In-memory {@link MerkleLevels} implements it today; a persistent
 * store can implement it later and reuse {@link rangeRootFromNodes} and friends.
 */
export interface NodeReader {
  /** Root of the perfect subtree `[index·2^level, (index+1)·2^level)`. */
  node(level: number, index: number): Uint8Array;
}
