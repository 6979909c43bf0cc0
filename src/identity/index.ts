/** `src/identity`: the engine log's signed identity document graders pin, shard rotation, and bindings checked under it (docs/PROTOCOL.md §15.8, §15.9). */
export { signLogIdentity, openLogIdentity, readLogIdentity, openLogIdentityChain, successorPrevious, LOG_IDENTITY_CODES, NODE_IDENTITY_CRYPTO } from './document.js';
export type { IdentityCrypto, IdentityShard, LogIdentityCode, LogIdentityInput, OpenedLogIdentity, OpenLogIdentityOptions, OpenLogIdentityResult } from './document.js';
export { openLogIdentityWith, readLogIdentityWith, openLogIdentityChainWith } from './document-rule.js';
export type { OpenLogIdentityWithOptions } from './document-rule.js';
export { verifyLogBindingUnderIdentity } from './binding.js';
export { verifyLogBindingUnderIdentityWith } from './binding-rule.js';
export type { VerifyUnderIdentityOptions, VerifyUnderIdentityResult, VerifyUnderIdentityWithOptions } from './binding.js';
