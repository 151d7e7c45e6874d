import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { sdkBase32Decode, sdkTotp } from './support/app-sdk.js';
import type { HttpResponse } from './support/http.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * Failed sign-ins of clients are throttled on the mechanism of every sign-in (src/edge/throttle.ts,
 * the shared failure counts): per client address, and per credential (an app user, an
 * installation's Client-ID, a service client's id), never per app. A blocked sign-in is 429 before
 * any worker is asked. New app users are limited per address. Each test signs in from addresses of
 * its own (X-Forwarded-For, TRUST_PROXY=true), as clients behind a load balancer do.
 */
const Limit = 3;
const WindowMs = 3000;
const svc = await startTestService(t, {
  env: { TRUST_PROXY: 'true', AUTH_FAILURE_LIMIT: String(Limit), AUTH_FAILURE_WINDOW_MS: String(WindowMs), APP_USER_CREATE_LIMIT: '2', APP_USER_CREATE_WINDOW_MS: String(WindowMs) },
});
const p = `/${TestProject}`;
const owner = await svc.token(['projectsWrite']);
const app = (await svc.request('POST', `${p}/clients`, { token: owner, body: { kind: 'app', name: 'App' } })).body;
const service = (await svc.request('POST', `${p}/clients`, { token: owner, body: { kind: 'service', name: 'ERP', permissions: ['shopsRead'] } })).body;
const key = sdkBase32Decode(app.secret);
const code = () => sdkTotp(key, Math.floor(Date.now() / 1000));
const basic = (...parts: string[]) => `Basic ${Buffer.from(parts.join(':')).toString('base64')}`;
let nextAddress = 1;
const address = () => `203.0.113.${nextAddress++}`;

const createUser = (from: string, authorization: string, clientId?: string) =>
  svc.request('POST', `/apps/${app.id}/users?project=${TestProject}`, { headers: { authorization, 'x-forwarded-for': from, ...(clientId ? { 'client-id': clientId } : {}) } });
const tokenFor = (from: string, user: { id: string; secret: string }, secret = user.secret) =>
  svc.request('GET', `${p}/tokens?role=retailerApp`, { headers: { authorization: basic(app.id, code(), user.id, secret), 'x-forwarded-for': from } });
const oauth = (from: string, secret: string) =>
  svc.request('POST', '/oauth/token', {
    raw: 'grant_type=client_credentials',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(service.id, secret), 'x-forwarded-for': from },
  });
/** Requests of a subject the workers handled (the edge asked them): read from /metrics. */
const handled = async (subject: string) => {
  const metrics = await (await fetch(`${svc.url}/metrics`)).text();
  return [...metrics.matchAll(new RegExp(`checkout_worker_messages_total\\{subject="${subject.replace(/\./g, '\\.')}",result="\\w+"\\} (\\d+)`, 'g'))].reduce((n, m) => n + Number(m[1]), 0);
};
const newUser = async () => {
  const res = await createUser(address(), basic(app.id, code()));
  if (res.status !== 201) throw new Error(res.text);
  return res.body.appUser as { id: string; secret: string };
};

function assertTooMany(t: Test, res: HttpResponse, what: string): void {
  t.equal(res.status, 429, `${what}: ${res.text}`);
  t.ok(Number(res.headers.get('retry-after')) >= 1, `${what}: Retry-After`);
}

t.test('wrong app user secrets from one address block that address, the right secret too, without asking a worker', async (t) => {
  const [alice, bob] = [await newUser(), await newUser()];
  const from = address();
  for (let i = 0; i < Limit; i++) t.equal((await tokenFor(from, i % 2 ? alice : bob, 'wrong')).status, 403, `failure ${i + 1}`);
  const asked = await handled('svc.clients.appToken');
  assertTooMany(t, await tokenFor(from, alice), 'the right secret from the blocked address');
  t.equal(await handled('svc.clients.appToken'), asked, 'no worker was asked');
  t.equal((await tokenFor(address(), alice)).status, 200, 'the same user from another address');
  await sleep(WindowMs + 200);
  t.equal((await tokenFor(from, alice)).status, 200, 'the address again once the window passed');
});

t.test('wrong secrets of one app user from many addresses block that app user, not the app', async (t) => {
  const [victim, other] = [await newUser(), await newUser()];
  for (let i = 0; i < Limit; i++) t.equal((await tokenFor(address(), victim, `guess-${i}`)).status, 403);
  assertTooMany(t, await tokenFor(address(), victim), 'the app user, from a fresh address');
  t.equal((await tokenFor(address(), other)).status, 200, 'another app user of the app signs in');
  t.equal((await createUser(address(), basic(app.id, code()))).status, 201, 'and new installations still make app users');
});

t.test('bad codes of an installation (Client-ID) from many addresses block that installation only', async (t) => {
  const installation = 'f3a0c1d2e4b5a6978877665544332211';
  for (let i = 0; i < Limit; i++) t.equal((await createUser(address(), basic(app.id, '00000000'), installation)).status, 403);
  assertTooMany(t, await createUser(address(), basic(app.id, code()), installation), 'that installation, with a right code');
  t.equal((await createUser(address(), basic(app.id, code()), 'another-installation')).status, 201, 'another installation');
  // Many installations failing once each, as phones with a wrong clock do before their second try: the app is never blocked.
  for (let i = 0; i < Limit * 3; i++) t.equal((await createUser(address(), basic(app.id, '00000000'), `phone-${i}`)).status, 403);
  t.equal((await createUser(address(), basic(app.id, code()), 'phone-new')).status, 201, 'the app as a whole is not blocked');
});

t.test('wrong secrets of a service client block its client credentials (slow_down, Retry-After), from any address', async (t) => {
  for (let i = 0; i < Limit; i++) t.equal((await oauth(address(), `wrong-${i}`)).status, 401);
  const blocked = await oauth(address(), service.secret);
  assertTooMany(t, blocked, 'the right secret');
  t.same(blocked.body, { error: 'slow_down', error_description: blocked.body.error_description }, "RFC 6749's error body");
  await sleep(WindowMs + 200);
  t.equal((await oauth(address(), service.secret)).status, 200, 'again once the window passed');
});

t.test('an address makes at most APP_USER_CREATE_LIMIT app users per window; other addresses are not held up', async (t) => {
  const from = address();
  t.equal((await createUser(from, basic(app.id, code()))).status, 201);
  t.equal((await createUser(from, basic(app.id, code()))).status, 201);
  const third = await createUser(from, basic(app.id, code()));
  assertTooMany(t, third, 'the third from one address');
  t.equal((await createUser(address(), basic(app.id, code()))).status, 201, 'another address');
});
