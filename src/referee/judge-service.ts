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
import { createServer, type Server } from 'node:http';
import { sha256Hex, verdictMessage, type JudgeRequestInput } from './bytes.js';
import { accountOf, signText, type RefereeSigner } from './eip191.js';
import { MAX_JUDGE_RESPONSE_BYTES, isModelId } from './judge.js';
import { localCompletion, localJudgeContent } from './local-judge.js';

/** Header carrying the service's signature. */
export const VERDICT_SIGNATURE_HEADER = 'x-verdict-signature';
/** Largest request body accepted (bytes). */
export const MAX_JUDGE_REQUEST_BYTES = 262_144;

/** Where the service's answers come from. */
export type JudgeServiceModel =
  | { readonly kind: 'local'; readonly format?: 'verdict' | 'matrix' }
  | { readonly kind: 'upstream'; readonly baseUrl: string; readonly apiKey?: string; readonly timeoutMs?: number };

/** Options of {@link createJudgeService}. */
export interface JudgeServiceOptions {
  /** The service's own signing key. */
  readonly key: RefereeSigner;
  readonly model: JudgeServiceModel;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads a Tally judge request back into its parts (for the local model); `undefined` if it is not one. */
function parseRequest(body: Uint8Array): { model: string; request: JudgeRequestInput } | undefined {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    return undefined;
  }
  if (!isObject(v) || !isModelId(v['model']) || !Array.isArray(v['messages'])) return undefined;
  const system = v['messages'][0];
  const assessment = isObject(system) && typeof system['content'] === 'string' && system['content'].startsWith('TALLY_REFEREE_ASSESS_V1\n');
  const user = v['messages'][1];
  if (!isObject(user) || typeof user['content'] !== 'string') return undefined;
  let u: unknown;
  try {
    u = JSON.parse(user['content']);
  } catch {
    return undefined;
  }
  if (!isObject(u) || typeof u['action'] !== 'string' || !isObject(u['intent']) || !isObject(u['mandate']) || !Array.isArray(u['mandate']['rules'])) return undefined;
  const rules = (u['mandate']['rules'] as unknown[]).map((r) => (isObject(r) && typeof r['constraint'] === 'string' ? r['constraint'] : ''));
  const ctx = u['context'];
  const context = isObject(ctx) && typeof ctx['text'] === 'string' ? ctx['text'] : undefined;
  return { model: v['model'], request: { model: v['model'], rules, action: u['action'], intent: u['intent'] as JudgeRequestInput['intent'], context, ...(assessment ? { format: 'assessment' as const } : {}) } };
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
  return createServer((req, res) => {
    const reply = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body);
    };
    if (req.method !== 'POST' || !/\/chat\/completions$/.test((req.url ?? '').split('?')[0]!)) return reply(404, '{"error":{"message":"POST /v1/chat/completions"}}');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_JUDGE_REQUEST_BYTES) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => {
      void (async () => {
        const body = new Uint8Array(Buffer.concat(chunks));
        const parsed = parseRequest(body);
        if (!parsed) return reply(400, '{"error":{"message":"not a Tally judge request"}}');
        const requestSha256 = sha256Hex(body);
        let response: Uint8Array;
        if (m.kind === 'local') {
          response = localCompletion(parsed.model, requestSha256, localJudgeContent(parsed.request, m.format ?? 'verdict'));
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
      })().catch(() => reply(500, '{"error":{"message":"internal"}}'));
    });
  });
}
