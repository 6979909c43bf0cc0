/**
 * AP2's five dispute steps (specification.md, "Verification: Dispute"), run
 * offline over the entries of one transaction (PROTOCOL.md §16.9): the open
 * mandate and the pinned parties from the genesis spec, the frame the
 * purchase answered (its time is the verification time), the purchase turn,
 * and the receipts the pack's frames carry. Each step names its outcome;
 * nothing here reads a clock, a store or the network.
 */
import type { SessionSpec } from '../protocol/index.js';
import type { Ap2Code } from './codes.js';
import { verifyClosedMandate } from './closed.js';
import { b64sha256, verifyOpenMandate } from './open.js';
import { verifyCheckoutJwt, verifyReceipt, type CarriedReceipt, type Parties, type ReceiptType } from './receipts.js';
import { readAp2Spec } from './ruler.js';

export const DISPUTE_STEPS = ['checkout-mandate', 'checkout-hash', 'checkout-receipt', 'payment-mandate', 'payment-receipt'] as const;
export type DisputeStep = (typeof DISPUTE_STEPS)[number];

/** One step's outcome: `pass`, `fail` with its code, or `missing` (a receipt the pack does not hold). */
export interface StepOutcome {
  readonly step: number;
  readonly name: DisputeStep;
  readonly outcome: 'pass' | 'fail' | 'missing';
  readonly code?: Ap2Code;
  readonly detail: string;
}

/** The purchase as the turn carries it (canonical JSON {checkout_jwt, open_checkout, payment}). */
export interface Purchase { readonly checkoutJwt: string; readonly openCheckout: string; readonly payment: string }

export interface DisputeInput {
  readonly spec: SessionSpec;
  /** The purchase frame's time, ms. */
  readonly frameTime: number;
  readonly transactionId: string;
  readonly purchase: Purchase;
  /** Every receipt the pack's receipt frames carry, in pack order. */
  readonly receipts: readonly CarriedReceipt[];
}

export interface DisputeResult {
  readonly steps: readonly StepOutcome[];
  /** Amount and currency of the closed payment mandate, when step 4 passed. */
  readonly amount?: number;
  readonly currency?: string;
}

const NAMES: Record<DisputeStep, number> = { 'checkout-mandate': 1, 'checkout-hash': 2, 'checkout-receipt': 3, 'payment-mandate': 4, 'payment-receipt': 5 };
const pass = (name: DisputeStep, detail: string): StepOutcome => ({ step: NAMES[name], name, outcome: 'pass', detail });
const fail = (name: DisputeStep, code: Ap2Code, detail: string): StepOutcome => ({ step: NAMES[name], name, outcome: 'fail', code, detail });

/** Runs the five steps in order; a step that cannot run because an earlier one failed fails with that step's code. */
export async function runDisputeSteps(input: DisputeInput): Promise<DisputeResult> {
  const steps: StepOutcome[] = [];
  const spec = readAp2Spec(input.spec);
  if (!spec.ok) return { steps: DISPUTE_STEPS.map((n) => fail(n, spec.code, spec.message)) };
  const { parties } = spec.value;
  const now = Math.floor(input.frameTime / 1000);
  const { checkoutJwt, openCheckout, payment } = input.purchase;

  // 1. The checkout verified by the merchant's rules: the user's open mandate at the frame's time, and the merchant's signature on checkout_jwt.
  const open = await verifyOpenMandate(spec.value.mandate, { issuerKey: spec.value.issuer, now });
  const checkout = await verifyCheckoutJwt(checkoutJwt, parties.merchant);
  steps.push(!open.ok ? fail('checkout-mandate', open.code, open.message) : !checkout.ok ? fail('checkout-mandate', checkout.code, checkout.message) : pass('checkout-mandate', `open mandate ${open.value.id} valid at ${now}; checkout_jwt signed by ${parties.merchant.iss}`));

  // 2. checkout_hash computed independently from the included checkout_jwt.
  const checkoutHash = b64sha256(checkoutJwt);
  steps.push(checkoutHash === input.transactionId ? pass('checkout-hash', `SHA-256(checkout_jwt) = ${checkoutHash}`) : fail('checkout-hash', 'closed-transaction-id', `SHA-256(checkout_jwt) is ${checkoutHash}, not ${input.transactionId}`));

  // 3. The checkout receipt's reference is the checkout hash (Tally's turn carries no closed checkout mandate: §13.1).
  steps.push(await receiptStep('checkout-receipt', 'checkout', checkoutHash, input.receipts, parties));

  // 4. The payment mandate verified against the open mandate with the checkout's checkout_hash.
  let amount: number | undefined;
  let currency: string | undefined;
  if (!open.ok) steps.push(fail('payment-mandate', open.code, open.message));
  else {
    const closed = await verifyClosedMandate(payment, open.value, { now, aud: spec.value.audience, checkoutHashes: new Set([checkoutHash]), openCheckoutHash: b64sha256(openCheckout) });
    if (!closed.ok) steps.push(fail('payment-mandate', closed.code, closed.message));
    else if (closed.value.kind !== 'payment' || closed.value.transactionId !== input.transactionId) steps.push(fail('payment-mandate', 'closed-transaction-id', 'the payment mandate names another transaction'));
    else {
      amount = closed.value.request.amount;
      currency = closed.value.request.currency;
      steps.push(pass('payment-mandate', `signed by the cnf key; ${amount} ${currency} to ${closed.value.request.payee.id}`));
    }
  }

  // 5. The payment receipt's reference is the hash of the closed payment mandate.
  steps.push(await receiptStep('payment-receipt', 'payment', b64sha256(payment), input.receipts, parties));
  return { steps, ...(amount === undefined ? {} : { amount, currency: currency! }) };
}

async function receiptStep(name: DisputeStep, type: ReceiptType, reference: string, receipts: readonly CarriedReceipt[], parties: Parties): Promise<StepOutcome> {
  const mine = receipts.filter((r) => r.type === type);
  if (mine.length === 0) return { step: NAMES[name], name, outcome: 'missing', detail: `the pack holds no ${type} receipt` };
  let first: StepOutcome | undefined;
  for (const r of mine) {
    const v = await verifyReceipt(type, r.jwt, parties);
    if (v.ok && v.value.reference === reference) return pass(name, `${v.value.status} from ${v.value.iss} at ${v.value.iat}, reference ${reference}`);
    first ??= v.ok ? fail(name, 'receipt-reference', `the ${type} receipt answers ${v.value.reference}, not ${reference}`) : fail(name, v.code, v.message);
  }
  return first!;
}
