// A real TurnRuler for multi-process tests and fixtures: an authored body is
// JSON {agent, nonce}; the first use of (agent, nonce) anywhere in the store is
// admitted and reserves the nonce, any later use is ruled a replay.
import { sha256 } from '../../../dist/codec/index.js';
import { toHex } from '../../../dist/protocol/index.js';

/** @type {import('../../../dist/session/index.js').TurnRuler} */
export const nonceRuler = {
  async rule(ctx) {
    const { agent, nonce } = JSON.parse(new TextDecoder().decode(ctx.authored));
    if (await ctx.nonceOwner(agent, nonce)) return { ruling: { admitted: false, code: 'replayed_nonce' }, nonces: [] };
    return { ruling: { admitted: true }, nonces: [{ agentId: agent, nonce, intentHash: toHex(sha256(ctx.authored)) }] };
  },
};

/** The authored bytes of a nonce claim. */
export function claimBytes(agent, nonce) {
  return new TextEncoder().encode(JSON.stringify({ agent, nonce }));
}
