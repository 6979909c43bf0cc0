/**
 * A judge service that signs its own answers (`tally judge serve`): an
 * OpenAI-compatible `POST /v1/chat/completions` that answers from a model —
 * an upstream endpoint, or the deterministic local rules model — and returns
 * in the `x-verdict-signature` header its own EIP-191 signature over
 * `<model>:<sha256(request bytes)>:<sha256(response bytes)>` (PROTOCOL.md §10).
 * Its key is not the operator's: a mandate names its address in `judges` or
 * `panel`, and the referee reads it with `createOpenAiJudge({ signature:
 * { header: 'x-verdict-signature' } })`, so the ruling carries no
 * `signed_by: "operator"` label.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { drainBody, readBody } from '../http/body.js';
import { serverTimeoutOptions, type HttpTimeouts } from '../http/timeouts.js';
import { parseStrictJson, type StrictJsonCode } from '../protocol/index.js';
import { judgeRequestBytes, sha256Hex, verdictMessage, type JudgeRequestInput } from './bytes.js';
import { accountOf, signText, type RefereeSigner } from './eip191.js';
import { MAX_JUDGE_RESPONSE_BYTES, isModelId } from './judge.js';
import { localCompletion, localJudgeContent } from './local-judge.js';

/** Header carrying the service's signature. */
export const VERDICT_SIGNATURE_HEADER = 'x-verdict-signature';
/** Largest request body accepted (bytes). */
export const MAX_JUDGE_REQUEST_BYTES = 262_144;

/** Where the service's answers come from. */
export type JudgeServiceModel =
  /** The local rules model; `format` fixes its answer shape (for tests of a judge that answers in the wrong one), else it answers in the shape the request asked for (a matrix for seed 003's assessment request, a verdict otherwise). */
  | { readonly kind: 'local'; readonly format?: 'verdict' | 'matrix' }
  | { readonly kind: 'upstream'; readonly baseUrl: string; readonly apiKey?: string; readonly timeoutMs?: number };

/** Options of {@link createJudgeService}. */
export interface JudgeServiceOptions {
  /** The service's own signing key. */
  readonly key: RefereeSigner;
  readonly model: JudgeServiceModel;
  /** Slow-client limits (default: those of `tally serve`, src/http). */
  readonly timeouts?: Partial<HttpTimeouts>;
}

/**
 * Why the service refused a request (`error.code` of its JSON answer): a
 * strict-JSON refusal of the body or of the user message (PROTOCOL.md §2.1),
 * or one of the service's own.
 */
export type JudgeServiceRefusal =
  | StrictJsonCode
  | 'proto-member'
  | 'not-judge-request'
  | 'not-canonical'
  | 'payload-too-large'
  | 'not-found';

/** Member names refused anywhere in a request: data that a lenient reader could take for a prototype. */
const REFUSED_MEMBER = '__proto__';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function hasRefusedMember(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) stack.push(...(v as unknown[]));
    else if (isObject(v)) {
      if (Object.hasOwn(v, REFUSED_MEMBER)) return true;
      stack.push(...Object.values(v));
    }
  }
  return false;
}

type Parsed = { readonly ok: true; readonly model: string; readonly request: JudgeRequestInput } | { readonly ok: false; readonly code: JudgeServiceRefusal; readonly message: string };

function refused(code: JudgeServiceRefusal, message: string): Parsed {
  return { ok: false, code, message };
}

/** Strict JSON, no `__proto__` member: the value, or why not. */
function strictValue(input: Uint8Array | string, what: string): { ok: true; value: unknown } | Extract<Parsed, { ok: false }> {
  const r = parseStrictJson(input);
  if (!r.ok) return { ok: false, code: r.code, message: `${what} is not strict JSON (${r.code}): ${r.message}` };
  if (hasRefusedMember(r.value)) return { ok: false, code: 'proto-member', message: `${what} names a member "${REFUSED_MEMBER}"` };
  return { ok: true, value: r.value };
}

/**
 * Reads a Tally judge request back into its parts. The body must be exactly
 * the bytes the referee sends for those parts (`judgeRequestBytes`, canonical
 * JSON): the one encoding, so the service signs no second spelling of a
 * request (a BOM, a duplicate member, a lone surrogate, `1e999999`, other
 * whitespace or member order are refused, never read leniently).
 */
