/** `src/identity`: the engine log's signed identity document graders pin, shard rotation, and bindings checked under it (docs/PROTOCOL.md §15.8, §15.9). */
export { signLogIdentity, openLogIdentity, readLogIdentity, openLogIdentityChain, successorPrevious, LOG_IDENTITY_CODES } from './document.js';
export type { IdentityShard, LogIdentityCode, LogIdentityInput, OpenedLogIdentity, OpenLogIdentityOptions, OpenLogIdentityResult } from './document.js';
export { verifyLogBindingUnderIdentity } from './binding.js';
export type { VerifyUnderIdentityOptions, VerifyUnderIdentityResult } from './binding.js';
