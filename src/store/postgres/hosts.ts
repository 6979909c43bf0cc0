/**
 * Multi-host connection strings, as libpq reads them:
 * `postgres://user@h1:5432,h2:5433/db?target_session_attrs=read-write`.
 * node-postgres connects to one host only, so the store does the rest: each
 * new pooled connection tries the hosts in order (the last one that took
 * writes first) and keeps the first that answers and — for `read-write` or
 * `primary` — is not in recovery and not read-only. After a failover the old
 * primary's connections break, the pool opens new ones, and they find the
 * new primary: the store follows the leader without a restart.
 *
 * Only what libpq means is accepted: `target_session_attrs` is `any`,
 * `read-write` or `primary` (others are refused, never guessed), a host is a
 * name or IPv4 address with an optional port.
 */
import pg from 'pg';
import { TallyError } from '../../protocol/errors.js';

/** One host of a connection string. */
export interface PgHost {
  readonly host: string;
  readonly port: number;
}

/** A connection string split into its hosts and the rest. */
export interface PgHostList {
  readonly hosts: readonly PgHost[];
  /** Whether a session must take writes (`read-write`, `primary`). */
  readonly readWrite: boolean;
  /** The connection string for one host (user, database and parameters kept; `target_session_attrs` removed). */
  urlFor(h: PgHost): string;
}

const AUTHORITY = /^(postgres(?:ql)?:\/\/)((?:[^@/?#]*@)?)([^/?#]*)(.*)$/i;
const HOST = /^([A-Za-z0-9.-]+)(?::([0-9]{1,5}))?$/;
const ATTRS = new Map([
  ['any', false],
  ['read-write', true],
  ['primary', true],
]);

/**
 * Splits `url` into hosts, or `undefined` when it names one host and no
 * `target_session_attrs` (node-postgres then connects as always). Throws
 * `TALLY_STORE_OPEN` for a host list or attribute libpq would not accept.
 */
export function parseHostList(url: string): PgHostList | undefined {
  const m = AUTHORITY.exec(url);
  if (!m) return undefined;
  const [, scheme, user, hostPart, rest] = m as unknown as [string, string, string, string, string];
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : rest.slice(q + 1));
  const attrs = params.getAll('target_session_attrs');
  if (!hostPart.includes(',') && attrs.length === 0) return undefined;
  if (attrs.length > 1) throw new TallyError('TALLY_STORE_OPEN', 'The PostgreSQL location gives target_session_attrs more than once.');
  const attr = attrs[0] ?? 'any';
  const readWrite = ATTRS.get(attr);
  if (readWrite === undefined) throw new TallyError('TALLY_STORE_OPEN', `target_session_attrs must be any, read-write or primary, got ${JSON.stringify(attr)}.`);
  const hosts = hostPart.split(',').map((h) => {
    const hm = HOST.exec(h);
    const port = hm?.[2] === undefined ? 5432 : Number(hm[2]);
    if (!hm || port < 1 || port > 65535) throw new TallyError('TALLY_STORE_OPEN', `The PostgreSQL location has a host ${JSON.stringify(h)} that is not host[:port].`);
    return { host: hm[1]!, port };
  });
  params.delete('target_session_attrs');
  const tail = params.toString();
  return { hosts, readWrite, urlFor: (h) => `${scheme}${user}${h.host}:${h.port}${path}${tail === '' ? '' : `?${tail}`}` };
}

/** How long a probe of one host may take before the next is tried (ms). */
const PROBE_TIMEOUT_MS = 3000;

/** Whether a session on `url` answers and (when `readWrite`) takes writes. */
async function takes(url: string, readWrite: boolean): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  c.on('error', () => {});
  try {
    await c.connect();
    if (!readWrite) return true;
    const r = await c.query<{ rec: boolean; ro: string }>("SELECT pg_is_in_recovery() AS rec, current_setting('transaction_read_only') AS ro");
    return r.rows[0]?.rec === false && r.rows[0].ro === 'off';
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

/**
 * A `pg.Client` class for a pool over `list`: each connection first finds
 * the host to use (see the module comment), then connects there.
 */
export function hostListClient(list: PgHostList): typeof pg.Client {
  let last = 0; // the host the previous connection found
  return class HostListClient extends pg.Client {
    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error | null, c?: pg.Client) => void): void;
    override connect(callback?: (err: Error | null, c?: pg.Client) => void): Promise<pg.Client> | void {
      const go = async (): Promise<pg.Client> => {
        const order = list.hosts.map((_, i) => (last + i) % list.hosts.length);
        for (const i of order) {
          const h = list.hosts[i]!;
          if (await takes(list.urlFor(h), list.readWrite)) {
            last = i;
            const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
            self.host = h.host;
            self.port = h.port;
            self.connectionParameters.host = h.host;
            self.connectionParameters.port = h.port;
            return super.connect();
          }
        }
        throw new TallyError('TALLY_STORE_IO', `No host of ${list.hosts.map((h) => `${h.host}:${h.port}`).join(',')} ${list.readWrite ? 'takes writes' : 'answers'} (target_session_attrs).`);
      };
      if (callback === undefined) return go();
      go().then(
        (c) => callback(null, c),
        (e: Error) => callback(e),
      );
    }
  };
}
