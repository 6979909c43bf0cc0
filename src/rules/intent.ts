/**
 * The intent ruler: every authored turn that carries a signed Intent is
 * validated at append time with the session's signer registry, the store's
 * nonce reservations (unique per signer and agent across ALL sessions, keyed
 * by {@link nonceKey}) and the time of
 * the frame being answered as "now" — never the wall clock — and the ruling is
 * recorded in the turn. An admitted intent's nonce is reserved in the same
 * atomic append as its turn.
 *
 * Authored bytes carrying an intent are a UTF-8 JSON object
 * `{"intent": <signed Intent>, "context"?: <untrusted text>, …}`. Bytes that
 * are not such an object are recorded without a ruling (a plain turn).
 */
import type { CanonicalObject } from '../protocol/index.js';
// Direct modules, not intent/index.js: that index also exports the worker-thread pool (node-only), and this ruler runs in the audit page too.
import { createSignerCache, type SignerCache } from '../intent/signer-cache.js';
import { validateIntent, type ValidateIntentOptions, type ValidateIntentResult } from '../intent/validate.js';
import { carriedIntent } from '../intent/carried.js';
import type { IntentPool } from '../intent/pool.js';
import type { RuleContext, RuleOutcome, TurnRuler } from '../session/index.js';
import type { NonceOwner } from '../store/index.js';
import { SPAN, inSpan } from '../telemetry/index.js';
import { checkIntentSpec, intentOptionsOf, nonceKey, nonceKeyOf, signerOf, type IntentSpecOptions } from './spec.js';

/** The `intent` member of a turn's ruling. */
export type IntentRuling =
  | {
      readonly admitted: true;
      readonly intent_hash: string;
      readonly agent_id: string;
      readonly nonce: string;
      readonly action: string;
      readonly signer: string;
    }
  | {
      readonly admitted: false;
      readonly stage: string;
      readonly code: string;
      readonly message: string;
      readonly intent_hash?: string;
      /** On `replayed_nonce`: where the nonce was first used. */
      readonly first?: { readonly intent_hash: string; readonly session: string; readonly index: number };
    };

/** Parses authored bytes as an intent-carrying turn; `undefined` for a plain turn. */
export function intentOfAuthored(bytes: Uint8Array): { intent: unknown; context?: unknown } | undefined {
  return carriedIntent(bytes);
}

/** Options of {@link createIntentRuler}. */
export interface IntentRulerOptions {
  /** Signer key cache shared across sessions (default: a new one per ruler). */
  readonly signerCache?: SignerCache;
  /**
   * Validate on a pool of worker threads (see `createIntentPool`) so turns of
   * many sessions are ruled on in parallel; the rulings are exactly those of
   * the single-thread path. The caller owns the pool (and closes it).
   */
  readonly pool?: IntentPool;
}

type NonceSeam = (agentId: string, nonce: string) => Promise<NonceOwner | undefined> | NonceOwner | undefined;

/** The ruling for a validation result (`first`: the owner of a replayed nonce, when known). */
function rulingOf(r: ValidateIntentResult, first: NonceOwner | undefined): { ruling: IntentRuling; nonce?: { agentId: string; nonce: string; intentHash: string } } {
  if (r.ok) {
    return {
      ruling: { admitted: true, intent_hash: r.intent_hash, agent_id: r.intent.agent_id, nonce: r.intent.nonce, action: r.intent.action, signer: r.signer },
      nonce: { agentId: nonceKey(r.signer, r.intent.agent_id), nonce: r.intent.nonce, intentHash: r.intent_hash },
    };
  }
  return {
    ruling: {
      admitted: false,
      stage: r.stage,
      code: r.code,
      message: r.message,
      ...(r.intent_hash === undefined ? {} : { intent_hash: r.intent_hash }),
      ...(r.code === 'replayed_nonce' && first ? { first: { intent_hash: first.intentHash, session: first.sessionId, index: first.index } } : {}),
    },
  };
}

