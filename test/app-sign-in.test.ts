import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import t, { type Test } from 'tap';
import { RetailerAppPermissions } from '../src/auth/client-roles.js';
import { startAppSdk, sdkBase32Decode, sdkTotp } from './support/app-sdk.js';
import { finishPayment, p, seedCheckout } from './support/checkout.js';
import type { HttpResponse } from './support/http.js';
import { startMoreEdge, startTestService, TestProject } from './support/service.js';
import * as decoders from './real-clients/sdk-decoders.js';

/**
 * The app SDKs' sign-in (docs/api.md, "Connecting the app SDK"), performed as the public Android SDK
 * performs it (test/support/app-sdk.ts): the metadata document, an app user, tokens of the role
 * retailerApp, then a paid checkout and the user's purchase history with those tokens; and what an
 * attacker would try: codes of another time, secrets of another user, apps of another project,
 * deleted and rotated apps, another user's orders, writes to the catalog.
 */
// Many app users from one address: the per-address limit of new app users is client-throttle.test.ts's.
const svc = await startTestService(t, { env: { APP_USER_CREATE_LIMIT: '1000' } });
const fx = await seedCheckout(svc);
const owner = await svc.token(['projectsWrite']);
const OtherProject = 'other-proj01';
const otherOwner = await svc.token(['projectsWrite'], { project: OtherProject });

const makeApp = async (name = 'Kunden-App', project = TestProject, token = owner, body: object = {}) => {
  const res = await svc.request('POST', `/${project}/clients`, { token, body: { kind: 'app', name, ...body } });
  if (res.status !== 201) throw new Error(`app: ${res.status} ${res.text}`);
  return res.body as { id: string; secret: string; tokenLifetimeSeconds: number };
};
const app = await makeApp('Kunden-App', TestProject, owner, { tokenLifetimeSeconds: 1800 });
const key = sdkBase32Decode(app.secret);
const code = (offsetSeconds = 0, secret = key) => sdkTotp(secret, Math.floor(Date.now() / 1000) + offsetSeconds);
const basic = (...parts: string[]) => `Basic ${Buffer.from(parts.join(':')).toString('base64')}`;

/** A step that will not end within `seconds`: codes made now stay of the current step. */
async function midStep(seconds = 3): Promise<void> {
  const into = (Date.now() / 1000) % 30;
  if (into > 30 - seconds) await new Promise((resolve) => setTimeout(resolve, (30 - into + 0.2) * 1000));
}

const createUser = (appID: string, authorization: string, query = `?project=${TestProject}`, headers: Record<string, string> = {}) =>
  svc.request('POST', `/apps/${appID}/users${query}`, { headers: { authorization, ...headers } });
const tokenFor = (authorization: string, path = `${p}/tokens?role=retailerApp`, headers: Record<string, string> = {}) => svc.request('GET', path, { headers: { authorization, ...headers } });

/** A new app user of the app, made with a right code. */
async function newUser(appID = app.id, secret = key, project = TestProject): Promise<{ id: string; secret: string }> {
  await midStep();
  const res = await createUser(appID, basic(appID, code(0, secret)), `?project=${project}`);
  if (res.status !== 201) throw new Error(`app user: ${res.status} ${res.text}`);
  return res.body.appUser;
}

/** A refusal as the SDKs need it: 403 with the server's Date, and the platform's error body. */
function assertRefused(t: Test, res: HttpResponse, what: string): void {
  t.equal(res.status, 403, `${what}: ${res.text}`);
  t.equal(res.body.type, 'forbidden', `${what}: forbidden`);
  const date = res.headers.get('date');
  t.ok(date && Math.abs(Date.parse(date) - Date.now()) < 5000, `${what}: with the server's Date (${date})`);
  t.equal(res.body.token, undefined, `${what}: no token`);
}

