import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import t from 'tap';
import { projectRoot } from '../src/infra/project-root.js';
import { cutOff, refusal } from './support/nats.js';
import { runBuilt } from './support/process.js';
import { startTestService, TestCheckoutSecret, TestProject, TestSecretsKey } from './support/service.js';

/**
 * `npm run nats-auth -- --renew <role>` (docs/operations.md, "A leaked role credential"): a role's
 * user gets a new key, the old one is revoked on the servers while it is connected, the service
 * whose file was renewed comes back with the new one by itself, and an integration's later
 * revocation (a newer account JWT) keeps the role's revocation. The workers issue with issuer.json,
 * and still take the authority file they were given before it existed, with a warning.
 */
const svc = await startTestService(t);
const { infra } = svc;
const run = promisify(execFile);
const cli = path.join(projectRoot(), 'dist/scripts/nats-auth.js');
const env = { PATH: process.env.PATH, HOME: process.env.HOME, SECRETS_KEY: TestSecretsKey, DATABASE_URL: infra.databaseUrl, NATS_URL: infra.natsUrl };
const owner = await svc.token(['projectsWrite']);

function connectWith(creds: Uint8Array | string): Promise<NatsConnection> {
  return connect({ servers: infra.natsUrl, authenticator: credsAuthenticator(typeof creds === 'string' ? new TextEncoder().encode(creds) : creds), maxReconnectAttempts: 0 });
}

/** Runs the command; its exit code, stdout and stderr. */
async function natsAuthCli(args: string[], extraEnv: Record<string, string | undefined> = env): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, '--dir', infra.natsAuth.dir, ...args], { env: extraEnv });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

t.test('a renewed role: the old key is cut off while connected, the new file works, the service comes back by itself', async (t) => {
  const oldEdge = await readFile(infra.natsAuth.creds.edge);
  const oldService = await readFile(infra.natsAuth.creds.service);
  const edge = await connectWith(oldEdge);
  const closed = cutOff(edge);

  const renewed = await natsAuthCli(['--renew', 'edge,service']);
  t.equal(renewed.code, 0, renewed.stderr);
  t.match(renewed.stdout, /edge: .*edge\.creds holds a new key; the old one \(U[A-Z0-9]+\) is revoked/);
  t.match(renewed.stdout, /service: .*service\.creds holds a new key/);

  const end = await Promise.race([closed.then(() => 'cut'), sleep(5000).then(() => 'still open')]);
  t.equal(end, 'cut', 'the connection made with the old edge key is closed');
  t.ok((await refusal(() => connectWith(oldEdge))) instanceof Error, 'the old edge key cannot connect again');
  t.ok((await refusal(() => connectWith(oldService))) instanceof Error, 'nor the old service key');

  const newEdge = await readFile(infra.natsAuth.creds.edge);
  t.not(newEdge.toString(), oldEdge.toString(), 'edge.creds was written anew');
  const fresh = await connectWith(newEdge);
  const reply = await fresh.request('svc.shops.list', JSON.stringify({ project: TestProject }), { timeout: 5000 });
  t.same(reply.json(), [], 'the new edge key requests svc.> as the old one did');
  await fresh.close();

  // The service ran with the old service key: its connection was cut, and it reconnected with the renewed file.
  let status = 0;
  for (const deadline = Date.now() + 15_000; Date.now() < deadline && status !== 200; await sleep(200)) {
    status = (await svc.request('GET', `/${TestProject}/integrations`, { token: owner })).status;
  }
  t.equal(status, 200, 'the service answers over NATS again, with its renewed file');
});

t.test("an integration's revocation after it keeps the role's revocation", async (t) => {
  const edgeBefore = await readFile(infra.natsAuth.creds.edge);
  const renewed = await natsAuthCli(['--renew', 'edge']);
  t.equal(renewed.code, 0, renewed.stderr);
  const made = await svc.request('POST', `/${TestProject}/integrations`, { token: owner, body: { name: 'Kasse 9', kind: 'nats' } });
  t.equal(made.status, 201, 'an integration of kind nats made');
  const deleted = await svc.request('DELETE', `/${TestProject}/integrations/${made.body.id}`, { token: owner });
  t.equal(deleted.status, 200, deleted.text);
  // The integration's credential is refused once the workers pushed the newer account JWT.
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(200)) {
    const nc = await connectWith(made.body.creds).catch(() => undefined);
    if (!nc) break;
    await nc.close();
  }
  t.ok((await refusal(() => connectWith(made.body.creds))) instanceof Error, "the integration's credential is revoked");
  t.ok((await refusal(() => connectWith(edgeBefore))) instanceof Error, 'and the renewed role key still is');
});

t.test('--renew says what it needs and which roles there are', async (t) => {
  const before = await readFile(infra.natsAuth.creds.admin, 'utf8');
  const unknown = await natsAuthCli(['--renew', 'cashier']);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /--renew takes roles among edge, workers, service, admin; got cashier/);
  const withoutNats = await natsAuthCli(['--renew', 'admin'], { ...env, NATS_URL: undefined });
  t.equal(withoutNats.code, 1);
  t.match(withoutNats.stderr, /--renew needs DATABASE_URL .* and NATS_URL/);
  t.equal(await readFile(infra.natsAuth.creds.admin, 'utf8'), before, 'nothing was renewed');
});

t.test('workers given the authority file, as before issuer.json, still start, and say to give them issuer.json', async (t) => {
  const workers = runBuilt(t, 'service/main.js', {
    ...infra.natsEnv('workers'),
    NATS_ISSUER: infra.natsAuth.authorityFile,
    ROLE: 'workers',
    DATABASE_URL: infra.databaseUrl,
    CHECKOUT_SIGNING_SECRET: TestCheckoutSecret,
    DATA_DIR: infra.dataDir,
    LOG_LEVEL: 'warn',
  });
  for (const deadline = Date.now() + 20_000; Date.now() < deadline && !workers.output().includes('issuer.json'); ) await sleep(100);
  t.match(workers.output(), /NATS_ISSUER names the authority file, which holds the NATS identity keys too: give the workers issuer\.json/);
  t.equal(workers.child.exitCode, null, 'and runs');
});
