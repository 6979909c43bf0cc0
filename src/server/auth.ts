/**
 * Bearer-token authentication. Tokens are never stored: the configuration
 * holds the SHA-256 of each token (lowercase hex of the token's UTF-8 bytes),
 * and a presented token is hashed and compared with EVERY configured hash in
 * constant time (`timingSafeEqual`, no early exit), so neither the position
 * nor the prefix of a match shows in the timing.
 *
 * Configuration (a file named by `--auth` / `TALLY_AUTH_FILE`, or the same
 * JSON in `TALLY_TOKENS`):
 *
 * ```json
 * { "tokens": [
 *   { "name": "runtime-1", "role": "runtime", "sha256": "<64 hex>" },
 *   { "name": "alpha", "role": "agent", "agents": ["alpha"], "signer": "0x<40 hex>", "sha256": "<64 hex>" },
 *   { "name": "audit", "role": "auditor", "sha256": "<64 hex>", "rate": { "perSecond": 5, "burst": 10 } } ] }
 * ```
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { TallyError, parseStrictJson } from '../protocol/index.js';

/** What a token may do; see docs/WIRE.md for the full table. */
export type Role = 'runtime' | 'agent' | 'auditor';

/** Every configurable role. */
export const ROLES = ['runtime', 'agent', 'auditor'] as const satisfies readonly Role[];

/** Who is calling: a configured token, or the local operator (an in-process or stdio caller with no network peer). */
export interface Principal {
  /** The token's configured name (what logs show; never the token). */
  readonly name: string;
  readonly role: Role | 'operator';
  /** Agent ids an agent token speaks for (empty for other roles). */
  readonly agents: readonly string[];
  /**
   * The signer an agent token is bound to (lowercase): it speaks for its
   * `agents` only in sessions whose `spec.agents` maps them to this key.
   */
  readonly signer?: string;
  /** Per-token rate override. */
  readonly rate?: { readonly perSecond: number; readonly burst: number };
}

/** The principal of a trusted local caller (everything allowed). */
export const OPERATOR: Principal = { name: 'operator', role: 'operator', agents: [] };

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'must be the lowercase hex SHA-256 of the token');
const rateSchema = z.strictObject({ perSecond: z.number().positive().max(1e6), burst: z.number().int().min(1).max(1e6) });
const tokenSchema = z.discriminatedUnion('role', [
  z.strictObject({ name: z.string().min(1).max(64), role: z.literal('runtime'), sha256: hex64, rate: rateSchema.optional() }),
  z.strictObject({ name: z.string().min(1).max(64), role: z.literal('auditor'), sha256: hex64, rate: rateSchema.optional() }),
  z.strictObject({
    name: z.string().min(1).max(64),
    role: z.literal('agent'),
    agents: z.array(z.string().min(1).max(128)).min(1).max(1000),
    signer: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be the 0x-prefixed 20-byte hex address of the key the agent signs its intents with (an agent token speaks for its agents only where spec.agents maps them to this key)'),
    sha256: hex64,
    rate: rateSchema.optional(),
  }),
]);
/** The schema of an auth configuration document. */
export const authConfigSchema = z.union([z.strictObject({ tokens: z.array(tokenSchema).max(10_000) }), z.array(tokenSchema).max(10_000)]);

/** One configured token (as the file holds it). */
export type TokenEntry = z.infer<typeof tokenSchema>;

/** A parsed configuration: the token entries, names and hashes unique. */
export interface AuthConfig {
  readonly tokens: readonly TokenEntry[];
}

/** Longest token accepted on the wire (longer ones are refused before hashing). */
export const MAX_TOKEN_LENGTH = 512;

/**
 * SHA-256 of a token, lowercase hex: the value a configuration holds.
 *
 * @example
 * hashToken('tly_example'); // '…64 hex…'
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A fresh random token (256 bits, base64url, prefixed `tly_`). */
export function generateToken(): string {
  return `tly_${randomBytes(32).toString('base64url')}`;
}

/**
 * Parses a configuration document (already JSON-decoded).
 *
 * @example
 * const r = parseAuthConfig(JSON.parse(text));
 * if (!r.ok) throw new Error(r.problem);
 */
export function parseAuthConfig(doc: unknown): { ok: true; config: AuthConfig } | { ok: false; problem: string } {
  // One entry alone (the line `tally serve --new-token` prints) is a file of one token.
  const obj = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as Record<string, unknown>) : undefined;
  if (obj !== undefined && !('tokens' in obj) && ('role' in obj || 'sha256' in obj)) doc = [obj];
  else if (!Array.isArray(doc) && !(obj !== undefined && 'tokens' in obj)) {
    return { ok: false, problem: `expected {"tokens": [<token entry>, …]}, an array of token entries, or one token entry (the line 'tally serve --new-token' prints); got ${obj !== undefined ? `an object with the keys ${Object.keys(obj).join(', ') || '(none)'}` : doc === null ? 'null' : typeof doc}` };
  }
  const r = authConfigSchema.safeParse(doc);
  if (!r.success) {
    const i = r.error.issues[0]!;
    // Union errors: name the branch the document took (its shape decided above).
    const inner = i.code === 'invalid_union' ? (i.errors[Array.isArray(doc) ? 1 : 0]?.[0] ?? i) : i;
    const path = [...i.path, ...(inner === i ? [] : inner.path)].map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('').replace(/^\./, '');
    return { ok: false, problem: `${path === '' ? 'the document' : path}: ${inner.message}` };
  }
  const tokens = Array.isArray(r.data) ? r.data : r.data.tokens;
  const names = new Set<string>();
  const hashes = new Set<string>();
  for (const t of tokens) {
    if (names.has(t.name)) return { ok: false, problem: `token name "${t.name}" is used twice` };
    if (hashes.has(t.sha256)) return { ok: false, problem: `token "${t.name}" has the same hash as another token` };
    names.add(t.name);
    hashes.add(t.sha256);
  }
  return { ok: true, config: { tokens } };
}