t.test('an app signs in as the Android SDK does, buys, and reads its own purchase history and receipt', async (t) => {
  const sdk = await startAppSdk(svc.url, app.id, app.secret);
  t.ok(decoders.AppMetadata.safeParse(sdk.metadata).success, `the metadata decodes as both SDKs decode it: ${JSON.stringify(decoders.AppMetadata.safeParse(sdk.metadata).error?.issues.slice(0, 3))}`);
  t.match(sdk.project, { id: TestProject, currency: 'EUR', decimalDigits: 2, locale: 'de_DE', roundingMode: 'commercial', customerCards: { accepted: [] } });
  t.same(sdk.project.shops.map((s: { id: string }) => s.id), ['s1', 's2'], "the project's shops, as the app checks in to them");

  await midStep();
  const first = await sdk.token();
  t.ok(first, 'a token');
  t.same(sdk.attempts.map((a) => [a.method, a.status]), [['POST', 201]], 'one request made the app user and its first token');
  t.ok(sdk.appUser?.id && sdk.appUser.secret, 'the app user is kept');
  t.same(Object.keys(first!).sort(), ['expiresAt', 'id', 'issuedAt', 'token']);
  const claims = decodeJwt(first!.token);
  t.match(claims, { project: TestProject, appUserID: sdk.appUser!.id, clientID: sdk.clientId, sub: `app-user:${sdk.appUser!.id}`, jti: first!.id, iat: first!.issuedAt, exp: first!.expiresAt });
  t.same(claims.permissions, [...RetailerAppPermissions], 'the permissions of the role retailerApp and no more');
  t.equal(first!.expiresAt - first!.issuedAt, 1800, "it lives the app's token lifetime");

  // A token is had again by asking again (no refresh token): as the SDK does once half its life is over.
  const again = await tokenFor(basic(app.id, code(), sdk.appUser!.id, sdk.appUser!.secret), `${p}/tokens?role=retailerApp`, { 'client-id': sdk.clientId });
  t.equal(again.status, 200, again.text);
  t.equal(again.headers.get('cache-control'), 'no-store');
  t.ok(decoders.AppToken.safeParse(again.body).success, 'the token decodes as both SDKs decode it');
  t.not(again.body.id, first!.id, 'a new token, with a jti of its own');
  const iosPath = await tokenFor(basic(app.id, code(), sdk.appUser!.id, sdk.appUser!.secret), `/tokens?project=${TestProject}&role=retailerApp`);
  t.equal(iosPath.status, 200, `the path the iOS SDK builds: ${iosPath.text}`);
  t.equal(decodeJwt(iosPath.body.token).clientID, undefined, 'no Client-ID, no clientID claim');

  const shops = await sdk.call('GET', sdk.link('shops'));
  t.equal(shops.status, 200, 'the token reads the shops');
  const clientTokenOnly = await fetch(sdk.link('shops'), { headers: { 'client-token': first!.token } });
  t.equal(clientTokenOnly.status, 200, 'Client-Token alone is taken like Authorization: Bearer');
  await clientTokenOnly.text();

  const info = await sdk.call('POST', sdk.link('checkoutInfo'), { session: 'app', shopID: 's1', clientID: sdk.clientId, items: [{ id: 'i1', sku: 'BREAD', amount: 2, scannedCode: 'BREAD' }], requiredInformation: [] });
  t.equal(info.status, 200, JSON.stringify(info.body));
  t.equal(info.body.checkoutInfo.appUserID, sdk.appUser!.id, "the checkout info is the token's app user's");
  const created = await sdk.call('POST', `${svc.url}${p}/checkout/process`, { signedCheckoutInfo: info.body, paymentMethod: 'cash' });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const polled = await sdk.call('GET', `${svc.url}${created.body.links.self.href}`);
  t.equal(polled.status, 200, 'the app polls its process');
  await finishPayment(svc, fx, created.body.id, 'successful');

  const history = await sdk.call('GET', sdk.link('appUserOrders').replace('{appUserID}', sdk.appUser!.id));
  t.equal(history.status, 200, JSON.stringify(history.body));
  t.ok(decoders.OrderList.safeParse(history.body).success, 'the history decodes as both SDKs decode it');
  t.same(history.body.orders.map((o: { id: string }) => o.id), [created.body.id], 'the paid checkout, and nothing else');
  const receipt = await sdk.call('GET', `${svc.url}${history.body.orders[0].links.receipt.href}`);
  t.equal(receipt.status, 200, 'its receipt');
  t.equal(receipt.headers.get('content-type'), 'application/pdf');

  const user = await sdk.call('GET', sdk.link('appUser').replace('{appUserID}', sdk.appUser!.id));
  t.same([user.status, user.body], [200, { id: sdk.appUser!.id }], 'the app user link answers its id');
  t.ok(decoders.AppUserData.safeParse(user.body).success);
  const consent = await sdk.call('POST', sdk.link('consents').replace('{appUserID}', sdk.appUser!.id), { version: '2024-05-01' });
  t.same([consent.status, consent.body], [200, {}], 'a consent is taken');
  const [stored] = await svc.sql<Array<{ consent_version: string }>>`select consent_version from app_users where id = ${sdk.appUser!.id}`;
  t.equal(stored?.consent_version, '2024-05-01', 'and recorded');

  const appdb = await sdk.call('GET', sdk.link('appdb'));
  t.same([appdb.status, appdb.body], [304, ''], 'appdb: 304 and no body, which both SDKs take as nothing new (no offline database)');
  const events = await sdk.call('POST', sdk.link('appEvents'), {
    type: 'analytics', appId: sdk.clientId, shopID: 's1', project: TestProject, timestamp: new Date().toISOString(), payload: { key: 'rating', value: '5', comment: '', eventType: 'analytics' },
  });
  t.same([events.status, events.body], [200, {}], 'an app event is taken');
  const metrics = await (await fetch(`${svc.url}/metrics`)).text();
  t.match(metrics, /checkout_app_events_total\{type="analytics"\} 1/, 'and counted');
  t.match(metrics, /checkout_tokens_issued_total\{grant="app"\} 3/, 'the tokens issued are counted');
});

