/** The engine log's pure part: leaf bytes and C2SP tlog-tiles paths and encodings. */
export { engineLogLeafBytes, parseEngineLogLeaf, specHash, LEAF_REFUSAL_CODES } from './leaf.js';
export type { EngineLogLeaf, OpenLeaf, CheckpointLeaf, LeafRefusalCode, ParseLeafResult } from './leaf.js';
export { TILE_WIDTH, TILE_HEIGHT, ENTRY_MAX_BYTES, tileIndexPath, tilePath, parseTilePath, tilesForSize, tileExists, tileHashes, entryBundle, parseEntryBundle } from './tiles.js';
export type { TileRef } from './tiles.js';
export { logIdentityText, parseLogIdentityText, logIdentityId } from './identity.js';
export type { LogIdentity, PreviousShard, LogIdentityTextCode, ParseLogIdentityResult } from './identity.js';
export { checkpointConflict, checkpointAgainstTree, CheckpointLedger, CHECKPOINT_CONFLICT_CODES } from './conflict.js';
export type { IndexedCheckpointLeaf, CheckpointConflict, CheckpointConflictCode } from './conflict.js';
