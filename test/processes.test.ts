import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jwtVerify } from 'jose';
import t, { type Test } from 'tap';
import { Permissions } from '../src/auth/permissions.js';
import { freePort } from '../src/infra/processes.js';
import { processesMentioning, runBuilt, waitForHttp } from './support/process.js';
import { provisionInfrastructure, TestSecret } from './support/service.js';

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cp-proc-'));
  // As root, embedded Postgres runs as the postgres user, which must be able to enter the folder.
  await chmod(dir, 0o755);
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test('npm start with no configuration serves /health 200 on embedded Postgres and a spawned nats-server, and stops cleanly', async (t) => {
  const dataDir = await tempDir(t);
  const port = await freePort();
  const service = runBuilt(t, 'service/main.js', { DATA_DIR: dataDir, PORT: String(port) });

  const health = await waitForHttp(`http://127.0.0.1:${port}/health`, 60_000, service);
  t.equal(health.status, 200, service.output());
  t.same(await health.json(), { status: 'ok', checks: { nats: 'ok', postgres: 'ok', migrations: 'ok' } });
  t.match(service.output(), /JWT_SECRET is unset: generated a secret/, 'says that it generated a secret');

  // The README's first call: a token from the CLI, signed with the generated secret.
  const cli = runBuilt(t, 'scripts/token.js', { DATA_DIR: dataDir }, ['--project', 'acme-1a2b', '--permissions', 'shopsRead,shopsWrite']);
  t.equal(await cli.exited, 0, cli.output());
  const token = cli.output().trim();
  const created = await fetch(`http://127.0.0.1:${port}/acme-1a2b/shops`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'First shop' }),
  });
  t.equal(created.status, 201);

  service.child.kill('SIGTERM');
  t.equal(await service.exited, 0, 'exits 0 after a graceful shutdown');
  t.same(await processesMentioning(dataDir), [], 'no Postgres or nats-server left running');
});

t.test('a closed terminal (SIGHUP) stops npm start as cleanly as SIGTERM: no Postgres or nats-server left behind', async (t) => {
  const dataDir = await tempDir(t);
  const port = await freePort();
  const service = runBuilt(t, 'service/main.js', { DATA_DIR: dataDir, PORT: String(port) });
  t.equal((await waitForHttp(`http://127.0.0.1:${port}/health`, 60_000, service)).status, 200, service.output());
  service.child.kill('SIGHUP');
  t.equal(await service.exited, 0, 'exits 0 after a graceful shutdown');
  t.same(await processesMentioning(dataDir), [], 'no Postgres or nats-server left running');
});

t.test('exits with one clear line when nats-server cannot be found', async (t) => {
  const service = runBuilt(t, 'service/main.js', { DATA_DIR: await tempDir(t), PORT: String(await freePort()), NATS_SERVER_BIN: '/nonexistent/nats-server' });
  t.equal(await service.exited, 1);
  const lines = service.output().trim().split('\n');
  t.equal(lines.length, 1, service.output());
  t.match(lines[0], /^checkout-platform: nats-server could not be started .*NATS_URL|^checkout-platform: nats-server/);
});

t.test('exits with one clear line when the embedded Postgres could not enter the data directory', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'cp-closed-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const service = runBuilt(t, 'service/main.js', { DATA_DIR: dataDir, PORT: String(await freePort()) });
  t.equal(await service.exited, 1);
  const lines = service.output().trim().split('\n');
  t.match(lines.at(-1), /^checkout-platform: embedded Postgres runs as the postgres user, which cannot enter .*chmod o\+x/);
  t.same(await processesMentioning(dataDir), [], 'the nats-server it had started is stopped again');
});

t.test('exits with one clear line on an invalid configuration', async (t) => {
  const service = runBuilt(t, 'service/main.js', { PORT: 'eighty', ROLE: 'edge' });
  t.equal(await service.exited, 1);
  t.match(service.output().trim(), /^checkout-platform: invalid configuration: PORT: /);
});