t.test("a phone whose clock is off gets a 403 with the server's Date, and the SDK's second try signs in", async (t) => {
  await midStep(5);
  const sdk = await startAppSdk(svc.url, app.id, app.secret, { clockSkewMs: -7 * 60_000 });
  const token = await sdk.token();
  t.ok(token, 'signed in');
  t.same(sdk.attempts.map((a) => a.status), [403, 201], 'refused once, then made its app user with the corrected clock');
  t.ok(sdk.attempts[0]!.date, 'the refusal carried Date');
  const later = await startAppSdk(svc.url, app.id, app.secret, { clockSkewMs: 12 * 60_000 });
  later.appUser = sdk.appUser;
  t.ok(await later.token(), 'a token request with a clock ahead signs in too');
  t.same(later.attempts.map((a) => [a.method, a.status]), [['GET', 403], ['GET', 200]]);
});

t.test('refuses a wrong code, and one two steps away, with 403 and Date; one step away is accepted', async (t) => {
  const user = await newUser();
  await midStep();
  for (const [what, authorization] of [
    ['a code that is no code of the key', basic(app.id, '12345678', user.id, user.secret)],
    ['a code of two steps before', basic(app.id, code(-60), user.id, user.secret)],
    ['a code of two steps after', basic(app.id, code(60), user.id, user.secret)],
    ['a code of 7 digits', basic(app.id, code().slice(1), user.id, user.secret)],
    ['no code', basic(app.id, '', user.id, user.secret)],
    ['a code made with another key', basic(app.id, code(0, Buffer.alloc(32, 9)), user.id, user.secret)],
  ] as const) {
    assertRefused(t, await tokenFor(authorization), what);
  }
  assertRefused(t, await createUser(app.id, basic(app.id, code(-60))), 'an app user asked for with a code of two steps before');
  for (const offset of [-30, 30]) {
    const res = await tokenFor(basic(app.id, code(offset), user.id, user.secret));
    t.equal(res.status, 200, `a code of one step ${offset < 0 ? 'before' : 'after'}: ${res.text}`);
  }
});

