import { readFile, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import t from 'tap';
import { ensureNatsAuth } from '../src/infra/nats-auth/authority-file.js';
import { issueUser, readJwtClaims } from '../src/infra/nats-auth/authority.js';
import { createKeyRing, parseKey } from '../src/secrets/key-ring.js';
import { cutOff, refusal } from './support/nats.js';
import { startMoreWorkers, startTestService, TestProject, TestSecretsKey } from './support/service.js';

/**
 * An upgrade to integrations and edges in NATS accounts of their own (CHANGELOG.md): what was
 * issued in the platform's account before stops opening it. An integration's credential is
 * refused and the integration says it needs a rotation, which issues one in its own account; an
 * edge's former key is revoked there by the workers' next start (npm run nats-auth moved the edge's
 * user and wrote its former key into issuer.json).
 */
const svc = await startTestService(t);
const { infra } = svc;
const owner = await svc.token(['projectsWrite']);
const platform = infra.natsAuth.authority.account.publicKey;

const connectWith = (creds: string | Uint8Array): Promise<NatsConnection> =>
  connect({ servers: infra.natsUrl, authenticator: credsAuthenticator(typeof creds === 'string' ? new TextEncoder().encode(creds) : creds), maxReconnectAttempts: 0 });

/** Waits for the connection to be cut, up to 10 s; answers how it ended, or 'still open'. */
const cutWithin = (nc: NatsConnection) => Promise.race([cutOff(nc), sleep(10_000).then(() => 'still open')]);

t.test("an integration's credential from the platform's account is refused after the upgrade; a rotation gives it one of its own", async (t) => {
  const made = await svc.request('POST', `/${TestProject}/integrations`, { token: owner, body: { name: 'Warenwirtschaft', kind: 'nats', filter: 'order.>' } });
  t.equal(made.status, 201, made.text);
  const { id, nats } = made.body;
  // As the version before left it: the user in the platform's account, the integration without an account.
  const legacy = issueUser(infra.natsAuth.authority, `integration ${id} of ${TestProject}`, {
    pub: { allow: [`$JS.API.CONSUMER.INFO.EVENTS.${nats.consumer}`, `$JS.API.CONSUMER.MSG.NEXT.EVENTS.${nats.consumer}`, `$JS.ACK.EVENTS.${nats.consumer}.>`] },
    sub: { allow: [`${nats.inboxPrefix}.>`] },
  });
  await svc.sql`update integrations set nats_account = null, user_issued_at = null where id = ${id}`;
  await svc.sql`insert into nats_credentials (user_key, project, integration_id, issued_at) values (${legacy.publicKey}, ${TestProject}, ${id}, now() - interval '1 day')`;
  const before = await connectWith(legacy.creds);
  t.ok(before.info?.server_id, 'the old credential opened the platform\'s account');
  const cut = cutWithin(before);

  // The upgrade's migration revokes every credential issued in the platform's account; the workers' start issues the account's JWT with them.
  await svc.sql`update nats_credentials set revoked_at = now() where account is null and revoked_at is null`;
  await startMoreWorkers(t, svc);
  t.not(await cut, 'still open', 'its connection is cut once the workers of this version started');
  t.ok((await refusal(() => connectWith(legacy.creds))) instanceof Error, 'and it cannot connect again');

  const shown = await svc.request('GET', `/${TestProject}/integrations/${id}`, { token: owner });
  t.match(shown.body.nats, { reissueRequired: true }, 'the integration says its credential must be reissued');
  t.notOk(shown.body.nats.account, 'it has no account yet');

  const rotated = await svc.request('POST', `/${TestProject}/integrations/${id}/rotate`, { token: owner });
  t.equal(rotated.status, 200, rotated.text);
  t.match(rotated.body.nats, { reissueRequired: false, account: /^A[A-Z2-7]{55}$/ });
  t.not(rotated.body.nats.account, platform, 'an account of its own');
  const claims = readJwtClaims<{ issuer_account: string }>(/-----BEGIN NATS USER JWT-----\s*(\S+?)\s*-{3,}END/.exec(rotated.body.creds)![1]!);
  t.equal(claims.nats.issuer_account, rotated.body.nats.account, 'the new credential is a user of that account');
  const fresh = await connectWith(rotated.body.creds);
  t.teardown(() => fresh.close());
  const consumer = await jetstream(fresh).consumers.get('EVENTS', nats.consumer);
  t.equal((await consumer.info()).name, nats.consumer, 'and reads the same consumer');
});

t.test("the edge's user moves to the edges' account with a new key, and the workers revoke its former key in the platform's", async (t) => {
  const ring = createKeyRing(parseKey(TestSecretsKey));
  // An edge.creds as the version before made it: a user of the platform's account.
  const former = issueUser(infra.natsAuth.authority, 'checkout-platform-edge', { pub: { allow: ['svc.>'] }, sub: { allow: ['_INBOX.>'] } });
  await writeFile(infra.natsAuth.creds.edge, former.creds, { mode: 0o600 });
  const before = await connectWith(former.creds);
  t.ok(before.info?.server_id, 'the former edge credential opened the platform\'s account');
  const cut = cutWithin(before);

  const folder = await ensureNatsAuth(infra.natsAuth.dir, ring);
  t.same(folder.authority.retiredKeys, [{ role: 'edge', userKey: former.publicKey }], 'the former key is kept as retired');
  const moved = readJwtClaims<{ issuer_account: string }>(/-----BEGIN NATS USER JWT-----\s*(\S+?)\s*-{3,}END/.exec(await readFile(folder.creds.edge, 'utf8'))![1]!);
  t.equal(moved.nats.issuer_account, folder.authority.edgeAccount.publicKey, 'edge.creds is a user of the edges\' account');
  t.not(moved.sub, former.publicKey, 'with a new key');
  t.match(await readFile(folder.issuerFile, 'utf8'), former.publicKey, 'issuer.json names the retired key for the workers');

  await startMoreWorkers(t, svc);
  t.not(await cut, 'still open', 'the former key is cut once the workers started');
  t.ok((await refusal(() => connectWith(former.creds))) instanceof Error, 'and it cannot connect again');
  const edge = await connectWith(await readFile(folder.creds.edge));
  t.teardown(() => edge.close());
  const reply = await edge.request('svc.shops.list', JSON.stringify({ project: TestProject }), { timeout: 5000 });
  t.ok(Array.isArray(reply.json()), 'the moved edge credential is answered by the workers');
});
