/** `agent-tally/store`: the transcript storage contract and its implementations. */
export { MemoryStore } from './memory.js';
export type { TranscriptStore, StoredEntry, SessionHead, NonceClaim, NonceOwner, AppendRequest, AppendOutcome } from './types.js';