t.test("refuses a wrong app user secret, another app's user, a user of no app, and malformed credentials", async (t) => {
  const user = await newUser();
  const otherApp = await makeApp('Zweite App');
  const otherUser = await newUser(otherApp.id, sdkBase32Decode(otherApp.secret));
  await midStep();
  const cases = [
    ['a wrong secret', basic(app.id, code(), user.id, `${user.secret}x`)],
    ["another user's secret", basic(app.id, code(), user.id, otherUser.secret)],
    ["another app's user with this app's code", basic(app.id, code(), otherUser.id, otherUser.secret)],
    ["this app's user with another app's code", basic(otherApp.id, code(0, sdkBase32Decode(otherApp.secret)), user.id, user.secret)],
    ['an app user that does not exist', basic(app.id, code(), '2f1c3a4b-5d6e-4f70-8a9b-0c1d2e3f4a5b', user.secret)],
    ['an app user id that is no id', basic(app.id, code(), 'not-a-uuid', user.secret)],
    ['an app that does not exist', basic('app-aaaaaaaaaaaaaaaaaaaa', code(), user.id, user.secret)],
    ['no user secret', basic(app.id, code(), user.id)],
    ['a part too many', basic(app.id, code(), user.id, user.secret, 'x')],
    ['an app id longer than any', basic(`${app.id}${'x'.repeat(300)}`, code(), user.id, user.secret)],
    ['a secret longer than any', basic(app.id, code(), user.id, 'x'.repeat(5000))],
  ] as const;
  const refusals: unknown[] = [];
  for (const [what, authorization] of cases) {
    const res = await tokenFor(authorization);
    assertRefused(t, res, what);
    refusals.push(res.body);
  }
  t.equal(new Set(refusals.map((r) => JSON.stringify(r))).size, 1, 'every refusal reads the same: nothing tells which part was wrong');
  assertRefused(t, await tokenFor(`Bearer ${await svc.token(['productsRead'])}`), 'a bearer token instead of the credential');
  assertRefused(t, await svc.request('GET', `${p}/tokens?role=retailerApp`), 'no credential');
  assertRefused(t, await tokenFor(basic(app.id, code(), user.id, user.secret), `${p}/tokens?role=paymentSystem`), 'another role');
  assertRefused(t, await createUser(app.id, basic(otherApp.id, code(0, sdkBase32Decode(otherApp.secret)))), "an app user of one app asked for with another app's credentials");
});

t.test("refuses an app of another project: its users get no token for this project, and it makes none of this project's users", async (t) => {
  const foreign = await makeApp('Fremde App', OtherProject, otherOwner);
  const foreignKey = sdkBase32Decode(foreign.secret);
  const foreignUser = await newUser(foreign.id, foreignKey, OtherProject);
  await midStep();
  assertRefused(t, await tokenFor(basic(foreign.id, code(0, foreignKey), foreignUser.id, foreignUser.secret)), "a token of this project for the other project's app user");
  assertRefused(t, await createUser(foreign.id, basic(foreign.id, code(0, foreignKey)), `?project=${TestProject}`), "an app user of this project made with the other project's app");
  const own = await tokenFor(basic(foreign.id, code(0, foreignKey), foreignUser.id, foreignUser.secret), `/${OtherProject}/tokens?role=retailerApp`);
  t.equal(own.status, 200, 'its own project signs it in');
  const shops = await svc.request('GET', `${p}/shops`, { token: own.body.token });
  t.equal(shops.status, 403, "that token reads nothing of this project");
  const meta = await svc.request('GET', `/metadata/app/${foreign.id}/android/1.0`);
  t.same(meta.body.projects.map((x: { id: string }) => x.id), [OtherProject], 'the metadata of an app names its own project only');
});

