/** Parallel bundle verification (worker threads); `verifyBundle` stays the reference. */
export { verifyBundleParallel, sharedVerifyPool } from './verify.js';
export type { ParallelVerifyOptions } from './verify.js';
export { createVerifyPool } from './pool.js';
export type { VerifyPool, VerifyPoolOptions } from './pool.js';
