/**
 * An external fact of a replay (`ExternalFact`) in words: the one text
 * `tally replay` prints and the grader's page shows for a fact one bundle
 * cannot re-derive (a nonce first used, or a reservation made, in another
 * session). Browser-safe.
 */
import type { ExternalFact } from './types.js';

/**
 * What the fact says and where it is owned, e.g. `nonce "7" of agent "0xab…"
 * first used in session 3f… entry 4` or `ap2-use "use:0" of "ap2:…" reserved
 * in session 3f… entry 2`.
 */
export function externalFactText(f: ExternalFact): string {
  const what = f.kind === 'nonce-owner' ? `nonce ${JSON.stringify(f.nonce)} of agent ${JSON.stringify(f.agentId)} first used` : `${f.kind} ${JSON.stringify(f.nonce)} of ${JSON.stringify(f.agentId)} reserved`;
  return `${what} in session ${f.owner.sessionId} entry ${f.owner.index}`;
}
