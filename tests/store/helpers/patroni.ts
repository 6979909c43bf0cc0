/**
 * A real two-node Patroni cluster over a one-member etcd, on private
 * loopback ports (Debian's `patroni`, `etcd-server`, `python3-etcd`;
 * PostgreSQL 15's binaries), for failover tests. Patroni and PostgreSQL run
 * as the `postgres` user (spawned with its uid, so each pid is the process
 * itself and can be killed by pid); etcd runs as this user. `destroy()` kills
 * every process it started, by pid, and removes the directory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { PG_BIN } from './pg-cluster.js';

const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const pythonEtcd = spawnSync('/usr/bin/python3', ['-c', 'import etcd']).status === 0;

/** Why a Patroni cluster cannot run here, or `undefined` when it can. */
export const patroniSkipReason: string | undefined =
  PG_BIN === undefined
    ? 'no PostgreSQL server binaries'
    : userInfo().uid !== 0
      ? 'a Patroni cluster needs root (to run PostgreSQL as postgres)'
      : !has('patroni') || !has('etcd') || !pythonEtcd
        ? 'patroni, etcd or python3-etcd is not installed (apt-get install -y --no-install-recommends patroni etcd-server python3-etcd)'
        : undefined;

/** One Patroni member. */
export interface PatroniNode {
  readonly name: string;
  readonly pgPort: number;
  readonly apiPort: number;
  /** GET on the member's REST API: the status (`/primary`, `/replica`, `/sync`, …). */
  status(path: string): Promise<number>;
  /** kill -9 of its Patroni and of its postmaster: the machine is gone. */
  kill(): void;
}

