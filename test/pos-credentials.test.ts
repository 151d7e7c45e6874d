import t from 'tap';
import { p, seedCheckout } from './support/checkout.js';
import { startTestService } from './support/service.js';

/**
 * PoS credentials: Basic authentication for virtual points of sale, on the PoS routes only, with
 * the credential's permissions; revoked at once; failed attempts logged without the secret.
 */
const logLines: string[] = [];
const svc = await startTestService(t, { logLines: (line) => logLines.push(line) });
const fx = await seedCheckout(svc);
const admin = await svc.token(['projectsWrite']);
const credentialsPath = `${p}/pos/credentials`;

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const createCredential = (body: object, token = admin) => svc.request('POST', credentialsPath, { token, body });
const posPath = (id: string) => `${p}/pos/checkout/id/${id}`;
const posGet = (id: string, authorization: string) => svc.request('GET', posPath(id), { headers: { authorization } });
const posPatch = (id: string, authorization: string, body: object) =>
  svc.request('PATCH', posPath(id), { headers: { authorization, 'content-type': 'application/merge-patch+json' }, body });
const posPut = (id: string, authorization: string, body: object) => svc.request('PUT', posPath(id), { headers: { authorization }, body });
const snapshot = async (id: string) => (await fx.getProcess(id)).body;

const full = await createCredential({ name: 'Kasse 3', permissions: ['checkoutRead', 'updatePricingCheckoutProcess'] });
const readOnly = await createCredential({ name: 'Monitor', permissions: ['checkoutRead'] });
const fullAuth = basic(full.body.user, full.body.password);
const readAuth = basic(readOnly.body.user, readOnly.body.password);

t.test('creates a credential and answers its password once; lists them without secrets', async (t) => {
  t.equal(full.status, 201, full.text);
  t.match(full.body, { user: /^pos-[A-Za-z0-9_-]{8,}$/, name: 'Kasse 3', permissions: ['checkoutRead', 'updatePricingCheckoutProcess'], createdAt: /Z$/ });
  t.ok(full.body.password.length >= 40, 'a long random password');
  const list = await svc.request('GET', credentialsPath, { token: admin });
  t.equal(list.status, 200);
  t.same(
    list.body.credentials.map((c: any) => c.user).sort(),
    [full.body.user, readOnly.body.user].sort(),
  );
  t.notOk(list.text.includes(full.body.password) || list.text.includes('password'), 'no password, no hash');
  const [stored] = await svc.sql<{ password_hash: string }[]>`select password_hash from pos_credentials where username = ${full.body.user}`;
  t.match(stored?.password_hash, /^scrypt\$16384\$8\$1\$/, 'kept as a scrypt hash');
  t.notOk(stored?.password_hash.includes(full.body.password));
});

t.test('refuses credentials with other permissions, a bad body or without projectsWrite, storing nothing', async (t) => {
  const before = (await svc.sql`select count(*)::int as n from pos_credentials`)[0]!.n;
  for (const body of [
    { name: 'X', permissions: ['setPaymentState'] },
    { name: 'X', permissions: ['checkoutRead', 'productsWrite'] },
    { name: 'X', permissions: [] },
    { name: '', permissions: ['checkoutRead'] },
    { permissions: ['checkoutRead'] },
  ]) {
    const res = await createCredential(body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.type, 'bad_request');
  }
  for (const token of [await svc.token(['updatePricingCheckoutProcess', 'checkoutRead']), await svc.token(['projectsWrite'], { project: 'acme-other01' })]) {
    t.equal((await createCredential({ name: 'X', permissions: ['checkoutRead'] }, token)).status, 403);
    t.equal((await svc.request('GET', credentialsPath, { token })).status, 403);
  }
  t.equal((await svc.sql`select count(*)::int as n from pos_credentials`)[0]!.n, before);
});

t.test('takes a PoS through the whole handover with Basic: read, take over (its name is processedBy), complete', async (t) => {
  const process = await fx.processIn('pending');
  const read = await posGet(process.id, fullAuth);
  t.equal(read.status, 200, read.text);
  t.equal(read.body.state, 'pending');

  const taken = await posPatch(process.id, fullAuth, { state: 'processing' });
  t.equal(taken.status, 200, taken.text);
  t.equal(taken.body.processedBy, 'Kasse 3', "the credential's name is the default processedBy");

  const { lineItems, taxShares, netPrice, totalPrice } = taken.body;
  const done = await posPut(process.id, fullAuth, { state: 'successful', lineItems, taxShares, netPrice, totalPrice });
  t.equal(done.status, 200, done.text);
  t.equal(done.body.state, 'successful');
  t.match(await snapshot(process.id), { paymentState: 'successful' });

  const named = await fx.processIn('pending');
  t.equal((await posPatch(named.id, fullAuth, { state: 'processing', processedBy: 'kasse-3b' })).body.processedBy, 'kasse-3b', 'a processedBy it names wins');
});

