import { hasLoneSurrogate, isValidKeyName } from '../note/name.js';
import { isDigestHex } from '../../protocol/hex.js';
import { TallyError } from '../../protocol/errors.js';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f]/;
const EDGE_SPACE = /^\p{White_Space}|\p{White_Space}$/u;

/**
 * True when `origin` may be the first line of a Tally checkpoint: non-empty,
 * no newline or other control character, no leading or trailing white space,
 * well-formed Unicode. (C2SP only requires non-empty; inner spaces are
 * allowed so that e.g. Go's `go.sum database tree` parses.)
 */
export function isValidOrigin(origin: string): boolean {
  return typeof origin === 'string' && origin.length > 0 && !CONTROL.test(origin) && !EDGE_SPACE.test(origin) && !hasLoneSurrogate(origin);
}

/**
 * The checkpoint origin of one Tally session: `<engineName>/<sessionIdHex>`,
 * where `engineName` is the engine's note key name (a schema-less URL such as
 * `tally.example/acme` is recommended) and `sessionIdHex` the session id (64
 * lowercase hex: the genesis entry hash). The origin therefore starts with the
 * name of the key that signs it, contains no white space and no `+`.
 * Throws `TALLY_CHECKPOINT_ORIGIN_INVALID` on a bad name or session id.
 *
 * @example
 * checkpointOrigin('tally.example/acme', 'ab'.repeat(32))
 * // 'tally.example/acme/abab…ab'
 */
export function checkpointOrigin(engineName: string, sessionIdHex: string): string {
  if (!isValidKeyName(engineName)) {
    throw new TallyError('TALLY_CHECKPOINT_ORIGIN_INVALID', 'Engine name must be a valid key name (no white space, no "+").', {
      details: JSON.stringify(engineName),
    });
  }
  if (!isDigestHex(sessionIdHex)) {
    throw new TallyError('TALLY_CHECKPOINT_ORIGIN_INVALID', 'Session id must be 64 lowercase hex characters.', {
      details: JSON.stringify(sessionIdHex),
    });
  }
  return `${engineName}/${sessionIdHex}`;
}

/**
 * Splits a checkpoint origin into the engine name and the session id, or
 * `undefined` when it is not `<name>/<64 lowercase hex>`.
 */
export function splitSessionOrigin(origin: string): { engineName: string; sessionId: string } | undefined {
  if (typeof origin !== 'string') return undefined;
  const slash = origin.lastIndexOf('/');
  if (slash <= 0) return undefined;
  const sessionId = origin.slice(slash + 1);
  if (!isDigestHex(sessionId)) return undefined;
  return { engineName: origin.slice(0, slash), sessionId };
}
