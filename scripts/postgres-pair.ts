import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, chmod, chown, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { freePort, isAlive } from '../src/infra/processes.js';

/**
 * Postgres as production runs it (docs/operations.md): a primary and a synchronous streaming
 * standby (`synchronous_commit = on`, `synchronous_standby_names`: a commit is acknowledged once the
 * standby has it), from the machine's PostgreSQL binaries (initdb, pg_basebackup, pg_ctl,
 * pg_rewind, postgres). `npm run cluster`, `npm run chaos` and test/postgres-failover.test.ts use
 * it, and play the failover manager (Patroni, a managed Postgres) with `promote` and `rejoin`.
 *
 * Each node listens on 127.0.0.1 only (no Unix socket) with a password made for the pair; as root,
 * the binaries run as the `postgres` user (initdb and postgres refuse root), which must be able to
 * enter `dir`.
 */
export interface PostgresNode {
  name: string;
  port: number;
  dataDir: string;
  role(): 'primary' | 'standby';
  /** The postmaster's process id while it runs. */
  pid(): number | undefined;
  /** SIGKILL to the postmaster and every process it started: the machine it ran on is lost. */
  crash(): Promise<void>;
  /** A fast shutdown (pg_ctl stop -m fast). */
  stop(): Promise<void>;
  /** A fast shutdown and a start (pg_ctl restart -m fast), as an operator restarts it. */
  restart(): Promise<void>;
}

export interface PostgresPair {
  /** Both hosts, the primary found by `target_session_attrs=read-write`: what the workers get as DATABASE_URL. */
  url: string;
  /** A url of one node, for tools that must reach that one (`postgres` database). */
  nodeUrl(node: PostgresNode, database?: string): string;
  nodes: [PostgresNode, PostgresNode];
  primary(): PostgresNode;
  standby(): PostgresNode;
  /**
   * The failover manager's move: the standby becomes the primary, and takes writes alone
   * (`synchronous_standby_names` emptied) until a standby follows it again.
   */
  promote(): Promise<void>;
  /**
   * The node that is neither running nor primary (a lost primary) starts again as a standby of the
   * primary: pg_rewind takes back what it wrote that the new primary never had (a fresh base backup
   * when that fails), then it streams, and the primary waits for it on every commit again.
   */
  rejoin(): Promise<{ how: 'pg_rewind' | 'pg_basebackup' }>;
  describe(): string[];
  stop(): Promise<void>;
}

export interface PairOptions {
  /** Where the two data directories and their logs go. */
  dir: string;
  /** The database the platform uses, made on the primary. Default checkout_platform. */
  database?: string;
  /** Folder of the binaries; default POSTGRES_BIN_DIR, else the newest /usr/lib/postgresql/<n>/bin. */
  binDir?: string;
  /** Take these ports when free. */
  preferredPorts?: [number, number];
}

const Binaries = ['initdb', 'pg_basebackup', 'pg_ctl', 'pg_rewind', 'postgres'] as const;
const User = 'postgres';

/** The folder that has every binary the pair needs, or undefined (then say how to get them). */
export async function postgresBinDir(configured = process.env.POSTGRES_BIN_DIR): Promise<string | undefined> {
  const has = (dir: string) => Binaries.every((b) => existsSync(path.join(dir, b)));
  if (configured) return has(configured) ? configured : undefined;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? (await readdir(root)).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  return versions.map((v) => path.join(root, v, 'bin')).find(has);
}

export const MissingBinaries = `a primary and a standby need PostgreSQL's ${Binaries.join(', ')} (Debian: apt install postgresql; or POSTGRES_BIN_DIR)`;