t.test('an app user reads its own orders and receipts and nobody else\'s, and writes nothing of the catalog', async (t) => {
  const alice = await newUser();
  const bob = await newUser();
  const tokenOf = async (u: { id: string; secret: string }) => (await tokenFor(basic(app.id, code(), u.id, u.secret))).body.token as string;
  await midStep();
  const [aliceToken, bobToken] = [await tokenOf(alice), await tokenOf(bob)];
  const info = await svc.request('POST', `${p}/checkout/info`, { token: bobToken, body: { shopID: 's1', items: [{ sku: 'WATER', amount: 1 }] } });
  const process = await svc.request('POST', `${p}/checkout/process`, { token: bobToken, body: { signedCheckoutInfo: info.body, paymentMethod: 'cash' } });
  await finishPayment(svc, fx, process.body.id, 'successful');
  t.equal((await svc.request('GET', `${p}/users/${bob.id}/orders`, { token: bobToken })).body.orders.length, 1, "bob's purchase is in bob's history");

  const refused = [
    await svc.request('GET', `${p}/users/${bob.id}/orders`, { token: aliceToken }),
    await svc.request('GET', `${p}/orders/${process.body.id}/receipt`, { token: aliceToken }),
    await svc.request('GET', `${p}/orders/${process.body.id}`, { token: aliceToken }),
    await svc.request('GET', `${p}/orders`, { token: aliceToken }),
    await svc.request('GET', `/apps/users/${bob.id}`, { token: aliceToken }),
    await svc.request('POST', `/apps/users/${bob.id}/consents`, { token: aliceToken, body: { version: '1' } }),
    await svc.request('DELETE', `/apps/users/${bob.id}`, { token: aliceToken }),
  ];
  for (const res of refused) t.equal(res.status, 403, `alice is refused: ${res.text}`);
  t.equal((await svc.request('GET', `/apps/users/${bob.id}`, { token: bobToken })).status, 200, 'bob still exists');

  const forged = await svc.request('POST', `${p}/checkout/info`, { token: aliceToken, body: { shopID: 's1', appUserID: bob.id, items: [{ sku: 'WATER', amount: 1 }] } });
  t.equal(forged.status, 403, `a cart in bob's name is refused to alice: ${forged.text}`);

  const writes = [
    svc.request('POST', `${p}/products`, { token: aliceToken, body: { sku: 'X', name: 'X' } }),
    svc.request('DELETE', `${p}/products/sku/WATER`, { token: aliceToken }),
    svc.request('POST', `${p}/pricing/v2/category/batch`, { token: aliceToken, body: [] }),
    svc.request('POST', `${p}/shops`, { token: aliceToken, body: { name: 'Mine' } }),
    svc.request('PUT', `${p}/settings`, { token: aliceToken, body: {} }),
    svc.request('POST', `${p}/coupons`, { token: aliceToken, body: {} }),
    svc.request('GET', `${p}/clients`, { token: aliceToken }),
    svc.request('PATCH', `${p}/checkout/process/${process.body.id}`, { token: aliceToken, body: { paymentState: 'successful' } }),
  ];
  for (const res of await Promise.all(writes)) t.equal(res.status, 403, `refused: ${res.text.slice(0, 200)}`);
  const product = await svc.request('GET', `${p}/products/sku/WATER`, { token: aliceToken });
  t.equal(product.status, 200, 'the catalog is as it was, and the token reads it');
});

t.test('an app user ended by its own token gets no new token; the one it had lives until it expires', async (t) => {
  const user = await newUser();
  await midStep();
  const token = (await tokenFor(basic(app.id, code(), user.id, user.secret))).body.token as string;
  const ended = await svc.request('DELETE', `/apps/users/${user.id}`, { token });
  t.equal(ended.status, 200, ended.text);
  assertRefused(t, await tokenFor(basic(app.id, code(), user.id, user.secret)), 'a token for the ended user');
  t.equal((await svc.request('GET', `${p}/shops`, { token })).status, 200, 'the token issued before still reads until it expires');
  t.equal((await svc.request('GET', `/apps/users/${user.id}`, { token })).status, 404, 'the app user is gone');
});