/** A running cluster. */
export interface PatroniCluster {
  readonly nodes: readonly PatroniNode[];
  /** `postgres://postgres@127.0.0.1:<p1>,127.0.0.1:<p2>/postgres?target_session_attrs=read-write`. */
  readonly url: string;
  /** The member that is primary now (polls up to `ms`). */
  leader(ms?: number): Promise<PatroniNode>;
  /** A planned switchover to `candidate` through the REST API. */
  switchover(from: PatroniNode, to: PatroniNode): Promise<void>;
  destroy(): void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let starts = 0;
/**
 * Ten ports by pid and by start in 21000–32699: below Linux's ephemeral range
 * (32768 and up), so no test's outgoing connection holds one, and another for
 * each cluster of the file (the last one's members may still be dying).
 */
function basePort(): number {
  return 21_000 + ((process.pid * 13 + starts++ * 7) % 1_170) * 10;
}

async function httpStatus(url: string, init?: RequestInit, timeoutMs = 2000): Promise<number> {
  try {
    const r = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}

/** Starts etcd and two Patroni members; resolves when node1 leads and node2 streams (as the synchronous standby with `synchronous`). */
export async function startPatroni(opts: { synchronous: boolean }): Promise<PatroniCluster> {
  if (patroniSkipReason !== undefined) throw new Error(patroniSkipReason);
  const root = mkdtempSync(join(tmpdir(), 'tally-patroni-'));
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  chownSync(root, uid, gid);
  const base = basePort();
  const scope = `tally-${process.pid}-${Date.now()}`;
  const [etcdClient, etcdPeer] = [base, base + 1];
  const procs: ChildProcess[] = [];
  const nodes: PatroniNode[] = [];
  const dataDirs: string[] = [];
  const destroy = (): void => {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    for (const d of dataDirs) {
      const pid = postmasterPid(d);
      if (pid !== undefined) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    if (process.env['TALLY_PATRONI_KEEP'] === undefined) rmSync(root, { recursive: true, force: true });
    else console.log(`[patroni] kept ${root}`);
  };
  try {
    const etcd = spawn('etcd', ['--name', 'e1', '--data-dir', join(root, 'etcd'), '--listen-client-urls', `http://127.0.0.1:${etcdClient}`, '--advertise-client-urls', `http://127.0.0.1:${etcdClient}`, '--listen-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--initial-cluster', `e1=http://127.0.0.1:${etcdPeer}`], { stdio: 'ignore' });
    procs.push(etcd);
    for (let t = 0; (await httpStatus(`http://127.0.0.1:${etcdClient}/health`)) !== 200; t++) {
      if (t > 100) throw new Error('etcd did not start');
      await sleep(100);
    }
    for (let i = 1; i <= 2; i++) {
      const name = `node${i}`;
      const apiPort = base + 1 + i;
      const pgPort = base + 3 + i;
      const dataDir = join(root, name);
      dataDirs.push(dataDir);
      const yml = join(root, `${name}.yml`);
      writeFileSync(
        yml,
        `scope: ${scope}
name: ${name}
log: {level: WARNING, dir: ${root}, file_num: 1}
restapi: {listen: '127.0.0.1:${apiPort}', connect_address: '127.0.0.1:${apiPort}'}
etcd3: {hosts: '127.0.0.1:${etcdClient}'}
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    synchronous_mode: ${opts.synchronous}
    postgresql:
      use_pg_rewind: false
      parameters: {fsync: 'off', max_wal_senders: 5, max_replication_slots: 5, wal_level: replica}
  initdb: [{encoding: UTF8}, {auth: trust}]
  pg_hba: ['host replication replicator 127.0.0.1/32 trust', 'host all all 127.0.0.1/32 trust', 'local all all trust']
postgresql:
  listen: '127.0.0.1:${pgPort}'
  connect_address: '127.0.0.1:${pgPort}'
  data_dir: ${dataDir}
  bin_dir: ${PG_BIN}
  pgpass: ${join(root, `pgpass-${name}`)}
  authentication:
    superuser: {username: postgres, password: x}
    replication: {username: replicator, password: x}
  parameters: {unix_socket_directories: '${root}'}
`,
      );
      chownSync(yml, uid, gid);
      const p = spawn('/usr/bin/python3', ['/usr/bin/patroni', yml], { uid, gid, cwd: root, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: root }, stdio: 'ignore' });
      procs.push(p);
      const node: PatroniNode = {
        name,
        pgPort,
        apiPort,
        status: (path) => httpStatus(`http://127.0.0.1:${apiPort}${path}`),
        kill() {
          p.kill('SIGKILL');
          const pid = postmasterPid(dataDir);
          if (pid !== undefined) process.kill(pid, 'SIGKILL');
        },
      };
      nodes.push(node);
      // node1 bootstraps and leads before node2 is started (node2 then copies it).
      const want = i === 1 ? '/primary' : opts.synchronous ? '/sync' : '/replica';
      for (let t = 0; (await node.status(want)) !== 200; t++) {
        if (t > 1_800) throw new Error(`${name} did not become ${want} in 3 minutes`);
        await sleep(100);
      }
    }
    const cluster: PatroniCluster = {
      nodes,
      url: `postgres://postgres@${nodes.map((n) => `127.0.0.1:${n.pgPort}`).join(',')}/postgres?target_session_attrs=read-write`,
      async leader(ms = 60_000) {
        const until = Date.now() + ms;
        for (;;) {
          for (const n of nodes) if ((await n.status('/primary')) === 200) return n;
          if (Date.now() > until) throw new Error('no Patroni member became primary');
          await sleep(200);
        }
      },
      async switchover(from, to) {
        const s = await httpStatus(`http://127.0.0.1:${from.apiPort}/switchover`, { method: 'POST', body: JSON.stringify({ leader: from.name, candidate: to.name }) }, 60_000);
        if (s !== 200) throw new Error(`switchover answered ${s}`);
      },
      destroy,
    };
    return cluster;
  } catch (e) {
    destroy();
    throw e;
  }
}

/** The pid of the postmaster running on `dataDir` (checked against its command line, so a reused pid is never killed). */
function postmasterPid(dataDir: string): number | undefined {
  const f = join(dataDir, 'postmaster.pid');
  if (!existsSync(f)) return undefined;
  const pid = Number(readFileSync(f, 'utf8').split('\n')[0]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dataDir) ? pid : undefined;
  } catch {
    return undefined;
  }
}
