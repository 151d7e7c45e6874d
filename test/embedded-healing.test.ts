import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { findExecutable, freePort } from '../src/infra/processes.js';
import { superviseChild, type ChildLostError, type ChildExit, type RunningChild } from '../src/infra/supervise.js';
import { createLogger } from '../src/logger.js';
import { processesMentioning, runBuilt, waitForHttp, type ServiceProcess } from './support/process.js';

/**
 * `npm start`'s process layout (embedded Postgres, spawned nats-server, no DATABASE_URL or NATS_URL):
 * a child killed hard comes back by itself on the same store and port, the service answers 503 with
 * Retry-After while it is gone and /health names it, and a child that cannot be restarted ends the
 * process with one clear line. Run `npm run build` first.
 */
const dataDir = await mkdtemp(path.join(tmpdir(), 'cp-heal-'));
// As root, embedded Postgres runs as the postgres user, which must be able to enter the folder.
await chmod(dataDir, 0o755);
t.teardown(() => rm(dataDir, { recursive: true, force: true }));

// A nats-server that starts once: every later start fails, as a broken binary or a full disk would.
const natsServer = await findExecutable('nats-server');
const onceBin = path.join(dataDir, 'nats-server-once');
await writeFile(onceBin, `#!/bin/sh\nif [ -e "$0.used" ]; then echo "nats-server-once: refusing a second start" >&2; exit 1; fi\ntouch "$0.used"\nexec ${natsServer} "$@"\n`, { mode: 0o755 });

interface Seen {
  status: number;
  retryAfter: string | null;
  body: any;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Seen> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(8000) });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json().catch(() => undefined) };
}

/** The process group of a process (field 5 of /proc/<pid>/stat). */
async function processGroupOf(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const group = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2];
  return group === undefined ? undefined : Number(group);
}

async function pidOf(pidFile: string): Promise<number> {
  return Number.parseInt((await readFile(pidFile, 'utf8')).split('\n')[0] ?? '', 10);
}

/**
 * Kills a child with SIGKILL, then calls the API and /health side by side until both were seen
 * answering 503 and /health is 200 again.
 */
async function killAndWatch(t: Test, base: string, token: string, pidFile: string, part: 'nats' | 'postgres', service: ServiceProcess) {
  const pid = await pidOf(pidFile);
  process.kill(pid, 'SIGKILL');
  const calls: Seen[] = [];
  const healths: Seen[] = [];
  const sent: Array<Promise<unknown>> = [];
  // A worker runs a repeatable request again (after 100 ms, then 300 ms) when it found the database
  // unreachable: an embedded Postgres back within that time carries the calls over with 200. So for
  // postgres, /health naming the outage is what must be seen; for nats, a call's 503 too.
  const callSeenDown = () => part === 'postgres' || calls.some((c) => c.status === 503);
  const downSeen = () => callSeenDown() && healths.some((h) => h.status === 503 && h.body?.embedded?.[part]);
  const deadline = Date.now() + 30_000;
  // Requests go out every 50 ms without waiting for each other: one that waits out a timeout must
  // not hide the moments around it.
  while (!downSeen() && Date.now() < deadline) {
    sent.push(get(`${base}/acme-heal/shops`, { authorization: `Bearer ${token}` }).then((c) => calls.push(c)));
    sent.push(get(`${base}/health`).then((h) => healths.push(h)));
    await sleep(50);
  }
  let back = false;
  while (!back && Date.now() < deadline) {
    back = (await get(`${base}/health`)).status === 200;
    if (!back) await sleep(50);
  }
  await Promise.all(sent);
  t.ok(back, `/health is 200 again after the ${part} outage`, { output: service.output().slice(-4000) });
  t.equal(service.child.exitCode, null, 'the service itself was not restarted');
  t.same(
    calls.filter((c) => c.status !== 200 && c.status !== 503).map((c) => c.status),
    [],
    'every call during the outage is 200 or 503, never 500',
  );
  const unavailable = calls.filter((c) => c.status === 503);
  if (part === 'nats') t.ok(unavailable.length > 0, 'calls during the outage answer 503');
  t.ok(
    unavailable.every((c) => c.body?.type === 'service_unavailable' && Number(c.retryAfter) > 0),
    'each 503 is service_unavailable with Retry-After',
    { unavailable },
  );
  const down = healths.filter((h) => h.status === 503);
  t.ok(
    down.some((h) => h.body.checks[part] === 'unavailable' && h.body.embedded?.[part]?.state === 'restarting' && Number(h.retryAfter) > 0),
    `/health names ${part} as down while it restarts`,
    { down },
  );
  t.not(await pidOf(pidFile), pid, `a new ${part} process runs`);
  t.match(service.output(), new RegExp(`"level":50.*${part === 'nats' ? 'the spawned nats-server' : 'the embedded Postgres'} exited unexpectedly`), 'the exit is logged at error level');
  const after = await get(`${base}/acme-heal/shops`, { authorization: `Bearer ${token}` });
  t.equal(after.status, 200, 'calls work again');
}