function parseRequest(body: Uint8Array): Parsed {
  const outer = strictValue(body, 'the body');
  if (!outer.ok) return outer;
  const v = outer.value;
  const notOne = refused('not-judge-request', 'not a Tally judge request');
  if (!isObject(v) || !isModelId(v['model']) || !Array.isArray(v['messages'])) return notOne;
  const system = v['messages'][0];
  const assessment = isObject(system) && typeof system['content'] === 'string' && system['content'].startsWith('TALLY_REFEREE_ASSESS_V1\n');
  const user = v['messages'][1];
  if (!isObject(user) || typeof user['content'] !== 'string') return notOne;
  const inner = strictValue(user['content'], 'the user message');
  if (!inner.ok) return inner;
  const u = inner.value;
  if (!isObject(u) || typeof u['action'] !== 'string' || !isObject(u['intent']) || !isObject(u['mandate']) || !Array.isArray(u['mandate']['rules'])) return notOne;
  const rules = (u['mandate']['rules'] as unknown[]).map((r) => (isObject(r) && typeof r['constraint'] === 'string' ? r['constraint'] : ''));
  const ctx = u['context'];
  const context = isObject(ctx) && typeof ctx['text'] === 'string' ? ctx['text'] : undefined;
  // The format is read from the request's own shape; the canonical comparison below then holds it
  // to exactly the bytes the referee sends in that format (seed 002's verdict request carries
  // `chat_template_kwargs`, version 1's does not).
  const format = assessment ? ('assessment' as const) : 'chat_template_kwargs' in v ? ('verdict-v2' as const) : undefined;
  const request: JudgeRequestInput = { model: v['model'], rules, action: u['action'], intent: u['intent'] as JudgeRequestInput['intent'], context, ...(format === undefined ? {} : { format }) };
  let expected: Uint8Array;
  try {
    expected = judgeRequestBytes(request);
  } catch {
    return refused('not-canonical', 'the request holds a value canonical JSON cannot carry (PROTOCOL.md §2)');
  }
  if (!Buffer.from(expected).equals(body)) return refused('not-canonical', 'the body is not the canonical bytes of a Tally judge request (PROTOCOL.md §10)');
  return { ok: true, model: v['model'], request };
}

/** The service's JSON refusal: `{"error":{"code","type":"invalid_request_error","message"}}`. */
function refuse(res: ServerResponse, status: number, code: JudgeServiceRefusal, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: { code, type: 'invalid_request_error', message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

/**
 * Creates (does not start) the judge service's HTTP server.
 *
 * @example
 * const server = createJudgeService({ key: '0x…', model: { kind: 'local' } });
 * server.listen(0, '127.0.0.1');
 */
export function createJudgeService(options: JudgeServiceOptions): Server {
  const account = accountOf(options.key);
  const m = options.model;
  return createServer(serverTimeoutOptions(options.timeouts), (req, res) => {
    const reply = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body);
    };
    if (req.method !== 'POST' || !/\/chat\/completions$/.test((req.url ?? '').split('?')[0]!)) {
      drainBody(req, MAX_JUDGE_REQUEST_BYTES);
      return refuse(res, 404, 'not-found', 'POST /v1/chat/completions');
    }
    void (async () => {
      const read = await readBody(req, MAX_JUDGE_REQUEST_BYTES);
      if (read === 'aborted') return;
      if (read === 'too-large') {
        // Answered, not reset: the rest is discarded (as `tally serve` does), and a body past 16× the limit is cut.
        drainBody(req, MAX_JUDGE_REQUEST_BYTES);
        return refuse(res, 413, 'payload-too-large', `the body is over ${MAX_JUDGE_REQUEST_BYTES} bytes`);
      }
      const body = read;
      const parsed = parseRequest(body);
      if (!parsed.ok) return refuse(res, 400, parsed.code, parsed.message);
      const requestSha256 = sha256Hex(body);
      let response: Uint8Array;
      if (m.kind === 'local') {
        response = localCompletion(parsed.model, requestSha256, localJudgeContent(parsed.request, m.format ?? (parsed.request.format === 'assessment' ? 'matrix' : 'verdict')));
      } else {
        try {
          const r = await fetch(`${m.baseUrl.replace(/\/$/, '')}/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(m.apiKey === undefined ? {} : { authorization: `Bearer ${m.apiKey}` }) },
            body,
            signal: AbortSignal.timeout(m.timeoutMs ?? 20_000),
          });
          response = new Uint8Array(await r.arrayBuffer());
          if (!r.ok) return reply(502, JSON.stringify({ error: { message: `upstream answered HTTP ${r.status}` } }));
        } catch (e) {
          return reply(502, JSON.stringify({ error: { message: `upstream failed: ${e instanceof Error ? e.message.slice(0, 120) : 'error'}` } }));
        }
        if (response.length > MAX_JUDGE_RESPONSE_BYTES) return reply(502, '{"error":{"message":"upstream response too large"}}');
      }
      const signature = await signText(account, verdictMessage(parsed.model, requestSha256, sha256Hex(response)));
      res.writeHead(200, { 'content-type': 'application/json', [VERDICT_SIGNATURE_HEADER]: signature });
      res.end(response);
    })().catch(() => (res.headersSent ? res.destroy() : reply(500, '{"error":{"message":"internal"}}')));
  });
}
