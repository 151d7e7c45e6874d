import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import t from 'tap';
import { keyId, parseKey } from '../src/secrets/key-ring.js';
import { finishPayment, p, seedCheckout } from './support/checkout.js';
import { startFiskalyStandIn } from './support/fiskaly-stand-in.js';
import { fiscalizedOrder } from './support/fiscal.js';
import { runBuilt } from './support/process.js';
import { sdkBase32Decode, sdkTotp } from './support/app-sdk.js';
import { startMoreWorkers, startTestService, TestCheckoutSecret, TestSecretsKey } from './support/service.js';

/**
 * Secrets the platform must read back are stored sealed with SECRETS_KEY (src/secrets/key-ring.ts):
 * a database dump holds none of them; secrets stored plain before are sealed at the next start and
 * the TSE keeps signing; a start with a key that cannot read them ends with one line naming the key
 * it lacks and writes nothing; `npm run reseal` moves everything to a new key. The edge runs in
 * this file's service; the workers are started and stopped around it, as a rolling restart would.
 */
const run = promisify(execFile);
const fiskaly = await startFiskalyStandIn(t, { tokenLifetimeSeconds: 300 });
const svc = await startTestService(t, { env: { ROLE: 'edge' } });
const workerEnv = { FISCAL_RETRY_SCHEDULE_MS: '200', FISCAL_MAX_ATTEMPTS: '4', FISCAL_TIMEOUT_MS: '2000', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
let workers = await startMoreWorkers(t, svc, workerEnv);
const fx = await seedCheckout(svc);
const owner = await svc.token(['projectsWrite']);
const NewKey = randomBytes(32).toString('base64');
const oldId = keyId(parseKey(TestSecretsKey));
const newId = keyId(parseKey(NewKey));
const tse = { apiKey: fiskaly.apiKey, apiSecret: fiskaly.apiSecret, adminPin: fiskaly.adminPin };

const settings = await svc.request('PUT', `${p}/settings`, {
  token: owner,
  body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard'], fiscalization: { provider: 'fiskaly', tssId: fiskaly.tssId, baseUrl: fiskaly.url, ...tse } },
});
if (settings.status !== 200) throw new Error(settings.text);

/** A sale through the app and the payment system; answers its order once fiskaly signed it. */
async function signedSale(): Promise<any> {
  const created = await fx.createProcess();
  if (created.status !== 201) throw new Error(created.text);
  await finishPayment(svc, fx, created.body.id, 'successful');
  return fiscalizedOrder(svc, fx.tokens.orders, created.body.id);
}

const storedSecrets = async () => (await svc.sql<{ fiscalization: Record<string, string> }[]>`select fiscalization from project_settings where project = ${'acme-test01'}`)[0]!.fiscalization;

/** An app client whose key was rotated once (so two keys are stored), made before the dump. */
let appClient: { id: string; secret: string; rotatedSecret: string } | undefined;

/** Whether the app signs an app user in with a code of its newest key. */
async function appSignsIn(): Promise<number> {
  const code = sdkTotp(sdkBase32Decode(appClient!.rotatedSecret), Math.floor(Date.now() / 1000));
  const res = await svc.request('POST', `/apps/${appClient!.id}/users?project=acme-test01`, { headers: { authorization: `Basic ${Buffer.from(`${appClient!.id}:${code}`).toString('base64')}` } });
  return res.status;
}

t.test('a dump of the database holds none of the secrets: the TSE key, secret and PIN, integration credentials and webhook secrets, a kept answer\'s PoS password, client keys and secrets, the key itself', async (t) => {
  const integration = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'Dump', kind: 'nats' } });
  t.equal(integration.status, 201);
  const webhook = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'Dump hook', kind: 'webhook', url: 'http://127.0.0.1:9/hook', events: ['coupon.deleted'] } });
  t.equal(webhook.status, 201, webhook.text);
  const rotated = await svc.request('POST', `${p}/integrations/${webhook.body.id}/rotate`, { token: owner });
  // An Idempotency-Key keeps the answer, password and all, for 24 hours: sealed.
  const createPos = () => svc.request('POST', `${p}/pos/credentials`, { token: owner, body: { name: 'Dump PoS', permissions: ['checkoutRead'] }, headers: { 'idempotency-key': 'dump-pos-credential' } });
  const pos = await createPos();
  t.equal(pos.status, 201, pos.text);
  const replayed = await createPos();
  t.same([replayed.status, replayed.body.id, replayed.body.password], [201, pos.body.id, pos.body.password], 'the kept answer is replayed, its password too');
  const app = await svc.request('POST', `${p}/clients`, { token: owner, body: { kind: 'app', name: 'Dump app' } });
  const appRotated = await svc.request('POST', `${p}/clients/${app.body.id}/rotate`, { token: owner });
  appClient = { id: app.body.id, secret: app.body.secret, rotatedSecret: appRotated.body.secret };
  const service = await svc.request('POST', `${p}/clients`, { token: owner, body: { kind: 'service', name: 'Dump ERP', permissions: ['ordersRead'] } });
  t.equal(await appSignsIn(), 201, 'the app signs in');
  const clientSecrets = {
    appKey: app.body.secret.replace(/=+$/, ''),
    appKeyHex: sdkBase32Decode(app.body.secret).toString('hex'),
    rotatedAppKey: appRotated.body.secret.replace(/=+$/, ''),
    serviceSecret: service.body.secret,
  };
  const order = await signedSale();
  t.equal(order.fiscalReference.logs.at(-1).error, undefined, 'fiskaly signed the sale');
  const { stdout: dump } = await run('pg_dump', ['--no-owner', svc.databaseUrl], { maxBuffer: 64 * 1024 * 1024 });
  t.ok(dump.includes('sealed:v1:'), 'sealed values are in it');
  const seed = /SU[A-Z0-9]{50,}/.exec(integration.body.creds)?.[0];
  const webhookSecrets = { webhookSecret: webhook.body.secret, rotatedSecret: rotated.body.secret, webhookKey: webhook.body.secret.slice('whsec_'.length) };
  // A kept answer is bytea: a dump writes it in hex.
  const posPassword = { posPassword: pos.body.password, posPasswordHex: Buffer.from(pos.body.password).toString('hex') };
  const [kept] = await svc.sql<Array<{ answer: Buffer }>>`select answer from idempotency_keys where answer is not null and project = ${'acme-test01'} order by created_at desc limit 1`;
  t.match(kept!.answer.toString('utf8'), /^sealed:v1:/, 'the kept answer is sealed');
  for (const [what, secret] of Object.entries({ ...tse, seed, ...webhookSecrets, ...posPassword, ...clientSecrets, key: TestSecretsKey })) {
    t.notOk(secret && dump.includes(secret), `no ${what} in the dump`);
  }
});

