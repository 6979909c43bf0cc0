/**
 * How a recorded payment ruling travels on the wire: x402's `payment-identifier` semantics on
 * Tally's idempotency. A turn ruled `payment_id_conflict` (the same id with another payload) is
 * recorded like every ruling, and answered on the wire as a refusal (HTTP 409,
 * docs/WIRE.md); an identical retry of that turn is the engine's duplicate, so it gets the same
 * answer. The same id with the same payload is the recorded answer (the engine's duplicate of
 * the same turn, or in a new slot `duplicate_execution` naming the admitting turn): 200.
 */
import type { PaymentRuling } from './ruler.js';

/** The refused payment of a turn's ruling when it is a `payment_id_conflict`, else undefined. */
export function paymentIdConflictOf(ruling: unknown): Extract<PaymentRuling, { admitted: false }> | undefined {
  const p = (ruling as { x402?: { payment?: PaymentRuling } } | undefined)?.x402?.payment;
  return p !== undefined && !p.admitted && p.code === 'payment_id_conflict' ? p : undefined;
}