/**
 * The auth text as JSON: one JSON document, or JSON lines of token entries (one
 * per line, as `tally serve --new-token >> tokens.json` leaves them).
 */
function parseAuthText(text: string, where: string): unknown {
  const whole = parseStrictJson(text);
  if (whole.ok) return whole.value;
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  // JSON lines (what `>>` leaves after several --new-token runs); any other defect is refused as it is.
  if (lines.length < 2 || (whole.code !== 'trailing-data' && whole.code !== 'syntax')) {
    throw new TallyError('TALLY_AUTH_CONFIG', `The auth configuration (${where}) is not JSON (${whole.code}): ${whole.message}.`);
  }
  return lines.map((l, n) => {
    const one = parseStrictJson(l);
    if (!one.ok) throw new TallyError('TALLY_AUTH_CONFIG', `The auth configuration (${where}) is neither one JSON document nor JSON lines: line ${n + 1} (${one.code}): ${one.message}.`);
    return one.value;
  });
}

/** Where {@link loadAuthConfig} found the configuration. */
export type AuthSource = { readonly kind: 'file'; readonly path: string } | { readonly kind: 'env'; readonly variable: 'TALLY_TOKENS' };

/**
 * Loads the configuration: `file` when given, else `TALLY_AUTH_FILE`, else the
 * JSON in `TALLY_TOKENS`. Throws `TALLY_AUTH_CONFIG` when none is set or it is
 * unreadable or invalid (a server never starts without tokens).
 */
export function loadAuthConfig(file: string | undefined, env: Readonly<Record<string, string | undefined>>): { config: AuthConfig; source: AuthSource } {
  const path = file ?? (env['TALLY_AUTH_FILE'] || undefined);
  let text: string;
  let source: AuthSource;
  if (path !== undefined) {
    try {
      text = readFileSync(path, 'utf8');
    } catch (cause) {
      throw new TallyError('TALLY_AUTH_CONFIG', `Cannot read the auth file ${path}.`, { details: (cause as Error).message, cause });
    }
    source = { kind: 'file', path };
  } else if (env['TALLY_TOKENS']) {
    text = env['TALLY_TOKENS'];
    source = { kind: 'env', variable: 'TALLY_TOKENS' };
  } else {
    throw new TallyError('TALLY_AUTH_CONFIG', 'No tokens are configured: pass --auth <file>, or set TALLY_AUTH_FILE or TALLY_TOKENS.');
  }
  const doc = parseAuthText(text, source.kind === 'file' ? source.path : source.variable);
  const r = parseAuthConfig(doc);
  if (!r.ok) throw new TallyError('TALLY_AUTH_CONFIG', `The auth configuration is invalid.`, { details: r.problem });
  if (r.config.tokens.length === 0) throw new TallyError('TALLY_AUTH_CONFIG', 'The auth configuration lists no tokens.');
  return { config: r.config, source };
}

/** Checks bearer tokens against a configuration. */
export class Authenticator {
  private readonly entries: readonly { readonly hash: Buffer; readonly principal: Principal }[];

  constructor(config: AuthConfig) {
    this.entries = config.tokens.map((t) => ({
      hash: Buffer.from(t.sha256, 'hex'),
      principal: {
        name: t.name,
        role: t.role,
        agents: t.role === 'agent' ? [...t.agents] : [],
        ...(t.role === 'agent' ? { signer: t.signer.toLowerCase() } : {}),
        ...(t.rate === undefined ? {} : { rate: t.rate }),
      },
    }));
  }

  /** Number of configured tokens. */
  get size(): number {
    return this.entries.length;
  }

  /** The principal of an `Authorization` header value (`Bearer <token>`, scheme in any case), or `undefined`. */
  authenticate(header: string | undefined): Principal | undefined {
    if (header === undefined) return undefined;
    // The scheme is case-insensitive (RFC 7235 §2.1); the token is not.
    const m = /^Bearer +([!-~]{1,512})$/i.exec(header);
    if (!m) return undefined;
    return this.principalOf(m[1]!);
  }

  /** The principal of a raw token, or `undefined`; compares against every hash. */
  principalOf(token: string): Principal | undefined {
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined;
    const presented = createHash('sha256').update(token, 'utf8').digest();
    let found: Principal | undefined;
    for (const e of this.entries) {
      // No early exit: every hash is compared whatever matched before.
      if (timingSafeEqual(presented, e.hash) && found === undefined) found = e.principal;
    }
    return found;
  }
}
