/**
 * Private PostgreSQL clusters for replication tests: a primary and streaming
 * standbys (`initdb`, `pg_basebackup -R`) on loopback ports of their own, run
 * as the `postgres` user, so no test touches the shared server's settings.
 * The binaries are PostgreSQL 15's (not on PATH on Debian: `dpkg -L
 * postgresql-15` finds them) or those under $TALLY_PG_BIN.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

function findBin(): string | undefined {
  const env = process.env['TALLY_PG_BIN'];
  if (env !== undefined && existsSync(join(env, 'initdb'))) return env;
  const r = spawnSync('dpkg', ['-L', 'postgresql-15'], { encoding: 'utf8' });
  const line = r.status === 0 ? r.stdout.split('\n').find((l) => l.endsWith('/bin/initdb')) : undefined;
  return line === undefined ? undefined : line.slice(0, -'/initdb'.length);
}

/** The PostgreSQL server binaries, if this machine has them. */
export const PG_BIN = findBin();
/** Why private clusters cannot run here, or `undefined` when they can. */
export const clusterSkipReason: string | undefined =
  PG_BIN === undefined ? 'no PostgreSQL server binaries (install postgresql-15 or set TALLY_PG_BIN)' : userInfo().uid !== 0 && userInfo().username !== 'postgres' ? 'private clusters need root (to run as postgres) or the postgres user' : undefined;

const asPostgres = (cmd: string, args: string[]): string => {
  const [file, argv] = userInfo().uid === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
};

/** A running private server. */
export interface PgNode {
  readonly port: number;
  readonly dir: string;
  readonly url: string;
  stop(mode?: 'fast' | 'immediate'): void;
  /** Starts it again (after `stop`). */
  start(): void;
  /** Promotes a standby (waits until it takes writes). */
  promote(): void;
  /** Runs SQL on this node (as the superuser). */
  sql(text: string): Promise<pg.QueryResult>;
}

function node(port: number, dir: string, root: string): PgNode {
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    port,
    dir,
    url,
    stop(mode = 'fast') {
      if (existsSync(join(dir, 'postmaster.pid'))) asPostgres(join(PG_BIN!, 'pg_ctl'), ['-D', dir, '-m', mode, '-w', 'stop']);
    },
    start() {
      start(dir, port, root);
    },
    promote() {
      asPostgres(join(PG_BIN!, 'pg_ctl'), ['-D', dir, '-w', '-t', '60', 'promote']);
    },
    async sql(text) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return await c.query(text);
      } finally {
        await c.end();
      }
    },
  };
}

function start(dir: string, port: number, root: string): void {
  asPostgres(join(PG_BIN!, 'pg_ctl'), ['-D', dir, '-l', join(root, `log-${port}`), '-w', '-t', '60', '-o', `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
}

/** A free-looking port block: 40000–59999, by pid (each test file runs in its own process). */
function basePort(): number {
  return 40_000 + ((process.pid * 7) % 19_000);
}

/** A primary and `standbys` streaming standbys (asynchronous until `synchronous_standby_names` is set). */
export interface PgCluster {
  readonly primary: PgNode;
  readonly standbys: readonly PgNode[];
  /** Stops every node and removes their data. */
  destroy(): void;
}

/** Starts a primary and its standbys; waits until every standby streams. */
export async function startCluster(standbys = 1): Promise<PgCluster> {
  if (clusterSkipReason !== undefined) throw new Error(clusterSkipReason);
  const root = mkdtempSync(join(tmpdir(), 'tally-pgha-'));
  if (userInfo().uid === 0) chownSync(root, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()));
  const port = basePort();
  const nodes: PgNode[] = [];
  const destroy = (): void => {
    for (const n of [...nodes].reverse()) {
      try {
        n.stop('immediate');
      } catch {
        // already down
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const pdir = join(root, 'primary');
    asPostgres(join(PG_BIN!, 'initdb'), ['-D', pdir, '-U', 'postgres', '--auth=trust', '--no-sync']);
    start(pdir, port, root);
    const primary = node(port, pdir, root);
    nodes.push(primary);
    for (let i = 1; i <= standbys; i++) {
      const sdir = join(root, `standby${i}`);
      asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-D', sdir, '-R', '-X', 'stream', '-c', 'fast', '-d', `postgres://postgres@127.0.0.1:${port}/postgres?application_name=standby${i}`]);
      start(sdir, port + i, root);
      nodes.push(node(port + i, sdir, root));
    }
    for (let t = 0; ; t++) {
      const r = await primary.sql(`SELECT count(*)::int AS n FROM pg_stat_replication WHERE state = 'streaming'`);
      if ((r.rows[0] as { n: number }).n === standbys) break;
      if (t > 300) throw new Error('standbys did not start streaming');
      await new Promise((r) => setTimeout(r, 100));
    }
    return { primary, standbys: nodes.slice(1), destroy };
  } catch (e) {
    destroy();
    throw e;
  }
}