export async function startPostgresPair(options: PairOptions): Promise<PostgresPair> {
  const binDir = options.binDir ?? (await postgresBinDir());
  if (!binDir) throw new Error(MissingBinaries);
  const database = options.database ?? 'checkout_platform';
  const root = path.resolve(options.dir);
  await mkdir(root, { recursive: true });
  const owner = process.getuid?.() === 0 ? userIds(User) : {};
  // Its data directories and logs are made by the binaries, as that user.
  await chmod(root, 0o755);
  if (owner.uid !== undefined) await chown(root, owner.uid, owner.gid!);
  const password = randomBytes(18).toString('base64url');
  const passwordFile = path.join(root, 'postgres.password');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (owner.uid !== undefined) await chown(passwordFile, owner.uid, owner.gid!);
  const env = { ...process.env, PGPASSWORD: password, LC_ALL: 'C', LC_MESSAGES: 'C' };

  const run = (binary: (typeof Binaries)[number], args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(path.join(binDir, binary), args, { ...owner, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${binary} ${args[0] ?? ''} failed (${code}): ${output.trim().slice(-1500)}`))));
    });

  const ports = [await freePort(options.preferredPorts?.[0]), await freePort(options.preferredPorts?.[1])];
  const url = (port: number, db: string) => `postgres://${User}:${password}@127.0.0.1:${port}/${db}`;
  const conninfo = (port: number) => `host=127.0.0.1 port=${port} user=${User} password=${password} dbname=postgres`;
  let primaryIndex = 0;

  const node = (i: number): PostgresNode & { start(): Promise<void>; follow(primary: PostgresNode): Promise<void> } => {
    const name = `postgres-${i + 1}`;
    const dataDir = path.join(root, name);
    const logFile = path.join(root, `${name}.log`);
    const pg = (args: string[]) => run('pg_ctl', [...args, '-D', dataDir]);
    const options = `-p ${ports[i]!} -c cluster_name=${name}`;
    const self = {
      name,
      port: ports[i]!,
      dataDir,
      role: () => (primaryIndex === i ? ('primary' as const) : ('standby' as const)),
      pid(): number | undefined {
        try {
          const pid = Number.parseInt(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8'), 10);
          return Number.isInteger(pid) && isAlive(pid) ? pid : undefined;
        } catch {
          return undefined;
        }
      },
      async start() {
        // The port and the name its standby reports (application_name) are this node's own: the
        // rest of the configuration came with the base backup.
        await pg(['start', '-w', '-t', '60', '-l', logFile, '-o', options]);
      },
      async restart() {
        await pg(['restart', '-w', '-t', '60', '-m', 'fast', '-l', logFile, '-o', options]);
      },
      async stop() {
        if (self.pid() !== undefined) await pg(['stop', '-w', '-m', 'fast']);
      },
      async crash() {
        const pid = self.pid();
        if (pid === undefined) return;
        const family = [pid, ...childrenOf(pid)];
        for (const p of family) {
          try {
            process.kill(p, 'SIGKILL');
          } catch {
            // gone already
          }
        }
        for (let i = 0; i < 100 && family.some(isAlive); i++) await sleep(20);
      },
      /** Streams from `primary` from now on (a standby's signal file and its connection). */
      async follow(primary: PostgresNode) {
        await writeFile(path.join(dataDir, 'standby.signal'), '');
        await appendFile(path.join(dataDir, 'postgresql.auto.conf'), `primary_conninfo = '${conninfo(primary.port)} application_name=${name}'\n`);
      },
    };
    return self;
  };
  const nodes = [node(0), node(1)] as const;
  const [first, second] = nodes;

  // The primary: replication and a synchronous standby; wal_log_hints lets pg_rewind bring a lost
  // primary back as a standby; no fsync wait at initdb (a data directory made for this run).
  await run('initdb', ['-D', first.dataDir, '-U', User, '--auth=scram-sha-256', `--pwfile=${passwordFile}`, '-E', 'UTF8', '--locale=C', '--no-sync']);
  await appendFile(
    path.join(first.dataDir, 'postgresql.conf'),
    [
      "listen_addresses = '127.0.0.1'",
      "unix_socket_directories = ''",
      'wal_level = replica',
      'max_wal_senders = 10',
      'wal_keep_size = 512MB',
      'wal_log_hints = on',
      'hot_standby = on',
      'synchronous_commit = on',
      // Any standby that streams: a commit waits for one of them to have it.
      "synchronous_standby_names = '*'",
      'max_connections = 200',
      '',
    ].join('\n'),
  );
  await first.start();
  // Until the standby streams, a commit on the primary would wait for it: made before, alone.
  await setSynchronous(first, false);
  await onNode(first, (sql) => sql.unsafe(`create database ${database}`));
  await baseBackup(second, first);
  await second.start();
  await setSynchronous(first, true);

  const pair: PostgresPair = {
    url: `postgres://${User}:${password}@127.0.0.1:${first.port},127.0.0.1:${second.port}/${database}?target_session_attrs=read-write`,
    nodeUrl: (n, db = 'postgres') => url(n.port, db),
    nodes: [first, second],
    primary: () => nodes[primaryIndex]!,
    standby: () => nodes[1 - primaryIndex]!,
    async promote() {
      const next = nodes[1 - primaryIndex]!;
      // Set before (ALTER SYSTEM writes a file, which a standby may): it takes writes the moment it is promoted.
      await setSynchronous(next, false);
      await run('pg_ctl', ['promote', '-w', '-t', '60', '-D', next.dataDir]);
      primaryIndex = 1 - primaryIndex;
    },
    async rejoin() {
      const primary = nodes[primaryIndex]!;
      const lost = nodes[1 - primaryIndex]!;
      await lost.stop().catch(() => undefined);
      let how: 'pg_rewind' | 'pg_basebackup' = 'pg_rewind';
      // A promoted server writes its new timeline into pg_control at its next checkpoint: until then
      // pg_rewind reads the old one there and finds nothing to rewind.
      await onNode(primary, (sql) => sql`checkpoint`);
      try {
        // It runs crash recovery on a node that was killed first (PostgreSQL 13 and newer).
        await run('pg_rewind', ['--target-pgdata', lost.dataDir, '--source-server', conninfo(primary.port)]);
        await rm(path.join(lost.dataDir, 'standby.signal'), { force: true });
        await lost.follow(primary);
      } catch {
        how = 'pg_basebackup';
        await rm(lost.dataDir, { recursive: true, force: true });
        await baseBackup(lost, primary);
      }
      await lost.start();
      await setSynchronous(primary, true);
      return { how };
    },
    describe: () => nodes.map((n) => `${n.name.padEnd(10)} ${n.role()} postgres://${User}:***@127.0.0.1:${n.port}  data ${n.dataDir}  log ${path.join(root, `${n.name}.log`)}`),
    async stop() {
      for (const n of nodes) await n.stop().catch(() => n.crash());
    },
  };
  return pair;

  async function baseBackup(target: ReturnType<typeof node>, source: PostgresNode) {
    await run('pg_basebackup', ['-D', target.dataDir, '-h', '127.0.0.1', '-p', String(source.port), '-U', User, '-X', 'stream', '-c', 'fast', '--no-sync']);
    await target.follow(source);
  }

  async function onNode<T>(target: PostgresNode, work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
    const sql = postgres(url(target.port, 'postgres'), { max: 1, onnotice: () => {} });
    try {
      return await work(sql);
    } finally {
      await sql.end();
    }
  }

  /**
   * Whether commits on `primary` wait for a standby (ALTER SYSTEM, then a reload: no restart). On
   * only once a standby streams: until then every write would wait for it.
   */
  async function setSynchronous(primary: PostgresNode, on: boolean) {
    await onNode(primary, async (sql) => {
      for (let i = 0; on; i++) {
        const [row] = await sql<{ n: number }[]>`select count(*)::int as n from pg_stat_replication where state = 'streaming'`;
        if (row!.n > 0) break;
        if (i === 600) throw new Error(`no standby streams from ${primary.name} after 30 s`);
        await sleep(50);
      }
      await sql.unsafe(`alter system set synchronous_standby_names = '${on ? '*' : ''}'`);
      await sql`select pg_reload_conf()`;
    });
  }
}

export function userIds(user: string): { uid?: number; gid?: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, user], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  if (!Number.isInteger(uid)) throw new Error(`Postgres refuses to run as root, and there is no ${user} user to run it as`);
  return { uid, gid: id('-g') };
}

/** The processes whose parent is `pid` (the postmaster's backends and helpers). */
function childrenOf(pid: number): number[] {
  const out = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout;
  return out.split('\n').filter(Boolean).map(Number);
}