t.test('secrets stored plain before sealing are sealed at the next start, and the TSE keeps signing', async (t) => {
  // As a database from before this version holds them.
  await svc.sql`update project_settings set fiscalization = fiscalization || ${svc.sql.json(tse)} where project = 'acme-test01'`;
  t.match(await storedSecrets(), tse, 'plain before');
  await workers.stop();
  workers = await startMoreWorkers(t, svc, workerEnv);
  const stored = await storedSecrets();
  t.match(stored, { apiKey: /^sealed:v1:/, apiSecret: /^sealed:v1:/, adminPin: /^sealed:v1:/ }, 'sealed by the start');
  t.notOk(Object.values(tse).some((secret) => JSON.stringify(stored).includes(secret)), 'nothing plain is left');
  const order = await signedSale();
  t.equal(order.fiscalReference.logs.at(-1).error, undefined, 'fiskaly still signs');
});

t.test('a start with a key that cannot read the stored secrets ends with one line naming that key, and writes nothing', async (t) => {
  const before = JSON.stringify(await storedSecrets());
  const authority = await readFile(svc.infra.natsAuth.authorityFile, 'utf8');
  const env = {
    ...svc.infra.natsEnv('workers'),
    ROLE: 'workers',
    DATABASE_URL: svc.databaseUrl,
    CHECKOUT_SIGNING_SECRET: TestCheckoutSecret,
    DATA_DIR: svc.config.dataDir,
    LOG_LEVEL: 'warn',
    SECRETS_KEY: NewKey,
  };
  for (const [case_, overrides] of [['with NATS_ISSUER (its seeds)', {}], ['without (the TSE secrets in Postgres)', { NATS_ISSUER: '' }]] as const) {
    const started = runBuilt(t, 'service/main.js', { ...env, ...overrides });
    t.equal(await started.exited, 1, `${case_}: exits 1`);
    const plain = started.output().trim().split('\n').filter((line) => !line.startsWith('{'));
    t.equal(plain.length, 1, `${case_}: one line`, { output: started.output() });
    t.match(plain[0], new RegExp(`^checkout-platform: secrets are sealed under key ${oldId}, which neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS is`));
  }
  t.equal(JSON.stringify(await storedSecrets()), before, 'the stored secrets are as they were');
  t.equal(await readFile(svc.infra.natsAuth.authorityFile, 'utf8'), authority, 'so is the NATS authority');
});

t.test('npm run reseal seals everything under a new key; workers with only the new key start and the TSE signs', async (t) => {
  const resealed = runBuilt(t, 'scripts/reseal.js', {
    SECRETS_KEY: NewKey,
    SECRETS_KEY_PREVIOUS: TestSecretsKey,
    DATABASE_URL: svc.databaseUrl,
    NATS_ISSUER: svc.infra.natsAuth.authorityFile,
    DATA_DIR: svc.config.dataDir,
  });
  t.equal(await resealed.exited, 0, resealed.output());
  t.match(resealed.output(), new RegExp(`3 tse secrets, 2 webhook secrets, 2 client secrets sealed under key ${newId}`), 'the TSE secrets, the webhook secret with the one before it, the app key with the one before it');
  const stored = await storedSecrets();
  for (const field of ['apiKey', 'apiSecret', 'adminPin']) t.match(stored[field], new RegExp(`^sealed:v1:${newId}:`), `${field} under the new key`);
  const authority = JSON.parse(await readFile(svc.infra.natsAuth.authorityFile, 'utf8'));
  t.match(authority.account.signingSeed, new RegExp(`^sealed:v1:${newId}:`), 'the NATS signing seed under the new key');
  const issuer = JSON.parse(await readFile(svc.infra.natsAuth.issuerFile, 'utf8'));
  t.match(issuer.account.signingSeed, new RegExp(`^sealed:v1:${newId}:`), 'and in the workers\' issuer.json beside it');

  await workers.stop();
  workers = await startMoreWorkers(t, svc, { ...workerEnv, SECRETS_KEY: NewKey });
  const order = await signedSale();
  t.equal(order.fiscalReference.logs.at(-1).error, undefined, 'fiskaly signs with the secrets opened by the new key');
  const rotated = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'After', kind: 'nats' } });
  t.equal(rotated.status, 201, 'the workers issue NATS credentials with the resealed seeds');
  t.equal(await appSignsIn(), 201, 'the app signs in with its key opened by the new key');
});