t.test('runs the edge and the workers as separate processes', async (t) => {
  const infra = await provisionInfrastructure(t);
  const port = await freePort();
  const common = { JWT_SECRET: TestSecret, LOG_LEVEL: 'warn' };
  // Each as its own NATS user: the edge may not serve requests, the workers answer them.
  const workers = runBuilt(t, 'service/main.js', { ...common, ...infra.natsEnv('workers'), ROLE: 'workers', DATABASE_URL: infra.databaseUrl });
  const edge = runBuilt(t, 'service/main.js', { ...common, ...infra.natsEnv('edge'), PORT: String(port) }, ['--role', 'edge']);

  const base = `http://127.0.0.1:${port}`;
  let health = await waitForHttp(`${base}/health`, 30_000, edge);
  // The edge answers before the workers are ready (health is 503 until a worker answers it).
  for (const deadline = Date.now() + 30_000; health.status !== 200 && Date.now() < deadline; ) {
    await sleep(100);
    health = await fetch(`${base}/health`);
  }
  t.equal(health.status, 200, `${edge.output()}\n${workers.output()}`);

  const cli = runBuilt(t, 'scripts/token.js', { JWT_SECRET: TestSecret }, ['--project', 'acme-split', '--permissions', 'all']);
  t.equal(await cli.exited, 0);
  const auth = { authorization: `Bearer ${cli.output().trim()}`, 'content-type': 'application/json' };
  const created = await fetch(`${base}/acme-split/shops`, { method: 'POST', headers: auth, body: JSON.stringify({ id: 's1', name: 'Split' }) });
  t.equal(created.status, 201);
  const read = (await (await fetch(`${base}/acme-split/shops/s1`, { headers: auth })).json()) as { name: string };
  t.equal(read.name, 'Split');

  workers.child.kill('SIGTERM');
  t.equal(await workers.exited, 0);
  const unavailable = await fetch(`${base}/acme-split/shops/s1`, { headers: auth });
  t.equal(unavailable.status, 503, 'the edge answers 503 while no worker runs');
  edge.child.kill('SIGTERM');
  t.equal(await edge.exited, 0);
});

t.test('serves HTTPS directly with TLS_CERT_FILE and TLS_KEY_FILE', async (t) => {
  const dir = await tempDir(t);
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost'], { stdio: 'ignore' });
  const infra = await provisionInfrastructure(t);
  const port = await freePort();
  const service = runBuilt(t, 'service/main.js', {
    ...infra.natsEnv('service'),
    DATABASE_URL: infra.databaseUrl,
    JWT_SECRET: TestSecret,
    PORT: String(port),
    TLS_CERT_FILE: cert,
    TLS_KEY_FILE: key,
  });
  let status = 0;
  for (let i = 0; i < 200 && status !== 200; i++) {
    status = await new Promise<number>((resolve) => {
      const req = httpsRequest({ host: '127.0.0.1', port, path: '/health', rejectUnauthorized: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => setTimeout(() => resolve(0), 100));
      req.end();
    });
  }
  t.equal(status, 200, service.output());
  service.child.kill('SIGTERM');
  t.equal(await service.exited, 0);
});

t.test('the token CLI signs what it is asked for, and nothing else', async (t) => {
  const env = { JWT_SECRET: TestSecret };
  const all = runBuilt(t, 'scripts/token.js', env, ['--project', 'acme-x', '--permissions', 'all', '--sub', 'ops@acme', '--ttl', '5m']);
  t.equal(await all.exited, 0);
  const { payload } = await jwtVerify(all.output().trim(), new TextEncoder().encode(TestSecret), {
    issuer: 'checkout-platform',
    audience: 'checkout-platform',
    algorithms: ['HS256'],
  });
  t.equal(payload.project, 'acme-x');
  t.equal(payload.sub, 'ops@acme');
  t.same(payload.permissions, [...Permissions], '`all` expands to every permission, never a wildcard');
  t.ok(payload.exp! - payload.iat! === 300, 'a 5 minute lifetime');

  const unknown = runBuilt(t, 'scripts/token.js', env, ['--project', 'acme-x', '--permissions', 'shopsRead,root']);
  t.equal(await unknown.exited, 1);
  t.match(unknown.output(), /unknown permission root/);
  t.equal(unknown.output().includes('eyJ'), false, 'no token printed');

  const missing = runBuilt(t, 'scripts/token.js', env, ['--permissions', 'all']);
  t.equal(await missing.exited, 1);
  t.match(missing.output(), /usage: npm run --silent token/);
});
