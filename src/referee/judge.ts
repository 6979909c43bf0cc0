/**
 * The judge seam: one interface for the deterministic local judge and the
 * adapter for OpenAI-compatible endpoints. A judge receives the exact request
 * bytes (built by the referee, so replay can rebuild them) and returns the
 * exact response bytes with a signature over
 * `<model_id>:<sha256(request)>:<sha256(response)>`, or a failure class.
 * A judge MUST NOT throw for provider trouble; it returns a failure.
 */
import type { JudgeRequestInput } from './bytes.js';

/** Largest judge response kept in a ruling, in bytes; a longer one is a failure (`oversize`). */
export const MAX_JUDGE_RESPONSE_BYTES = 16_384;

/** Why a judge gave no usable answer (recorded with `judge_unavailable`). */
export type JudgeFailure = 'timeout' | 'http_status' | 'network' | 'oversize' | 'no_signature' | 'no_judge' | 'error';

/** Every {@link JudgeFailure}. */
export const JUDGE_FAILURES = Object.freeze(['timeout', 'http_status', 'network', 'oversize', 'no_signature', 'no_judge', 'error'] as const satisfies readonly JudgeFailure[]);

/** One question to a judge. */
export interface JudgeQuery {
  /** The request as structured data (what a local judge reads). */
  readonly request: JudgeRequestInput;
  /** The exact request bytes (what a remote judge sends; what is hashed). */
  readonly requestBytes: Uint8Array;
}

/** A judge's answer. */
export type JudgeAnswer =
  | { readonly ok: true; readonly response: Uint8Array; readonly signature: string }
  | { readonly ok: false; readonly failure: JudgeFailure; readonly message: string };

/** A judge: a model id and a way to ask it. */
export interface Judge {
  /** The model id written into the request and the signed verdict text (1–128 printable ASCII, no spaces). */
  readonly model: string;
  /** The address its verdicts recover to, when the client knows it (a panel member is matched on model and signer). */
  readonly signer?: string;
  /** `operator`: the operator holds the signing key (an adapter signing a model's reply itself); rulings label its answers so. */
  readonly signedBy?: 'operator';
  /** Asks once; never throws for provider failures. */
  ask(query: JudgeQuery): Promise<JudgeAnswer>;
}

const MODEL = /^[\x21-\x7e]{1,128}$/;

/** True for a usable model id. */
export function isModelId(model: unknown): model is string {
  return typeof model === 'string' && MODEL.test(model);
}
