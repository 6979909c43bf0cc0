/**
 * The adapter for OpenAI-compatible chat-completion endpoints. It POSTs the
 * referee's exact request bytes to `<baseUrl>/chat/completions` and keeps the
 * exact response body.
 *
 * Where the signature comes from: such an endpoint does not sign. Either
 * - `signature: { key }` — the adapter is the attesting gateway: right after
 *   receiving the body it signs `<model>:<sha256(request)>:<sha256(response)>`
 *   with its configured key (as NEAR AI's TEE key does on its side); or
 * - `signature: { header }` — the endpoint (a TEE gateway) returns that
 *   signature in a response header, which is taken as is.
 * Either way the referee accepts the verdict only when the signature recovers
 * to a signer listed in the mandate's `judges`.
 *
 * Provider trouble is a failure class, never an exception: `timeout`,
 * `http_status`, `network`, `oversize`, `no_signature`.
 */
import { TallyError } from '../protocol/errors.js';
import { sha256Hex, verdictMessage } from './bytes.js';
import { accountOf, signText, type RefereeSigner } from './eip191.js';
import { MAX_JUDGE_RESPONSE_BYTES, isModelId, type Judge, type JudgeAnswer, type JudgeFailure, type JudgeQuery } from './judge.js';

/** Options of {@link createOpenAiJudge}. */
export interface OpenAiJudgeOptions {
  /** Base URL of the API, e.g. `https://api.example.com/v1` (the adapter appends `/chat/completions`). */
  readonly baseUrl: string;
  /** Model id sent in the request and signed into the verdict. */
  readonly model: string;
  /** API key, sent as `Authorization: Bearer …` (never logged or recorded). */
  readonly apiKey?: string;
  /** Where the verdict signature comes from (see the module comment). */
  readonly signature: { readonly key: RefereeSigner } | { readonly header: string };
  /** Whole-call timeout in ms (default 20 000). */
  readonly timeoutMs?: number;
  /** Largest accepted response body (default and maximum {@link MAX_JUDGE_RESPONSE_BYTES}). */
  readonly maxResponseBytes?: number;
}

const fail = (failure: JudgeFailure, message: string): JudgeAnswer => ({ ok: false, failure, message });

function isTimeout(e: unknown): boolean {
  return e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
}

async function readLimited(res: Response, max: number): Promise<Uint8Array | 'oversize'> {
  const reader = res.body?.getReader();
  if (!reader) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      return 'oversize';
    }
    parts.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Creates a judge that asks an OpenAI-compatible endpoint.
 *
 * @example
 * const judge = createOpenAiJudge({ baseUrl: 'http://127.0.0.1:8080/v1', model: 'gpt-4o-mini', apiKey: process.env.JUDGE_KEY, signature: { key: gatewayKey } });
 */
export function createOpenAiJudge(options: OpenAiJudgeOptions): Judge {
  const misuse = (what: string): never => {
    throw new TallyError('TALLY_REFEREE_JUDGE_OPTIONS', `createOpenAiJudge: ${what}.`);
  };
  let url: URL;
  try {
    url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/chat/completions`);
  } catch {
    return misuse('baseUrl must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') misuse('baseUrl must be http or https');
  if (!isModelId(options.model)) misuse('model must be 1–128 printable ASCII characters without spaces');
  const timeoutMs = options.timeoutMs ?? 20_000;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) misuse('timeoutMs must be a positive integer');
  const max = options.maxResponseBytes ?? MAX_JUDGE_RESPONSE_BYTES;
  if (!Number.isSafeInteger(max) || max < 1 || max > MAX_JUDGE_RESPONSE_BYTES) misuse(`maxResponseBytes must be 1–${MAX_JUDGE_RESPONSE_BYTES}`);
  const sig = options.signature;
  const account = 'key' in sig ? accountOf(sig.key) : undefined;
  const header = 'header' in sig ? sig.header : undefined;
  if (account === undefined && (typeof header !== 'string' || !/^[A-Za-z0-9-]{1,64}$/.test(header))) misuse('signature must be { key } or { header: <header name> }');
  const model = options.model;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (options.apiKey !== undefined) headers['authorization'] = `Bearer ${options.apiKey}`;

  return {
    model,
    // With { key } the adapter, not the model's provider, signs: its answers are labelled signed_by "operator".
    ...(account === undefined ? {} : { signer: account.address.toLowerCase(), signedBy: 'operator' as const }),
    async ask(query: JudgeQuery): Promise<JudgeAnswer> {
      const signal = AbortSignal.timeout(timeoutMs);
      let res: Response;
      try {
        res = await fetch(url, { method: 'POST', headers, body: query.requestBytes, signal });
      } catch (e) {
        return isTimeout(e) ? fail('timeout', `no answer within ${timeoutMs} ms`) : fail('network', `request failed: ${e instanceof Error ? e.message.slice(0, 120) : 'error'}`);
      }
      let body: Uint8Array | 'oversize';
      try {
        if (res.status < 200 || res.status > 299) {
          await res.body?.cancel().catch(() => undefined);
          return fail('http_status', `HTTP ${res.status}`);
        }
        body = await readLimited(res, max);
      } catch (e) {
        return isTimeout(e) ? fail('timeout', `no complete answer within ${timeoutMs} ms`) : fail('network', 'the response body could not be read');
      }
      if (body === 'oversize') return fail('oversize', `the response exceeds ${max} bytes`);
      let signature: string;
      if (account !== undefined) {
        signature = await signText(account, verdictMessage(model, sha256Hex(query.requestBytes), sha256Hex(body)));
      } else {
        const h = res.headers.get(header!);
        if (h === null) return fail('no_signature', `the response has no ${header!} header`);
        signature = h.trim().toLowerCase();
      }
      return { ok: true, response: body, signature };
    },
  };
}
