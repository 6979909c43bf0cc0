/** `agent-tally/codec`: SHA-256 and bundle streaming (effects live here, not in protocol). */
export { sha256 } from './sha256.js';
export { verifyBundle, verifyBundleFile, encodeBundle, splitLines, LineSplitter } from './bundle.js';
export type { VerifyBundleOptions, VerifyBundleFileOptions } from './bundle.js';
export { verifyBundleParallel, sharedVerifyPool, createVerifyPool } from './parallel/index.js';
export type { ParallelVerifyOptions, VerifyPool, VerifyPoolOptions } from './parallel/index.js';
