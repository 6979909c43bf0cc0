/**
 * What a verification was checked against, in words: "valid, unpinned" when
 * only the bundle's internal consistency was checked, else what it was pinned to.
 */

/** Pins given on the command line (`--root`, `--session`, `--size`). */
export interface GivenPins {
  readonly receiptRoot?: string;
  readonly sessionId?: string;
  readonly size?: number;
}

/** The phrase for an unpinned result. */
export const UNPINNED = 'valid, unpinned (internal consistency only; pin with --root or --vkey + --checkpoint)';

/**
 * `valid, unpinned (…)` or `valid, pinned to receipt root …, session …, size …`
 * (and `checkpoint`, a description of a signed checkpoint pinned with --key).
 */
export function verdictLine(pin: GivenPins, checkpoint?: string): string {
  const parts: string[] = [];
  if (checkpoint !== undefined) parts.push(checkpoint);
  if (pin.receiptRoot !== undefined) parts.push(`receipt root ${pin.receiptRoot}`);
  if (pin.sessionId !== undefined) parts.push(`session ${pin.sessionId}`);
  if (pin.size !== undefined) parts.push(`size ${pin.size}`);
  return parts.length === 0 ? UNPINNED : `valid, pinned to ${parts.join(', ')}`;
}