t.test('a rotated app key: the one before signs in for 24 hours beside the new one, not after, and not at all with revokeOldNow', async (t) => {
  const rotating = await makeApp('Rotierende App');
  const oldKey = sdkBase32Decode(rotating.secret);
  const user = await newUser(rotating.id, oldKey);
  const rotated = await svc.request('POST', `${p}/clients/${rotating.id}/rotate`, { token: owner });
  t.equal(rotated.status, 200, rotated.text);
  const newKey = sdkBase32Decode(rotated.body.secret);
  t.not(rotated.body.secret, rotating.secret, 'a new key');
  const until = Date.parse(rotated.body.previousSecretUntil) - Date.now();
  t.ok(until > 23.9 * 3_600_000 && until <= 24 * 3_600_000, `the key before is accepted for 24 h (${rotated.body.previousSecretUntil})`);
  await midStep();
  t.equal((await tokenFor(basic(rotating.id, code(0, oldKey), user.id, user.secret))).status, 200, 'the key before signs in');
  t.equal((await tokenFor(basic(rotating.id, code(0, newKey), user.id, user.secret))).status, 200, 'the new key signs in');

  // 24 hours later, as far as the stored grace is concerned.
  await svc.sql`update clients set previous_secret_until = now() - interval '1 second' where id = ${rotating.id}`;
  assertRefused(t, await tokenFor(basic(rotating.id, code(0, oldKey), user.id, user.secret)), 'the key before, after its grace');
  assertRefused(t, await createUser(rotating.id, basic(rotating.id, code(0, oldKey))), 'an app user asked for with the key before, after its grace');
  t.equal((await tokenFor(basic(rotating.id, code(0, newKey), user.id, user.secret))).status, 200, 'the new key still signs in');

  const revoked = await svc.request('POST', `${p}/clients/${rotating.id}/rotate`, { token: owner, body: { revokeOldNow: true } });
  t.equal(revoked.status, 200, revoked.text);
  t.equal(revoked.body.previousSecretUntil, undefined, 'no grace');
  await midStep();
  assertRefused(t, await tokenFor(basic(rotating.id, code(0, newKey), user.id, user.secret)), 'the key before, revoked at once');
  t.equal((await tokenFor(basic(rotating.id, code(0, sdkBase32Decode(revoked.body.secret)), user.id, user.secret))).status, 200, 'the newest key signs the same app user in');
});

t.test('a deleted app: no metadata, no app user and no token; tokens issued before live until they expire', async (t) => {
  const doomed = await makeApp('Abgeschaltete App');
  const doomedKey = sdkBase32Decode(doomed.secret);
  const user = await newUser(doomed.id, doomedKey);
  await midStep();
  const token = (await tokenFor(basic(doomed.id, code(0, doomedKey), user.id, user.secret))).body.token as string;
  t.equal((await svc.request('DELETE', `${p}/clients/${doomed.id}`, { token: owner })).status, 200);
  await midStep();
  assertRefused(t, await tokenFor(basic(doomed.id, code(0, doomedKey), user.id, user.secret)), 'a token for its app user');
  assertRefused(t, await createUser(doomed.id, basic(doomed.id, code(0, doomedKey))), 'a new app user');
  t.equal((await svc.request('GET', `/metadata/app/${doomed.id}/android/1.0`)).status, 404, 'its metadata is gone');
  t.same(await svc.sql`select id from app_users where client_id = ${doomed.id}`, [], 'its app users ended with it');
  const claims = decodeJwt(token);
  t.ok(claims.exp! - claims.iat! <= doomed.tokenLifetimeSeconds, 'the token issued before lives its lifetime at most');
  t.equal((await svc.request('GET', `${p}/shops`, { token })).status, 200, 'and reads until then');
});