/** Rules through a worker pool: the same validation, options and nonce seam as {@link ruleIntent}. */
async function rulePooled(
  ctx: Pick<RuleContext, 'spec' | 'frameTime' | 'authored'> & { nonceOwner: NonceSeam },
  pool: IntentPool,
): Promise<{ ruling: IntentRuling; nonce?: { agentId: string; nonce: string; intentHash: string } } | undefined> {
  const opts = intentOptionsOf(ctx.spec);
  const agents = ctx.spec['agents'];
  let first: NonceOwner | undefined;
  // Route by agent so each worker keeps its agents' keys cached, and look the
  // nonce up now so the worker need not ask back (neither changes a result:
  // the worker uses the answer only for exactly this key; nonces are never
  // released, and the store re-checks them at append).
  const raw = carriedIntent(ctx.authored)?.intent as { agent_id?: unknown; nonce?: unknown } | undefined;
  const agentId = raw?.agent_id;
  const rawNonce = raw?.nonce;
  let nonceHint: { agentId: string; nonce: string; lookup: { usedBy: string } | false } | undefined;
  const keyOf = (id: string): string | undefined => nonceKeyOf(ctx.spec, id);
  const hintKey = typeof agentId === 'string' ? keyOf(agentId) : undefined;
  if (typeof agentId === 'string' && typeof rawNonce === 'string' && hintKey !== undefined) {
    try {
      const owner = await ctx.nonceOwner(hintKey, rawNonce);
      first = owner;
      nonceHint = { agentId, nonce: rawNonce, lookup: owner ? { usedBy: owner.intentHash } : false };
    } catch {
      // No hint: if the validator needs this answer it asks again, and fails as it would.
    }
  }
  const r = await pool.validateAuthored(ctx.authored, {
    signers: typeof agents === 'object' && agents !== null && !Array.isArray(agents) ? (agents as Record<string, string>) : {},
    isNonceUsed: async (agentId, nonce) => {
      const k = keyOf(agentId);
      first = k === undefined ? undefined : await ctx.nonceOwner(k, nonce);
      return first ? { usedBy: first.intentHash } : false;
    },
    now: ctx.frameTime,
    ...sealedOptions(opts),
    ...(nonceHint === undefined ? {} : { nonceHint }),
  }, typeof agentId === 'string' ? agentId : undefined);
  return r === undefined ? undefined : rulingOf(r, first);
}

/** The validation options sealed in the spec, without absent members (exactOptionalPropertyTypes). */
function sealedOptions(opts: IntentSpecOptions): Pick<ValidateIntentOptions, 'clockSkewMs' | 'maxTtlHorizonMs' | 'limits'> {
  return {
    ...(opts.clockSkewMs === undefined ? {} : { clockSkewMs: opts.clockSkewMs }),
    ...(opts.maxTtlHorizonMs === undefined ? {} : { maxTtlHorizonMs: opts.maxTtlHorizonMs }),
    ...(opts.limits === undefined ? {} : { limits: opts.limits }),
  };
}

/** Rules on one intent-carrying turn; exported for replay, which must reach the same ruling. */
export async function ruleIntent(
  ctx: Pick<RuleContext, 'spec' | 'frameTime'> & { nonceOwner(agentId: string, nonce: string): Promise<NonceOwner | undefined> | NonceOwner | undefined },
  intent: unknown,
  signerCache?: SignerCache,
): Promise<{ ruling: IntentRuling; nonce?: { agentId: string; nonce: string; intentHash: string } }> {
  const opts = intentOptionsOf(ctx.spec);
  let first: NonceOwner | undefined;
  const r = await inSpan(SPAN.intent, {}, () => validateIntent(intent, {
    resolveSigner: (agentId) => signerOf(ctx.spec, agentId),
    isNonceUsed: async (agentId, nonce) => {
      // Keyed by the registered signer (resolved before this seam is asked).
      const k = nonceKeyOf(ctx.spec, agentId);
      first = k === undefined ? undefined : await ctx.nonceOwner(k, nonce);
      return first ? { usedBy: first.intentHash } : false;
    },
    now: ctx.frameTime,
    ...sealedOptions(opts),
    ...(signerCache === undefined ? {} : { signerCache }),
  }));
  return rulingOf(r, first);
}

/**
 * Creates the intent ruler to pass to `createEngine({ ruler })`.
 *
 * @example
 * const engine = createEngine({ store, ruler: createIntentRuler() });
 */
export function createIntentRuler(options: IntentRulerOptions = {}): TurnRuler {
  const signerCache = options.signerCache ?? createSignerCache();
  return {
    checkSpec: checkIntentSpec,
    async rule(ctx: RuleContext): Promise<RuleOutcome | undefined> {
      if (ctx.spec['agents'] === undefined) return undefined;
      if (options.pool) {
        const pool = options.pool;
        const pooled = await inSpan(SPAN.intent, {}, () => rulePooled(ctx, pool));
        if (!pooled) return undefined;
        return { ruling: { intent: pooled.ruling as unknown as CanonicalObject }, nonces: pooled.nonce ? [pooled.nonce] : [] };
      }
      const carried = intentOfAuthored(ctx.authored);
      if (!carried) return undefined;
      const { ruling, nonce } = await ruleIntent(ctx, carried.intent, signerCache);
      return { ruling: { intent: ruling as unknown as CanonicalObject }, nonces: nonce ? [nonce] : [] };
    },
  };
}