t.test('the spawned nats-server and the embedded Postgres come back after SIGKILL, with 503 and Retry-After meanwhile', async (t) => {
  const port = await freePort();
  const env = { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', REQUEST_TIMEOUT_MS: '2000' };
  const service = runBuilt(t, 'service/main.js', env);
  const base = `http://127.0.0.1:${port}`;
  const health = await waitForHttp(`${base}/health`, 60_000, service);
  t.equal(health.status, 200, 'the service starts', { output: service.output() });

  const cli = runBuilt(t, 'scripts/token.js', { DATA_DIR: dataDir }, ['--project', 'acme-heal', '--permissions', 'shopsRead,shopsWrite']);
  t.equal(await cli.exited, 0, 'the token CLI signs a token', { output: cli.output() });
  const token = cli.output().trim();
  const created = await fetch(`${base}/acme-heal/shops`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'heal', name: 'Healing' }),
  });
  t.equal(created.status, 201);

  await t.test('nats-server', (t) => killAndWatch(t, base, token, path.join(dataDir, 'nats', 'nats-server.pid'), 'nats', service));
  await t.test('postgres', (t) => killAndWatch(t, base, token, path.join(dataDir, 'postgres', 'postmaster.pid'), 'postgres', service));

  const shop = await get(`${base}/acme-heal/shops/heal`, { authorization: `Bearer ${token}` });
  t.equal(shop.body?.name, 'Healing', 'what was stored before is still there (same store)');
  service.child.kill('SIGTERM');
  t.equal(await service.exited, 0, 'still stops gracefully');
  t.same(await processesMentioning(dataDir), [], 'no Postgres or nats-server left running');
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  t.test(`${signal} to the process group (as Ctrl-C in a terminal) stops the service, its nats-server and Postgres in order, with nothing at warn or error`, async (t) => {
    const port = await freePort();
    // LOG_LEVEL info: a warning would show, and the order of the last steps is read from the lines.
    const service = runBuilt(t, 'service/main.js', { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' }, [], { ownGroup: true });
    const health = await waitForHttp(`http://127.0.0.1:${port}/health`, 60_000, service);
    t.equal(health.status, 200, 'the service starts', { output: service.output() });
    const children = await processesMentioning(dataDir);
    t.equal(children.length >= 2, true, 'a nats-server and a Postgres run', { children });
    const groups = await Promise.all(children.map((c) => processGroupOf(Number.parseInt(c, 10))));
    t.notOk(groups.includes(service.child.pid!), "neither is in the service's process group, where the terminal's signal goes", { children, groups });

    process.kill(-service.child.pid!, signal);
    t.equal(await service.exited, 0, 'exits 0');
    const lines = service
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    const stopping = lines.slice(lines.findIndex((l) => l.msg === 'shutting down'));
    t.same(
      stopping.filter((l) => l.level >= 40),
      [],
      'nothing at warn or error level while stopping (no restart of a child that the signal reached)',
    );
    t.equal(stopping.at(-1)?.msg, 'stopped', 'the last line says it stopped');
    t.notMatch(service.output(), /exited unexpectedly/, 'no child was taken for crashed');
    t.same(await processesMentioning(dataDir), [], 'no Postgres or nats-server left running');
  });
}

t.test('exits non-zero with one clear line when a child cannot be restarted EMBEDDED_MAX_RESTARTS times in a row', async (t) => {
  const port = await freePort();
  // The same data directory: its cluster is initialised already, which saves this test an initdb.
  const service = runBuilt(t, 'service/main.js', { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', NATS_SERVER_BIN: onceBin, EMBEDDED_MAX_RESTARTS: '2' });
  const health = await waitForHttp(`http://127.0.0.1:${port}/health`, 60_000, service);
  t.equal(health.status, 200, 'the service starts', { output: service.output() });

  const killedAt = Date.now();
  process.kill(await pidOf(path.join(dataDir, 'nats', 'nats-server.pid')), 'SIGKILL');
  t.equal(await service.exited, 1, 'exits with 1');
  // Two failed restarts after 0.5 s and 1 s.
  t.ok(Date.now() - killedAt < 10_000, 'soon after the restarts failed');
  const plain = service
    .output()
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('{'));
  t.equal(plain.length, 1, 'one line besides the JSON log', { output: service.output() });
  t.match(plain[0], /^checkout-platform: the spawned nats-server exited and 2 restarts in a row failed \(last: .*refusing a second start.*\): giving up/);
  t.match(service.output(), /"level":50.*could not be restarted/, 'each failed restart is logged at error level');

  // The embedded Postgres was stopped by the exit (a fast shutdown takes a moment).
  let left = await processesMentioning(dataDir);
  for (let i = 0; i < 50 && left.length; i++) {
    await sleep(100);
    left = await processesMentioning(dataDir);
  }
  t.same(left, [], 'no Postgres or nats-server left running');
});

t.test('a restart that succeeds resets the count of failed restarts', async (t) => {
  const sleeper = (): RunningChild & { pid: number } => {
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    const exited = new Promise<ChildExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    t.teardown(() => void child.kill('SIGKILL'));
    return { pid: child.pid!, exited, stop: async () => void (child.kill('SIGTERM'), await exited) };
  };
  // Restarts: fail, succeed; then, after the second child dies too, fail and fail.
  const plan = ['fail', 'ok', 'fail', 'fail'];
  const started: Array<{ pid: number }> = [];
  let lost: ChildLostError | undefined;
  const first = sleeper();
  const supervised = superviseChild(first, {
    name: 'the sleeper',
    log: createLogger({ level: 'silent' }),
    maxRestarts: 2,
    initialDelayMs: 10,
    restart: async () => {
      if (plan.shift() !== 'ok') throw new Error('cannot start');
      const next = sleeper();
      started.push(next);
      return next;
    },
    onGiveUp: (err) => (lost = err),
  });
  t.teardown(() => supervised.stop());

  process.kill(first.pid, 'SIGKILL');
  for (const deadline = Date.now() + 10_000; started.length === 0 && Date.now() < deadline; ) await sleep(10);
  t.equal(started.length, 1, 'started again after one failed restart');
  t.same(supervised.status(), { state: 'running', failedRestarts: 0 }, 'running, the failure forgotten');

  process.kill(started[0]!.pid, 'SIGKILL');
  for (const deadline = Date.now() + 10_000; !lost && Date.now() < deadline; ) await sleep(10);
  t.equal(plan.length, 0, 'two more restarts were tried before giving up');
  t.match(lost?.message, /^the sleeper exited and 2 restarts in a row failed \(last: cannot start\): giving up/);
  t.match(supervised.status(), { state: 'failed', failedRestarts: 2 });
});