t.test('holds a credential to its permissions', async (t) => {
  const process = await fx.processIn('pending');
  const before = await snapshot(process.id);
  t.equal((await posGet(process.id, readAuth)).status, 200, 'checkoutRead reads');
  const moved = await posPatch(process.id, readAuth, { state: 'processing' });
  t.equal(moved.status, 403, 'but does not update');
  t.equal(moved.body.type, 'forbidden');
  t.same(await snapshot(process.id), before, 'nothing changed');
});

t.test('refuses a wrong password, an unknown user, a malformed header and another project, changing nothing', async (t) => {
  const process = await fx.processIn('pending');
  const before = await snapshot(process.id);
  const otherAdmin = await svc.token(['projectsWrite'], { project: 'acme-other01' });
  const other = (await svc.request('POST', '/acme-other01/pos/credentials', { token: otherAdmin, body: { name: 'Elsewhere', permissions: ['checkoutRead', 'updatePricingCheckoutProcess'] } })).body;
  const attempts: Array<[string, string]> = [
    ['a wrong password', basic(full.body.user, `${full.body.password}x`)],
    ['an empty password', basic(full.body.user, '')],
    ['an unknown user', basic('pos-doesnotexist00', full.body.password)],
    ["another project's credential", basic(other.user, other.password)],
    ['no colon', `Basic ${Buffer.from(full.body.user).toString('base64')}`],
    ['not base64 at all', 'Basic %%%'],
  ];
  for (const [what, authorization] of attempts) {
    for (const res of [await posGet(process.id, authorization), await posPatch(process.id, authorization, { state: 'processing' })]) {
      t.equal(res.status, 403, what);
      t.equal(res.body.type, 'forbidden', what);
    }
  }
  t.same(await snapshot(process.id), before, 'nothing changed');
  const failures = logLines.filter((l) => l.includes('PoS basic authentication failed'));
  t.ok(failures.length >= attempts.length, 'failed attempts are logged');
  t.notOk(
    failures.some((l) => l.includes(full.body.password) || l.includes(other.password)),
    'without the password',
  );
  t.ok(failures.some((l) => l.includes(full.body.user)), 'with the user it was for');
});

t.test('refuses Basic on every route that is not a PoS route', async (t) => {
  const process = await fx.processIn('pending');
  const before = await snapshot(process.id);
  const tries = [
    svc.request('GET', `${p}/checkout/process/${process.id}`, { headers: { authorization: fullAuth } }),
    svc.request('PATCH', `${p}/checkout/process/${process.id}`, { headers: { authorization: fullAuth }, body: { paymentState: 'failed' } }),
    svc.request('POST', `${p}/checkout/process/${process.id}/approval`, { headers: { authorization: fullAuth }, body: { type: 'supervisor' } }),
    svc.request('GET', `${p}/shops`, { headers: { authorization: fullAuth } }),
    svc.request('GET', credentialsPath, { headers: { authorization: fullAuth } }),
  ];
  for (const res of await Promise.all(tries)) {
    t.equal(res.status, 403);
    t.equal(res.body.type, 'forbidden');
  }
  t.same(await snapshot(process.id), before, 'nothing changed');
});

t.test('revokes a credential at once', async (t) => {
  const kept = await createCredential({ name: 'Kasse 9', permissions: ['checkoutRead'] });
  const auth = basic(kept.body.user, kept.body.password);
  const process = await fx.processIn('pending');
  t.equal((await posGet(process.id, auth)).status, 200, 'in use');
  const revoked = await svc.request('DELETE', `${credentialsPath}/${kept.body.user}`, { token: admin });
  t.equal(revoked.status, 200);
  const after = await posGet(process.id, auth);
  t.equal(after.status, 403, 'refused right after the revocation');
  t.equal(after.body.type, 'forbidden');
  t.equal((await svc.request('DELETE', `${credentialsPath}/${kept.body.user}`, { token: admin })).status, 404, 'a second revocation finds nothing');
  t.notOk((await svc.request('GET', credentialsPath, { token: admin })).body.credentials.some((c: any) => c.user === kept.body.user));
});