t.test('the metadata document: public, cached for a minute, every link leads to a route, and a 404 for anything that is no app', async (t) => {
  const res = await svc.request('GET', `/metadata/app/${app.id}/ios/2.3.1-beta(7)`);
  t.equal(res.status, 200, res.text);
  t.equal(res.headers.get('cache-control'), 'public, max-age=60');
  t.ok(decoders.IosMetadata.safeParse(res.body).success, 'iOS decodes it');
  t.ok(decoders.AndroidMetadata.safeParse(res.body).success, 'Android decodes it');
  t.equal(res.body.links.self.href, `/metadata/app/${app.id}/ios/${encodeURIComponent('2.3.1-beta(7)')}`, 'self names the document');
  t.match(res.body.metadata, { kill: false });
  const service = await svc.request('POST', `${p}/clients`, { token: owner, body: { kind: 'service', name: 'ERP', permissions: ['ordersRead'] } });
  for (const id of [service.body.id, 'app-aaaaaaaaaaaaaaaaaaaa', 'nonsense', '%00']) {
    const missing = await svc.request('GET', `/metadata/app/${encodeURIComponent(id)}/android/1.0`);
    t.ok(missing.status === 404 || missing.status === 400, `${id}: ${missing.status}`);
  }
  // Every href of the document answers something other than 404 (with a token where it needs one).
  const user = await newUser();
  const token = (await tokenFor(basic(app.id, code(), user.id, user.secret))).body.token as string;
  const hrefs = [...Object.values(res.body.links), ...Object.values(res.body.projects[0].links)].map((l) => (l as { href: string }).href.replace('{appUserID}', user.id));
  for (const href of hrefs) {
    const method = href.endsWith('/events') || href.endsWith('/consents') ? 'POST' : 'GET';
    const answer = await svc.request(method, href, { token, ...(method === 'POST' ? { body: href.endsWith('/events') ? { type: 'log', payload: {} } : { version: '1' } } : {}) });
    t.not(answer.status, 404, `${method} ${href}: ${answer.status}`);
  }
});

t.test('app users are stored with the SHA-256 of their secret, never the secret; the app key is sealed', async (t) => {
  const user = await newUser();
  const [row] = await svc.sql<Array<{ secret_hash: Buffer }>>`select secret_hash from app_users where id = ${user.id}`;
  t.same(row!.secret_hash, createHash('sha256').update(user.secret).digest(), 'the hash');
  const [client] = await svc.sql<Array<{ secret: string }>>`select secret from clients where id = ${app.id}`;
  t.match(client!.secret, /^sealed:v1:/, 'the app key sealed');
  t.notOk(client!.secret.includes(app.secret.replace(/=/g, '')), 'not the key');
});

t.test('a Client-ID that is no installation id is refused', async (t) => {
  await midStep();
  const bad = await createUser(app.id, basic(app.id, code()), `?project=${TestProject}`, { 'client-id': 'a b' });
  t.equal(bad.status, 400, bad.text);
  t.equal(bad.body.details[0].path, 'Client-ID');
});

t.test('an edge without JWT_SECRET (an identity provider signs the tokens) issues none: 501, and no app user is made for nothing', async (t) => {
  const edge = await startMoreEdge(t, svc, { JWT_SECRET: '', JWKS_URL: 'http://127.0.0.1:9/jwks.json' });
  await midStep();
  const before = await svc.sql`select count(*)::int as n from app_users`;
  for (const res of [
    await edge.request('POST', `/apps/${app.id}/users?project=${TestProject}`, { headers: { authorization: basic(app.id, code()) } }),
    await edge.request('GET', `${p}/tokens?role=retailerApp`, { headers: { authorization: basic(app.id, code(), 'x', 'y') } }),
    await edge.request('POST', '/oauth/token', { raw: 'grant_type=client_credentials', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('svc-aaaaaaaaaaaaaaaaaaaa', 'x') } }),
  ]) {
    t.equal(res.status, 501, res.text);
  }
  t.same(await svc.sql`select count(*)::int as n from app_users`, before, 'no app user was made');
});
