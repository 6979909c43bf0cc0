/** `agent-tally/codec`: SHA-256 and bundle streaming (effects live here, not in protocol). */
export { sha256 } from './sha256.js';
export { verifyBundle, verifyBundleFile, encodeBundle, splitLines } from './bundle.js';
export type { VerifyBundleOptions } from './bundle.js';
